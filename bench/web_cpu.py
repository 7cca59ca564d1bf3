"""Benchmark: the web server's CPU per request, route by route, one client, no load (the figures issue 36 asks for).

Run by hand from the project root::

    python bench/web_cpu.py DB [--code DIR] [--requests 30] [--seed 1] [--mix ROUTES] [--bare PAGES] [--json]

``DB`` is a league database of bench/arena_data.py (a copy: the app may write its web key; the schema must be the
one ``--code`` serves, so an older checkout needs a copy of schema 8). The app of the checkout ``--code`` (default:
this one) is built in this process (``create_app``) and called through Litestar's TestClient, ``--requests`` times
per route of bench/web_load.py's mix (``--mix``: its routes only), as an anonymous viewer, each route's URLs drawn
as the load draws them (a random bot, game, deep page), each URL asked twice: ``built``, the first answer's CPU (an
anonymous page not kept yet is built; a route of one URL, as the board, is built by the warm-up request before),
``kept``, the second's (its kept bytes, unless what it shows changed between). ``--bare PAGES``: the bare stack of
bench/web_stack.py over its pages file instead (bench/bench_web.py writes it), the floor of Litestar itself. Each
request's CPU time is this process's (``time.process_time``: the handler's thread, the event loop and the test
client together), so a route's figure includes the test client's own cost: the table's first line, ``/favicon.ico``
(no database, no template; the bare stack's 404), is that floor. Medians and p90 in milliseconds; unpinned.
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

from bench.web_load import MIX, Load, checkout_app, parse_mix  # noqa: E402  (no referee import: --code's later)


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    app, bots, games = checkout_app(args.code, args.db)
    if args.bare:
        from bench.web_stack import bare_app, load_pages

        app = bare_app(load_pages(args.bare))
    from litestar.testing import TestClient

    load = Load(1, args.requests, 0.0, bots, args.seed, games)
    rows = []
    with TestClient(app) as client:
        for route in ["/favicon.ico", *args.mix]:
            rng = random.Random(f"{args.seed}{route}")
            urls = [load.url(route, rng) for _ in range(args.requests)]
            client.get(load.url(route, rng))  # warm: templates compiled, the league's facts read
            built: list[float] = []
            kept: list[float] = []
            statuses = set()
            for url in urls:
                for times in (built, kept):
                    start = time.process_time()
                    answer = client.get(url)
                    times.append((time.process_time() - start) * 1000)
                    statuses.add(answer.status_code)
            built.sort()
            rows.append({"route": route, "requests": len(urls), "built_median_ms": round(statistics.median(built), 2),
                         "built_p90_ms": round(built[int(0.9 * (len(built) - 1))], 2),
                         "kept_median_ms": round(statistics.median(kept), 2), "statuses": sorted(statuses)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", type=Path)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose app runs (default: this one)")
    parser.add_argument("--requests", type=int, default=30, help="per route")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mix", type=parse_mix, default=dict(MIX), help="the routes measured (shares ignored)")
    parser.add_argument("--bare", type=Path, help="a pages file of bench/web_stack.py: the bare stack measured")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = measure(args)
    if args.json:
        print(json.dumps({"db": str(args.db), "code": str(args.code), "bare": str(args.bare or ""), "routes": rows}))
        return
    print(f"{args.db.name}, {f'the bare stack of {args.bare}' if args.bare else f'code {args.code}'}, anonymous, "
          f"{args.requests} URLs per route, each asked twice; CPU ms per request (this process: app and test "
          "client), unpinned")
    width = max(len(row["route"]) for row in rows)
    for row in rows:
        print(f"{row['route']:<{width}}  built median {row['built_median_ms']:8.2f}  p90 {row['built_p90_ms']:8.2f}"
              f"  kept median {row['kept_median_ms']:8.2f}  {row['statuses']}")


if __name__ == "__main__":
    main()
