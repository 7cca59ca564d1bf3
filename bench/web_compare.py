"""Two runs of bench/bench_web.py side by side (their ``--save`` files): a league of more games against one of
fewer, cell by cell, as issue 36's last target reads them (the larger league's figures within 20% of the smaller's).

Run by hand from the project root::

    python bench/web_compare.py SMALL.json LARGE.json [SMALL2.json LARGE2.json ...] [--within 0.2] [--json]

For each cell of the arena both runs measured (by mode and clients): requests/s (back to back only: paced clients
ask at the rate their think time sets), the server's CPU per request and the p99 over all routes, LARGE's against
SMALL's (``+12%``: LARGE's is 12% higher), and whether that is within ``--within`` on the worse side (fewer
requests, more CPU, a longer tail; better by any margin is within). Each run measured the bare stack too (the same
bytes from a minimal app, no database) in the same cells, beside the same writer and refitter: its throughput and
CPU move only with the machine (its speed during that run, the share of the cores the daemon's stand-ins took), so
those two are given again *against its own run's bare stack* (the arena's figure over the bare stack's, LARGE's
quotient against SMALL's): what the games stored cost, without what the machine did between the two runs (not the
p99: the bare stack's tail of a few ms is mostly noise). Then the rounds' medians,
the paced routes' worst p99, the refitter's CPU per refit, the WAL's largest size and the writer's CPU per game and
slowest group. Given several pairs of runs (best taken in turn: small, large, small, large...), each figure is the
median of its side's runs.

A comparison, not a gate: it exits 0 whatever the figures (2 on a file it cannot read).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tabulate import tabulate

Cell = dict[str, Any]
#: A cell's figure; the sign of a change that makes it worse (fewer requests, more CPU, a longer tail); whether it
#: is also given over the bare stack's (throughput and CPU scale with the machine's speed; a tail of a few ms does
#: not: the bare stack's p99 is mostly noise).
FIGURES: tuple[tuple[str, Callable[[Cell], float], int, bool], ...] = (
    ("req/s", lambda cell: overall(cell)["requests_per_s"], -1, True),
    ("server CPU ms/req", lambda cell: cell["server_cpu_ms_per_request"], +1, True),
    ("p99 ms", lambda cell: overall(cell)["p99_ms"], +1, False),
)


def overall(cell: Cell) -> dict[str, Any]:
    return next(row for row in cell["routes"] if row["route"] == "all")


def by_cell(run: dict[str, Any]) -> dict[tuple[str, str, int], Cell]:
    return {(cell["stack"], cell["mode"], cell["clients"]): cell for cell in run["cells"]}


def change(large: float, small: float) -> float | None:
    return large / small - 1 if small else None


def compare(small: dict[str, Any], large: dict[str, Any], within: float) -> list[dict[str, Any]]:
    """A row per figure of each arena cell both runs measured: back to back first, by clients."""
    smalls, larges = by_cell(small), by_cell(large)
    keys = sorted((key for key in smalls.keys() & larges.keys() if key[0] == "arena"),
                  key=lambda key: (key[1] != "back-to-back", key[2]))
    rows = []
    for key in keys:
        _, mode, clients = key
        bare = ("bare", mode, clients)
        for name, figure, worse, scaled in FIGURES:
            if name == "req/s" and mode == "paced":
                continue
            raw = change(figure(larges[key]), figure(smalls[key]))
            normed = None
            if scaled and bare in smalls and bare in larges and figure(smalls[bare]) and figure(larges[bare]):
                normed = change(figure(larges[key]) / figure(larges[bare]), figure(smalls[key]) / figure(smalls[bare]))
            rows.append({"mode": mode, "clients": clients, "figure": name, "small": figure(smalls[key]),
                         "large": figure(larges[key]), "change": raw, "within": verdict(raw, worse, within),
                         "against bare": normed, "within against bare": verdict(normed, worse, within)})
    return rows


def verdict(moved: float | None, worse: int, within: float) -> str:
    if moved is None:
        return "-"
    return "yes" if moved * worse <= within else "NO"


def extras(run: dict[str, Any]) -> dict[str, Any]:
    """The figures of a run beside its cells: the rounds, the paced tail's worst route, the daemon's stand-ins."""
    paced = [cell for cell in run["cells"] if cell["stack"] == "arena" and cell["mode"] == "paced"]
    worst = max(((row["p99_ms"], row["route"]) for cell in paced if cell["clients"] == max(c["clients"] for c in paced)
                 for row in cell["routes"] if row["route"] != "all"), default=None)
    writer, refitter = run.get("writer", {}), run.get("refitter", {})
    return {"games": f"{run.get('games', 0):,}", "rounds' median (arena / bare req/s)":
            run.get("targets", {}).get("rounds_median_arena_over_bare_requests_per_s"),
            "paced worst route p99 ms": f"{worst[0]:g} ({worst[1]})" if worst else None,
            "refitter CPU s/refit": refitter.get("cpu_s_per_refit"),
            "WAL largest MiB": refitter.get("largest_wal_mib"), "writer CPU ms/game": writer.get("cpu_ms_per_game"),
            "writer slowest group ms": writer.get("slowest_group_ms")}


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs of one side as one: each cell's figures (route by route) and the daemon's stand-ins' the medians of
    its runs'."""
    if len(runs) == 1:
        return runs[0]
    cells = [by_cell(run) for run in runs]
    merged = []
    for key, first in cells[0].items():
        same = [run_cells[key] for run_cells in cells]  # a cell one run lacks: KeyError, the files' fault
        routes = [{**row, **medians([next(r for r in cell["routes"] if r["route"] == row["route"]) for cell in same],
                                    ("requests_per_s", "p99_ms"))} for row in first["routes"]]
        merged.append({**first, **medians(same, ("server_cpu_ms_per_request",)), "routes": routes})
    return {**runs[0], "cells": merged,
            **{part: medians([run.get(part, {}) for run in runs], tuple(runs[0].get(part, {})))
               for part in ("writer", "refitter", "targets")}}


def medians(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> dict[str, Any]:
    """The median of each key's numbers over the rows (a key that is not a number in every row: the first row's)."""
    found: dict[str, Any] = {}
    for key in keys:
        values = [row.get(key) for row in rows]
        numbers = [value for value in values if isinstance(value, int | float) and not isinstance(value, bool)]
        found[key] = round(statistics.median(numbers), 3) if len(numbers) == len(values) else values[0]
    return found


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", metavar="SMALL LARGE",
                        help="pairs of runs (bench_web.py --save): the league of fewer games', then of more games'")
    parser.add_argument("--within", type=float, default=0.2, help="the change allowed on the worse side (0.2: 20%%)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if len(args.runs) % 2:
        parser.error("runs come in pairs: SMALL LARGE [SMALL LARGE ...]")
    try:
        small, large = (median_run([json.loads(path.read_text()) for path in args.runs[side::2]]) for side in (0, 1))
        rows = compare(small, large, args.within)
        sides = {"small": extras(small), "large": extras(large)}
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as error:
        print(f"web_compare: cannot compare {' '.join(map(str, args.runs))}: {error!r}", file=sys.stderr)
        sys.exit(2)
    if args.json:
        print(json.dumps({"within": args.within, "pairs": len(args.runs) // 2, "cells": rows, "runs": sides}))
        return
    pairs = len(args.runs) // 2
    print(f"{' '.join(map(str, args.runs[1::2]))} against {' '.join(map(str, args.runs[::2]))}"
          f"{f' (medians of {pairs} runs a side)' if pairs > 1 else ''}: the arena's figures, LARGE's change; "
          f"'against bare': each over its own run's bare stack; within {args.within:.0%} on the worse side")
    print(tabulate([{**row, "change": percent(row["change"]), "against bare": percent(row["against bare"])}
                    for row in rows], headers="keys", tablefmt="github"))
    print()
    print(tabulate([{"": name, "small": sides["small"][name], "large": sides["large"][name]}
                    for name in sides["small"]], headers="keys", tablefmt="github"))


if __name__ == "__main__":
    main()
