"""Benchmark: the league's matchmaker over 10,000 simulated groups, 20 versions growing to 200.

Run by hand from the project root::

    python bench/bench_matchmaker.py                       # 10,000 groups, sizes 2-6
    python bench/bench_matchmaker.py --groups 3000 --max-versions 80 --workers 4

The league (bench/league_model.py) starts with ``--start`` versions of as many bots by fewer authors (one
author in four has two bots) and takes one version every ``--add-every`` groups up to ``--max-versions``: half
are new versions of an existing bot (its latest strength + N(20, 40) Elo), a quarter new bots of an existing
author, a quarter new bots of a new author (N(1500, 200) Elo). Old versions stay active. Reported: the spread
of games per version, the groups from a version's add to its ``min_games``-th game, how often the true top 4
met in each span of 100 groups, the board's Spearman correlation with the true order at checkpoints, and the
time per ``next_group`` call (wall and CPU: the machine may be shared). Checkpoints only look: the board they
rank is fitted aside, and the league goes on as if uninterrupted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.league_model import Entrant, LeagueSim, spearman, spread, top_meetings
from referee.league.matchmaker import MatchSettings, VersionState


def entrants(start: int, most: int, every: int, seed: int) -> list[Entrant]:
    """The initial field and the versions added later, with their true strengths."""
    rng = np.random.default_rng(seed)
    authors = [f"author{i:03d}" for i in range(start - start // 4)]
    bots: dict[str, tuple[str, float, int]] = {}  # bot -> (author, latest strength, versions)
    field: list[Entrant] = []

    def add(bot: str, author: str, strength: float, at: int) -> None:
        count = bots[bot][2] + 1 if bot in bots else 1
        bots[bot] = (author, strength, count)
        field.append(Entrant(VersionState(f"{bot}@{count}", bot, author), strength, at))

    for i in range(start):
        add(f"bot{i:03d}", authors[i % len(authors)], float(rng.normal(1500, 200)), 0)
    for n in range(1, most - start + 1):
        kind = rng.random()
        if kind < 0.5:
            bot = sorted(bots)[int(rng.integers(len(bots)))]
            add(bot, bots[bot][0], bots[bot][1] + float(rng.normal(20, 40)), n * every)
            continue
        if kind >= 0.75:
            authors.append(f"author{len(authors):03d}")
        author = authors[int(rng.integers(len(authors)))] if kind < 0.75 else authors[-1]
        add(f"bot{len(bots):03d}", author, float(rng.normal(1500, 200)), n * every)
    return field


def report_spread(sim: LeagueSim, start: int, before: dict[str, int], span: int) -> None:
    """Games per version over the whole run (the versions there from the start) and over the last ``span``
    groups (the versions past min_games when it began): the league grows, so rates over different spans differ."""
    games = sim.games()
    first = [games[e.version.id] for e in sim.entrants[:start]]
    low, high, cv = spread(first)
    print(f"games, the {start} versions there from the start, whole run: {min(first)}-{max(first)} "
          f"(max/min {max(first) / min(first):.2f}, {low:.2f}-{high:.2f} x mean, CV {cv:.3f})")
    last = [games[vid] - g for vid, g in before.items()]
    if last and min(last) > 0:
        low, high, cv = spread(last)
        print(f"games in the last {span} groups, the {len(last)} versions past min_games when they began: "
              f"{min(last)}-{max(last)} (max/min {max(last) / min(last):.2f}, {low:.2f}-{high:.2f} x mean, "
              f"CV {cv:.3f})")


def report_reach(sim: LeagueSim, start: int) -> None:
    late = [sim.reached[e.version.id] for e in sim.entrants[start:] if e.version.id in sim.reached]
    added = sum(1 for e in sim.entrants[start:] if e.version.id in sim.joined)
    if not late:
        return
    groups = [r.groups for r in late]
    older = [r.older_most for r in late]
    bad = sum(1 for r in late if r.older_most >= sim.settings.min_games)
    print(f"groups from add to the {sim.settings.min_games}th game, {len(late)} of {added} added versions: "
          f"median {statistics.median(groups):.0f}, max {max(groups)}; most games an older version played "
          f"meanwhile: median {statistics.median(older):.0f}, max {max(older)} ({bad} at >= min_games)")


def report_top(sim: LeagueSim) -> None:
    fewest = top_meetings(sim, span=100, top=4)
    every = sum(1 for f in fewest if f >= 1)
    print(f"top 4 (true strength, no two of one bot or author): all six pairs met in {every} of {len(fewest)} "
          f"spans of 100 groups ({100.0 * every / len(fewest):.1f}%); fewest meetings of a pair per span: median "
          f"{statistics.median(fewest):.0f}, min {min(fewest)}")


def report_calls(sim: LeagueSim) -> None:
    for label, seconds in (("wall", sim.call_seconds), ("CPU", sim.call_cpu)):
        times = np.array(seconds) * 1e3
        print(f"next_group, {label} time: {len(times)} calls, mean {times.mean():.3f} ms, median "
              f"{np.median(times):.3f} ms, p99 {np.percentile(times, 99):.3f} ms, max {times.max():.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--start", type=int, default=20, help="versions at group 0")
    parser.add_argument("--max-versions", type=int, default=200)
    parser.add_argument("--add-every", type=int, default=50, help="groups between two added versions")
    parser.add_argument("--sizes", default="2,3,4,5,6")
    parser.add_argument("--window-min", type=float, default=MatchSettings.window_min, help="Elo")
    parser.add_argument("--max-in-flight", type=int, default=MatchSettings.max_in_flight)
    parser.add_argument("--workers", type=int, default=2, help="games played at once (the daemon's --jobs)")
    parser.add_argument("--refit", type=int, default=50, help="groups between two board refits")
    parser.add_argument("--checkpoints", default="1000,3000,10000", help="groups at which to rank the board")
    parser.add_argument("--span", type=int, default=1000, help="the last groups over which games are compared")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    settings = MatchSettings(sizes=tuple(int(k) for k in args.sizes.split(",")), window_min=args.window_min,
                             max_in_flight=args.max_in_flight)
    field = entrants(args.start, args.max_versions, args.add_every, args.seed)
    sim = LeagueSim(settings, field, seed=args.seed, workers=args.workers, refit_every=args.refit)
    print(f"{settings}\n{args.start} versions growing by one every {args.add_every} groups to {args.max_versions}, "
          f"{args.workers} workers, board refitted every {args.refit} groups, seed {args.seed}")
    t0 = time.perf_counter()
    checkpoints = {int(c) for c in args.checkpoints.split(",") if int(c) <= args.groups}
    before: dict[str, int] = {}
    for stop in sorted(checkpoints | {args.groups, max(0, args.groups - args.span)}):
        sim.run(stop, drain=stop == args.groups)
        if stop == args.groups - args.span:
            before = {v.id: v.games for v in sim.state.versions if v.games >= settings.min_games}
        if stop in checkpoints:
            board = sim.refit(apply=False)  # the games finished so far; the league's own refits go on as before
            rated = sum(1 for b in board.bots if b.identified)
            print(f"after {stop:>6} groups: {len(sim.state.versions)} versions, Spearman(board, true) "
                  f"{spearman(board, sim):.3f} over {rated} rated ({time.perf_counter() - t0:.1f} s)")
    sizes = np.bincount([g.size for g, _ in sim.issued])
    print("groups by size: " + ", ".join(f"{k}: {n}" for k, n in enumerate(sizes) if n))
    report_spread(sim, args.start, before, args.span)
    report_reach(sim, args.start)
    report_top(sim)
    report_calls(sim)


if __name__ == "__main__":
    main()
