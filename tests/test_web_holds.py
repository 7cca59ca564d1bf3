"""Issue 35's smaller findings: the API document is served alone (its render pages loaded a CDN's scripts, which
the CSP blocks), a challenge quota's 429 says when to come back, a revoked author's open card tables end (and stop
counting against the arena's caps), and a connection that never finishes its headers is closed."""

from __future__ import annotations

import socket
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from litestar.testing import TestClient

from referee.results.arena_store import REVOKED_TABLE, ArenaStore
from referee.web.app import create_app
from referee.web.serving import (
    HEADER_SECONDS,
    PROTOCOLS,
    HeaderBoundHttpToolsProtocol,
    HttpToolsProtocol,
    uvicorn_options,
)
from referee.web.settings import WebSettings
from tests.liveserver import served
from tests.webdb import WebDb
from tests.webkit import base, bearer, client_for, db

__all__ = ["base", "db"]  # the fixtures, used by name

Client = TestClient  # type: ignore[type-arg]


def test_only_the_api_document_is_served(db: WebDb) -> None:
    with client_for(db) as client:
        document = client.get("/schema/openapi.json")
        assert document.status_code == 200 and "json" in document.headers["content-type"]
        assert "/api/uploads" in document.json()["paths"]  # control: the document itself
        for page in ("swagger", "redoc", "elements", "rapidoc", "stoplight", "openapi.yaml"):
            answer = client.get(f"/schema/{page}")
            assert answer.status_code == 404, page
            assert b"cdn" not in answer.content.lower() and b"<script" not in answer.content
        root = client.get("/schema")
        assert b"<script" not in root.content and b"cdn" not in root.content.lower()


def test_a_challenge_quotas_429_says_when_it_frees(db: WebDb) -> None:
    """Quota 10 games an hour: 6 asked 50 minutes ago, 4 twenty minutes ago (and the 2 of the league's own
    challenge of alice's, just now): 3 more must wait for the 6 to leave the hour, in 10 minutes."""
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        now = datetime.now(UTC)
        for games, ago in ((6, 50), (4, 20)):
            side = store.add_side(league.id, "challenge", "alice", ("alpha@1", "beta@1"), games)
            store._db.execute("UPDATE side_requests SET created = ? WHERE id = ?",
                              ((now - timedelta(minutes=ago)).isoformat(timespec="microseconds"), side.id))
        store._db.execute("UPDATE league_versions SET quarantined = NULL")  # alpha plays again
    asked = {"bot": "alpha", "opponents": ["beta"], "games": 3}
    with client_for(db, side_games_per_hour=10) as client:
        refused = client.post("/api/challenges", json=asked, headers=bearer(db, "alice"))
        assert refused.status_code == 429 and "challenge quota" in refused.json()["detail"]
        assert 598 <= int(refused.headers["retry-after"]) <= 601, refused.headers
        with sqlite3.connect(db.path) as con:  # control: once the 6 have left the hour, the 3 are taken
            con.execute("UPDATE side_requests SET created = ? WHERE games = 6",
                        ((now - timedelta(minutes=61)).isoformat(timespec="microseconds"),))
        assert client.post("/api/challenges", json=asked, headers=bearer(db, "alice")).status_code == 202
    with client_for(db, side_cpu_seconds_per_hour=0.0) as client:  # the CPU quota's 429 carries one too
        refused = client.post("/api/challenges", json={**asked, "games": 1}, headers=bearer(db, "alice"))
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1


def test_revoking_an_author_ends_their_open_tables_and_frees_their_places(db: WebDb) -> None:
    """Alice's table (waiting) fills an arena of one table: bob cannot open one until alice is revoked."""
    wanted = {"variant": "podkidnoy", "bots": ["beta@1"], "seat": 0}
    with client_for(db, tables_total=1) as client:
        assert client.post("/api/tables", json=wanted, headers=bearer(db, "bob")).status_code == 429  # control
        with ArenaStore(db.path) as store:
            store.revoke_author("alice")
            table = store.table(db.table)
        assert table is not None and table.status == "over" and table.reason == REVOKED_TABLE
        opened = client.post("/api/tables", json=wanted, headers=bearer(db, "bob"))
        assert opened.status_code == 201, opened.text


def test_a_table_being_played_when_its_author_is_revoked_is_resigned(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        store.start_table(db.table)
        store.revoke_author("alice")
        table = store.table(db.table)
        assert table is not None and table.status == "over" and store.is_resigned(db.table)


def _connect(url: str) -> socket.socket:
    address = urlsplit(url)
    assert address.hostname == "127.0.0.1" and address.port is not None
    return socket.create_connection((address.hostname, address.port), timeout=5)


def _closed_within(sock: socket.socket, seconds: float) -> float | None:
    """When the server closed ``sock`` (seconds from now), or None if it was still open after ``seconds``."""
    began = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - began


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda protocol: protocol.__name__)
def test_a_connection_that_never_finishes_its_headers_is_closed(db: WebDb, protocol: Any) -> None:
    bound = 0.5
    app = create_app(db.path, WebSettings(rate_burst=10_000))
    with served(app, **uvicorn_options(header_seconds=bound, protocol=protocol)) as url, _connect(url) as partial, \
            _connect(url) as silent, _connect(url) as whole:
        partial.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        whole.sendall(b"GET /api/board HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert whole.recv(12) == b"HTTP/1.1 200"  # control: a request that came is answered
        for sock in (partial, silent):
            took = _closed_within(sock, bound + 2.0)
            assert took is not None and took < bound + 2.0
    # Without the bound (uvicorn's own settings), the half-sent request holds its connection open.
    with served(app, http=_uvicorns(protocol)) as url, _connect(url) as partial:
        partial.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        assert _closed_within(partial, 1.5) is None


def _uvicorns(protocol: Any) -> Any:
    """The uvicorn protocol a bounded one is made from."""
    return next(base for base in protocol.__mro__ if base.__module__.startswith("uvicorn."))


def _header_flood(sock: socket.socket, kib: int) -> int:
    """Send a request line and one endless header, 1 KiB at a time: the KiB sent before the server closed."""
    sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Flood: ")
    for sent in range(kib):
        try:
            sock.sendall(b"a" * 1024)
        except (BrokenPipeError, ConnectionResetError):
            return sent
        time.sleep(0.0005)
    return kib


def test_a_header_block_past_its_bytes_is_refused_and_a_large_body_is_not(db: WebDb) -> None:
    """On httptools (which buffers a header block whatever its size), the header bytes are bounded here: a header
    sent on and on is cut soon after 16 KiB, where uvicorn's own protocol takes 4 MiB of it; a body of 256 KiB
    (read after its headers) is not counted."""
    if HeaderBoundHttpToolsProtocol is None:
        pytest.skip("httptools is not installed: h11 bounds header blocks itself")
    app = create_app(db.path, WebSettings(rate_burst=10_000))
    with served(app, **uvicorn_options(protocol=HeaderBoundHttpToolsProtocol)) as url:
        with _connect(url) as flood:
            assert _header_flood(flood, 4096) < 256
        with _connect(url) as upload:
            body = b"\x1f\x8b" + b"x" * (256 * 1024)
            upload.sendall(b"POST /api/uploads?bot=alpha HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                           b"application/gzip\r\nAuthorization: Bearer " + db.tokens["alice"].encode() +
                           b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            assert upload.recv(12) == b"HTTP/1.1 202"
    with served(app, http=HttpToolsProtocol) as url, _connect(url) as flood:  # control: no bound of its own
        assert _header_flood(flood, 4096) == 4096


def test_durak_serve_uses_the_bound() -> None:
    options = uvicorn_options()
    assert options["http"] is PROTOCOLS[0] and PROTOCOLS[0].header_seconds == HEADER_SECONDS
    assert options["timeout_keep_alive"] <= HEADER_SECONDS
    source = (Path(__file__).resolve().parents[1] / "referee" / "cli" / "serve.py").read_text()
    assert "**uvicorn_options()" in source
