"""The web bench's load generator: ``clients`` concurrent clients (threads, each with one keep-alive ``http.client``
connection to 127.0.0.1 only), each making requests drawn from a mix of routes until a deadline, back to back or
each after a think time (``think`` seconds from an answer to the client's next request, as a person reading a page;
paced clients begin at random moments within the first think time), every answer's time and status kept, and a
summary per route. bench/bench_web.py runs it; bench/web_stack.py's bare stack serves the same routes.

A request in flight at the deadline still ends (its answer, or ``timeout``): the load lasts at most
``seconds + timeout``. Requests/s are the answers over the load's wall time.

Each request carries an ``X-Forwarded-For`` address (the server trusts 127.0.0.1 as a proxy): the clients share a
pool of :data:`ADDRESSES` addresses, client ``i`` of ``n`` rotating among every ``n``-th of them, so that at up to
``ADDRESSES`` x 4 requests/s no address passes the server's 5 requests/s (WebSettings.rate_per_second), a burst of
60 aside, and no request is refused for a rate limit (any refusal is counted, by status).
"""

from __future__ import annotations

import http.client
import random
import re
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
#: The X-Forwarded-For addresses the clients rotate among (10.0.0.0 up): well under the server's 50,000 buckets.
ADDRESSES = 1000
#: Each route of :data:`MIX` as a pattern its URLs match (:func:`route_of`).
_PATTERNS = {route: re.compile(re.escape(route).replace(r"\{name\}", r"[^/?&]+").replace(r"\{number\}", r"\d+")
                               .replace(r"\{page\}", r"\d+").replace(r"\{before\}", r"\d+")) for route in MIX}


@dataclass
class Sample:
    route: str
    seconds: float
    status: int  # 0: no answer


@dataclass
class Load:
    clients: int
    requests: int  # per client at most (0: until the deadline)
    max_seconds: float
    bots: list[str]
    seed: int
    games: int = 1  # the league's games when the load began (numbers 1..games)
    timeout: float = 30.0
    mix: dict[str, float] = field(default_factory=lambda: dict(MIX))  # route -> its share
    think: float = 0.0  # seconds from an answer to the client's next request (0: back to back)
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


def route_of(url: str) -> str | None:
    """The route of :data:`MIX` a URL (path and query) was drawn from, or None."""
    return next((route for route, pattern in _PATTERNS.items() if pattern.fullmatch(url)), None)


def one_client(load: Load, port: int, index: int, deadline: float) -> None:
    """Requests on one keep-alive connection (a new one after an error) until ``deadline`` (or ``load.requests``),
    each ``load.think`` seconds after the last answer."""
    rng, mine = random.Random(load.seed * 1000 + index), []
    connection = http.client.HTTPConnection(HOST, port, timeout=load.timeout)
    urls = load.urls(rng)
    if load.think:
        time.sleep(rng.uniform(0, load.think))
    sent = 0
    while time.monotonic() < deadline and (not load.requests or sent < load.requests):
        route, url = next(urls)
        start = time.perf_counter()
        try:
            connection.request("GET", url, headers={"X-Forwarded-For": client_address(index, sent, load.clients)})
            response = connection.getresponse()
            response.read()
            status = response.status
        except (OSError, http.client.HTTPException):
            status = 0
            connection.close()
            connection = http.client.HTTPConnection(HOST, port, timeout=load.timeout)
        mine.append(Sample(route, time.perf_counter() - start, status))
        sent += 1
        if load.think:
            time.sleep(max(0.0, min(load.think, deadline - time.monotonic())))
    connection.close()
    with load.lock:
        load.samples += mine


def parse_mix(text: str) -> dict[str, float]:
    """``"/=3,/api/board=2"`` -> each route's share; a route of :data:`MIX` only. :raises ValueError: otherwise."""
    mix = {}
    for part in filter(None, text.split(",")):
        route, _, share = part.rpartition("=")  # a route may hold "=" itself: its share is after the last
        if route not in MIX:
            route, share = part, ""
        if route not in MIX:
            raise ValueError(f"unknown route {route!r} (the routes: {', '.join(MIX)})")
        mix[route] = float(share or 1)
    if not mix or sum(mix.values()) <= 0:
        raise ValueError("the mix needs a route with a share above 0")
    return mix


def client_address(index: int, request: int, clients: int) -> str:
    """The address of client ``index``'s ``request``-th request: the pool's every ``clients``-th address from the
    ``index``-th, in turn (each client's own addresses, as people behind a proxy would have)."""
    mine = max(1, ADDRESSES // clients)
    number = index + clients * (request % mine)
    return f"10.0.{number // 256}.{number % 256}"


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


def summary(samples: list[Sample], wall: float) -> list[dict[str, Any]]:
    """Per route (and ``all`` together): requests, answers other than 200 (0: no answer), statuses, median, p95,
    p99, max (ms), requests/s over ``wall``."""
    rows = []
    for route in [*MIX, "all"]:
        mine = [s for s in samples if route in ("all", s.route)]
        if not mine:
            continue
        ms = np.array([s.seconds * 1000 for s in mine])
        statuses: dict[str, int] = {}
        for s in mine:
            statuses[str(s.status)] = statuses.get(str(s.status), 0) + 1
        rows.append({"route": route, "requests": len(mine), "not_200": sum(s.status != 200 for s in mine),
                     "statuses": statuses, "median_ms": round(float(np.median(ms)), 1),
                     "p95_ms": round(float(np.percentile(ms, 95)), 1), "p99_ms": round(float(np.percentile(ms, 99)), 1),
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
