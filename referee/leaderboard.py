"""Leaderboard rows and their formats (table, csv, json) and the head-to-head table.

Rows combine a :class:`referee.ratings.RatingTable` with per-game statistics read from the
same records:

======== ===================================================================================
Rank     position by rating (ties broken by name)
Bot      bot name
Elo      Bradley-Terry rating; a bound ("> 2100" / "< 900") when the data alone cannot place
         the bot, "~1500" when it is placed by the prior only (see :mod:`referee.ratings`)
+-95%    error bar of the rating relative to the anchor (empty for bounds)
Games    games played
Score%   pairwise points over pairwise comparisons, in the rating mode
Fool%    games where the bot was a fool / games
AvgPlace mean place, 1 = best; tied players share 1 + the number of players strictly ahead
Draws    drawn games (no fool) played
LOS      likelihood of superiority over the next bot in rank order
======== ===================================================================================

``csv`` and ``json`` use the snake_case keys of :class:`Row` and numbers rather than display
strings (``bound`` is ``"lower"``, ``"upper"`` or empty/null); ``json`` is
``{"meta": {...}, "rows": [...]}``. Bot names are shown with control characters escaped
(:func:`referee.text.visible`) in the table and the CSV (CSV has no escapes of its own); ``json``
keeps them raw, JSON-escaped (ASCII only).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields

import numpy as np
from tabulate import tabulate

from protocol.records import ResultRecord
from referee.outcomes import Outcomes, outcomes_from_records
from referee.ratings import Bound, Mode, RatingTable, rate
from referee.text import visible

HEADERS = ("Rank", "Bot", "Elo", "+-95%", "Games", "Score%", "Fool%", "AvgPlace", "Draws", "LOS(next)")
_ALIGN = ("right", "left", "right", "right", "right", "right", "right", "right", "right", "right")


@dataclass(frozen=True)
class Row:
    """One leaderboard line; percentages are 0-100, ``los_next`` is a probability (0-1)."""

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
    los_next: float | None
    disqualified: bool = False  # failed too often in a row; its remaining games were forfeits


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


def game_stats(outcomes: Outcomes) -> dict[str, GameStats]:
    """Games, fool games, sum of places and drawn games per bot, counted over the outcome columns."""
    n = len(outcomes.bots)
    games = np.bincount(outcomes.bot, minlength=n)
    fools = np.bincount(outcomes.bot, weights=outcomes.fool, minlength=n)
    places = np.bincount(outcomes.bot, weights=outcomes.place, minlength=n)
    draws = np.bincount(outcomes.bot, weights=np.repeat(outcomes.drawn, outcomes.size), minlength=n)
    return {name: GameStats(int(games[b]), int(fools[b]), int(places[b]), int(draws[b]),
                            name in outcomes.disqualified) for b, name in enumerate(outcomes.bots)}


def build_meta(rating: RatingTable) -> Meta:
    return Meta(rating.model, rating.mode, rating.anchor, rating.n_clusters, rating.n_games,
                rating.errors, rating.prior)


def build_rows(source: Iterable[ResultRecord] | Outcomes, rating: RatingTable) -> list[Row]:
    """Leaderboard rows in rank order: ``rating`` plus per-game statistics from the same games."""
    stats = game_stats(source if isinstance(source, Outcomes) else outcomes_from_records(source))
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
            los_next=bot.los_next,
            disqualified=s.disqualified,
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
        visible(row.bot) + (" (disqualified)" if row.disqualified else ""),
        _elo_text(row),
        _fmt(row.ci95, ".0f"),
        str(row.games),
        _fmt(row.score_pct, ".1f"),
        _fmt(row.fool_pct, ".1f"),
        _fmt(row.avg_place, ".2f"),
        str(row.draws),
        "" if row.los_next is None else f"{100.0 * row.los_next:.1f}%",
    ]


def footer(meta: Meta) -> str:
    line = (f"{meta.model} | mode: {meta.mode} | anchor: {visible(meta.anchor)} | "
            f"{meta.clusters} deals (clusters), {meta.games} games | +-95%: {meta.errors}")
    if meta.prior:
        line += (f"\nThe data alone do not pin every rating: {meta.prior:g} virtual draw(s) per bot against"
                 " the pool mean; '> x' / '< x' are bounds, '~x' is set by that prior only.")
    return line


def format_table(rows: list[Row], meta: Meta) -> str:
    """A plain-text table (right-aligned numbers) followed by the footer."""
    body = tabulate([_display(r) for r in rows], headers=HEADERS, colalign=_ALIGN,
                    disable_numparse=True, tablefmt="simple")
    return f"{body}\n{footer(meta)}"


# ---------------------------------------------------------------------------- csv / json


def _record(row: Row) -> dict[str, object]:
    """The machine form of a row: rounded numbers, no display strings."""
    out = asdict(row)
    for key, digits in (("elo", 2), ("ci95", 2), ("score_pct", 2), ("fool_pct", 2),
                        ("avg_place", 4), ("los_next", 4)):
        value = out[key]
        out[key] = None if value is None else round(float(value), digits)
    return out


def format_csv(rows: list[Row]) -> str:
    """CSV with a header of :class:`Row` field names; empty cells for missing values."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=[f.name for f in fields(Row)], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else visible(v) if isinstance(v, str) else v
                         for k, v in _record(row).items()})
    return buf.getvalue()


def format_json(rows: list[Row], meta: Meta) -> str:
    """``{"meta": {...}, "rows": [...]}``, pretty-printed."""
    return json.dumps({"meta": asdict(meta), "rows": [_record(r) for r in rows]}, indent=2)


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


def render(outcomes: Outcomes, mode: Mode = "fool", output_format: str = "table",
           anchor: str | None = None, bootstrap: int = 0, h2h: bool = False) -> str:
    """The whole leaderboard as text, as ``durak leaderboard`` prints it."""
    rating = rate(outcomes, mode, anchor=anchor, bootstrap=bootstrap)
    rows = build_rows(outcomes, rating)
    if output_format == "csv":
        text = format_csv(rows)
    elif output_format == "json":
        text = format_json(rows, build_meta(rating))
    else:
        text = format_table(rows, build_meta(rating))
    return f"{text}\n\n{format_h2h(rating)}" if h2h else text
