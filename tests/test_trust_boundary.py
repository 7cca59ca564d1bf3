"""The trust boundary between the web server's user and the root daemon (issue 35): the database and its folder are
the web user's to write, so every row the daemon reads is untrusted input, nothing there may make root act on a
host path or follow a link, and the league's seed is out of the web user's reach.

Each attack runs as the web user (``nobody``, through ``setpriv``) against a league whose database was shared with
it as ``durak serve`` shares it, and each has a control: the same attack where the defence is off (the primitive
the old code used), showing that the attack is real. What the referee added for these defences is imported inside
the tests that use it, so that this file runs against the code before them (each test then fails on the attack).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.bots.sandbox.uids import NOBODY
from referee.league.authors import new_author
from referee.league.botstore import take_snapshot
from referee.league.config import load_league
from referee.league.daemon import open_league, protected_paths
from referee.league.lifecycle import LeagueLock, Lifecycle
from referee.league.manifest import ManifestError, parse_manifest
from referee.league.side import SideQueue
from referee.results.arena_store import ArenaStore
from referee.results.league_store import VersionRow
from referee.web.privileges import WebUser, share_database
from tests.clirun import invoke
from tests.entrants import tar_gz
from tests.sandboxes import python_for_other_users, root_only

pytestmark = root_only

ROOT = Path(__file__).resolve().parents[1]
SECRET = "the root-only secret 7f3a9c"
#: A manifest of 4 KB that nests 2,000 arrays: tomllib recurses once per level.
DEEP_MANIFEST = 'name = "deep"\ncommand = "x"\nx = ' + "[" * 2000 + "]" * 2000 + "\n"


def as_web_user(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a Python ``script`` as the web server's user (nobody, its group, no other): its output."""
    python = python_for_other_users()
    assert python is not None
    return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", python, "-S", "-c",
                           script, *args], capture_output=True, text=True, check=False, timeout=60)


WRITE_ROW = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA busy_timeout=5000")
db.execute(sys.argv[2], tuple(sys.argv[3:]))
print("written")
"""


def write_as_web_user(db: Path, sql: str, *params: str) -> None:
    ran = as_web_user(WRITE_ROW, str(db), sql, *params)
    assert ran.stdout.strip() == "written", ran.stderr  # the web user may write the database: the premise


@pytest.fixture
def arena(open_tmp: Path) -> Iterator[tuple[ArenaStore, Lifecycle]]:
    """A league (process sandbox: nothing here needs bubblewrap) whose database is shared with nobody's group, as
    ``durak serve`` started as root shares it."""
    config = open_tmp / "league.toml"
    config.write_text('name = "boundary league"\nplayers = 2\nsandbox = "process"\n[league]\ngate_games = 1\n')
    loaded = load_league(config)
    db = open_tmp / "league.db"
    with ArenaStore(db) as store:
        league = open_league(store, loaded)
        new_author(store, "alice")
        share_database(db, WebUser.named("nobody"))
        yield store, Lifecycle(store, league, loaded, loaded.table.isolation(protected_paths(db)))


@pytest.fixture
def root_only_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="durak-secret-"))  # mode 700, root's
    (folder / "secret.txt").write_text(SECRET)
    yield folder
    shutil.rmtree(folder)


def files_holding(top: Path, needle: bytes) -> list[str]:
    found = []
    for folder, _, names in os.walk(top):
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink() and needle in path.read_bytes():
                found.append(str(path))
    return found


# -- finding 1: one upload stopped the league ----------------------------------------------------------------


def test_a_deeply_nested_manifest_is_refused_in_one_line() -> None:
    import tomllib

    with pytest.raises(RecursionError):  # the control: the parser itself cannot take it
        tomllib.loads(DEEP_MANIFEST)
    with pytest.raises(ManifestError, match=r"^durak-bot\.toml: bad TOML: nested too deep$"):
        parse_manifest(DEEP_MANIFEST)


def test_durak_submit_refuses_a_deeply_nested_manifest_in_one_line(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "durak-bot.toml").write_text(DEEP_MANIFEST)
    monkeypatch.setenv("DURAK_TOKEN", "durak_1_" + "a" * 43)
    ran = invoke("submit", "http://127.0.0.1:9", str(tmp_path))
    assert ran.code == 2 and "nested too deep" in ran.err and len(ran.err.strip().splitlines()) == 1, ran.output


def test_a_poisoned_upload_is_refused_and_the_next_one_carried_out(arena: tuple[ArenaStore, Lifecycle]) -> None:
    store, lifecycle = arena
    poisoned = store.add_upload(lifecycle.league.id, "alice", "deep", tar_gz({"durak-bot.toml": DEEP_MANIFEST}), "s")
    plain = store.add_upload(lifecycle.league.id, "alice", "other", tar_gz({"durak-bot.toml": 'name = "other"\n'}), "s")
    changes = lifecycle.apply()
    assert [c.status for c in changes] == ["refused", "refused"]
    first, second = store.upload(poisoned.id), store.upload(plain.id)
    assert (first.status, first.steps[-1].step, first.steps[-1].detail) == (
        "refused", "extract", "durak-bot.toml: bad TOML: nested too deep")
    assert second.status == "refused" and "command" in second.steps[-1].detail  # carried out, for its own reason
    assert store.pending_requests(lifecycle.league.id) == []


def test_a_bug_of_the_daemon_fails_one_request_and_the_league_goes_on(arena: tuple[ArenaStore, Lifecycle],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store, lifecycle = arena

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug of the daemon's own")

    monkeypatch.setattr("referee.league.lifecycle.unpack", broken)
    upload = store.add_upload(lifecycle.league.id, "alice", "bot", tar_gz({"durak-bot.toml": "x"}), "s")
    from referee.results.requests import RetireBot

    retire = store.add_request(lifecycle.league.id, "nobot", RetireBot())  # after it, carried out as usual
    changes = lifecycle.apply()
    assert [(c.request.id, c.status) for c in changes] == [(upload.request_id, "failed"), (retire, "refused")]
    request = store.request(upload.request_id or 0)
    assert request.status == "failed" and "ZeroDivisionError: a bug of the daemon's own" in request.result
    done = store.upload(upload.id)
    assert done.status == "refused" and done.steps[-1].step == "referee"


CRASH_MIDWAY = """
import os, sys
from pathlib import Path
from referee.league.config import load_league
from referee.league.daemon import protected_paths
from referee.league.lifecycle import Lifecycle
from referee.league.private import LeaguePrivate
from referee.results.arena_store import ArenaStore
import referee.league.lifecycle as lifecycle

lifecycle.unpack = lambda *args, **kwargs: os.kill(os.getpid(), 9)  # the daemon dies as the upload is carried out
db = Path(sys.argv[1])
with ArenaStore(db) as store:
    league = LeaguePrivate(db).with_seed(store.league())
    loaded = load_league(sys.argv[2])
    Lifecycle(store, league, loaded, loaded.table.isolation(protected_paths(db))).apply()
"""


def test_a_request_that_killed_the_daemon_is_never_taken_again(arena: tuple[ArenaStore, Lifecycle]) -> None:
    store, lifecycle = arena
    upload = store.add_upload(lifecycle.league.id, "alice", "bot", tar_gz({"durak-bot.toml": "x"}), "s")
    died = subprocess.run([sys.executable, "-c", CRASH_MIDWAY, str(store.path), str(lifecycle.loaded.table.path)],
                          cwd=ROOT, capture_output=True, check=False, timeout=60)
    assert died.returncode == -signal.SIGKILL, died.stderr
    assert store.request(upload.request_id or 0).status == "working"  # taken, never finished
    (change,) = lifecycle.apply()  # the next start
    assert change.status == "failed" and "stopped while carrying it out" in change.result
    assert store.upload(upload.id).status == "refused" and lifecycle.apply() == []


def test_an_interrupted_request_is_asked_again(arena: tuple[ArenaStore, Lifecycle],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    store, lifecycle = arena

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("referee.league.lifecycle.unpack", interrupted)
    upload = store.add_upload(lifecycle.league.id, "alice", "bot", tar_gz({"durak-bot.toml": "x"}), "s")
    with pytest.raises(KeyboardInterrupt):
        lifecycle.apply()
    assert store.request(upload.request_id or 0).status == "pending"


# -- finding 2: the web account made root read any file -----------------------------------------------------


@pytest.mark.parametrize("payload", [
    {"dir": "{secret}", "command": ["x"], "env": {}, "author": "mallory"},  # what add wrote before
    {"staged": "0" * 32, "command": ["x"]},  # a staged copy that does not exist
    {"staged": "../../{secret}", "command": ["x"]},  # not of a staged name's form
    {"staged": "0" * 32, "command": ["x"], "dir": "{secret}"},  # an unknown field
])
def test_a_request_row_written_by_the_web_user_reads_no_host_file(arena: tuple[ArenaStore, Lifecycle],
                                                                  root_only_folder: Path,
                                                                  payload: dict[str, object]) -> None:
    store, lifecycle = arena
    assert as_web_user(f"open({str(root_only_folder / 'secret.txt')!r}).read()").returncode != 0  # out of reach
    text = json.dumps(payload).replace("{secret}", str(root_only_folder))
    write_as_web_user(store.path, "INSERT INTO league_requests (tournament_id, kind, bot, payload, created) "
                      "VALUES (?, ?, ?, ?, ?)", str(lifecycle.league.id), "add", "stolen", text, "now")
    (change,) = lifecycle.apply()
    assert change.status == "refused" and store.versions(lifecycle.league.id) == []
    assert files_holding(store.path.parent, SECRET.encode()) == []
    # The control: the copy the daemon made of a request's folder before (as root) carries the secret into the
    # store, readable by everyone.
    copied = take_snapshot(root_only_folder, lifecycle.root, "control", 1)
    assert (copied.dir / "secret.txt").read_text() == SECRET
    assert os.stat(copied.dir / "secret.txt").st_mode & 0o004
    shutil.rmtree(copied.dir.parent)


def test_a_version_row_rewritten_by_the_web_user_runs_from_the_store(arena: tuple[ArenaStore, Lifecycle],
                                                                     root_only_folder: Path) -> None:
    store, lifecycle = arena
    store.add_version(lifecycle.league.id, VersionRow(name="b@1", bot="b", number=1, author="a", command=["x"],
                                                      env={}, dir=str(lifecycle.root / "b" / "1"), sha256="s"))
    write_as_web_user(store.path, "UPDATE league_versions SET dir = ?", str(root_only_folder))
    raw = sqlite3.connect(store.path).execute("SELECT dir FROM league_versions").fetchone()[0]
    assert raw == str(root_only_folder)  # the control: the row now names the host folder
    (version,) = store.versions(lifecycle.league.id)
    assert version.dir == str(lifecycle.root / "b" / "1")


@pytest.mark.parametrize(("bot", "name"), [("..", "..@1"), (".staged", ".staged@1"), ("a/../../etc", "a/../../etc@1"),
                                          ("b", "b@2")])
def test_a_version_row_that_names_no_store_folder_never_plays(arena: tuple[ArenaStore, Lifecycle], bot: str,
                                                              name: str) -> None:
    store, lifecycle = arena
    write_as_web_user(store.path, "INSERT INTO league_versions (tournament_id, name, bot, number, author, command, "
                      "env, dir, sha256, added) VALUES (?, ?, ?, 1, 'a', '[\"x\"]', '{}', '/etc', 's', 'now')",
                      str(lifecycle.league.id), name, bot)
    (version,) = store.versions(lifecycle.league.id)
    assert (version.name, version.dir, version.command, version.active) == (name, "", [], False)
    assert version.quarantined is not None and "never played" in version.quarantined


def test_a_forged_upload_request_is_refused(arena: tuple[ArenaStore, Lifecycle]) -> None:
    store, lifecycle = arena
    theirs = store.add_upload(lifecycle.league.id, "alice", "bot", tar_gz({"durak-bot.toml": "x"}), "s")
    forged = json.dumps({"upload": theirs.id, "author": "alice"})
    write_as_web_user(store.path, "INSERT INTO league_requests (tournament_id, kind, bot, payload, created) "
                      "VALUES (?, 'upload', 'bot', ?, 'now')", str(lifecycle.league.id), forged)
    changes = lifecycle.apply()
    assert [c.status for c in changes] == ["refused", "refused"]  # the upload's own (a bad manifest), the forgery
    assert "not this request's to carry out" in changes[1].result


@pytest.mark.parametrize(("kind", "payload", "why"), [
    ("add", "{", "payload is refused"),
    ("retire", '{"by": "web", "then": "rm -rf /"}', "unknown field"),
    ("quarantine", json.dumps({"reason": "x" * 10_000}), "length"),
    ("upload", json.dumps({"upload": 2**70, "author": "alice"}), "payload is refused"),
    ("chmod", "{}", "unknown request kind"),
    ("finals", json.dumps({"top": "all"}), "Expected `int`"),
])
def test_a_malformed_request_row_is_refused_with_why(arena: tuple[ArenaStore, Lifecycle], kind: str, payload: str,
                                                     why: str) -> None:
    store, lifecycle = arena
    write_as_web_user(store.path, "INSERT INTO league_requests (tournament_id, kind, bot, payload, created) "
                      "VALUES (?, ?, 'bot', ?, 'now')", str(lifecycle.league.id), kind, payload)
    (change,) = lifecycle.apply()
    assert change.status == "refused" and why in change.result, change.result
    assert store.request(change.request.id).status == "refused"


def test_a_config_rewritten_by_the_web_user_is_not_read(arena: tuple[ArenaStore, Lifecycle]) -> None:
    store, lifecycle = arena
    store.add_version(lifecycle.league.id, VersionRow(name="b@1", bot="b", number=1, author="a", command=["x"],
                                                      env={}, dir="", sha256="s"))
    write_as_web_user(store.path, "UPDATE tournaments SET config = ?", 'name = "x"\nsandbox = "none"\nnot toml [')
    with pytest.raises(Exception, match=r"TOML|toml|Expected"):  # the control: the rewritten text is no config
        load_league(lifecycle.loaded.table.path, text=store.league().config, with_bots=False)  # type: ignore[union-attr]
    ran = invoke("league", "quarantine", str(store.path), "b", "--wait", "10")
    assert ran.code == 0 and "quarantined b@1" in ran.out, ran.output  # carried out with the daemon's own config


@pytest.mark.parametrize(("seats", "games", "why"), [
    ("not json", "4", "not a table the league plays"),
    ('["b@1", "b@1"]', "4", "not a table the league plays"),
    ('["b@1", "c@1"]', str(10**12), "not 1 to 100"),
    ('["b@1", "c@1"]', "'many'", "not 1 to 100"),
])
def test_a_side_request_written_by_the_web_user_is_voided(arena: tuple[ArenaStore, Lifecycle], seats: str,
                                                          games: str, why: str) -> None:
    store, lifecycle = arena
    versions = {}
    for bot in ("b", "c"):
        versions[f"{bot}@1"] = store.add_version(lifecycle.league.id, VersionRow(
            name=f"{bot}@1", bot=bot, number=1, author=bot, command=["x"], env={}, dir="", sha256=bot))
    write_as_web_user(store.path, "INSERT INTO side_requests (league_id, kind, author, seats, games, created) VALUES "
                      f"(?, 'challenge', 'b', ?, {games}, 'now')", str(lifecycle.league.id), seats)
    queue = SideQueue(store, lifecycle.league, lifecycle.loaded)
    assert queue.more(versions, {}) == []  # the daemon's next look: nothing to play, and no exception
    (side,) = store.sides(lifecycle.league.id)
    assert side.status == "void" and why in side.result, side


# -- finding 3: links in the shared database folder --------------------------------------------------------


PLANT = "import os, sys\nfor link in sys.argv[2:]:\n    os.symlink(sys.argv[1], link)\nprint('planted')\n"


def test_links_planted_beside_the_database_are_never_followed(arena: tuple[ArenaStore, Lifecycle],
                                                             root_only_folder: Path) -> None:
    store, lifecycle = arena
    db = store.path
    store.close()  # both processes stopped: SQLite removed its -wal and -shm
    target = root_only_folder / "secret.txt"
    target.chmod(0o644)
    links = [f"{db}-wal", f"{db}-shm", f"{db}.lock"]
    ran = as_web_user(PLANT, str(target), *links)
    assert ran.stdout.strip() == "planted", ran.stderr
    status = invoke("league", "status", str(db))
    assert status.code != 0 and "league.db-wal is a link" in status.err and len(status.err.splitlines()) == 1
    from referee.league.lifecycle import LockError

    with pytest.raises(LockError, match=r"league\.db\.lock: it is a link"):
        LeagueLock(db).acquire()
    run = invoke("league", "run", str(lifecycle.loaded.table.path), "--db", str(db))
    assert run.code != 0 and "is a link" in run.err and len(run.err.splitlines()) == 1, run.output
    assert (os.stat(target).st_mode & 0o777, target.read_text()) == (0o644, SECRET)  # untouched
    # The control: what the old make_private did to the -wal link (chmod follows it) changes the target.
    os.chmod(f"{db}-wal", 0o600)
    assert os.stat(target).st_mode & 0o777 == 0o600


# -- finding 10: the league's seed in the web user's reach --------------------------------------------------


SCAN = """
import json, os, sqlite3, sys
seed, folder, db = int(sys.argv[1]), sys.argv[2], sys.argv[3]
found = []
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
    for row in con.execute(f'SELECT * FROM "{table}"'):
        if any(str(seed) in str(value) for value in row):
            found.append(f"row of {table}")
needles = [str(seed).encode(), seed.to_bytes(8, "big", signed=True), seed.to_bytes(8, "little", signed=True)]
for top, dirs, names in os.walk(folder):
    for name in names:
        path = os.path.join(top, name)
        try:
            data = open(path, "rb").read()
        except OSError:
            continue
        if any(needle in data for needle in needles):
            found.append(path)
print(json.dumps(found))
"""


def test_the_web_user_finds_no_seed(arena: tuple[ArenaStore, Lifecycle], open_tmp: Path) -> None:
    from referee.league.private import LeaguePrivate

    store, lifecycle = arena
    seed = lifecycle.league.seed
    assert seed != 0 and LeaguePrivate(store.path).with_seed(store.league()).seed == seed  # type: ignore[arg-type]
    ran = as_web_user(SCAN, str(seed), str(open_tmp), str(store.path))
    assert json.loads(ran.stdout) == [], ran.stderr
    assert as_web_user(f"import os; os.listdir({str(LeaguePrivate(store.path).dir)!r})").returncode != 0


def test_a_seed_left_in_an_older_league_row_is_moved_out(open_tmp: Path) -> None:
    config = open_tmp / "league.toml"
    config.write_text('name = "old league"\nplayers = 2\nsandbox = "process"\n')
    loaded = load_league(config)
    seed = 0x5EED_1234_ABCD
    with ArenaStore(open_tmp / "league.db") as store:  # a league as the referee made it before: its seed in its row
        store.create_league(loaded.config.name, str(config), loaded.text, loaded.fingerprint(), seed)
        share_database(store.path, WebUser.named("nobody"))
    found = json.loads(as_web_user(SCAN, str(seed), str(open_tmp), str(open_tmp / "league.db")).stdout)
    assert "row of tournaments" in found  # the control: the scan finds a seed where it is
    with ArenaStore(open_tmp / "league.db") as store:
        assert open_league(store, loaded).seed == seed  # the daemon's next start moves it
        assert store.league().seed == 0  # type: ignore[union-attr]
    assert json.loads(as_web_user(SCAN, str(seed), str(open_tmp), str(open_tmp / "league.db")).stdout) == []
