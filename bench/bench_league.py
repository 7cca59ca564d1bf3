"""Benchmark: the league's daemon over real bots, and its board's refit at a million games.

Run by hand from the project root::

    python bench/bench_league.py refit [--games 1000000] [--versions 200]
    python bench/bench_league.py run [--minutes 30] [--add-every 240] [--kills 5] [--jobs 2]
    python bench/bench_league.py throughput [--seconds 120] [--jobs 2]

refit: a league database of synthetic games (2-6 players, every group complete) and the time of one refit (read
the rated games, fit them), as the daemon runs it; the daemon can refit no more often than that.
run: a league of the C and Python sample bots and the search bot at 20, 50 and 100 playouts, 2-player tables,
with a bot added every --add-every seconds (copies of the heuristic and random bots under new names) and the
daemon killed with SIGKILL --kills times at random moments (restarted at once); then the time from each add to
its version's 30th rated game, the games stored against the distinct (group, rotation) slots (equal: none twice)
and every complete group holding all of its rotations.
throughput: the daemon's games/s against ``durak tournament`` with the same bots and settings (the random,
heuristic, C and JavaScript bots, 2 players, the default clock, bwrap), each run for --seconds and measured over
its middle (the first and last 10% left out). Four versions fill two 2-player tables at once: with
``max_in_flight = 1`` fewer could not keep two workers busy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from referee.league.board import refit  # noqa: E402
from referee.results.league_store import LeagueStore  # noqa: E402

PYTHON = sys.executable


def bots_folder(top: Path) -> Path:
    """The bots of the benchmark in a folder every uid can read: the Python samples and the C bot, built."""
    folder = top / "bots"
    shutil.copytree(ROOT / "sample_bots" / "python", folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "sample_bots" / "js" / "bot.js", folder / "bot.js")
    subprocess.run(["gcc", "-O2", "-std=c99", "-o", str(folder / "cbot"), str(ROOT / "sample_bots" / "c" / "bot.c")],
                   check=True)
    for path in [top, folder, *folder.iterdir()]:
        path.chmod(0o755)
    return folder


BOTS = {"random": "{python} random_bot.py", "heuristic": "{python} heuristic_bot.py", "c": "./cbot",
        "js": "node bot.js", "search20": "{python} search_bot.py --playouts 20",
        "search50": "{python} search_bot.py --playouts 50", "search100": "{python} search_bot.py --playouts 100"}


def league_config(top: Path, bots: dict[str, str]) -> Path:
    lines = ['name = "bench league"', "players = 2", "[league]", "refit_seconds = 30.0"]
    for name, command in bots.items():
        lines += ["[[bots]]", f'name = "{name}"', f'command = "{command}"', 'dir = "bots"', f'author = "{name}"']
    path = top / "league.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def tournament_config(top: Path, bots: dict[str, str], deals: int) -> Path:
    lines = ['name = "bench tournament"', "players = 2", f"deals = {deals}"]
    for name, command in bots.items():
        lines += ["[[bots]]", f'name = "{name}"', f'command = "{command}"', 'dir = "bots"']
    path = top / "tournament.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def start_daemon(config: Path, db: Path, jobs: int, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([PYTHON, "-m", "referee", "league", "run", str(config), "--db", str(db), "--jobs",
                             str(jobs)], stdout=log.open("ab"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)


def query(db: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    connection = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return connection.execute(sql, params).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        connection.close()


def stored_times(db: Path) -> list[float]:
    """When each game was stored (seconds since the epoch), in order."""
    return [datetime.fromisoformat(str(text)).timestamp() for (text,) in query(db, "SELECT finished FROM games "
                                                                               "ORDER BY id")]


def middle_rate(times: list[float]) -> float:
    """Games per second over the middle 80% of a run's stored games."""
    if len(times) < 20:
        return 0.0
    start, end = times[len(times) // 10], times[len(times) * 9 // 10]
    return (len(times) * 8 // 10) / (end - start) if end > start else 0.0


@dataclass(frozen=True)
class SyntheticGroup:
    """A complete deal group of the synthetic league: its table (rotation 0's seats) and each rotation's fool."""

    number: int
    table: list[str]
    fools: list[str]

    def rotations(self) -> list[list[str]]:
        """Each rotation's seats, in order."""
        return [self.table[r:] + self.table[:r] for r in range(len(self.table))]


def deal_groups(rng: random.Random, names: list[str], strength: dict[str, float], games: int,
                first: int = 0) -> Iterator[SyntheticGroup]:
    """Complete groups of 2-6 versions drawn from ``names`` (numbered from ``first``) until ``games`` games; each
    rotation's fool is the version weakest by ``strength`` plus noise (sd 1.5). Also bench/arena_data.py's."""
    game, number = 0, first
    while game < games:
        table = rng.sample(names, rng.randint(2, 6))
        fools = [min(seats, key=lambda n: strength[n] + rng.gauss(0, 1.5))
                 for seats in (table[r:] + table[:r] for r in range(len(table)))]
        yield SyntheticGroup(number, table, fools)
        game += len(table)
        number += 1


def bench_refit(games: int, versions: int, seed: int) -> None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "refit.db"
        with LeagueStore(db) as store:
            league = store.create_league("refit", "x.toml", "", "f", 1)
            names = [f"bot{i}@1" for i in range(versions)]
            strength = {name: rng.gauss(0, 1) for name in names}
        connection = sqlite3.connect(db)
        start = time.perf_counter()
        number, game = 0, 0
        group_rows, game_rows = [], []
        for group in deal_groups(rng, names, strength, games):
            number, table = group.number, group.table
            group_rows.append((league.id, number, f"g{number}", number, json.dumps(table), table[0], "t", "complete"))
            for rotation, (seats, fool) in enumerate(zip(group.rotations(), group.fools, strict=True)):
                places = " ".join("2" if name == fool else "1" for name in seats)
                game_rows.append((league.id, f"g{number}|r{rotation}", 0, f"k{game}", f"g{number}", number, rotation,
                                  "fool", f"{' '.join(seats)}|{places}|1", "{}", b"", b"", "t", game + 1))
                game += 1
        number += 1
        connection.executemany("INSERT INTO league_groups (tournament_id, number, deal_key, deal_seed, seats, anchor, "
                               "issued, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", group_rows)
        connection.executemany("INSERT INTO games (tournament_id, slot_key, game_index, game_key, deal_key, deal_seed, "
                               "rotation, end_reason, outcome, record, replay, stderr, finished, number) VALUES "
                               "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", game_rows)
        connection.commit()
        connection.close()
        print(f"made {game:,} games in {number:,} groups of {versions} versions in {time.perf_counter() - start:.1f} s")
        for attempt in range(3):
            with LeagueStore(db, create=False) as store:
                board = refit(store, league.id)
            print(f"refit {attempt + 1}: {board.seconds:.2f} s for {board.n_games:,} rated games")


def bench_run(minutes: float, add_every: float, kills: int, jobs: int, seed: int) -> None:
    rng = random.Random(seed)
    top = Path(tempfile.mkdtemp(prefix="durak-bench-league-"))
    top.chmod(0o755)
    folder = bots_folder(top)
    config, db, log = league_config(top, BOTS), top / "league.db", top / "daemon.log"
    end = time.monotonic() + minutes * 60
    kill_at = sorted(rng.uniform(60, minutes * 60 - 60) for _ in range(kills))
    began = time.monotonic()
    daemon = start_daemon(config, db, jobs, log)
    added = 0
    next_add = began + add_every
    while time.monotonic() < end:
        now = time.monotonic()
        if kill_at and now - began >= kill_at[0]:
            kill_at.pop(0)
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()
            print(f"{now - began:7.1f} s: kill -9, {query(db, 'SELECT COUNT(*) FROM games')[0][0]} games stored")
            daemon = start_daemon(config, db, jobs, log)
        if now >= next_add:
            next_add += add_every
            added += 1
            name = f"late{added}"
            script = rng.choice(["random_bot.py", "heuristic_bot.py"])
            (top / name).mkdir(mode=0o755)
            shutil.copy(folder / script, top / name / script)
            (top / name / script).chmod(0o644)
            ran = subprocess.run([PYTHON, "-m", "referee", "league", "add", str(db), name, "--dir", str(top / name),
                                  "--command", f"{PYTHON} {script}"], capture_output=True, text=True)
            print(f"{now - began:7.1f} s: add {name} ({script}): {ran.stdout.strip()} {ran.stderr.strip()[-200:]}")
        time.sleep(0.5)
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(60)
    report(db, top)


def report(db: Path, top: Path) -> None:
    """Games stored against distinct (group, rotation) slots, complete groups with a rotation missing or extra, and
    each added version's time from its add request to its 30th rated game (game times are kept to the second)."""
    games, slots = query(db, "SELECT COUNT(*), COUNT(DISTINCT slot_key) FROM games")[0]
    per: dict[object, object] = {key: count for key, count in
                                 query(db, "SELECT deal_key, COUNT(*) FROM games GROUP BY deal_key")}
    groups = query(db, "SELECT deal_key, seats, status FROM league_groups")
    statuses: dict[str, int] = {}
    for _, _, status in groups:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    bad = [key for key, seats, status in groups
           if status == "complete" and per.get(key, 0) != len(json.loads(str(seats)))]
    print(f"games stored {games}, distinct (group, rotation) {slots}, groups {statuses}, complete groups with a "
          f"rotation missing or extra: {len(bad)}")
    complete = {key for key, _, status in groups if status == "complete"}
    asked = query(db, "SELECT v.name, r.created FROM league_versions v JOIN league_requests r ON r.bot = v.bot AND "
                      "r.kind = 'add' WHERE v.name LIKE 'late%'")
    for name, created in asked:
        start = datetime.fromisoformat(str(created)).timestamp()
        rated = [datetime.fromisoformat(str(done)).timestamp() for done, key in query(
            db, "SELECT finished, deal_key FROM games WHERE record LIKE ? ORDER BY id", (f'%"{name}"%',))
            if key in complete]
        reached = f"{rated[29] - start:.1f} s" if len(rated) >= 30 else f"only {len(rated)} rated games"
        print(f"{name}: from its add request to its 30th rated game {reached}")
    print(f"(folder {top})")


def bench_throughput(seconds: float, jobs: int) -> None:
    top = Path(tempfile.mkdtemp(prefix="durak-bench-throughput-"))
    top.chmod(0o755)
    bots_folder(top)
    fast = {name: command for name, command in BOTS.items() if not name.startswith("search")}
    config, db = league_config(top, fast), top / "league.db"
    daemon = start_daemon(config, db, jobs, top / "daemon.log")
    time.sleep(seconds)
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(60)
    league_rate = middle_rate(stored_times(db))
    tournament = tournament_config(top, fast, deals=2000)
    run = subprocess.Popen([PYTHON, "-m", "referee", "tournament", str(tournament), "--jobs", str(jobs)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(seconds)
    run.send_signal(signal.SIGINT)
    run.wait(60)
    tournament_rate = middle_rate(stored_times(top / "tournament.db"))
    print(f"{len(fast)} bots ({', '.join(fast)}), 2 players, --jobs {jobs}, {seconds:g} s each, unpinned: league "
          f"{league_rate:.1f} games/s, tournament {tournament_rate:.1f} games/s, ratio "
          f"{league_rate / tournament_rate:.3f}" if tournament_rate else "no tournament games")
    print(f"(folder {top})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("refit")
    one.add_argument("--games", type=int, default=1_000_000)
    one.add_argument("--versions", type=int, default=200)
    one.add_argument("--seed", type=int, default=1)
    two = sub.add_parser("run")
    two.add_argument("--minutes", type=float, default=30.0)
    two.add_argument("--add-every", type=float, default=240.0)
    two.add_argument("--kills", type=int, default=5)
    two.add_argument("--jobs", type=int, default=2)
    two.add_argument("--seed", type=int, default=1)
    three = sub.add_parser("throughput")
    three.add_argument("--seconds", type=float, default=120.0)
    three.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.what == "refit":
        bench_refit(args.games, args.versions, args.seed)
    elif args.what == "run":
        bench_run(args.minutes, args.add_every, args.kills, args.jobs, args.seed)
    else:
        bench_throughput(args.seconds, args.jobs)


if __name__ == "__main__":
    main()
