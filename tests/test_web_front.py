"""The front (referee/web/front.py): an anonymous GET of a URL whose kept page is current is answered before the app
routes it, with the bytes the app sends (status, headers in order, body; 200 and 304), for every route a crowd
reads; a request that may be signed in never is (with a control: the same request answered from the kept bytes
when the front does not look for credentials); the rate limit spends one token per request, answered in front or
passed on (with a control: charged twice when admission does not see the front's reading); and the URLs it
remembers are bounded."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import pytest
from litestar.testing import TestClient

from referee.results.arena_store import ArenaStore
from referee.web import auth, front
from referee.web.app import Arena, create_app
from referee.web.front import Front, Shelf
from referee.web.settings import WebSettings
from tests.test_published import ROUTES
from tests.webdb import A_QUARANTINE, WebDb
from tests.webkit import base, bearer, db

__all__ = ["base", "db"]  # the fixtures, used by name

SETTINGS = WebSettings(rate_burst=10**9, rate_per_second=10**6, marks_seconds=0)


def counted(app: Arena, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs ``app``'s front answers, as it answers them."""
    answered: list[str] = []
    answer = app.front.answer

    async def counting(scope: Any, send: Any) -> bool:
        done = await answer(scope, send)
        if done:
            answered.append(scope["path"] + ("?" + scope["query_string"].decode() if scope["query_string"] else ""))
        return done
    monkeypatch.setattr(app.front, "answer", counting)
    return answered


def without_front(app: Arena, monkeypatch: pytest.MonkeyPatch) -> Arena:
    async def never(scope: Any, send: Any) -> bool:
        return False
    monkeypatch.setattr(app.front, "answer", never)
    return app


def seen(response: Any) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    return response.status_code, list(response.headers.raw), response.content


def test_the_front_answers_every_kept_route_with_the_bytes_the_app_sends(db: WebDb,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    served = create_app(db.path, SETTINGS)
    answered = counted(served, monkeypatch)
    plain = without_front(create_app(db.path, SETTINGS), monkeypatch)
    urls = [route.format(game=db.games["complete0"]) for route in ROUTES]
    with TestClient(served) as client, TestClient(plain) as app_only:
        for url in urls:
            first, again, by_app = client.get(url), client.get(url), app_only.get(url)
            assert first.status_code == 200 and seen(again) == seen(first) == seen(by_app), url
            etag = {"If-None-Match": first.headers["etag"]}
            fresh = client.get(url, headers=etag)
            assert fresh.status_code == 304 and seen(fresh) == seen(app_only.get(url, headers=etag)), url
    assert answered == [url for url in urls for _ in range(2)]  # the second 200 and the 304 of each


def test_of_two_if_none_match_headers_the_front_reads_the_first_as_the_app_does(db: WebDb) -> None:
    app = create_app(db.path, SETTINGS)
    with TestClient(app) as client:
        etag = client.get("/api/games").headers["etag"].encode()
        sent: list[dict[str, Any]] = []

        async def send(message: Any) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": "/api/games", "query_string": b"", "state": {},
                 "client": ("127.0.0.1", 1), "headers": [(b"if-none-match", b'"other"'), (b"if-none-match", etag)]}
        assert asyncio.run(app.front.answer(scope, send))
        assert sent[0]["status"] == 200 and sent[1]["body"]  # the first names another page


def test_a_request_that_may_be_signed_in_is_the_apps_to_answer(db: WebDb, monkeypatch: pytest.MonkeyPatch) -> None:
    """An author's own bot shows them its quarantine's reason, whatever the crowd was answered from the front."""
    with ArenaStore(db.path) as store:
        alice = store.author("alice")
        assert alice is not None
        cookie = auth.sign_session(store, store.web_key(), alice)
    app = create_app(db.path, SETTINGS)
    answered = counted(app, monkeypatch)
    with TestClient(app) as client:
        for _ in range(2):
            anyone = client.get("/api/bots/alpha")
        assert answered == ["/api/bots/alpha"] and anyone.json()["versions"][0]["quarantine_reason"] is None
        by_token = client.get("/api/bots/alpha", headers=bearer(db, "alice"))
        client.cookies.set("theme", "dark")
        client.cookies.set(auth.SESSION_COOKIE, cookie)
        by_cookie = client.get("/bots/alpha")
        assert answered == ["/api/bots/alpha"]
        assert by_token.json()["versions"][0]["quarantine_reason"] == A_QUARANTINE
        assert A_QUARANTINE in by_cookie.text
        for own in (by_token, by_cookie):
            assert own.headers["cache-control"] == "no-store" and "etag" not in own.headers
        client.cookies.clear()
        # The control: a front that does not look for credentials answers the author from the crowd's bytes.
        monkeypatch.setattr(front, "may_be_signed_in", lambda headers: False)
        fooled = client.get("/api/bots/alpha", headers=bearer(db, "alice"))
        assert fooled.content == anyone.content and fooled.json()["versions"][0]["quarantine_reason"] is None


def answered_before_refused(db: WebDb, burst: int) -> list[int]:
    """Statuses of one address's requests for two kept URLs, one of them made stale before each of its asks (the
    front takes the token and passes it on to the app), until the first 429."""
    statuses: list[int] = []
    with TestClient(create_app(db.path, WebSettings(rate_burst=burst, rate_per_second=1e-6, marks_seconds=0))) as c:
        while not statuses or statuses[-1] != 429:
            url = "/games" if len(statuses) % 2 else "/api/board"
            if url == "/games":
                with sqlite3.connect(db.path) as raw:  # the games list's mark moves: its kept page is stale
                    raw.execute("UPDATE read_marks SET value = value + 1 WHERE name = 'games'")
            statuses.append(c.get(url).status_code)
    return statuses


def test_one_token_per_request_whether_answered_in_front_or_passed_on(db: WebDb,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert answered_before_refused(db, 8) == [200] * 8 + [429]
    # The control: admission blind to the front's reading charges a request passed on twice.
    monkeypatch.setattr(front, "ADDRESS_WAIT", "elsewhere")
    assert answered_before_refused(db, 8).count(200) < 8


def test_the_urls_remembered_are_bounded(db: WebDb) -> None:
    app = create_app(db.path, SETTINGS)
    bounded = Front(app.front._published, app.front._limits, frozenset(), 5, urls=4)
    for number in range(10):
        bounded.remember({"method": "GET", "path": "/games", "query_string": f"x={number}".encode()},
                         Shelf("games", ("games",), "pages"))
    assert list(bounded._shelves) == [("/games", f"x={n}".encode()) for n in range(6, 10)]
    bounded.remember({"method": "HEAD", "path": "/", "query_string": b""}, Shelf("board", ("board",), "pages"))
    assert ("/", b"") not in bounded._shelves  # a GET's page only
