"""``durak serve`` as a process: started as root it serves as nobody (read from /proc), over a database shared with
nobody's group; a non-loopback host needs --public; a database it cannot serve is refused in one line; the access
log never holds a token; a worker's garbage collector is set for serving."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from referee.cli.serve import SHUTDOWN_GRACE_SECONDS
from referee.results.arena_store import ArenaStore
from referee.web.serving import YOUNG_COLLECTION
from tests.webdb import WebDb, build, why_nobody_cannot_serve
from tests.webkit import free_port

ROOT = Path(__file__).resolve().parent.parent


def durak(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "referee", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def get(url: str, token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.fixture
def league() -> Iterator[WebDb]:
    """A league in a folder of its own under /tmp (pytest's tmp_path sits in a folder nobody cannot enter)."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-serve-"))
    yield build(folder)
    shutil.rmtree(folder)


def ids(pid: int) -> dict[str, list[str]]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: value.split() for key, _, value in (line.partition(":") for line in lines)
            if key in ("Uid", "Gid", "Groups")}


@pytest.fixture
def served(league: WebDb) -> Iterator[tuple[WebDb, subprocess.Popen[str], str]]:
    if (why := why_nobody_cannot_serve()) is not None:
        pytest.skip(why)
    port = free_port()
    server = durak("serve", str(league.path), "--port", str(port), cwd=league.path.parent)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if get(f"{url}/api/board")[0] == 200:
                break
        except OSError:
            if server.poll() is not None:
                break
            time.sleep(0.1)
    if server.poll() is not None or time.monotonic() >= deadline:
        server.kill()
        pytest.fail(f"durak serve did not answer: {server.communicate()}")
    try:
        yield league, server, url
    finally:
        server.terminate()
        server.wait(10)


def test_started_as_root_it_serves_as_nobody(served: tuple[WebDb, subprocess.Popen[str], str]) -> None:
    league, server, url = served
    assert ids(server.pid) == {"Uid": ["65534"] * 4, "Gid": ["65534"] * 4, "Groups": []}
    status, body = get(f"{url}/api/board")
    assert status == 200 and b'"alpha@1"' in body
    folder = league.path.parent.stat()
    assert folder.st_gid == 65534 and folder.st_mode & 0o1070 == 0o1070  # group rwx and sticky
    assert league.path.stat().st_uid == 0 and league.path.stat().st_mode & 0o060 == 0o060
    # It writes requests through the shared group: an upload lands in the database.
    request = urllib.request.Request(f"{url}/api/uploads?bot=alpha", data=b"\x1f\x8bgz", method="POST", headers={
        "Authorization": f"Bearer {league.tokens['alice']}", "Content-Type": "application/gzip"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.status == 202
    with ArenaStore(league.path) as store:
        assert len(store.uploads(1)) == 3


def test_the_access_log_never_holds_a_token(served: tuple[WebDb, subprocess.Popen[str], str]) -> None:
    league, server, url = served
    token = league.tokens["bob"]
    assert get(f"{url}/api/authors/bob", token)[0] == 200
    assert get(f"{url}/api/authors/bob", token + "x")[0] == 401
    server.terminate()
    out, err = server.communicate(timeout=10)
    assert '"GET /api/authors/bob HTTP/1.1" 200' in out  # the access log (stdout) is on: paths only
    assert token.split("_", 2)[2] not in out + err


def test_a_table_stream_flows_as_nobody_and_does_not_hold_up_a_stop(
        served: tuple[WebDb, subprocess.Popen[str], str]) -> None:
    """A card table's event stream through ``durak serve`` (its table waits for a daemon that never comes, so the
    stream stays open); SIGTERM ends the server within its grace, the stream cut, not waited for."""
    league, server, url = served
    request = urllib.request.Request(f"{url}/api/tables/{league.table}/events",
                                     headers={"Authorization": f"Bearer {league.tokens['alice']}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.headers["content-type"].startswith("text/event-stream")
        assert answer.readline() == b"retry: 500\r\n"
        answer.readline()
        assert answer.readline().startswith(b"id: 0\r\n")
        began = time.monotonic()
        server.terminate()
        server.wait(SHUTDOWN_GRACE_SECONDS + 5)
        assert time.monotonic() - began < SHUTDOWN_GRACE_SECONDS + 3


def test_a_public_host_needs_public(league: WebDb) -> None:
    server = durak("serve", str(league.path), "--host", "0.0.0.0", cwd=league.path.parent)
    _, err = server.communicate(timeout=30)
    assert server.returncode == 2 and err.splitlines() == [
        "durak: error: --host 0.0.0.0 is reachable from other machines: add --public (and TLS in front)"]


def test_a_database_without_a_league_or_of_an_older_schema_is_refused(tmp_path: Path, league: WebDb) -> None:
    with ArenaStore(tmp_path / "empty.db"):
        pass
    server = durak("serve", str(tmp_path / "empty.db"), cwd=tmp_path)
    _, err = server.communicate(timeout=30)
    assert server.returncode == 6 and len(err.splitlines()) == 1 and "holds no league" in err
    with closing(sqlite3.connect(league.path)) as con:
        con.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
        con.commit()
    server = durak("serve", str(league.path), cwd=tmp_path)
    _, err = server.communicate(timeout=30)
    assert server.returncode == 6 and len(err.splitlines()) == 1 and "has database schema 4" in err


def test_a_workers_collector_is_set_for_serving(league: WebDb) -> None:
    """The app of a ``durak serve`` worker (uvicorn's factory, in a process of its own) leaves the start's objects
    frozen out of collections and the youngest generation collected every YOUNG_COLLECTION allocations; the control:
    the same interpreter before it has CPython's defaults."""
    probe = ("import gc, json; before = (gc.get_freeze_count(), gc.get_threshold()[0]); "
             "from referee.web.app import app_from_environment; app_from_environment(); "
             "print(json.dumps([before, (gc.get_freeze_count(), gc.get_threshold()[0])]))")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DURAK_WEB_DB": str(league.path)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    (frozen_before, young_before), (frozen, young) = json.loads(done.stdout)
    assert (frozen_before, young_before) == (0, 700)
    assert frozen > 10_000 and young == YOUNG_COLLECTION
