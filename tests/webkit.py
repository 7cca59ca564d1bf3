"""The web tests' set-up, written once: a module's league (``base``) and a copy of it for one test (``db``), a
test client over it (``client_for``), an author's ``Authorization`` header (``bearer``), logging in through the
form (``log_in``, ``csrf_of``) and a free port for a server (``free_port``). A test module takes the fixtures by
importing them (``from tests.webkit import base, db`` and ``__all__ = ["base", "db"]``: used by name);
each folder made here is removed when its fixture ends."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from referee.web.app import create_app
from referee.web.settings import WebSettings
from tests.webdb import WebDb, built, league_copy

#: A budget no test's requests spend: the rate limits' own tests set theirs.
UNLIMITED = 10_000


@pytest.fixture(scope="module")
def base() -> Iterator[WebDb]:
    """The module's league (:func:`tests.webdb.build`), removed after its last test."""
    yield from built("durak-test-web-")


@pytest.fixture
def db(base: WebDb, tmp_path: Path) -> WebDb:
    """A copy of the module's league for one test (uploads, requests and sessions change it)."""
    return league_copy(base, tmp_path)


def client_for(db: WebDb, **settings: Any) -> TestClient[Any]:
    """A test client of the app over ``db``, with ``settings`` (the rate limits out of the way unless given)."""
    return TestClient(create_app(db.path, WebSettings(**{"rate_burst": UNLIMITED, **settings})))


def bearer(db: WebDb, who: str) -> dict[str, str]:
    """``who``'s ``Authorization`` header."""
    return {"Authorization": f"Bearer {db.tokens[who]}"}


def csrf_of(page: str) -> str:
    """The CSRF token of the first form on ``page``."""
    found = re.search(r'name="csrf" value="([^"]*)"', page)
    assert found is not None
    return found.group(1)


def log_in(client: TestClient[Any], db: WebDb, name: str) -> str:
    """Log ``name`` in through the login form; the session's CSRF token (as its pages' forms carry it)."""
    token = csrf_of(client.get("/login").text)
    answer = client.post("/login", data={"token": db.tokens[name], "csrf": token}, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == f"/authors/{name}"
    return csrf_of(client.get("/upload").text)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (a server told to listen on it takes it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
