"""A row's time stamp, in one format wherever the referee writes one: UTC, ISO 8601, to the microsecond with all
six digits (``2026-12-06T02:31:42.000000+00:00``). Stamps are compared as strings in SQL (``ORDER BY``, a quota's
``created >= ?``), so one format is what makes a string's order the times' order: a stamp to the second
(``...:42+00:00``) sorts before every stamp of that second written to the microsecond, and ``isoformat()`` alone
leaves the fraction out when it is zero."""

from __future__ import annotations

from datetime import UTC, datetime


def stamp(at: datetime | None = None) -> str:
    """``at`` (now if None; a naive time is taken as UTC, as a stamp read back without its offset) as a row's time
    stamp."""
    when = datetime.now(UTC) if at is None else at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="microseconds")
