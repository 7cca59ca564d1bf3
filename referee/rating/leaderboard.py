"""Leaderboard rows and their formats (table, csv, json), the head-to-head table and the legend.

Rows combine a :class:`referee.rating.bradley_terry.RatingTable` with per-game statistics read from the
same records; :data:`LEGEND` explains the columns (``durak leaderboard --help`` shows it).

``csv`` and ``json`` use the snake_case keys of :class:`Row` and numbers rather than display
strings (``bound`` is ``"lower"``, ``"upper"`` or empty/null); every share is a percentage
0-100 (keys ending ``_pct``), every time milliseconds (``_ms``), booleans ``true``/``false``.
``json`` is ``{"meta": {...}, "rows": [...], "disqualified": {bot: why}}`` plus ``"h2h"`` and
``"stats"`` when asked for. One CSV is one table: the rows, or with ``--h2h`` the head-to-head
pairs, or with ``--stats`` the per-bot statistics. Bot names are shown with control characters
escaped (:func:`referee.text.visible`) in the table and the CSV (CSV has no escapes of its own);
``json`` keeps them raw, JSON-escaped (ASCII only).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from tabulate import tabulate

from protocol.records import ResultRecord
from referee.rating.bradley_terry import Bound, RatingTable, rate
from referee.rating.outcomes import Outcomes, outcomes_from_records
from referee.rating.stats import BotStats, stats_headers, stats_table_rows
from referee.text import visible

HEADERS = ("Rank", "Bot", "Elo", "+-95%", "Games", "Score%", "Fool%", "AvgPlace", "Draws", "LOS(next)")
#: What each column and the footer mean; ``durak leaderboard --help`` and the README show it.
LEGEND = """\
Rank       position by rating (ties broken by name)
Bot        its name, marked "(disqualified)" (a tournament's), "(retired)" or "(quarantined)" (a league's
           versions that no longer play; machine formats: the row's `disqualified` and `mark`)
Elo        Bradley-Terry rating on the Elo scale; "> x" / "< x" a bound where the data alone cannot
           place the bot (it never lost / never won), "~x" set by the prior only
+-95%      95% error bar of the rating relative to the anchor (empty for bounds)
Games      games played
Score%     points over pairwise comparisons in the rating mode, a draw half a point (fool: every
           non-fool beats each fool, co-fools and drawn games draw; order: an earlier finisher
           beats a later one, a shared place draws)
Fool%      games the bot was a fool / its games
AvgPlace   mean finishing place, 1 = best; tied players share 1 + the number strictly ahead
Draws      drawn games (no fool) it played
LOS(next)  likelihood of superiority over the next bot down: the probability that it is the
           stronger of the two, from the ratings and their covariance
footer     model | mode | anchor (what fixes the scale) | deals (the clusters of the error bars),
           games | how the error bars were computed; then any disqualified bot and why"""


def legend_entries() -> list[tuple[str, str]]:
    """:data:`LEGEND` as (label, meaning) pairs, its lines joined, for pages that lay it out themselves."""
    entries: list[tuple[str, str]] = []
    for line in LEGEND.splitlines():
        if line.startswith(" ") and entries:
            label, meaning = entries[-1]
            entries[-1] = (label, f"{meaning} {line.strip()}")
        else:
            label, _, meaning = line.partition(" ")
            entries.append((label, meaning.strip()))
    return entries


_ALIGN = ("right", "left", "right", "right", "right", "right", "right", "right", "right", "right")


@dataclass(frozen=True)
class Row:
    """One leaderboard line; every share is a percentage, 0-100."""

    rank: int
    bot: str
    elo: float
    ci95: float | None
    bound: Bound | None
    identified: bool
    games: int
    score_pct: float | None
    fool_pct: float | None
    avg_place: float | None
    draws: int
    los_next_pct: float | None
    disqualified: bool = False  # no longer plays: failed too often in a row, or a league's retired or quarantined
    mark: str = ""  # how the board marks it (:func:`mark`): disqualified, retired or quarantined; "" if it plays


#: The states of a league's versions that no longer play, as the board marks them (the README's words; spelled by
#: :meth:`referee.results.league_store.VersionRow.state`: ``retired``, ``quarantined: why``).
LEAGUE_STATES = ("retired", "quarantined")


def mark(why: str) -> str:
    """How the board marks a bot that no longer plays, from why: a league version's state, else ``disqualified``."""
    label = why.partition(": ")[0]
    return label if label in LEAGUE_STATES else "disqualified"


@dataclass(frozen=True)
class Meta:
    """What the footer states: model, mode, anchor, clusters, games and error-bar method."""

    model: str
    mode: str
    anchor: str
    clusters: int
    games: int
    errors: str
    prior: float  # virtual draws per bot used by the fit; 0 for the plain MLE


@dataclass
class GameStats:
    """Per-bot counts read from the records."""

    games: int = 0
    fools: int = 0
    place_sum: int = 0
    draws: int = 0
    disqualified: bool = False
    mark: str = ""


def game_stats(outcomes: Outcomes) -> dict[str, GameStats]:
    """Games, fool games, sum of places and drawn games per bot, counted over the outcome columns."""
    n = len(outcomes.bots)
    games = np.bincount(outcomes.bot, minlength=n)
    fools = np.bincount(outcomes.bot, weights=outcomes.fool, minlength=n)
    places = np.bincount(outcomes.bot, weights=outcomes.place, minlength=n)
    draws = np.bincount(outcomes.bot, weights=np.repeat(outcomes.drawn, outcomes.size), minlength=n)
    why = outcomes.disqualified
    return {name: GameStats(int(games[b]), int(fools[b]), int(places[b]), int(draws[b]), name in why,
                            mark(why[name]) if name in why else "") for b, name in enumerate(outcomes.bots)}


def build_meta(rating: RatingTable) -> Meta:
    return Meta(rating.model, rating.mode, rating.anchor, rating.n_clusters, rating.n_games,
                rating.errors, rating.prior)


def build_rows(source: Iterable[ResultRecord] | Outcomes, rating: RatingTable) -> list[Row]:
    """Leaderboard rows in rank order: ``rating`` plus per-game statistics from the same games."""
    return rows_of(rating, game_stats(source if isinstance(source, Outcomes) else outcomes_from_records(source)))


def rows_of(rating: RatingTable, stats: Mapping[str, GameStats]) -> list[Row]:
    """Leaderboard rows in rank order: ``rating`` plus each bot's per-game statistics, however they were counted
    (a league's board keeps them per deal group: :mod:`referee.rating.summaries`)."""
    rows = []
    for rank, bot in enumerate(rating.bots, start=1):
        s = stats.get(bot.name, GameStats())
        score = bot.score
        rows.append(Row(
            rank=rank,
            bot=bot.name,
            elo=bot.elo,
            ci95=bot.ci95,
            bound=bot.bound,
            identified=bot.identified,
            games=s.games,
            score_pct=None if score is None else 100.0 * score,
            fool_pct=100.0 * s.fools / s.games if s.games else None,
            avg_place=s.place_sum / s.games if s.games else None,
            draws=s.draws,
            los_next_pct=None if bot.los_next is None else 100.0 * bot.los_next,
            disqualified=s.disqualified,
            mark=s.mark,
        ))
    return rows


# ---------------------------------------------------------------------------- table


def _fmt(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


def _elo_text(row: Row) -> str:
    if row.bound == "lower":
        return f"> {row.elo:.0f}"
    if row.bound == "upper":
        return f"< {row.elo:.0f}"
    return f"{row.elo:.0f}" if row.identified else f"~{row.elo:.0f}"


def _display(row: Row) -> list[str]:
    return [
        str(row.rank),
        visible(row.bot) + (f" ({row.mark})" if row.mark else ""),
        _elo_text(row),
        _fmt(row.ci95, ".0f"),
        str(row.games),
        _fmt(row.score_pct, ".1f"),
        _fmt(row.fool_pct, ".1f"),
        _fmt(row.avg_place, ".2f"),
        str(row.draws),
        "" if row.los_next_pct is None else f"{row.los_next_pct:.1f}%",
    ]


def footer(meta: Meta, disqualified: Mapping[str, str] | None = None) -> str:
    line = (f"{meta.model} | mode: {meta.mode} | anchor: {visible(meta.anchor)} | "
            f"{meta.clusters} deals (clusters), {meta.games} games | +-95%: {meta.errors}")
    if meta.prior:
        line += (f"\nThe data alone do not pin every rating: {meta.prior:g} virtual draw(s) per bot against"
                 " the pool mean; '> x' / '< x' are bounds, '~x' is set by that prior only.")
    for name, why in sorted((disqualified or {}).items()):
        label, _, reason = why.partition(": ")
        if mark(why) in LEAGUE_STATES:  # a league's versions that no longer play
            line += f"\n{label}: {visible(name)}" + (f": {visible(reason)}" if reason else "")
        else:
            line += f"\ndisqualified: {visible(name)}: {visible(why)}"
    return line


def format_table(rows: list[Row], meta: Meta, disqualified: Mapping[str, str] | None = None) -> str:
    """A plain-text table (right-aligned numbers) followed by the footer."""
    body = tabulate([_display(r) for r in rows], headers=HEADERS, colalign=_ALIGN,
                    disable_numparse=True, tablefmt="simple")
    return f"{body}\n{footer(meta, disqualified)}"


# ---------------------------------------------------------------------------- csv / json


def _record(row: Row) -> dict[str, object]:
    """The machine form of a row: rounded numbers, no display strings."""
    out = asdict(row)
    for key, digits in (("elo", 2), ("ci95", 2), ("score_pct", 2), ("fool_pct", 2),
                        ("avg_place", 4), ("los_next_pct", 2)):
        value = out[key]
        out[key] = None if value is None else round(float(value), digits)
    return out


def format_csv(rows: Sequence[object]) -> str:
    """CSV of dataclass rows (:class:`Row`, :class:`H2HPair`, :class:`BotStats`) with a header of their field
    names: empty cells for missing values, ``true``/``false``, names escaped; a list or dict field becomes
    one column per entry (``fool_pct_by_seat_0``, ``verdicts_timeout``)."""
    records = [_flat(row) for row in rows]
    names: list[str] = []
    for record in records:
        names += [name for name in record if name not in names]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=names, lineterminator="\n", restval="")
    writer.writeheader()
    for record in records:
        writer.writerow({k: _csv_cell(v) for k, v in record.items()})
    return buf.getvalue()


def _flat(row: object) -> dict[str, object]:
    data = _record(row) if isinstance(row, Row) else asdict(row)  # type: ignore[call-overload]
    out: dict[str, object] = {}
    for key, value in data.items():
        if isinstance(value, list):
            out.update({f"{key}_{index}": item for index, item in enumerate(value)})
        elif isinstance(value, dict):
            out.update({f"{key}_{name}": item for name, item in value.items()})
        else:
            out[key] = value
    return out


def _csv_cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return visible(value) if isinstance(value, str) else value


def format_json(rows: list[Row], meta: Meta, *, disqualified: Mapping[str, str] | None = None,
                h2h: Sequence[H2HPair] | None = None, stats: Sequence[BotStats] | None = None) -> str:
    """``{"meta": {...}, "rows": [...], "disqualified": {...}}`` (and ``"h2h"``, ``"stats"`` when given),
    pretty-printed."""
    document: dict[str, object] = {"meta": asdict(meta), "rows": [_record(r) for r in rows],
                                   "disqualified": dict(sorted((disqualified or {}).items()))}
    if h2h is not None:
        document["h2h"] = [asdict(pair) for pair in h2h]
    if stats is not None:
        document["stats"] = [asdict(row) for row in stats]
    return json.dumps(document, indent=2)


# ---------------------------------------------------------------------------- head to head


def format_h2h(rating: RatingTable) -> str:
    """Points of the row bot against the column bot over their comparisons, e.g. "62% (123)"."""
    names = [visible(b.name) for b in rating.bots]
    body = []
    for a, name in enumerate(names):
        cells = [name]
        for b in range(len(names)):
            count = rating.h2h_comparisons[a, b]
            if a == b or count == 0:
                cells.append("-" if a == b else "")
            else:
                cells.append(f"{100.0 * rating.h2h_points[a, b] / count:.0f}% ({count:.0f})")
        body.append(cells)
    align = ("left",) + ("right",) * len(names)
    table = tabulate(body, headers=["vs", *names], colalign=align, disable_numparse=True, tablefmt="simple")
    return f"{table}\nrow bot's points vs column bot over their pairwise comparisons ({rating.mode} mode)"


@dataclass(frozen=True)
class H2HPair:
    """What ``bot`` scored against ``opponent`` over their pairwise comparisons (the rating mode's)."""

    bot: str
    opponent: str
    points: float
    comparisons: float
    score_pct: float | None


def h2h_pairs(rating: RatingTable) -> list[H2HPair]:
    """Every ordered pair of bots that met, in rank order."""
    pairs = []
    for a, bot in enumerate(rating.bots):
        for b, opponent in enumerate(rating.bots):
            count = float(rating.h2h_comparisons[a, b])
            if a != b and count:
                points = float(rating.h2h_points[a, b])
                pairs.append(H2HPair(bot.name, opponent.name, points, count, round(100.0 * points / count, 2)))
    return pairs


def render(outcomes: Outcomes, output_format: str = "table", *, rating: RatingTable | None = None,
           h2h: bool = False, stats: Sequence[BotStats] | None = None) -> str:
    """The whole leaderboard as text, as ``durak leaderboard`` prints it: ``rating`` is ``outcomes`` rated
    (:func:`rate`; by default in fool mode, the pool mean at 1500, no bootstrap); ``stats``: per-bot statistics
    to add (a table after the leaderboard, a ``"stats"`` list in JSON). A CSV is one table: the rows, or the
    head-to-head pairs (``h2h``), or ``stats``; asking for both is a ValueError."""
    if rating is None:
        rating = rate(outcomes)
    rows = build_rows(outcomes, rating)
    disqualified = outcomes.disqualified
    if output_format == "csv":
        if h2h and stats is not None:
            raise ValueError("a CSV holds one table: ask for --h2h or --stats, not both")
        return format_csv(h2h_pairs(rating) if h2h else stats if stats is not None else rows)
    if output_format == "json":
        return format_json(rows, build_meta(rating), disqualified=disqualified,
                           h2h=h2h_pairs(rating) if h2h else None, stats=stats)
    text = format_table(rows, build_meta(rating), disqualified)
    if h2h:
        text += f"\n\n{format_h2h(rating)}"
    if stats is not None:
        text += f"\n\n{format_stats(stats)}"
    return text


def format_stats(stats: Sequence[BotStats]) -> str:
    """The per-bot statistics as a plain-text table with a line saying what the columns mean."""
    seats = max((len(r.games_by_seat) for r in stats), default=0)
    cells = [[visible(row[0]), *row[1:]] for row in stats_table_rows(stats)]
    body = tabulate(cells, headers=stats_headers(seats), colalign=("left",) + ("right",) * (len(cells[0]) - 1)
                    if cells else (), disable_numparse=True, tablefmt="simple")
    return (f"{body}\nFool%@s: fool rate in seat s; move times per decision (referee's clock; p99: 99th "
            "percentile); strikes: replies inside the grace; the rest: games lost by that verdict")
