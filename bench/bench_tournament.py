"""Benchmark: tournament throughput, referee memory over a long run, and the leaderboard of 1M games.

Run by hand from the project root::

    python bench/bench_tournament.py throughput [--deals 60]
    python bench/bench_tournament.py memory [--games 100000]
    python bench/bench_tournament.py leaderboard [--games 1000000]

throughput: 4 sample bots (--bots python: sample_bots/python/random_bot.py; --bots c: sample_bots/c/bot.c built
with gcc -O2), 2 players, round robin; games/s at --jobs 1 and 2 with persistent processes
(restart = "never") and with restart = "game", default time controls, at the --sandbox level (default: the
config default); counts timeout verdicts. Each worker and the bots of its games share one core.
memory: a long tournament of two C sample bots; the resident memory of the coordinator and its workers,
sampled as the games go by.
leaderboard: a database of synthetic result records (4-player games, 20 bots, with rules and move times
like a real tournament's), then the time of
``durak leaderboard DB`` (reading and rating), in a fresh process.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402

from protocol.records import ResultRecord, SeatTimes  # noqa: E402
from protocol.rules import Rules  # noqa: E402
from referee.rating.outcomes import outcome_text  # noqa: E402
from referee.results.store import Store, StoredGame  # noqa: E402
from referee.tournament.config import load_config  # noqa: E402
from referee.tournament.runner import RunRequest, run_tournament  # noqa: E402


def config_text(bots: dict[str, tuple[str, str]], deals: int, restart: str, sandbox: str | None = None) -> str:
    lines = [f'name = "bench"\nplayers = 2\ndeals = {deals}\nrestart = "{restart}"\n'
             + (f'sandbox = "{sandbox}"\n' if sandbox else "")]
    for name, (folder, command) in bots.items():
        lines.append(f'[[bots]]\nname = "{name}"\ncommand = "{command}"\ndir = "{folder}"\n')
    return "\n".join(lines)


def throughput(deals: int, kind: str, sandbox: str | None, restarts: tuple[str, ...] = ("never", "game")) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # the bots' uids must reach their folder
        if kind == "c":  # in a folder of its own: the sandbox refuses a bot folder that holds the database
            os.mkdir(f"{tmp}/c", 0o755)
            subprocess.run(["gcc", "-O2", "-std=c99", "-o", f"{tmp}/c/bot", str(ROOT / "sample_bots" / "c" / "bot.c")],
                           check=True)
            bots = {f"c{i}": (f"{tmp}/c", f"./bot {i}") for i in range(4)}
        else:
            python = str(ROOT / "sample_bots" / "python")
            bots = {f"random{i}": (python, f"{{python}} random_bot.py {i}") for i in range(4)}
        rates: dict[tuple[str, int], float] = {}
        print(f"{kind} bots, sandbox {sandbox or 'default'}, {deals} deals x 6 tables x 2 seatings")
        for restart in restarts:
            for jobs in (1, 2):
                path = Path(tmp) / f"{restart}{jobs}.toml"
                path.write_text(config_text(bots, deals, restart, sandbox))
                db = Path(tmp) / f"{restart}{jobs}.db"
                start = time.perf_counter()
                summary = run_tournament(load_config(path), RunRequest(db, jobs=jobs), io.StringIO())
                seconds = time.perf_counter() - start
                with Store(db, create=False) as store:
                    timeouts = sum(v.kind == "timeout" for r in store.records() for v in r.verdicts)
                rates[restart, jobs] = summary.played / seconds
                print(f"restart={restart:<5} jobs={jobs}: {summary.played} games in {seconds:.2f} s = "
                      f"{summary.played / seconds:,.1f} games/s, {timeouts} timeouts")
            print(f"  jobs 2 / jobs 1 = {rates[restart, 2] / rates[restart, 1]:.2f}")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def memory(games: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "bot"
        subprocess.run(["gcc", "-O2", "-std=c99", "-o", str(binary), str(ROOT / "sample_bots" / "c" / "bot.c")],
                       check=True)
        deals = games // 2
        path = Path(tmp) / "mem.toml"
        os.chmod(tmp, 0o755)
        path.write_text(config_text({"c1": (tmp, "./bot 1"), "c2": (tmp, "./bot 2")}, deals, "never"))
        db = Path(tmp) / "mem.db"
        run = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(path), "--db", str(db),
                                "--jobs", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = time.monotonic()
        while run.poll() is None:
            time.sleep(5)
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
                    done = con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            except sqlite3.Error:
                done = 0
            workers = [c for c in children(run.pid) if "python" in Path(f"/proc/{c}/cmdline").read_text()]
            worker_rss = [rss_kib(w) for w in workers]
            print(f"{time.monotonic() - start:6.0f} s  {done:>7} games  coordinator {rss_kib(run.pid) / 1024:6.1f} MiB"
                  f"  workers {' '.join(f'{r / 1024:.1f}' for r in worker_rss)} MiB", flush=True)


def leaderboard(games: int) -> None:
    rng = random.Random(1)
    bots = [f"bot{i:02d}" for i in range(20)]
    strength = {b: rng.gauss(0, 1) for b in bots}
    rules, times = Rules(), [SeatTimes(moves=40, median_ms=0.05, max_ms=0.4)] * 4
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "big.db"
        with Store(db) as store:
            tournament = store.create_tournament("bench", "x", "", "f", 1)
        encode = msgspec.json.encode
        rows = []
        for g in range(games):
            table = rng.sample(bots, 4)
            fool = min(table, key=lambda b: strength[b] + rng.gauss(0, 1.5))
            rest = [b for b in table if b != fool]
            record = ResultRecord(game=f"g{g}", deal=f"d{g // 4}", variant="podkidnoy", players=table,
                                  order=[[b] for b in rest] + [[fool]], fools=[fool], end="fool", rules=rules,
                                  times=times)  # as full as a real tournament's records
            stored = StoredGame(f"s{g}", 0, g, g % 4, record, b"", [])
            rows.append((tournament.id, stored.slot_key, 0, record.game, record.deal, g, g % 4, "fool",
                         outcome_text(record), encode(record).decode(), b"", b"", "now"))
        with sqlite3.connect(db) as con:
            con.executemany("INSERT INTO games (tournament_id, slot_key, game_index, game_key, deal_key, "
                            "deal_seed, rotation, end_reason, outcome, record, replay, stderr, finished) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        print(f"{games:,} games stored ({os.path.getsize(db) / 2**20:.0f} MiB)")
        for _ in range(3):
            start = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "referee", "leaderboard", str(db)], capture_output=True,
                                 text=True, check=True)
            print(f"durak leaderboard: {time.perf_counter() - start:.2f} s")
        print("\n".join(out.stdout.splitlines()[:5]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("throughput", "memory", "leaderboard"))
    parser.add_argument("--deals", type=int, default=60)
    parser.add_argument("--games", type=int)
    parser.add_argument("--bots", choices=("python", "c"), default="python")
    parser.add_argument("--sandbox", choices=("none", "process", "bwrap"))
    parser.add_argument("--restart", choices=("never", "game"), action="append",
                        help="only these restart settings (repeatable; default both)")
    args = parser.parse_args()
    if args.what == "throughput":
        throughput(args.deals, args.bots, args.sandbox, tuple(args.restart or ("never", "game")))
    elif args.what == "memory":
        memory(args.games or 100_000)
    else:
        leaderboard(args.games or 1_000_000)


if __name__ == "__main__":
    main()
