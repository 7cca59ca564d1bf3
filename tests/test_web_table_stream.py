"""A card table's event stream (``GET /api/tables/N/events``, referee/web/table_events.py) over the web tests'
database, whose table waits for a daemon that never comes (so a stream stays open): the caps on open streams per
author and in all (429, and a slot given back when a stream ends), the heartbeat and the longest life, a session
revoked mid-stream ending it. The stream during a game, its bytes and its resumption: tests/test_web_tables.py."""

from __future__ import annotations

import time
from contextlib import ExitStack

import httpx
from litestar.testing import TestClient

from referee.results.arena_store import ArenaStore
from referee.results.table_store import NewTable
from referee.web.app import create_app
from referee.web.limits import StreamLease, StreamSlots
from referee.web.settings import WebSettings
from tests.liveserver import served
from tests.webdb import WebDb
from tests.webkit import base, bearer, db

__all__ = ["base", "db"]  # the fixtures, used by name


def open_waiting_table(db: WebDb, author: str) -> int:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        return store.open_table(league.id, NewTable(author, "podkidnoy", 0, ["beta@1"]), per_author=9, total=9).id


def wait_until(check: object, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_open_streams_are_capped_per_author_and_in_all(db: WebDb) -> None:
    app = create_app(db.path, WebSettings(rate_burst=10_000, table_streams_per_author=2, table_streams_total=3))
    slots: StreamSlots = app.state["web"].table_streams
    tables = {"alice": db.table, "bob": open_waiting_table(db, "bob")}
    with served(app) as url, httpx.Client(base_url=url, timeout=10) as http, ExitStack() as streams:

        def connect(who: str) -> httpx.Response:
            return streams.enter_context(http.stream("GET", f"/api/tables/{tables[who]}/events",
                                                     headers=bearer(db, who)))

        first, second = connect("alice"), connect("alice")
        assert first.status_code == second.status_code == 200
        third = connect("alice")
        assert third.status_code == 429 and b"open table streams" in third.read()
        assert connect("bob").status_code == 200
        over = connect("bob")
        assert over.status_code == 429 and b"the server has 3" in over.read()
        assert over.headers["retry-after"] == "5"
        first.close()  # a stream the client drops gives its slot back
        wait_until(lambda: slots.count("alice") == 1)
        assert connect("bob").status_code == 200
        assert slots.count() == 3
        streams.close()  # every one dropped: every slot comes back, by the server's own noticing, not at its exit
        wait_until(lambda: slots.count() == 0)


def test_a_quiet_stream_beats_and_ends_at_its_longest_life(db: WebDb) -> None:
    app = create_app(db.path, WebSettings(rate_burst=10_000, table_stream_seconds=0.6,
                                          table_stream_heartbeat_seconds=0.2))
    with TestClient(app) as client:
        began = time.monotonic()
        answer = client.get(f"/api/tables/{db.table}/events", headers=bearer(db, "alice"))
        took = time.monotonic() - began
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    events = answer.content.split(b"\r\n\r\n")
    assert events[0] == b"retry: 500"  # the browser reconnects soon after the end
    assert events[1].startswith(b"id: 0\r\ndata: {") and events[2].startswith(b"event: state\r\n")
    assert b": heartbeat" in events[3:]
    assert 0.6 <= took < 5
    assert app.state["web"].table_streams.count() == 0


def test_a_session_revoked_mid_stream_ends_it_and_its_reconnect_gets_401(db: WebDb) -> None:
    app = create_app(db.path, WebSettings(rate_burst=10_000, table_stream_recheck_seconds=0.2,
                                          table_stream_heartbeat_seconds=0.2))
    path = f"/api/tables/{db.table}/events"
    revoked, beats = None, 0
    with served(app) as url, httpx.Client(base_url=url, timeout=10) as http:
        with http.stream("GET", path, headers=bearer(db, "alice")) as answer:
            assert answer.status_code == 200
            began = time.monotonic()
            for line in answer.iter_lines():  # ends when the server ends the stream
                beats += line == ": heartbeat"
                if revoked is None and time.monotonic() - began > 1.0:  # the control: open a second, beating
                    with ArenaStore(db.path) as store:
                        store.revoke_author("alice")
                    revoked = time.monotonic()
                assert time.monotonic() - began < 6
        assert revoked is not None and time.monotonic() - revoked < 2 and beats >= 3
        assert http.get(path, headers=bearer(db, "alice")).status_code == 401


def test_a_lease_is_given_back_once_however_often_released() -> None:
    slots = StreamSlots(per_author=2, total=3)
    first, second = slots.take("alice"), slots.take("alice")
    assert isinstance(first, StreamLease) and isinstance(second, StreamLease)
    assert "open table streams" in str(slots.take("alice"))
    first.release()
    first.release()  # the stream's end and its generator's collection both release: one slot back, not two
    assert slots.count("alice") == 1 and slots.count() == 1
    assert isinstance(slots.take("alice"), StreamLease)
    assert isinstance(slots.take("bob"), StreamLease)
    assert "the server has 3" in str(slots.take("carol"))
