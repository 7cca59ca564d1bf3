"""Rate limits: a token bucket per key (an address, an author), kept in this process only (each uvicorn worker has
its own), and the client's address as the limits see it: the peer, or behind a trusted proxy the last address of
``X-Forwarded-For`` that is not a trusted proxy (the earlier ones are the client's to write)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from litestar.types import ASGIApp, Receive, Scope, Send

#: Buckets kept at most; past it the fullest (idle) ones are dropped, so a flood of addresses cannot grow memory.
MAX_BUCKETS = 50_000


@dataclass
class _Bucket:
    tokens: float
    when: float


class RateLimiter:
    """Token buckets: ``burst`` requests at once, refilled at ``rate`` per second."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()  # sync handlers run in a thread pool

    def take(self, key: str) -> float:
        """Spend one token of ``key``'s bucket: 0.0 if there was one, else the seconds until there is one."""
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                if len(self._buckets) >= MAX_BUCKETS:
                    self._forget_idle(now)
                bucket = self._buckets[key] = _Bucket(float(self.burst), now)
            bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.when) * self.rate)
            bucket.when = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / self.rate

    def _forget_idle(self, now: float) -> None:
        full = [key for key, b in self._buckets.items() if b.tokens + (now - b.when) * self.rate >= self.burst]
        for key in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[key]


class StreamSlots:
    """Open streams counted per author and in all (this process's: each uvicorn worker has its own), each stream
    holding one :class:`StreamLease` from :meth:`take` until it ends."""

    def __init__(self, per_author: int, total: int) -> None:
        self.per_author, self.total = per_author, total
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()  # taken in a handler's thread, given back on the event loop

    def take(self, author: str) -> StreamLease | str:
        """A lease on one more stream for ``author``, or why not (a cap is reached)."""
        with self._lock:
            mine, every = self._open.get(author, 0), sum(self._open.values())
            if mine >= self.per_author:
                return f"you have {mine} open table streams, the most an author may have"
            if every >= self.total:
                return f"the server has {every} open table streams, the most it keeps: try again later"
            self._open[author] = mine + 1
        return StreamLease(self, author)

    def count(self, author: str | None = None) -> int:
        with self._lock:
            return sum(self._open.values()) if author is None else self._open.get(author, 0)

    def _give_back(self, author: str) -> None:
        with self._lock:
            left = self._open[author] - 1
            if left:
                self._open[author] = left
            else:
                del self._open[author]


class StreamLease:
    """One stream's slot; :meth:`release` gives it back once, however often it is called (the stream's end and
    its generator's collection both call it)."""

    def __init__(self, slots: StreamSlots, author: str) -> None:
        self._slots, self._author, self._held = slots, author, True
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            held, self._held = self._held, False
        if held:
            self._slots._give_back(self._author)


#: Where a request keeps the stream leases it took (its ASGI scope's state), for :func:`give_back_leases`.
LEASES = "stream_leases"


def give_back_leases(app: ASGIApp) -> ASGIApp:
    """Middleware: when a request's ASGI call ends (its answer sent, its client gone, or the server cutting it as
    it stops), the stream leases it took are given back. A stream's generator cannot be relied on for that: a
    response task cancelled while it writes leaves the generator suspended at a ``yield``, and its ``finally``
    would run only when the garbage collector comes (seen under load: slots held for good)."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await app(scope, receive, send)
        finally:
            for lease in scope.get("state", {}).get(LEASES, ()):
                lease.release()

    return middleware


def retry_after(wait: float) -> str:
    """A ``Retry-After`` value: whole seconds, at least 1."""
    return str(max(1, math.ceil(wait)))


#: The hourly quotas' window.
HOUR = timedelta(hours=1)


def hour_frees(used: Sequence[tuple[str, float]], excess: float, now: datetime) -> str:
    """The ``Retry-After`` of an hourly quota: whole seconds until the oldest items of ``used`` (ISO time, amount;
    oldest first) that add up to ``excess`` have left the hour."""
    freed = 0.0
    for when, amount in used:
        freed += amount
        if freed >= excess:
            return retry_after((datetime.fromisoformat(when) + HOUR - now).total_seconds())
    return retry_after(HOUR.total_seconds())  # not reached: the items add up to more than the excess


def client_address(peer: str | None, forwarded_for: Iterable[str], trusted: frozenset[str]) -> str:
    """The client's address: ``peer``, unless it is a trusted proxy; then walk ``X-Forwarded-For`` from the right,
    past trusted proxies, to the first address that is not one."""
    address = peer or "unknown"
    if address not in trusted:
        return address
    hops = [hop.strip() for value in forwarded_for for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        address = hop
        if hop not in trusted:
            break
    return address


def is_tls(scheme: str, peer: str | None, forwarded_proto: str | None, trusted: frozenset[str]) -> bool:
    """Whether the client's request came over TLS: directly, or as a trusted proxy says."""
    if scheme == "https":
        return True
    return peer in trusted and (forwarded_proto or "").split(",")[0].strip().lower() == "https"
