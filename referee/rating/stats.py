"""Per-bot statistics of a tournament's games: fool rates by seat, move times and verdict counts.

Plain data for every front end (``durak leaderboard --stats`` as table, CSV or JSON, the tournament summary,
HTML reports). Units: shares are percentages (0-100, keys ending ``_pct``), times milliseconds (``_ms``).
Move times come from the per-move times a database stores (every decision, on the referee's clock); games
without them (JSON-lines results, databases of schema 1) count in everything but the move times.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from protocol.records import ResultRecord

#: The counted kinds, in column order: the verdicts (RULES.md 6.2) and ``strikes``, replies inside the grace
#: (PROTOCOL.md 8; the last strike of a game is a timeout verdict as well).
VERDICT_KINDS = ("timeout", "strikes", "crash", "memory", "illegal", "protocol", "disqualified")
#: The percentile quoted beside the median and the maximum.
PERCENTILE = 99


@dataclass(frozen=True)
class BotStats:
    """One bot's row. ``fool_pct_by_seat[s]`` is over the games it sat in seat ``s`` (None: none there)."""

    bot: str
    games: int
    fools: int
    fool_pct: float | None
    games_by_seat: list[int]
    fool_pct_by_seat: list[float | None]
    moves: int  # decisions timed
    move_median_ms: float | None
    move_p99_ms: float | None  # numpy's linear-interpolation percentile of every decision's time
    move_max_ms: float | None
    verdicts: dict[str, int]  # every kind of VERDICT_KINDS, 0 when none
    disqualified: str | None = None  # why, if it was


@dataclass
class _Tally:
    games_by_seat: list[int] = field(default_factory=list)
    fools_by_seat: list[int] = field(default_factory=list)
    move_us: list[int] = field(default_factory=list)
    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICT_KINDS, 0))

    def seat(self, seat: int, fool: bool) -> None:
        while len(self.games_by_seat) <= seat:
            self.games_by_seat.append(0)
            self.fools_by_seat.append(0)
        self.games_by_seat[seat] += 1
        self.fools_by_seat[seat] += fool


GameTimes = tuple[ResultRecord, Sequence[Sequence[int]] | None]


def bot_stats(games: Iterable[GameTimes], disqualified: Mapping[str, str] | None = None) -> list[BotStats]:
    """Rows by bot name from ``(record, per-seat move times in microseconds or None)`` pairs.

    ``disqualified`` (bot -> why) defaults to what the records' ``disqualified`` verdicts say.
    """
    tallies: dict[str, _Tally] = {}
    reasons: dict[str, str] = {}
    for record, move_us in games:
        fools = set(record.fools)
        for seat, name in enumerate(record.players):
            tally = tallies.setdefault(name, _Tally())
            tally.seat(seat, name in fools)
            if move_us is not None and seat < len(move_us):
                tally.move_us.extend(move_us[seat])
            if record.strikes is not None and seat < len(record.strikes):
                tally.verdicts["strikes"] += record.strikes[seat]
        for verdict in record.verdicts:
            if verdict.bot in tallies and verdict.kind in tallies[verdict.bot].verdicts:
                tallies[verdict.bot].verdicts[verdict.kind] += 1
            if verdict.kind == "disqualified":
                reasons.setdefault(verdict.bot, verdict.reason)
    if disqualified is not None:
        reasons = dict(disqualified)
    return [_row(name, tallies[name], reasons.get(name)) for name in sorted(tallies)]


def move_time_histogram(games: Iterable[GameTimes]) -> dict[str, object] | None:
    """Each bot's move times counted in bins: ``{"edges_ms": [...], "bots": {bot: [count per bin]}}``, bins
    ``[edges[i], edges[i + 1])`` (the last one closed) on a 1-2-5 scale from the fastest decision to the
    slowest, the same for every bot; None when no game has move times."""
    by_bot: dict[str, list[int]] = {}
    for record, move_us in games:
        if move_us is not None:
            for seat, name in enumerate(record.players):
                if seat < len(move_us):
                    by_bot.setdefault(name, []).extend(move_us[seat])
    times = {name: np.asarray(us, dtype=np.int64) for name, us in sorted(by_bot.items()) if us}
    if not times:
        return None
    low = min(int(t.min()) for t in times.values())
    high = max(int(t.max()) for t in times.values())
    scale = [0] + [m * 10 ** k for k in range(10) for m in (1, 2, 5)]  # microseconds, up to 5,000 s
    start = max(i for i, edge in enumerate(scale) if edge <= low)
    stop = next((i for i, edge in enumerate(scale) if edge > high), len(scale) - 1)
    edges = scale[start:stop + 1]
    return {"edges_ms": [edge / 1000 for edge in edges],
            "bots": {name: np.histogram(t, bins=edges)[0].tolist() for name, t in times.items()}}


def _row(name: str, tally: _Tally, disqualified: str | None) -> BotStats:
    games, fools = sum(tally.games_by_seat), sum(tally.fools_by_seat)
    times = np.asarray(tally.move_us, dtype=np.float64) / 1000.0
    timed = len(times) > 0
    return BotStats(
        bot=name, games=games, fools=fools, fool_pct=_pct(fools, games), games_by_seat=list(tally.games_by_seat),
        fool_pct_by_seat=[_pct(f, g) for f, g in zip(tally.fools_by_seat, tally.games_by_seat, strict=True)],
        moves=len(times),
        move_median_ms=round(float(np.median(times)), 3) if timed else None,
        move_p99_ms=round(float(np.percentile(times, PERCENTILE)), 3) if timed else None,
        move_max_ms=round(float(times.max()), 3) if timed else None,
        verdicts=dict(tally.verdicts), disqualified=disqualified,
    )


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def stats_headers(seats: int) -> list[str]:
    """The columns of :func:`stats_table_rows`."""
    return ["Bot", "Games", "Fool%", *(f"Fool%@{s}" for s in range(seats)), "Moves", "Median ms", "p99 ms",
            "Max ms", *VERDICT_KINDS]


def stats_table_rows(rows: Sequence[BotStats]) -> list[list[str]]:
    """Display cells (bot names raw: the caller escapes them) for a table of ``rows``."""
    seats = max((len(r.games_by_seat) for r in rows), default=0)
    out = []
    for r in rows:
        by_seat = [*r.fool_pct_by_seat, *([None] * (seats - len(r.fool_pct_by_seat)))]
        out.append([r.bot, str(r.games), _cell(r.fool_pct, ".1f"), *(_cell(v, ".1f") for v in by_seat),
                    str(r.moves), _cell(r.move_median_ms, ".2f"), _cell(r.move_p99_ms, ".2f"),
                    _cell(r.move_max_ms, ".2f"), *(str(r.verdicts[k]) for k in VERDICT_KINDS)])
    return out


def _cell(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)
