"""The web bench's load generator: a bounded number of concurrent clients (threads, each with one keep-alive
``http.client`` connection to 127.0.0.1 only), each making a fixed number of requests drawn from a mix of routes
until a deadline, every response's time and status kept, and a summary per route. bench/bench_web.py runs it.

A request in flight at the deadline still ends (its answer, or ``timeout``): the load lasts at most
``max_seconds + timeout``.
"""

from __future__ import annotations

import http.client
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HOST = "127.0.0.1"  # the only address the load goes to
#: route -> its share of the requests. ``{name}``: a random bot; ``{number}``: a random game (its replay);
#: ``{before}``/``{page}``: a deep page of the games list as its neighbour's "older" link reaches it (a keyset over
#: the oldest thousand games), ``{page}`` alone: the same depth asked for by number (OFFSET).
MIX = {"/": 0.2, "/api/board": 0.1, "/bots/{name}": 0.2, "/api/bots/{name}": 0.1, "/games/{number}": 0.1,
       "/api/games/{number}": 0.05, "/games": 0.05, "/api/games": 0.03, "/games?bot={name}": 0.03,
       "/games?verdict=timeout": 0.03, "/api/games?verdict=any&players=3": 0.02, "/games?players=4": 0.02,
       "/games?page={page}&before={before}": 0.04, "/api/games?page={page}&before={before}": 0.02,
       "/games?page={page}": 0.01}
PER_PAGE = 50  # the server's games per page (WebSettings.games_per_page's default)


@dataclass
class Sample:
    route: str
    seconds: float
    status: int  # 0: no answer


@dataclass
class Load:
    clients: int
    requests: int
    max_seconds: float
    bots: list[str]
    seed: int
    games: int = 1  # the league's games when the load began (numbers 1..games)
    timeout: float = 30.0
    mix: dict[str, float] = field(default_factory=lambda: dict(MIX))  # route -> its share
    samples: list[Sample] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def urls(self, rng: random.Random) -> Iterator[tuple[str, str]]:
        routes, weights = list(self.mix), list(self.mix.values())
        while True:
            route = rng.choices(routes, weights)[0]
            yield route, self.url(route, rng)

    def url(self, route: str, rng: random.Random) -> str:
        """``route`` with its placeholders drawn."""
        before = rng.randint(min(PER_PAGE + 1, self.games), max(PER_PAGE + 1, min(1000, self.games)))
        return route.format(name=rng.choice(self.bots), number=rng.randint(1, self.games), before=before,
                            page=(self.games - before) // PER_PAGE + 2)


def one_client(load: Load, port: int, index: int, deadline: float) -> None:
    """``load.requests`` requests on one keep-alive connection (a new one after an error), until ``deadline``."""
    rng, mine = random.Random(load.seed * 1000 + index), []
    connection = http.client.HTTPConnection(HOST, port, timeout=load.timeout)
    urls = load.urls(rng)
    for _ in range(load.requests):
        if time.monotonic() >= deadline:
            break
        route, url = next(urls)
        start = time.perf_counter()
        try:
            connection.request("GET", url, headers={"X-Forwarded-For": client_address(index)})
            response = connection.getresponse()
            response.read()
            status = response.status
        except (OSError, http.client.HTTPException):
            status = 0
            connection.close()
            connection = http.client.HTTPConnection(HOST, port, timeout=load.timeout)
        mine.append(Sample(route, time.perf_counter() - start, status))
    connection.close()
    with load.lock:
        load.samples += mine


def parse_mix(text: str) -> dict[str, float]:
    """``"/=3,/api/board=2"`` -> each route's share; a route of :data:`MIX` only. :raises ValueError: otherwise."""
    mix = {}
    for part in filter(None, text.split(",")):
        route, _, share = part.partition("=")
        if route not in MIX:
            raise ValueError(f"unknown route {route!r} (the routes: {', '.join(MIX)})")
        mix[route] = float(share or 1)
    if not mix or sum(mix.values()) <= 0:
        raise ValueError("the mix needs a route with a share above 0")
    return mix


def client_address(index: int) -> str:
    """The address client ``index`` stands for: the server trusts 127.0.0.1 as a proxy, so each client has its own
    rate limit bucket, as 50 people would (from one address, 50 clients would share one)."""
    return f"10.0.{index // 256}.{index % 256}"


def run_load(load: Load, port: int) -> float:
    """All the clients at once; returns the wall time."""
    deadline = time.monotonic() + load.max_seconds
    threads = [threading.Thread(target=one_client, args=(load, port, i, deadline), daemon=True)
               for i in range(load.clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(load.max_seconds + load.timeout + 30)
    return time.perf_counter() - start


def summary(samples: list[Sample], wall: float) -> list[dict[str, object]]:
    """Per route (and all together): requests, errors, statuses, median, p90, p99, max (ms), requests/s."""
    rows = []
    for route in [*MIX, "all"]:
        mine = [s for s in samples if route in ("all", s.route)]
        if not mine:
            continue
        ms = np.array([s.seconds * 1000 for s in mine])
        statuses: dict[str, int] = {}
        for s in mine:
            statuses[str(s.status)] = statuses.get(str(s.status), 0) + 1
        rows.append({"route": route, "requests": len(mine), "errors": sum(s.status == 0 or s.status >= 400
                                                                           for s in mine),
                     "statuses": statuses, "median_ms": round(float(np.median(ms)), 1),
                     "p90_ms": round(float(np.percentile(ms, 90)), 1), "p99_ms": round(float(np.percentile(ms, 99)), 1),
                     "max_ms": round(float(ms.max()), 1), "requests_per_s": round(len(mine) / wall, 1)})
    return rows


def checkout_app(code: Path, db: Path) -> tuple[Any, list[str], int]:
    """The web app of the checkout ``code`` over the league database ``db`` (imported from that checkout, so that
    two checkouts can be measured alike; its rate limits lifted), the league's bot names, and its games stored."""
    import sys

    sys.path.insert(0, str(code.resolve()))
    from referee.results.arena_store import ArenaStore
    from referee.web.app import create_app
    from referee.web.settings import WebSettings

    with ArenaStore(db, create=False) as store:
        league = store.league()
        assert league is not None
        bots = sorted({v.bot for v in store.versions(league.id)})
        games = store.count_games(league.id)
    return create_app(db, WebSettings(rate_burst=10**9, rate_per_second=10**6)), bots, games
