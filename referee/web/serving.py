"""How uvicorn serves the app: the bounds on idle and slow connections (:func:`uvicorn_options`), over either of
uvicorn's HTTP protocols: httptools (a C parser; the ``web`` extra installs it) or, without it, h11.

uvicorn (0.55) bounds a connection idle *between* requests (``timeout_keep_alive``), and with h11 a request's header
block in bytes (``h11_max_incomplete_event_size``, 16 KiB), but not in time: its keep-alive timer is armed only once
a response is complete, and cancelled by the first byte that comes after, so a connection that never sends a byte,
or sends half a header and stops, stays open for good (600 such connections held their sockets for as long as the
clients liked). Each protocol here adds the missing bound: a connection waiting for a request's headers (a new one,
or one whose last answer is sent) is closed after :data:`HEADER_SECONDS` unless a whole header block came. With
httptools, which buffers a header block whatever its size, the block's bytes are bounded here too
(:data:`HEADER_BYTES`, as h11's). A request whose headers came is the app's: a write's body is read only once its
credential is checked (:mod:`referee.web.admission`). And a worker's garbage collector, set for serving
(:func:`settle_collector`).
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # no httptools: h11 it is
    HttpToolsProtocol = None  # type: ignore[assignment,misc]

#: The longest a connection may take to send a request's headers (from its opening, or from its last answer).
HEADER_SECONDS = 10.0
#: The most a request's header block may hold.
HEADER_BYTES = 16 * 1024
#: The longest a connection may sit idle between requests (uvicorn's own keep-alive bound).
KEEP_ALIVE_SECONDS = 5
#: Connections and requests at once (uvicorn's ``limit_concurrency``): past it, a new request gets 503.
CONCURRENCY = 1024
#: Allocations (less deallocations) between two collections of a worker's youngest generation (CPython's is 700).
YOUNG_COLLECTION = 10_000


class _HeaderClock:
    """The header bound in time, mixed into either protocol: both name their request in flight ``cycle`` (a new
    one for each request whose headers came) and call ``on_response_complete`` when its answer is sent. (The
    ``super()`` calls reach the protocol's methods, which mypy cannot see from a mixin.)"""

    header_seconds: float = HEADER_SECONDS
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    cycle: Any

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(self.header_seconds, self._headers_late, self.cycle)

    def _headers_late(self, awaited: Any) -> None:
        """Close the connection if no request began since the timer was armed (``self.cycle`` is a new one for
        each request whose headers came) and none is being answered."""
        self._header_timer = None
        if self.transport.is_closing() or self.cycle is not awaited:
            return
        if self.cycle is None or self.cycle.response_complete:
            self.transport.close()


class HeaderBoundH11Protocol(_HeaderClock, H11Protocol):
    """uvicorn's h11 protocol, with connections that do not finish a request's headers in time closed (h11 bounds
    their bytes itself)."""


if HttpToolsProtocol is not None:
    class HeaderBoundHttpToolsProtocol(_HeaderClock, HttpToolsProtocol):
        """uvicorn's httptools protocol, with connections that do not finish a request's headers in time, or send
        more than :data:`HEADER_BYTES` of them, closed. Bytes are counted while no body is being read; a chunk
        in which a header block or a message ends is not counted (the bound is loose by a chunk or two: 64 KiB)."""

        header_bytes: int = HEADER_BYTES

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self._header_bytes, self._in_body, self._ends = 0, False, 0
            super().connection_made(transport)

        def data_received(self, data: bytes) -> None:
            in_body, ends = self._in_body, self._ends
            super().data_received(data)
            if in_body or self._in_body or ends != self._ends:
                return
            self._header_bytes += len(data)
            if self._header_bytes > self.header_bytes and not self.transport.is_closing():
                self.transport.close()

        def on_headers_complete(self) -> None:
            self._header_bytes, self._in_body, self._ends = 0, True, self._ends + 1
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._in_body, self._ends = False, self._ends + 1
            super().on_message_complete()


#: The protocols this machine can serve with, the best first (httptools where installed).
PROTOCOLS: tuple[type[_HeaderClock], ...] = (
    (HeaderBoundH11Protocol,) if HttpToolsProtocol is None else (HeaderBoundHttpToolsProtocol, HeaderBoundH11Protocol))


def uvicorn_options(header_seconds: float = HEADER_SECONDS, protocol: type[_HeaderClock] | None = None,
                    ) -> dict[str, Any]:
    """What ``durak serve`` passes to ``uvicorn.Config`` to bound idle and slow connections, on the best of
    :data:`PROTOCOLS` (a test may choose the ``protocol`` and shorten the header bound: a class made here then,
    which a worker process could not import; ``durak serve`` keeps the defaults)."""
    protocol = protocol or PROTOCOLS[0]
    if header_seconds != HEADER_SECONDS:
        protocol = type(f"Short{protocol.__name__}", (protocol,), {"header_seconds": header_seconds})
    return {"http": protocol, "timeout_keep_alive": KEEP_ALIVE_SECONDS, "limit_concurrency": CONCURRENCY,
            "h11_max_incomplete_event_size": HEADER_BYTES}


def settle_collector() -> None:
    """A worker process's garbage collector set for serving, once its app is made. What the start made (the app, its
    routes and templates: never garbage) is frozen out of every later collection (``gc.freeze``), and the youngest
    generation is collected every :data:`YOUNG_COLLECTION` allocations. A page's build makes thousands of objects
    that live for the build: under the web bench's crowd (100k games, 50 clients, the daemon writing) a worker ran
    2,371 young, 216 middle and 17 full collections in a minute, each full one 54 ms through the start's objects:
    1.4 s of CPU, against 0.08 s so (no full collection in the same minute)."""
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION, *gc.get_threshold()[1:])
