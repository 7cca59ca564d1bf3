"""Benchmark: the league board's refit at 100k and 1M games of 1,000 versions (bench/arena_data.py's databases),
before (the fit of every rated game) and after (the fit of the stored group summaries), and the WAL's largest size
while a writer stores games and a refit runs back to back.

Run by hand from the project root (wrap it in ``flock /tmp/durak-cpu.lock``: it takes a core for minutes)::

    python bench/bench_refit.py [--games 1000000] [--repeat 3] [--wal-seconds 120] [--rate 50]

Steps, on a copy of the cached database (the cache is never modified): the games' fit as the board made it before
schema 11 (read only, the copy unmigrated), ``--repeat`` times; the migration to this checkout's schema and the
daemon's fill of the summaries (timed apart); the summaries' refit ``--repeat`` times cold (a new ledger: every
summary read) and warm (the daemon's ledger: nothing new, then after a writer stored groups for 10 s); then for each
of the two fits, a writer storing ``--rate`` games/s in a process of its own while this one refits back to back for
``--wal-seconds`` (at least one refit), the WAL's size sampled every 50 ms. CPU seconds are this process's (all of
its threads: BLAS's too), medians; the machine is shared and nothing is pinned.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.arena_data import Params, Templates, add_data_options, database, group_games  # noqa: E402
from bench.bench_league import deal_groups  # noqa: E402
from referee.engine.rng import derive_seed  # noqa: E402
from referee.league.board import Board, Ledger  # noqa: E402
from referee.rating.bradley_terry import rate  # noqa: E402
from referee.results.arena_store import ArenaStore  # noqa: E402
from referee.results.league_store import GroupRow, LeagueStore  # noqa: E402


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """CPU and wall seconds of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def games_fit(db: Path) -> int:
    """The fit before schema 11, as ``referee.league.board`` made it: every rated game read and rated."""
    with LeagueStore(db, create=False) as store:
        league = store.league()
        assert league is not None
        outcomes = store.outcomes(league.id)
        rate(outcomes)
        return outcomes.n_games


def summaries_fit(db: Path, ledger: Ledger) -> Board:
    with LeagueStore(db, create=False) as store:
        return ledger.refit(store)


def league_id(db: Path) -> int:
    with LeagueStore(db, create=False) as store:
        league = store.league()
        assert league is not None
        return league.id


def median_line(name: str, runs: list[tuple[float, float]]) -> dict[str, object]:
    line = {"step": name, "runs": len(runs), "cpu_s_median": round(statistics.median(c for c, _ in runs), 3),
            "wall_s_median": round(statistics.median(w for _, w in runs), 3),
            "cpu_s": [round(c, 3) for c, _ in runs]}
    print(json.dumps(line), flush=True)
    return line


# -- the writer (a process of its own, as the daemon is) --------------------------------------------------


def run_writer(db: Path, rate_per_s: float, seed: int) -> None:
    """Complete deal groups at ``rate_per_s`` games/s, stored as the daemon stores them (the summary with the
    group's completion), until SIGTERM."""
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    rng = random.Random(seed)
    templates = Templates.play(seed, per_size=40)
    with ArenaStore(db) as store:
        league = store.league()
        assert league is not None
        names = [v.name for v in store.versions(league.id) if v.active]
        first = max((g.number for g in store.groups(league.id)), default=-1) + 1
        strength = {name: rng.gauss(0, 1) for name in names}
        print("ready", flush=True)
        began, written = time.monotonic(), 0
        for group in deal_groups(rng, names, strength, 10**9, first=first):
            if stopping.is_set():
                break
            store.issue_group(league.id, GroupRow(number=group.number, deal_seed=derive_seed(group.number, "deal"),
                                                  seats=tuple(group.table), anchor=group.table[0]))
            store.save_slots(league.id, [[game] for game in group_games(templates, rng, group)])
            store.close_group(league.id, group.number, "complete")
            written += len(group.table)
            stopping.wait(max(0.0, began + written / rate_per_s - time.monotonic()))
    print(json.dumps({"written": written}), flush=True)


def start_writer(db: Path, rate_per_s: float, seed: int) -> subprocess.Popen[str]:
    writer = subprocess.Popen([sys.executable, __file__, "--role", "writer", "--db", str(db), "--rate",
                               str(rate_per_s), "--seed", str(seed)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    if writer.stdout.readline().strip() != "ready":
        raise SystemExit("the writer did not start")
    return writer


def stop_writer(writer: subprocess.Popen[str]) -> int:
    writer.send_signal(signal.SIGTERM)
    out, _ = writer.communicate(timeout=120)
    return int(json.loads(out.strip().splitlines()[-1])["written"])


class WalWatch:
    """The largest size of a database's WAL, sampled every 50 ms on a thread of its own."""

    def __init__(self, db: Path) -> None:
        self.wal, self.largest = Path(f"{db}-wal"), 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            with contextlib.suppress(OSError):
                self.largest = max(self.largest, self.wal.stat().st_size)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.largest


def truncate_wal(db: Path) -> None:
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def wal_under_refits(db: Path, name: str, refit: Callable[[], object], args: argparse.Namespace) -> None:
    """Refits back to back for ``--wal-seconds`` (at least one) while a writer stores games: the WAL's largest."""
    truncate_wal(db)
    writer = start_writer(db, args.rate, args.seed + 7)
    watch = WalWatch(db)
    began, runs = time.monotonic(), list[tuple[float, float]]()
    while not runs or time.monotonic() - began < args.wal_seconds:
        runs.append(timed(refit))
    largest = watch.stop()
    written = stop_writer(writer)
    print(json.dumps({"step": f"wal under {name}", "refits": len(runs), "seconds": round(time.monotonic() - began, 1),
                      "games_written": written, "wal_largest_mib": round(largest / 2**20, 2),
                      "refit_cpu_s_median": round(statistics.median(c for c, _ in runs), 3)}), flush=True)


def bench(args: argparse.Namespace) -> None:
    params = Params(args.versions, args.games, args.history, args.seed)
    cached, _ = database(args.cache, params)
    folder = Path(args.work)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    db = folder / cached.name
    start = time.perf_counter()
    shutil.copyfile(cached, db)
    db.chmod(0o600)
    print(json.dumps({"step": "copy", "db": str(cached), "wall_s": round(time.perf_counter() - start, 1)}), flush=True)
    if args.before:
        median_line("games fit (before)", [timed(lambda: games_fit(db)) for _ in range(args.repeat)])
    migrate = timed(lambda: ArenaStore(db).close())
    ident = league_id(db)

    def fill() -> None:
        with ArenaStore(db) as store:
            print(json.dumps({"summaries_stored": store.fill_summaries(ident)}), flush=True)

    filled = timed(fill)
    print(json.dumps({"step": "migrate to this schema", "cpu_s": round(migrate[0], 1), "wall_s": round(migrate[1], 1)}))
    print(json.dumps({"step": "fill summaries", "cpu_s": round(filled[0], 1), "wall_s": round(filled[1], 1)}))
    median_line("summaries fit, cold", [timed(lambda: summaries_fit(db, Ledger(ident))) for _ in range(args.repeat)])
    ledger = Ledger(ident)
    summaries_fit(db, ledger)
    median_line("summaries fit, warm, nothing new", [timed(lambda: summaries_fit(db, ledger))
                                                     for _ in range(args.repeat)])
    warm: list[tuple[float, float]] = []
    for _ in range(args.repeat):
        writer = start_writer(db, args.rate, args.seed + len(warm))
        time.sleep(10)
        stop_writer(writer)
        warm.append(timed(lambda: summaries_fit(db, ledger)))
    median_line(f"summaries fit, warm, after 10 s of {args.rate:g} games/s", warm)
    if args.before:
        wal_under_refits(db, "games fits", lambda: games_fit(db), args)
    wal_under_refits(db, "summaries fits", lambda: summaries_fit(db, ledger), args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_options(parser)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rate", type=float, default=50.0, help="games/s the writer stores")
    parser.add_argument("--wal-seconds", type=float, default=60.0)
    parser.add_argument("--no-before", dest="before", action="store_false", help="skip the games' fit")
    parser.add_argument("--work", default="/tmp/durak-bench-refit", help="the folder of the run's copy")
    parser.add_argument("--role", choices=["writer"], help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "writer":
        run_writer(args.db, args.rate, args.seed)
    else:
        bench(args)


if __name__ == "__main__":
    main()
