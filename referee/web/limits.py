"""Rate limits: a token bucket per key (an address, an author), kept in this process only (each uvicorn worker has
its own), and the client's address as the limits see it: the peer, or behind a trusted proxy the last address of
``X-Forwarded-For`` that is not a trusted proxy (the earlier ones are the client's to write)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

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


def retry_after(wait: float) -> str:
    """A ``Retry-After`` value: whole seconds, at least 1."""
    return str(max(1, math.ceil(wait)))


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
