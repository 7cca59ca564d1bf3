"""A bot's rating over time as numbers for a small SVG (the template draws them): a line per version and its
95% interval as a band, scaled into a fixed box. Only numbers reach the markup."""

from __future__ import annotations

from dataclasses import dataclass

from referee.web.models import RatingPointOut

WIDTH, HEIGHT, PAD = 480, 160, 10


@dataclass(frozen=True)
class Series:
    version: str
    line: str  # polyline points "x,y x,y"
    band: str  # polygon points of elo +- 1.96 sd


@dataclass(frozen=True)
class Chart:
    series: list[Series]
    low: float
    high: float
    width: int = WIDTH
    height: int = HEIGHT


def rating_chart(history: list[RatingPointOut]) -> Chart | None:
    """The chart of ``history`` (None when empty); x is the refit's order, y the rating."""
    if not history:
        return None
    times = sorted({p.fitted for p in history})
    spread = [(p.elo - 1.96 * (p.sd or 0.0), p.elo + 1.96 * (p.sd or 0.0)) for p in history]
    low, high = min(lo for lo, _ in spread), max(hi for _, hi in spread)
    high = high if high > low else low + 1.0

    def x(fitted: str) -> float:
        return PAD + (WIDTH - 2 * PAD) * (times.index(fitted) / max(1, len(times) - 1))

    def y(elo: float) -> float:
        return PAD + (HEIGHT - 2 * PAD) * (1 - (elo - low) / (high - low))

    series = []
    for version in dict.fromkeys(p.version for p in history):
        points = [p for p in history if p.version == version]
        line = " ".join(f"{x(p.fitted):.1f},{y(p.elo):.1f}" for p in points)
        upper = [f"{x(p.fitted):.1f},{y(p.elo + 1.96 * (p.sd or 0.0)):.1f}" for p in points]
        lower = [f"{x(p.fitted):.1f},{y(p.elo - 1.96 * (p.sd or 0.0)):.1f}" for p in reversed(points)]
        series.append(Series(version, line, " ".join(upper + lower)))
    return Chart(series, low, high)
