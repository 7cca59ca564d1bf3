"""Benchmark: engine games per second, before and after, every variant and table size, on one pinned core.

Run by hand from the project root (with the compiled engine installed, ``pip install -e .``)::

    python bench/bench_engine.py                  # before = main, 5 rounds
    python bench/bench_engine.py --before 55a6321 --rounds 7 --core 1

Random legal play as ``durak selfplay`` plays it (dealing included, the engine's automatic passes), one
subprocess per measurement under ``taskset -c CORE``. Three builds: ``before`` (the ``--before`` commit, exported
with ``git archive`` into a temporary folder, pure Python as it was), ``pure`` (this tree, DURAK_PURE=1) and
``compiled`` (this tree, the mypyc build). The machine is shared, so the builds run interleaved, round by round,
and the table gives medians; the load average is printed at the start and the end. The statistics of the
three builds (mean actions, draws, fool rates) must be identical: the script stops if they are not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent

#: Runs in the tree under test: play one case and print selfplay's statistics as JSON.
SNIPPET = """
import json, sys
from protocol.rules import rules_from_options
from referee.games.selfplay import selfplay
variant, players, deck, ask, games = sys.argv[1:]
options = {"deck": int(deck)}
if ask != "-":
    options["ask_forced_passes"] = ask == "true"
stats = selfplay(rules_from_options(variant, options), int(players), int(games), seed=1)
print(json.dumps(stats.to_dict()))
"""


@dataclass(frozen=True)
class Case:
    variant: str
    players: int
    deck: int
    ask: str  # "true", "false", or "-" for the variant's default (fools_fool has no such option)

    @property
    def label(self) -> str:
        ask = "" if self.ask == "-" else f" ask_forced_passes={self.ask}"
        return f"{self.variant} {self.players}p {self.deck}{ask}"


def cases() -> list[Case]:
    found = [Case("podkidnoy", 2, 36, "true"), Case("podkidnoy", 2, 36, "false")]
    for variant in ("podkidnoy", "perevodnoy", "chase", "fools_fool"):
        ask = "-" if variant == "fools_fool" else "true"
        for players, deck in ((2, 36), (2, 52), (3, 36), (4, 36), (6, 36)):
            case = Case(variant, players, deck, ask)
            if case not in found:
                found.append(case)
    return found


def export_tree(ref: str, folder: Path) -> Path:
    """The files of commit ``ref`` in ``folder`` (no build products: the engine as pure Python)."""
    archive, tree = folder / "before.tar", folder / "before"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), ref], check=True)
    tree.mkdir()
    subprocess.run(["tar", "-xf", str(archive), "-C", str(tree)], check=True)
    return tree


def run(case: Case, tree: Path, games: int, core: int, pure: bool) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("DURAK_PURE", None)
    if pure:
        env["DURAK_PURE"] = "1"
    argv = ["taskset", "-c", str(core), sys.executable, "-c", SNIPPET, case.variant, str(case.players),
            str(case.deck), case.ask, str(games)]
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="the commit to compare with (default: main)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per build and case (median)")
    parser.add_argument("--games", type=int, default=1500, help="games per measurement (fewer for 'before')")
    parser.add_argument("--core", type=int, default=0, help="the core to pin to (taskset -c)")
    args = parser.parse_args()
    check = subprocess.run([sys.executable, "-c", "from referee.engine import engine_build; print(engine_build())"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    if check != "compiled":
        sys.exit("bench_engine: the compiled engine is not installed here (pip install -e .)")
    print(f"load average at start: {load()}; pinned to core {args.core}; {args.rounds} rounds; "
          f"before = {args.before}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="durak-bench-") as tmp:
        before = export_tree(args.before, Path(tmp))
        builds = {"before": (before, False, args.games // 4), "pure": (ROOT, True, args.games // 3),
                  "compiled": (ROOT, False, args.games)}
        for case in cases():
            rates: dict[str, list[float]] = {name: [] for name in builds}
            first: dict[str, dict[str, object]] = {}
            for _ in range(args.rounds):
                for name, (tree, pure, games) in builds.items():
                    result = run(case, tree, games, args.core, pure)
                    rates[name].append(float(str(result["games_per_second"])))
                    first.setdefault(name, result)
            check_same_games(case, first["before"], builds, args.core)
            medians = {name: statistics.median(values) for name, values in rates.items()}
            ratios = [f"{medians[name] / medians['before']:.2f}" for name in ("compiled", "pure")]
            rows.append([case.label, *(round(medians[name]) for name in builds), *ratios])
            print(f"  {case.label}: {', '.join(f'{n} {round(m)}' for n, m in medians.items())}", flush=True)
    print()
    print(tabulate(rows, headers=["case (random play, games/s)", "before", "pure", "compiled", "compiled/before",
                                  "pure/before"]))
    print(f"\nload average at end: {load()}")


def check_same_games(case: Case, before: dict[str, object], builds: dict[str, tuple[Path, bool, int]],
                     core: int) -> None:
    """The builds must play the same games: over the before build's number of games, equal statistics."""
    timing = ("games_per_second", "seconds", "engine")  # all but what the builds must share
    reference = {k: v for k, v in before.items() if k not in timing}
    for name, (tree, pure, _) in builds.items():
        if name != "before":
            again = run(case, tree, int(str(before["games"])), core, pure)
            mine = {k: v for k, v in again.items() if k not in timing}
            if mine != reference:
                sys.exit(f"bench_engine: {case.label}: the {name} build plays differently: {mine} != {reference}")


if __name__ == "__main__":
    main()
