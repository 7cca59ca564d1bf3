"""Benchmark: the referee's own CPU time (user + sys) per decision, the figure issue 14 targets.

Run by hand from a checkout::

    python bench/bench_referee_cpu.py                  # this checkout's referee
    python bench/bench_referee_cpu.py --referee DIR    # another checkout's (e.g. a git worktree)
    python bench/bench_referee_cpu.py --referee OLD --referee .   # before and after, interleaved
    python bench/bench_referee_cpu.py --games 500 --repeat 5

Two copies of the C sample bot (it answers at once, so nearly all the time is the referee's and the
kernel's) play 2-player podkidnoy with the default rules (forced passes asked) through the whole referee:
engine, view, events, encoding, pipes, decoding, validation, pause and resume. For each isolation level
(``none`` with pausing off and on, ``process``, ``bwrap``: the default, freezer and all) it prints the
referee process's user and sys CPU per decision from getrusage, and the wall time per decision, pinned
(the referee and both bots on core 0: same-core round trips) and unpinned (any core: cross-core wake-ups).
Medians over ``--repeat`` runs, the cases (and the referees, given several) interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CASES = [("none", False), ("none", True), ("process", True), ("bwrap", True)]


def one_run(referee_dir: Path, level: str, pause: bool, games: int, folder: Path) -> dict[str, float]:
    """Play ``games`` games in this process with ``referee_dir`` first on sys.path; CPU and wall per decision
    (us)."""
    sys.path.insert(0, str(referee_dir))
    import referee
    from protocol.rules import Rules
    from referee.bots.launcher import BotCommand
    from referee.bots.limits import TimeControl
    from referee.bots.sandbox.isolation import PLAIN, isolation_for
    from referee.bots.session import BotClient
    from referee.games.match import Series, play_series

    assert Path(referee.__file__).is_relative_to(referee_dir), f"{referee.__file__} is not {referee_dir}'s"

    isolation = PLAIN if level == "none" else isolation_for(level, [])
    clients = [BotClient(f"c{i}", BotCommand([str(folder / "bot")], cwd=folder), isolation=isolation,
                         time_control=TimeControl(pause=pause)) for i in range(2)]
    try:
        play_series(Series(Rules(), 5, 1), clients)  # started and warm
        before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        records = play_series(Series(Rules(), games, 11), clients)
        after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - start
    finally:
        for client in clients:
            client.stop()
    assert not any(record.verdicts for record in records), [record.verdicts for record in records]
    decisions = sum(record.actions for record in records)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return {"user": user / decisions * 1e6, "sys": system / decisions * 1e6, "wall": wall / decisions * 1e6,
            "games_per_s": games / wall, "decisions": decisions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--referee", type=Path, action="append",
                        help="a checkout whose referee is measured (repeat to compare; default: this one)")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", help=argparse.SUPPRESS)  # LEVEL:PAUSE:FOLDER, run in a child process
    args = parser.parse_args()
    referees = [path.resolve() for path in args.referee or [HERE]]
    if args.case:
        level, pause, bot_folder = args.case.split(":", 2)
        print(json.dumps(one_run(referees[0], level, pause == "1", args.games, Path(bot_folder))))
        return
    folder = Path(tempfile.mkdtemp(prefix="durak-bench-"))
    folder.chmod(0o755)
    subprocess.run(["gcc", "-O2", "-std=c99", "-o", str(folder / "bot"), str(HERE / "sample_bots" / "c" / "bot.c")],
                   check=True)
    os.chmod(folder / "bot", 0o755)
    results: dict[tuple[str, bool, str, int], list[dict[str, float]]] = {}
    for _ in range(args.repeat):
        for level, pause in CASES:
            for where in ("pinned", "unpinned"):
                for index, referee in enumerate(referees):
                    prefix = ["taskset", "-c", "0"] if where == "pinned" else []
                    done = subprocess.run([*prefix, sys.executable, __file__, "--referee", str(referee), "--games",
                                           str(args.games), "--case", f"{level}:{int(pause)}:{folder}"], check=True,
                                          capture_output=True, text=True, env={**os.environ, "TMPDIR": str(folder)})
                    results.setdefault((level, pause, where, index), []).append(json.loads(done.stdout))
    print(f"{args.games} games x {args.repeat} runs per case, medians; load average {os.getloadavg()[0]:.2f}")
    for index, referee in enumerate(referees):
        print(f"  referee {index}: {referee}")
    print(f"{'level':<8} {'pause':<6} {'where':<9} {'ref':>3} {'user us':>8} {'sys us':>7} {'cpu us':>7} "
          f"{'wall us':>8} {'games/s':>8}" + ("  cpu vs ref 0" if len(referees) > 1 else ""))
    for (level, pause, where, index), runs in results.items():
        med = _medians(runs)
        cpu = med["user"] + med["sys"]
        first = _medians(results[level, pause, where, 0])
        ratio = f"  {cpu / (first['user'] + first['sys']):13.2f}" if len(referees) > 1 else ""
        print(f"{level:<8} {'on' if pause else 'off':<6} {where:<9} {index:>3} {med['user']:8.1f} {med['sys']:7.1f} "
              f"{cpu:7.1f} {med['wall']:8.1f} {med['games_per_s']:8.0f}{ratio}")


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


if __name__ == "__main__":
    main()
