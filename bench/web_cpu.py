"""Benchmark: the web server's CPU per request, route by route, one client, no load (the figures issue 36 asks for).

Run by hand from the project root::

    python bench/web_cpu.py DB [--code DIR] [--requests 30] [--seed 1] [--json]

``DB`` is a league database of bench/arena_data.py (a copy: the app may write its web key; the schema must be the
one ``--code`` serves, so an older checkout needs a copy of schema 8). The app of the checkout ``--code`` (default:
this one) is built in this process (``create_app``) and called through Litestar's TestClient, ``--requests`` times
per route of bench/web_load.py's mix, as an anonymous viewer, each route's URLs drawn as the load draws them (a
random bot, game, deep page). Each request's CPU time is this process's (``time.process_time``: the handler's
thread, the event loop and the test client together), so a route's figure includes the test client's own cost: the
table's first line, ``/favicon.ico`` (no database, no template), is that floor. Medians and p90 in milliseconds;
unpinned.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.web_load import MIX, Load, checkout_app  # noqa: E402  (no referee import: --code's comes later)


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    app, bots, games = checkout_app(args.code, args.db)
    from litestar.testing import TestClient

    load = Load(1, args.requests, 0.0, bots, args.seed, games)
    rows = []
    with TestClient(app) as client:
        for route in ["/favicon.ico", *MIX]:
            rng = random.Random(f"{args.seed}{route}")
            urls = [load.url(route, rng) for _ in range(args.requests)]
            client.get(urls[0])  # warm: templates compiled, the page cache primed
            cpu, statuses = [], set()
            for url in urls:
                start = time.process_time()
                answer = client.get(url)
                cpu.append((time.process_time() - start) * 1000)
                statuses.add(answer.status_code)
            cpu.sort()
            rows.append({"route": route, "requests": len(urls), "median_ms": round(statistics.median(cpu), 2),
                         "p90_ms": round(cpu[int(0.9 * (len(cpu) - 1))], 2), "statuses": sorted(statuses)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", type=Path)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose app runs (default: this one)")
    parser.add_argument("--requests", type=int, default=30, help="per route")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = measure(args)
    if args.json:
        print(json.dumps({"db": str(args.db), "code": str(args.code), "routes": rows}))
        return
    print(f"{args.db.name}, code {args.code}, anonymous, {args.requests} requests per route; CPU ms per request "
          "(this process: app and test client), unpinned")
    width = max(len(row["route"]) for row in rows)
    for row in rows:
        print(f"{row['route']:<{width}}  median {row['median_ms']:8.2f}  p90 {row['p90_ms']:8.2f}  {row['statuses']}")


if __name__ == "__main__":
    main()
