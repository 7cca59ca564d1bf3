"""Every time stamp the referee writes has one format (:func:`referee.results.stamps.stamp`: UTC, to the
microsecond, six digits always), so that comparing two as strings, as SQL does, compares their times."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from referee.results.stamps import stamp
from tests.webdb import build

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00")
#: The columns that hold when something happened (the board's ``fitted`` is the test data's own here).
WHEN = ("created", "finished", "added", "retired", "revoked")


def test_every_stamp_a_store_writes_has_one_format(tmp_path: Path) -> None:
    """A league written through every store (games, groups, uploads, requests, challenges, a card table)."""
    db = build(tmp_path)
    seen: dict[str, set[str]] = {}
    with sqlite3.connect(db.path) as con:
        tables = [name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = [row[1] for row in con.execute(f"PRAGMA table_info({table})")]
            for column in (c for c in columns if c in WHEN):
                for (value,) in con.execute(f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL"):
                    seen.setdefault(f"{table}.{column}", set()).add(value)
    assert {"tournaments.created", "games.finished", "human_tables.created"} <= set(seen)  # the control
    wrong = {where: sorted(v for v in values if not STAMP.fullmatch(str(v))) for where, values in seen.items()}
    assert {where: values for where, values in wrong.items() if values} == {}


def test_stamps_sort_as_their_times() -> None:
    start = datetime(2026, 12, 6, 2, 0, tzinfo=UTC)
    times = [start + timedelta(microseconds=n) for n in (0, 1, 999_999, 1_000_000)]
    assert stamp(start) == "2026-12-06T02:00:00.000000+00:00"  # isoformat() alone drops a zero fraction
    assert sorted(map(stamp, reversed(times))) == list(map(stamp, times))
    assert STAMP.fullmatch(stamp())
    assert stamp(datetime(2026, 12, 6, 2, 0)) == stamp(start)  # naive: UTC, whatever the machine's zone
