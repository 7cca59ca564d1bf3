"""Benchmark: the Dask executor against the local one on this machine, and the single SQLite writer's limit.

Run by hand from the project root (needs ``pip install -e '.[cluster]'`` and gcc)::

    python bench/bench_cluster.py [--repeats 3] [--games 900] [--python-games 300] [--only c2,py2,...]

For each of four tournaments (C sample bots, sample_bots/c/bot.c built with gcc -O2, and Python ones,
sample_bots/python/random_bot.py; 2 players with 3 bots round robin, 4 players with 4 bots; restart "never",
the config defaults otherwise: sandbox bwrap, pause true, the default time controls and limits) it plays the
same tournament ``--repeats`` times on each of: the local executor at ``--jobs 1`` and ``--jobs 2`` (each
worker and its games' bots pinned to a core), and a two-worker ``distributed.LocalCluster`` (processes, one
thread each; its referee workers claim a core each), interleaved (j1, j2, cluster, j1, j2, cluster, ...), and
prints games/s per run, the medians, jobs2/jobs1, cluster/jobs2 and the decisions a game (bot replies,
forced passes included). The cluster's time includes its checks
(every bot hashed and started once on each worker) and its start of referee workers, as the local time
includes starting its workers; the LocalCluster itself is started before each cluster run and stopped after it,
outside the time (its idle workers would otherwise take CPU from the local runs).

Then the single writer, with the first tournament's games: the coordinator's CPU (user+sys) per one-game slot
from a worker's answer to its commit (decode the SlotDone line, build the stored game and its replay, compress,
commit), over answers collected from a referee worker beforehand; and ``Store.save_slot`` alone: commits/s of
one-game slots, each a real game, into a fresh database in the temporary folder, for 5 s; and
``Store.save_slots`` with a cluster batch of 64 one-game slots a commit, games/s.

The load average (``uptime``) is printed before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402

from referee.results.store import Store  # noqa: E402
from referee.tournament.config import load_config  # noqa: E402
from referee.tournament.coordinator import game_row as stored_game  # noqa: E402
from referee.tournament.executors.dask import BATCH_GAMES  # noqa: E402
from referee.tournament.executors.local import DONE  # noqa: E402
from referee.tournament.runner import RunRequest, run_tournament  # noqa: E402
from referee.tournament.schedule import Slot, schedule  # noqa: E402
from referee.tournament.worker import Job, WorkerSetup, play_job, start_worker  # noqa: E402

KINDS = {  # name: (bots, players)
    "c2": ("c", 2), "c4": ("c", 4), "py2": ("python", 2), "py4": ("python", 4),
}


def bots(kind: str, tmp: Path, count: int) -> dict[str, tuple[str, str]]:
    if kind == "c":
        folder = tmp / "c"
        if not folder.exists():
            folder.mkdir(mode=0o755)
            subprocess.run(["gcc", "-O2", "-std=c99", "-o", str(folder / "bot"), str(ROOT / "sample_bots/c/bot.c")],
                           check=True)
        return {f"c{i}": (str(folder), f"./bot {i}") for i in range(count)}
    return {f"py{i}": (str(ROOT / "sample_bots/python"), f"{{python}} random_bot.py {i}") for i in range(count)}


def config(path: Path, field: dict[str, tuple[str, str]], players: int, games: int) -> Path:
    tables = 3 if players == 2 else 1  # 3 bots at 2 seats, 4 bots at 4
    deals = max(1, games // (tables * players))
    lines = [f'name = "bench"\nplayers = {players}\ndeals = {deals}\nrestart = "never"\n']
    for name, (folder, command) in field.items():
        lines.append(f'[[bots]]\nname = "{name}"\ncommand = "{command}"\ndir = "{folder}"\n')
    path.write_text("\n".join(lines))
    return path


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def play(path: Path, db: Path, jobs: int | None, cluster: str | None) -> tuple[int, float]:
    if db.exists():
        db.unlink()
    start = time.perf_counter()
    summary = run_tournament(load_config(path), RunRequest(db, jobs=jobs, cluster=cluster), io.StringIO())
    return summary.played, time.perf_counter() - start


def answers(path: Path, count: int) -> list[tuple[Slot, bytes]]:
    """``count`` slots of the tournament and a referee worker's answers to them (SlotDone lines)."""
    loaded = load_config(path)
    slots = schedule(loaded.config, 1)[:count]
    worker = start_worker(WorkerSetup(config_path=str(path), sandbox=loaded.config.sandbox, protected=[]))
    try:
        return [(slot, play_job(worker, msgspec.json.encode(Job(slot=slot)))) for slot in slots]
    finally:
        worker.close()


def writer(path: Path, tmp: Path, seconds: float = 5.0) -> tuple[float, float, float, float]:
    """The coordinator's CPU per one-game slot from answer to commit (us), save_slot commits/s, and MB/s; and
    games/s stored by ``save_slots`` in batches of BATCH_GAMES one-game slots (a cluster's batch: one commit)."""
    done = answers(path, 400)
    with Store(tmp / "coordinator.db") as store:
        tournament = store.create_tournament("w", "w.toml", "", "f", 1)
        used = cpu()
        for slot, line in done:
            games = DONE.decode(line).games
            store.save_slot(tournament.id, [stored_game(slot, i, record, {}) for i, record in enumerate(games)])
        per_slot = (cpu() - used) / len(done)
    stored = [stored_game(slot, i, record, {})
              for slot, line in done for i, record in enumerate(DONE.decode(line).games)]
    db = tmp / "writer.db"
    with Store(db) as store:
        tournament = store.create_tournament("w", "w.toml", "", "f", 1)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            game = dataclasses.replace(stored[count % len(stored)], slot_key=f"s{count}")
            store.save_slot(tournament.id, [game])
            count += 1
        elapsed = time.perf_counter() - start
    wal = Path(f"{db}-wal")
    size = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    with Store(tmp / "batches.db") as store:
        tournament = store.create_tournament("w", "w.toml", "", "f", 1)
        batches, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            store.save_slots(tournament.id, [[dataclasses.replace(stored[(batches + i) % len(stored)],
                                                                  slot_key=f"b{batches}-{i}")]
                                             for i in range(BATCH_GAMES)])
            batches += 1
        batch_rate = batches * BATCH_GAMES / (time.perf_counter() - start)
    return per_slot * 1e6, count / elapsed, size / elapsed / 1e6, batch_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--games", type=int, default=900, help="games of each C tournament")
    parser.add_argument("--python-games", type=int, default=300, help="games of each Python tournament")
    parser.add_argument("--only", default=",".join(KINDS), help="tournaments: " + ",".join(KINDS))
    args = parser.parse_args()
    import distributed

    commit = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"], capture_output=True,
                            text=True).stdout.strip()
    print(f"checkout {commit}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    print("settings: restart never, sandbox bwrap, pause true, default time controls and limits; local workers "
          "pinned a core each; LocalCluster: 2 worker processes x 1 thread, referee workers a core each")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        os.chmod(tmp, 0o755)  # the bots' uids must reach their folder
        for name in args.only.split(","):
            kind, players = KINDS[name]
            games = args.games if kind == "c" else args.python_games
            path = config(tmp / f"{name}.toml", bots(kind, tmp, 3 if players == 2 else 4), players, games)
            rates: dict[str, list[float]] = {"jobs1": [], "jobs2": [], "cluster": []}
            for _ in range(args.repeats):
                for label, jobs in (("jobs1", 1), ("jobs2", 2), ("cluster", None)):
                    if jobs is None:
                        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                      dashboard_address=":0", silence_logs=50) as local:
                            played, seconds = play(path, tmp / f"{name}-{label}.db", None, local.scheduler_address)
                    else:
                        played, seconds = play(path, tmp / f"{name}-{label}.db", jobs, None)
                    rates[label].append(played / seconds)
                    print(f"  {name} {label:<7} {played} games in {seconds:6.2f} s = {played / seconds:7.1f} games/s",
                          flush=True)
            median = {label: statistics.median(values) for label, values in rates.items()}
            with Store(tmp / f"{name}-jobs1.db", create=False) as store:
                records = list(store.records())
            decisions = sum(t.moves for r in records for t in r.times or [] if t is not None) / len(records)
            print(f"{name}: median games/s jobs1 {median['jobs1']:.1f}, jobs2 {median['jobs2']:.1f}, cluster "
                  f"{median['cluster']:.1f}; jobs2/jobs1 {median['jobs2'] / median['jobs1']:.2f}, cluster/jobs2 "
                  f"{median['cluster'] / median['jobs2']:.2f}; {decisions:.1f} decisions a game", flush=True)
        first = args.only.split(",")[0]
        per_slot, rate, mb, batch_rate = writer(tmp / f"{first}.toml", tmp)
        print(f"single writer ({first} games): coordinator CPU {per_slot:.0f} us per one-game slot from answer to "
              f"commit (at most {1e6 / per_slot:,.0f} games/s); Store.save_slot alone {rate:,.0f} commits/s "
              f"({mb:.1f} MB/s into the database); Store.save_slots, {BATCH_GAMES} slots a commit, "
              f"{batch_rate:,.0f} games/s")
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()
