"""Issue 35, an arena that holds in public: a write is answered 401 before a byte of its body is read when its
credential does not hold (on a real uvicorn on 127.0.0.1: the client sends the headers of a huge body and a few
bytes of it, and the answer comes at once), a body over its cap 413 before it is read or as soon as it streams
past it, and a session ends on the server at logout, at revoke and at expiry (a copy of its cookie is refused)."""

from __future__ import annotations

import socket
import sqlite3
import time
from typing import Any
from urllib.parse import urlsplit

import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from referee.results.arena_store import ArenaStore
from referee.results.schema import SCHEMA_VERSION
from referee.results.store import StoreError
from referee.results.web_queries import WebStore
from referee.web.app import create_app
from referee.web.auth import CSRF_HEADER, SESSION_COOKIE, sign_session
from referee.web.settings import MIB, WebSettings
from tests.liveserver import served
from tests.old_schemas import drop_schema_8
from tests.test_web_auth import csrf_of, log_in
from tests.webdb import WebDb
from tests.webkit import base, db

__all__ = ["base", "db"]  # the fixtures, used by name

Client = TestClient  # type: ignore[type-arg]
#: The attack's declared body: 60 MiB, of which the client sends only the first bytes.
HUGE = 60 * MIB
#: What the server may take to answer a write it refuses, its body unread (generous for a loaded CI machine).
AT_ONCE = 3.0


def app_for(db: WebDb, **settings: Any) -> Litestar:
    return create_app(db.path, WebSettings(**{"rate_burst": 10_000, "archive_bytes": 2 * MIB, **settings}))


def writes(app: Litestar) -> list[str]:
    """Every write route of the app (a path with its parameters filled in), the login form's but: each must
    refuse a request without a credential before reading its body."""
    paths = []
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or route.path == "/login":
            continue
        if any(method in ("POST", "PUT", "PATCH", "DELETE") for method in route.route_handler_map):
            path = route.path
            for name, parameter in route.path_parameters.items():
                path = path.replace(f"{{{parameter.full}}}", "1" if parameter.type is int else "retire")
                assert name in parameter.full
            paths.append(path)
    return paths


def answer_of(base_url: str, head: bytes, body: bytes, wait: float) -> bytes:
    """Send ``head`` and ``body`` (the start of a body only), and read the answer's status line and headers for
    up to ``wait`` seconds (b"" if none came: the server is reading the body)."""
    address = urlsplit(base_url)
    assert address.hostname == "127.0.0.1" and address.port is not None
    with socket.create_connection((address.hostname, address.port), timeout=wait) as sock:
        sock.sendall(head + body)
        got, deadline = b"", time.monotonic() + wait
        while b"\r\n\r\n" not in got and time.monotonic() < deadline:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            got += chunk
        return got


def post_head(path: str, length: int, headers: dict[str, str] | None = None) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {length}",
             "Content-Type: application/gzip", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_of(answer: bytes) -> int | None:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def test_every_write_without_a_credential_is_refused_before_its_body_is_read(db: WebDb) -> None:
    """Anonymous, a wrong token, a forged cookie: 401 with 64 KiB of a declared 60 MiB sent. The control: an
    upload with a valid token gets no answer (the server waits for the body it declared)."""
    app = app_for(db)
    paths = writes(app)
    assert {"/api/uploads", "/upload", "/api/challenges", "/api/tables", "/api/tables/1/moves", "/logout",
            "/admin/retire"} <= set(paths)
    with served(app) as url:
        for path in [*paths, "/api/uploads?bot=alpha"]:
            for who in ({}, {"Authorization": "Bearer durak_1_" + "x" * 43}, {"Cookie": f"{SESSION_COOKIE}=a.b"}):
                began = time.monotonic()
                answer = answer_of(url, post_head(path, HUGE, who), b"\x1f\x8b" + b"\0" * 65534, AT_ONCE)
                assert status_of(answer) == 401, (path, who, answer[:200])
                assert time.monotonic() - began < AT_ONCE
        # With a wrong token and no query parameter, the upload route says 401, not 400 (the query is read after).
        assert status_of(answer_of(url, post_head("/api/uploads", HUGE, {"Authorization": "Bearer nope"}), b"",
                                   AT_ONCE)) == 401
        control = answer_of(url, post_head("/api/uploads?bot=alpha", MIB,  # within the archive's cap (2 MiB)
                                           {"Authorization": f"Bearer {db.tokens['alice']}"}), b"\0" * 1024, 0.5)
        assert control == b""  # a valid credential: the server waits for the body


def test_a_body_over_its_cap_is_refused_before_it_is_read_or_as_it_streams_past(db: WebDb) -> None:
    app = app_for(db, archive_bytes=1 * MIB)
    alice = {"Authorization": f"Bearer {db.tokens['alice']}"}
    with served(app) as url:
        for path in ("/api/uploads?bot=alpha", "/upload"):  # declared over the cap: 413, no byte of it sent
            declared = answer_of(url, post_head(path, HUGE, alice), b"", AT_ONCE)
            assert status_of(declared) == 413, (path, declared[:200])
        address = urlsplit(url)
        assert address.hostname == "127.0.0.1" and address.port is not None
        with socket.create_connection((address.hostname, address.port), timeout=AT_ONCE) as sock:
            head = ("POST /api/uploads?bot=alpha HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                    f"Content-Type: application/gzip\r\nAuthorization: {alice['Authorization']}\r\n\r\n").encode()
            sock.sendall(head)
            chunk = b"\0" * (256 * 1024)
            sent = 0
            answer = b""
            for _ in range(64):  # up to 16 MiB: the answer must come long before
                try:
                    sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    break
                sent += len(chunk)
                sock.settimeout(0.05)
                try:
                    answer += sock.recv(65536)
                except TimeoutError:
                    continue
                if b"\r\n\r\n" in answer:
                    break
            if b"\r\n\r\n" not in answer:
                sock.settimeout(AT_ONCE)
                answer += sock.recv(65536)
        assert status_of(answer) == 413 and sent < 16 * MIB, (sent, answer[:200])
        # Control: an archive within the cap is taken.
        small = answer_of(url, post_head("/api/uploads?bot=alpha", 1000, alice), b"\x1f\x8b" + b"\0" * 998, AT_ONCE)
        assert status_of(small) == 202, small[:300]


# -- sessions end on the server ----------------------------------------------------------------------


def copied(db: WebDb, cookie: str) -> Client:
    """A client holding nothing but a copy of a session cookie."""
    client = TestClient(app_for(db))
    client.cookies.set(SESSION_COOKIE, cookie)
    return client


def sessions_of(db: WebDb, author: str) -> int:
    with sqlite3.connect(db.path) as con:
        return int(con.execute("SELECT COUNT(*) FROM web_sessions s JOIN arena_authors a ON a.id = s.author_id "
                               "WHERE a.name = ?", (author,)).fetchone()[0])


def test_a_cookie_copied_before_logout_is_refused_after_it(db: WebDb) -> None:
    with TestClient(app_for(db)) as client:
        csrf = log_in(client, db, "alice")
        cookie = client.cookies[SESSION_COOKIE]
        challenge = {"bot": "beta", "opponents": ["alpha"], "games": 1}  # refused (bob's bot), but only after auth
        with copied(db, cookie) as thief:  # control: the copy works while the session lives
            assert thief.get("/api/tables").status_code == 200
            assert thief.post("/api/challenges", json=challenge, headers={CSRF_HEADER: csrf}).status_code == 403
        assert client.post("/logout", data={"csrf": csrf_of(client.get("/upload").text)},
                           follow_redirects=False).status_code == 303
    assert sessions_of(db, "alice") == 0
    with copied(db, cookie) as thief:
        assert thief.get("/api/tables").status_code == 401
        assert thief.post("/api/challenges", json=challenge, headers={CSRF_HEADER: csrf}).status_code == 401
        answer = thief.get("/authors/alice")
        assert "A-BUILD-LOG" not in answer.text and f"{SESSION_COOKIE}=;" in answer.headers["set-cookie"]


def test_revoking_an_author_ends_their_sessions_on_the_server(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        alice, bob = store.author("alice"), store.author("bob")
        assert alice is not None and bob is not None
        cookies = {"alice": sign_session(store, store.web_key(), alice),
                   "bob": sign_session(store, store.web_key(), bob)}
    for name, cookie in cookies.items():  # control: both live
        with copied(db, cookie) as client:
            assert client.get("/api/tables").status_code == 200, name
    with ArenaStore(db.path) as store:
        store.revoke_author("alice")
    assert sessions_of(db, "alice") == 0 and sessions_of(db, "bob") == 1
    with copied(db, cookies["alice"]) as client:
        assert client.get("/api/tables").status_code == 401
    with copied(db, cookies["bob"]) as client:
        assert client.get("/api/tables").status_code == 200


def test_an_expired_session_is_refused_and_purged(db: WebDb) -> None:
    """The row's expiry holds whatever the cookie says (the server's settings give a longer life here)."""
    with ArenaStore(db.path) as store:
        alice = store.author("alice")
        assert alice is not None
        cookie = sign_session(store, store.web_key(), alice, max_age=60)
    with copied(db, cookie) as client:
        assert client.get("/api/tables").status_code == 200  # control
    with sqlite3.connect(db.path) as con:
        con.execute("UPDATE web_sessions SET expires = ?", (time.time() - 1,))
    with copied(db, cookie) as client:
        assert client.get("/api/tables").status_code == 401
    assert sessions_of(db, "alice") == 0  # purged as it was refused
    with ArenaStore(db.path) as store:  # and any other expired row at the next login
        cookie = sign_session(store, store.web_key(), alice, max_age=60)
    with sqlite3.connect(db.path) as con:
        con.execute("INSERT INTO web_sessions VALUES ('old', ?, 0, 1)", (alice.id,))
    with ArenaStore(db.path) as store:
        sign_session(store, store.web_key(), alice)
    assert sessions_of(db, "alice") == 2


def test_a_schema_7_database_migrates_to_8_and_its_old_cookies_end(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        alice = store.author("alice")
        assert alice is not None
        cookie = sign_session(store, store.web_key(), alice)
    with sqlite3.connect(db.path) as con:
        drop_schema_8(con)
        con.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match=f"schema 7, the web server needs {SCHEMA_VERSION}"):
        WebStore(db.path)  # the server never migrates: the daemon does
    with ArenaStore(db.path) as store:
        assert store.schema_version == SCHEMA_VERSION == 15
    with copied(db, cookie) as client:  # a cookie with no row (as every schema-7 cookie): refused
        assert client.get("/api/tables").status_code == 401
