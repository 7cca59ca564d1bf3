"""The web server's store writes only the web's tables: its class has none of the daemon's writes (the methods of
the ``...Store`` classes; the control: the daemon's store has them all), and its connection
(referee/results/schema.py ``WEB_WRITES``) refuses a write of the daemon's, the daemon's method run on it anyway or
raw SQL; the web's own writes go through. The control: the same daemon writes through the daemon's store go
through."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from referee.results.arena_store import ArenaStore, BoardRow
from referee.results.league_store import GroupRow
from referee.results.requests import RetireBot
from referee.results.store import StoreError
from referee.results.web_queries import WebStore
from tests.webdb import WebDb
from tests.webkit import base, db

__all__ = ["base", "db"]  # the fixtures, used by name

#: The daemon's writes, each as a call on a store and the league's id (the destructive ones last): the daemon's
#: methods called on whichever store is given (the web's has none of them as its own).
DAEMON_WRITES: dict[str, Callable[[Any, int], object]] = {
    "save_board": lambda store, league: ArenaStore.save_board(store, league, [
        BoardRow("alpha@1", 1, 1.0, 1.0, 2, "2026-02-01")]),
    "issue_group": lambda store, league: ArenaStore.issue_group(store, league, GroupRow(
        number=900, deal_seed=9, seats=("alpha@1", "beta@1"), anchor="alpha@1")),
    "close_group": lambda store, league: ArenaStore.close_group(store, league, 1, "complete"),
    "set_version": lambda store, league: ArenaStore.set_version(store, league, "alpha@1", retired=True),
    "raw UPDATE read_marks": lambda store, _: store._db.execute("UPDATE read_marks SET value = value + 1"),
    "raw DELETE games": lambda store, _: store._db.execute("DELETE FROM games"),
    "raw UPDATE web_sessions": lambda store, _: store._db.execute("UPDATE web_sessions SET expires = 1e12"),
    "raw CREATE TABLE": lambda store, _: store._db.execute("CREATE TABLE planted (x)"),
    "raw DROP TABLE": lambda store, _: store._db.execute("DROP TABLE league_board"),
}


def daemon_methods() -> set[str]:
    """The methods the daemon's and the CLI's store classes (``...Store``) define themselves: their writes."""
    return {name for cls in ArenaStore.__mro__ if cls.__name__.endswith("Store") for name, value in vars(cls).items()
            if callable(value) and name != "__init__"}


def test_the_web_store_has_none_of_the_daemons_writes() -> None:
    daemon = daemon_methods()
    assert {"save_board", "issue_group", "end_table", "save_slots", "add_version", "step_upload"} <= daemon
    assert all(hasattr(ArenaStore, name) for name in daemon)  # the control: the daemon's store has them
    assert sorted(name for name in daemon if hasattr(WebStore, name)) == []
    assert {"add_request", "add_side", "add_move", "add_analysis", "add_upload", "add_session"} <= set(dir(WebStore))


@pytest.mark.parametrize("write", list(DAEMON_WRITES))
def test_the_web_connection_refuses_the_daemons_writes(db: WebDb, write: str) -> None:
    with WebStore(db.path) as store:
        league = store.the_league().id
        with pytest.raises((StoreError, sqlite3.DatabaseError), match="not authorized"):
            DAEMON_WRITES[write](store, league)
    with ArenaStore(db.path) as store:  # the control: the daemon's store makes the same write
        DAEMON_WRITES[write](store, league)


def test_the_web_connection_makes_the_webs_own_writes(db: WebDb) -> None:
    with WebStore(db.path) as store:
        league = store.the_league().id
        author = store.author("alice")
        assert author is not None
        request = store.add_request(league, "alpha", RetireBot())
        store.add_session("n" * 32, author.id, 1.0, 2e12)
        assert store.session_live("n" * 32, author.id, 3.0)
        store.end_session("n" * 32)
        assert store.web_key() and not store.session_live("n" * 32, author.id, 3.0)
    with ArenaStore(db.path) as store:
        assert any(row.id == request for row in store.pending_requests(league))
