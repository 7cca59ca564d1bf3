"""Ratings over time as numbers for a small inline SVG (the template draws them; the CSP allows no chart script):
a line per version and its 95% interval as a band, scaled into a fixed box; a bot's versions on its page, the top
versions on the board. Only numbers (and the versions' names, as text) reach the markup."""

from __future__ import annotations

from dataclasses import dataclass

from referee.web.models import RatingPointOut

WIDTH, HEIGHT, PAD = 480, 160, 10
#: Where the board's lines begin: its Elo axis' labels sit left of them.
AXIS = 44
#: The least span of Elo a chart's height stands for.
MIN_SPAN = 20.0


@dataclass(frozen=True)
class Series:
    version: str
    line: str  # polyline points "x,y x,y"
    band: str  # polygon points of elo +- 1.96 sd
    slot: int = 0  # its place in the legend (its colour: the CSS class ``s<slot>``)
    last: tuple[float, float] = (0.0, 0.0)  # where its line ends (its marker)


@dataclass(frozen=True)
class Chart:
    series: list[Series]
    low: float
    high: float
    first: str = ""  # the first and last refit drawn (the x axis' ends)
    last: str = ""
    left: int = PAD  # where the lines begin (room for the Elo axis' labels)
    width: int = WIDTH
    height: int = HEIGHT


def rating_chart(history: list[RatingPointOut], *, bands: bool = True, left: int = PAD) -> Chart | None:
    """The chart of ``history`` (None when empty): a series per version in the order they first appear (the
    board passes its leaders' points best first); x is the refit's order, y the rating, scaled to the 95%
    intervals (``bands``) or to the ratings alone (at least :data:`MIN_SPAN` Elo), from ``left`` on."""
    if not history:
        return None
    times = sorted({p.fitted for p in history})
    width = 1.96 if bands else 0.0
    spread = [(p.elo - width * (p.sd or 0.0), p.elo + width * (p.sd or 0.0)) for p in history]
    low, high = min(lo for lo, _ in spread), max(hi for _, hi in spread)
    if high - low < MIN_SPAN:  # a flat line drawn flat, not a wiggle of a tenth of a point blown up
        low, high = (low + high - MIN_SPAN) / 2, (low + high + MIN_SPAN) / 2

    order = {fitted: n for n, fitted in enumerate(times)}

    def x(fitted: str) -> float:
        return left + (WIDTH - left - PAD) * (order[fitted] / max(1, len(times) - 1))

    def y(elo: float) -> float:
        return PAD + (HEIGHT - 2 * PAD) * (1 - (elo - low) / (high - low))

    # Each refit's x written once (a bot's page draws some 300 points, three times each: line, band up, band down).
    drawn_x = {fitted: f"{x(fitted):.1f}" for fitted in times}
    series = []
    for slot, version in enumerate(dict.fromkeys(p.version for p in history)):
        points = [p for p in history if p.version == version]
        xs = [drawn_x[p.fitted] for p in points]
        line = " ".join([f"{at},{y(p.elo):.1f}" for at, p in zip(xs, points, strict=True)])
        band = [(p.elo, 1.96 * (p.sd or 0.0)) for p in points]
        upper = [f"{at},{y(elo + half):.1f}" for at, (elo, half) in zip(xs, band, strict=True)]
        lower = [f"{at},{y(elo - half):.1f}" for at, (elo, half) in zip(reversed(xs), reversed(band), strict=True)]
        end = (round(x(points[-1].fitted), 1), round(y(points[-1].elo), 1))
        series.append(Series(version, line, " ".join(upper + lower), slot, end))
    return Chart(series, low, high, times[0], times[-1], left)


def leaders_chart(history: list[RatingPointOut], leaders: list[str]) -> Chart | None:
    """The board's chart: the ratings over time of ``leaders`` (best first: the legend's order)."""
    rank = {version: n for n, version in enumerate(leaders)}
    return rating_chart(sorted((p for p in history if p.version in rank), key=lambda p: rank[p.version]), bands=False,
                        left=AXIS)
