"""The league's daemon against real bots (issue 26): bots added, updated, retired and reinstated while it runs, a
gate failure, a quarantine, bad input refused in one line, resume after kill -9 with every game stored once, and
the finals.

The daemon runs as ``python -m referee league run`` in a process of its own, as an organizer runs it; the
lifecycle commands run in-process (tests/clirun.py) against its database, as an organizer types them beside it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.clirun import invoke
from tests.entrants import crashing_bot
from tests.sandboxes import needs_bwrap

pytestmark = needs_bwrap

ROOT = Path(__file__).resolve().parents[1]
PYTHON_BOTS = ROOT / "sample_bots" / "python"
#: Crashes in every league game only, so it passes its gate.
LEAGUE_CRASHER = crashing_bot("crasher", "g", "|r")
DEAF = "import sys\nsys.stderr.write('deaf: I never answer hello\\n')\nsys.exit(3)\n"


def config_text(bots: list[str], extra: str = "") -> str:
    lines = ['name = "test league"', "players = [2, 3]", "[league]", "refit_seconds = 0.5", "min_games = 30", extra]
    for bot in bots:
        lines += ["[[bots]]", f'name = "{bot}"', f'command = "{{python}} {bot}_bot.py"', 'dir = "bots"',
                  f'author = "{bot}-author"']
    return "\n".join(lines) + "\n"


@pytest.fixture
def league(open_tmp: Path) -> Iterator[tuple[Path, Path]]:
    """A league folder (its config and a copy of the sample Python bots, readable by every uid) and its
    database path; any daemon left running is killed after the test."""
    (open_tmp / "bots").mkdir(mode=0o755)
    for name in ("random_bot.py", "heuristic_bot.py"):
        shutil.copy(PYTHON_BOTS / name, open_tmp / "bots" / name)
    (open_tmp / "league.toml").write_text(config_text(["random", "heuristic"]))
    yield open_tmp / "league.toml", open_tmp / "league.db"
    for process in DAEMONS:
        if process.poll() is None:
            process.kill()
        process.wait()
    DAEMONS.clear()


DAEMONS: list[subprocess.Popen[bytes]] = []


def start_daemon(config: Path, db: Path) -> subprocess.Popen[bytes]:
    log = open(db.with_suffix(".log"), "ab")  # noqa: SIM115 - the daemon's, closed with the test's folder
    process = subprocess.Popen([sys.executable, "-m", "referee", "league", "run", str(config), "--db", str(db),
                                "--jobs", "2"], stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                               start_new_session=True)
    DAEMONS.append(process)
    return process


def query(db: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    if not db.exists():
        return []
    connection = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return connection.execute(sql, params).fetchall()
    except sqlite3.OperationalError:
        return []  # the schema is not there yet
    finally:
        connection.close()


def until(what: Callable[[], object], seconds: float = 60.0, why: str = "") -> object:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := what():
            return found
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds:g} s: {why}")


def rated_games(db: Path, version: str) -> int:
    """A version's games in complete groups (the board's)."""
    rows = query(db, "SELECT g.record FROM games g JOIN league_groups lg ON lg.tournament_id = g.tournament_id AND "
                     "lg.deal_key = g.deal_key WHERE lg.status = 'complete' AND g.record LIKE ?", (f'%"{version}"%',))
    return len(rows)


def version_state(db: Path, name: str) -> tuple[object, ...] | None:
    rows = query(db, "SELECT retired, quarantined FROM league_versions WHERE name = ?", (name,))
    return rows[0] if rows else None


def crasher_games(db: Path) -> int:
    """The games the crasher lost by a verdict (each its crash)."""
    return len(query(db, "SELECT 1 FROM games WHERE record LIKE '%\"bot\":\"crasher@1\",\"kind\":\"crash\"%'"))


def test_bots_come_and_go_while_the_daemon_runs(league: tuple[Path, Path]) -> None:
    config, db = league
    folder = config.parent
    daemon = start_daemon(config, db)
    until(lambda: rated_games(db, "heuristic@1") >= 10, why="the first versions play")
    until(lambda: query(db, "SELECT 1 FROM league_board WHERE version = 'heuristic@1' AND games > 0"),
          why="the daemon keeps the board for the web server at its refits")

    shutil.copytree(folder / "bots", folder / "late", ignore=shutil.ignore_patterns("heuristic_bot.py"))
    added = invoke("league", "add", str(db), "late", "--dir", str(folder / "late"), "--command",
                   "{python} random_bot.py", "--author", "someone")
    assert added.code == 0 and "done: added late@1" in added.out, added.output
    assert json.loads(str(query(db, "SELECT command FROM league_versions WHERE name = 'late@1'")[0][0])) == \
        [sys.executable, "random_bot.py"]  # {python} as in a config's command
    until(lambda: query(db, "SELECT 1 FROM league_groups WHERE issued > (SELECT added FROM league_versions WHERE "
                            "name = 'late@1')"), why="a group after the add")
    first = query(db, "SELECT seats FROM league_groups WHERE number = (SELECT MIN(number) FROM league_groups "
                      "WHERE issued > (SELECT added FROM league_versions WHERE name = 'late@1'))")
    assert "late@1" in str(first[0][0])  # a newcomer is seated first
    until(lambda: rated_games(db, "late@1") >= 30, why="the newcomer's 30 rated games")

    (folder / "late" / "random_bot.py").write_text((folder / "late" / "random_bot.py").read_text() + "\n# v2\n")
    updated = invoke("league", "update", str(db), "late", "--dir", str(folder / "late"))
    assert updated.code == 0 and "added late@2 (retired late@1)" in updated.out, updated.output
    assert version_state(db, "late@1")[0] is not None  # type: ignore[index]
    until(lambda: rated_games(db, "late@2") >= 3, why="the new version plays")

    retired = invoke("league", "retire", str(db), "late")
    assert retired.code == 0 and "retired late@2" in retired.out, retired.output
    stop = query(db, "SELECT MAX(number) FROM league_groups")[0][0]
    time.sleep(1.0)
    later = query(db, "SELECT seats FROM league_groups WHERE number > ? AND status != 'void'", (stop,))
    assert later and not [seats for (seats,) in later if "late@2" in str(seats)]
    board = invoke("leaderboard", str(db))
    assert "retired: late@1" in board.out and "retired: late@2" in board.out, board.out

    reinstated = invoke("league", "reinstate", str(db), "late")
    assert reinstated.code == 0 and "reinstated late@2" in reinstated.out
    until(lambda: rated_games(db, "late@2") >= 6, why="the reinstated version plays again")

    (folder / "deaf").mkdir(mode=0o755)
    (folder / "deaf" / "bot.py").write_text(DEAF)
    refused = invoke("league", "add", str(db), "deaf", "--dir", str(folder / "deaf"), "--command",
                     f"{sys.executable} -S bot.py")
    assert refused.code == 7 and "refused: deaf@1 failed its gate" in refused.out, refused.output
    assert "deaf: I never answer hello" in refused.out
    assert version_state(db, "deaf@1") is None and not (folder / "league-bots" / "deaf" / "1").exists()

    (folder / "crash").mkdir(mode=0o755)
    (folder / "crash" / "bot.py").write_text(LEAGUE_CRASHER)
    crashing = invoke("league", "add", str(db), "crasher", "--dir", str(folder / "crash"), "--command",
                      f"{sys.executable} -S bot.py")
    assert crashing.code == 0, crashing.output
    state = until(lambda: (version_state(db, "crasher@1") or (None, None))[1], why="the crasher's quarantine")
    assert "lost 3 games in a row by a verdict (the last: crash:" in str(state)
    status = invoke("league", "status", str(db))
    assert "crasher@1" in status.out and "quarantined: lost 3 games" in status.out
    assert "quarantined: crasher@1: lost 3 games" in invoke("leaderboard", str(db)).out
    played = crasher_games(db)
    reinstated = invoke("league", "reinstate", str(db), "crasher")
    assert reinstated.code == 0 and "reinstated crasher@1" in reinstated.out, reinstated.output
    until(lambda: crasher_games(db) >= played + 3, why="the reinstated crasher seated again")
    until(lambda: (version_state(db, "crasher@1") or (None, None))[1], why="quarantined after max_failures more")
    # A version sits in several groups at once (max_in_flight), so a game that began before the third crash was
    # counted may still end in a crash of its own; what the quarantine promises is that no group issued after
    # it seats the crasher.
    stop = query(db, "SELECT MAX(number) FROM league_groups")[0][0]
    until(lambda: query(db, "SELECT MAX(number) FROM league_groups")[0][0] >= stop + 4, why="groups after it")
    later = query(db, "SELECT seats FROM league_groups WHERE number > ?", (stop,))
    assert not [seats for (seats,) in later if "crasher@1" in str(seats)], later
    history = query(db, "SELECT games FROM league_rating_history WHERE version = 'heuristic@1' ORDER BY fitted")
    assert len(history) > 1 and [g for (g,) in history] == sorted({g for (g,) in history})  # a point per change
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(60) == 0  # a stop as asked is the daemon's normal end, not an error (issue 37)
    log = db.with_suffix(".log").read_text()
    assert "error" not in log.splitlines()[-1] and re.fullmatch(
        r"league stopped \(SIGTERM\): \d+ games stored, none twice; \d+ groups? in flight resume first at the "
        r"next start \(the same command\); the board refitted on \d+ rated games", log.splitlines()[-1]), log[-600:]
    stored = dict(query(db, "SELECT version, games FROM league_board"))
    assert all(stored[version] == rated_games(db, version) for version in ("heuristic@1", "random@1", "late@1",
                                                                            "late@2")), stored  # refitted at the stop


def test_bad_input_is_refused_in_one_line(league: tuple[Path, Path], tmp_path: Path) -> None:
    config, db = league
    folder = config.parent
    daemon = start_daemon(config, db)
    until(lambda: query(db, "SELECT 1 FROM league_versions WHERE name = 'heuristic@1'"), why="the league begins")
    (folder / "linked").mkdir()
    (folder / "linked" / "bot.py").write_text("")
    (folder / "linked" / "passwd").symlink_to("/etc/passwd")
    cases = {
        ("update", str(db), "nobody", "--dir", str(folder / "bots")): "no bot 'nobody' in the league",
        ("retire", str(db), "nobody"): "no bot 'nobody' in the league",
        ("add", str(db), "random", "--dir", str(folder / "bots"), "--command", "x"): "has a bot 'random' already",
        ("add", str(db), "new", "--dir", str(folder / "missing"), "--command", "x"): "no folder",
        ("add", str(db), "new", "--dir", str(folder / "linked"), "--command", "x"): "holds a link",
        ("add", str(db), "bad@name", "--dir", str(folder / "bots"), "--command", "x"): "bad bot name",
        ("update", str(db), "random", "--dir", str(folder / "bots")): "did not change since random@1",
        ("add", str(db), "new", "--dir", str(folder / "bots"), "--command", "x", "--env", "LD_PRELOAD=/x"): "refused",
    }
    for args, said in cases.items():
        ran = invoke("league", *args)
        assert ran.code == 2 and ran.output.count("\n") == 1 and said in ran.output, (args, ran.output)
    changed = folder / "changed.toml"
    changed.write_text(config_text(["random", "heuristic"], extra="").replace("[league]", "[rules]\n"
                                                                               "first_bout_limit = 5\n[league]"))
    ran = subprocess.run([sys.executable, "-m", "referee", "league", "run", str(changed), "--db", str(db)],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 3 and "a league daemon runs" in ran.stderr  # one daemon at a time
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(30)
    ran = subprocess.run([sys.executable, "-m", "referee", "league", "run", str(changed), "--db", str(db)],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 3 and ran.stderr.count("\n") == 1 and "whose games differ" in ran.stderr, ran.stderr
    (folder / "wrong.toml").write_text('name = "x"\nformat = "sampled"\n')
    ran = subprocess.run([sys.executable, "-m", "referee", "league", "run", str(folder / "wrong.toml")],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 3 and "key 'format'" in ran.stderr and ran.stderr.count("\n") == 1, ran.stderr


def test_kill_9_loses_nothing_and_stores_nothing_twice_then_the_finals_decide(league: tuple[Path, Path]) -> None:
    config, db = league
    for round_ in range(3):
        daemon = start_daemon(config, db)
        before = (query(db, "SELECT COUNT(*) FROM games") or [(0,)])[0][0]
        until(lambda: (query(db, "SELECT COUNT(*) FROM games") or [(0,)])[0][0] > before + 15,  # noqa: B023
              why=f"games after restart {round_}")
        os.killpg(daemon.pid, signal.SIGKILL)
        daemon.wait()
    games, slots = query(db, "SELECT COUNT(*), COUNT(DISTINCT slot_key) FROM games")[0]
    assert games == slots
    daemon = start_daemon(config, db)
    until(lambda: query(db, "SELECT COUNT(*) FROM games")[0][0] > games + 15, why="games after the last restart")
    # The groups left open are played first, but with two jobs a resumed game slowed by a loaded machine can outlast
    # several new groups on the other job (seen once in CI): what must hold is that none is left behind the league.
    until(lambda: not query(db, "SELECT 1 FROM league_groups WHERE status = 'open' AND number < (SELECT MAX(number) "
                                "FROM league_groups) - 5"), why="the groups left open completed")
    daemon.send_signal(signal.SIGINT)
    assert daemon.wait(60) == 0
    log = db.with_suffix(".log").read_text()
    resumed = [int(n) for n in re.findall(r"versions playing, (\d+) groups? in flight resumed first \(\d+ games to "
                                           r"play\)", log)]
    assert len(resumed) == 4 and sum(resumed[1:]) > 0, log  # the line says what a restart after kill -9 resumes
    assert "league stopped (Ctrl-C)" in log.splitlines()[-1]
    sizes = query(db, "SELECT lg.number, LENGTH(lg.seats) - LENGTH(REPLACE(lg.seats, ',', '')) + 1, COUNT(g.id) "
                      "FROM league_groups lg LEFT JOIN games g ON g.deal_key = lg.deal_key WHERE lg.status = "
                      "'complete' GROUP BY lg.number")
    assert sizes and all(size == stored for _, size, stored in sizes)  # a complete group holds all k rotations
    assert invoke("seed", str(db)).code == 3  # a league that can still run keeps its seed

    finals = invoke("league", "finals", str(db), "--top", "2", "--max-games", "40")
    assert finals.code == 0 and "finals of 'test league' (2 versions" in finals.out, finals.output
    assert "heuristic@1" in finals.out and ("every adjacent pair decided" in finals.out or "budget" in finals.out)
    final_games = query(db, "SELECT COUNT(*) FROM games g JOIN tournaments t ON t.id = g.tournament_id WHERE "
                            "t.kind = 'finals'")[0][0]
    assert 0 < final_games <= 40
    published = invoke("seed", str(db))  # over: the league's seed may be published (kept out of the database)
    assert published.code == 0 and published.out.strip() != "0", published.output
    assert not query(db, "SELECT 1 FROM tournaments WHERE kind IN ('league', 'finals') AND seed != 0")
    ran = subprocess.run([sys.executable, "-m", "referee", "league", "run", str(config), "--db", str(db)],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 3 and "entries are frozen" in ran.stderr


def test_a_clusters_worker_refuses_a_version_whose_files_or_start_differ(league: tuple[Path, Path]) -> None:
    """The check every Dask worker runs on a new version (referee.tournament.executors.dask.check_version), here
    on this machine: the coordinator's digest and a start pass; another digest (a worker without the league's bot
    store at the same path) or a program this worker lacks is refused, naming the bot."""
    import msgspec

    from referee.league.botstore import folder_sha256
    from referee.league.config import load_league
    from referee.tournament.executors.dask import ClusterRun, check_version
    from referee.tournament.worker import BotSpec, WorkerSetup

    config, db = league
    folder = config.parent / "bots"
    table = msgspec.structs.replace(load_league(config).table.config, bots=[])
    setup = WorkerSetup(config_path=str(config), sandbox="bwrap", protected=[str(db)], table=table)
    payload = msgspec.json.encode(ClusterRun(id="x", worker=setup, bots={}, referee="0"))
    spec = BotSpec(name="late@1", argv=[sys.executable, "random_bot.py"], dir=str(folder))
    digest = folder_sha256(folder)
    assert check_version(payload, msgspec.json.encode(spec), digest) is None
    assert "not the coordinator's" in (check_version(payload, msgspec.json.encode(spec), "0" * 64) or "")
    missing = msgspec.structs.replace(spec, argv=["no-such-runtime", "bot"])
    assert "not found" in (check_version(payload, msgspec.json.encode(missing), digest) or "")
