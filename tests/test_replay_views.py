"""Replays as bytes made once (schema 12, referee/report/publisher.py): the database queues each game as its group
becomes public, the daemon's publisher makes its public view, and the web serves those bytes. What every viewer
gets of every game is byte for byte what the web builds without them (so what each viewer may see is unchanged);
an open group's game is never queued, and a view planted for it is never served; a view of another shape is
never served, and queued again once."""

from __future__ import annotations

import re
import sqlite3
import time
import zlib
from contextlib import closing
from pathlib import Path

import msgspec
import pytest
import zstandard
from litestar.testing import TestClient

from referee.report import publisher as publisher_module
from referee.report.game_data import GAME_DATA_VERSION, encode_view
from referee.report.publisher import ReplayPublisher, publish_queued
from referee.results.arena_store import ArenaStore
from referee.results.league_store import LeagueStore
from referee.results.packed import pack, unpack
from referee.results.schema import SCHEMA_VERSION
from referee.results.store import StoreError
from referee.web.app import create_app
from referee.web.settings import WebSettings
from tests.old_schemas import drop_schema_12
from tests.test_web_visibility import fetch
from tests.webdb import WebDb, league_copy
from tests.webkit import base, db

__all__ = ["base", "db"]  # the fixtures, used by name

VIEWERS = ("anonymous", "alice", "bob", "admin")
#: Nothing kept between requests: each answer is built from the database as it is.
FRESH = WebSettings(rate_burst=10_000, kept_bytes=0, marks_seconds=0)


def queue(db: WebDb) -> dict[int, tuple[int | None, bool]]:
    """Each row of ``replay_views``: game id -> (shape, made)."""
    with closing(sqlite3.connect(db.path)) as con:
        return {game_id: (shape, body is not None)
                for game_id, shape, body in con.execute("SELECT game_id, shape, body FROM replay_views")}


def wait_until_all_made(db: WebDb, seconds: float = 60) -> None:
    """Wait for a running publisher to empty the queue (a deadline, not a timing: minutes beside busy cores)."""
    deadline = time.monotonic() + seconds
    while not all(made for _, made in queue(db).values()):
        assert time.monotonic() < deadline, queue(db)
        time.sleep(0.02)


def game_id(db: WebDb, key: str) -> int:
    with closing(sqlite3.connect(db.path)) as con:
        row = con.execute("SELECT id FROM games WHERE number = ? AND tournament_id = (SELECT id FROM tournaments "
                          "WHERE kind = 'league')", (db.games[key],)).fetchone()
    return int(row[0])


def answers(db: WebDb) -> dict[tuple[str, str], tuple[int, bytes]]:
    """Every viewer's answer (status, headers and bytes) on every league game's page and API route."""
    paths = [f"{prefix}/games/{number}" for number in db.games.values() for prefix in ("", "/api")]
    with TestClient(create_app(db.path, FRESH)) as client:
        return {(viewer, path): _without_csrf(fetch(db, client, viewer, path)) for viewer in VIEWERS
                for path in paths}


def _without_csrf(answer: tuple[int, bytes]) -> tuple[int, bytes]:
    """A signed-in page's CSRF token is its session's (each fetch signs a new one): the one part left out."""
    return answer[0], re.sub(rb'name="csrf" value="[^"]*"', b'name="csrf" value=""', answer[1])


def test_a_group_made_public_queues_its_games_and_an_open_one_does_not(db: WebDb) -> None:
    assert queue(db) == {game_id(db, key): (None, False) for key in ("complete0", "complete1", "void")}
    with LeagueStore(db.path) as store:
        assert publish_queued(store, limit=2) == 2  # newest first: the void group's game, then complete1
        assert queue(db)[game_id(db, "void")] == (GAME_DATA_VERSION, True)
        assert queue(db)[game_id(db, "complete0")] == (None, False)
        assert publish_queued(store) == 1 and publish_queued(store) == 0
    with closing(sqlite3.connect(db.path)) as con, con:  # the open group completes: its game is queued with it
        con.execute("UPDATE league_groups SET status = 'complete' WHERE number = 1")
    assert queue(db)[game_id(db, "open")] == (None, False)
    gone = game_id(db, "complete0")
    with closing(sqlite3.connect(db.path)) as con, con:
        con.execute("DELETE FROM games WHERE id = ?", (gone,))
    assert gone not in queue(db) and len(queue(db)) == 3  # a deleted game took its row with it


def test_every_viewer_gets_the_same_bytes_from_the_kept_views(db: WebDb) -> None:
    """The visibility matrix's replay routes, before and after the views are made: nothing differs, for the
    public, each author (their own seats' views built beside the kept one) and the admin (never kept)."""
    before = answers(db)
    publisher = ReplayPublisher(db.path, idle_seconds=0.01)
    publisher.start()
    try:
        during = answers(db)  # while the publisher writes
        wait_until_all_made(db)
    finally:
        publisher.stop()
    assert publisher.made == 3
    assert answers(db) == before == during


def test_the_kept_bytes_are_what_is_served(db: WebDb) -> None:
    """The control: a kept view marked by hand is served as it is kept, to the public only."""
    with LeagueStore(db.path) as store:
        publish_queued(store)
    number, gid = db.games["complete0"], game_id(db, "complete0")
    with closing(sqlite3.connect(db.path)) as con, con:
        body, = con.execute("SELECT body FROM replay_views WHERE game_id = ?", (gid,)).fetchone()
        view = msgspec.json.decode(unpack(body))
        view["title"] = "KEPT-VIEW-MARK"
        con.execute("UPDATE replay_views SET body = ? WHERE game_id = ?", (encode_view(view), gid))
    shown = answers(db)
    assert b"KEPT-VIEW-MARK" in shown[("anonymous", f"/api/games/{number}")][1]
    assert b"<title>KEPT-VIEW-MARK" in shown[("anonymous", f"/games/{number}")][1]
    assert b"KEPT-VIEW-MARK" in shown[("alice", f"/api/games/{number}")][1]  # the public view, then her own
    assert b"KEPT-VIEW-MARK" not in shown[("admin", f"/api/games/{number}")][1]  # the admin's is built


def test_a_view_kept_by_zlib_before_zstandard_is_served_as_it_was(db: WebDb) -> None:
    """Views a daemon kept before Zstandard (zlib's) are read as such: every viewer's bytes are those of the views
    packed now. The control: the zlib bytes are not Zstandard's (a reader of one format alone would fail)."""
    with LeagueStore(db.path) as store:
        publish_queued(store)
    now = answers(db)
    with closing(sqlite3.connect(db.path)) as con, con:
        kept = con.execute("SELECT game_id, body FROM replay_views WHERE body IS NOT NULL").fetchall()
        assert kept and all(body == pack(unpack(body)) for _, body in kept)  # packed by Zstandard now
        old = [(zlib.compress(unpack(body), 6), gid) for gid, body in kept]
        with pytest.raises(zstandard.ZstdError):  # the control
            zstandard.decompress(old[0][0])
        con.executemany("UPDATE replay_views SET body = ? WHERE game_id = ?", old)
    assert answers(db) == now


def test_a_view_planted_for_an_open_game_or_of_another_shape_is_never_served(db: WebDb) -> None:
    number, gid = db.games["open"], game_id(db, "open")
    planted = encode_view({"title": "PLANTED-OPEN-MARK"})
    with closing(sqlite3.connect(db.path)) as con, con:
        con.execute("INSERT INTO replay_views VALUES (?, ?, ?)", (gid, GAME_DATA_VERSION, planted))
        old = game_id(db, "void")
        con.execute("INSERT OR REPLACE INTO replay_views VALUES (?, ?, ?)",
                    (old, GAME_DATA_VERSION - 1, encode_view({"title": "OLD-SHAPE-MARK"})))
    shown = answers(db)
    assert all(b"PLANTED-OPEN-MARK" not in raw and b"OLD-SHAPE-MARK" not in raw for _, raw in shown.values())
    assert shown[("anonymous", f"/api/games/{number}")][0] == 404
    with LeagueStore(db.path) as store:  # a publisher of a new shape queues every view of another shape, once
        publish_queued(store)
        assert store.requeue_replay_views(GAME_DATA_VERSION) == 1  # the old shape's; the views just made stay
        assert store.requeue_replay_views(GAME_DATA_VERSION) == 0
    assert queue(db)[old] == (None, False)
    assert sum(made for _, made in queue(db).values()) == 3  # the two made, and the one planted for the open game


def test_a_game_that_cannot_be_replayed_is_built_by_the_web_as_before(db: WebDb) -> None:
    gid = game_id(db, "complete1")
    with closing(sqlite3.connect(db.path)) as con, con:
        con.execute("UPDATE games SET replay = ? WHERE id = ?", (zlib.compress(b"not a replay\n"), gid))
    before = answers(db)
    with LeagueStore(db.path) as store:
        assert publish_queued(store) == 3
    assert queue(db)[gid] == (-1, False)
    assert answers(db) == before


def test_a_schema_11_database_queues_its_public_games(base: WebDb, tmp_path: Path) -> None:
    db = league_copy(base, tmp_path)
    with closing(sqlite3.connect(db.path)) as con, con:
        drop_schema_12(con)
        con.execute("UPDATE meta SET value = '11' WHERE key = 'schema_version'")
    with ArenaStore(db.path) as store:
        assert store.schema_version == SCHEMA_VERSION
    assert queue(db) == {game_id(db, key): (None, False) for key in ("complete0", "complete1", "void")}


def test_a_failed_batch_is_tried_again_not_given_up(db: WebDb, monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy database (a write that fails) costs the publisher one wait, not its thread: the views are made after."""
    failures = [StoreError("database is locked")]
    real = publisher_module.publish_queued

    def flaky(store: LeagueStore, limit: int) -> int:
        if failures:
            raise failures.pop()
        return real(store, limit)

    monkeypatch.setattr(publisher_module, "publish_queued", flaky)
    publisher = ReplayPublisher(db.path, idle_seconds=0.01)
    publisher.start()
    try:
        wait_until_all_made(db)
    finally:
        publisher.stop()
    assert failures == [] and publisher.made == 3
