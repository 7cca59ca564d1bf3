"""How uvicorn serves the app: the bounds on idle and slow connections (:func:`uvicorn_options`).

uvicorn (0.55, its h11 protocol: httptools is not installed) bounds a connection idle *between* requests
(``timeout_keep_alive``) and a request's header block in bytes (``h11_max_incomplete_event_size``, 16 KiB), but
not in time: its keep-alive timer is armed only once a response is complete, and cancelled by the first byte that
comes after, so a connection that never sends a byte, or sends half a header and stops, stays open for good (600
such connections held their sockets for as long as the clients liked). :class:`HeaderBoundH11Protocol` adds the
missing bound: a connection waiting for a request's headers (a new one, or one whose last answer is sent) is
closed after :data:`HEADER_SECONDS` unless a whole header block came. A request whose headers came is the app's:
a write's body is read only once its credential is checked (:mod:`referee.web.admission`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

#: The longest a connection may take to send a request's headers (from its opening, or from its last answer).
HEADER_SECONDS = 10.0
#: The longest a connection may sit idle between requests (uvicorn's own keep-alive bound).
KEEP_ALIVE_SECONDS = 5
#: Connections and requests at once (uvicorn's ``limit_concurrency``): past it, a new request gets 503.
CONCURRENCY = 1024


class HeaderBoundH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with connections that do not finish a request's headers in time closed."""

    header_seconds: float = HEADER_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

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


def uvicorn_options(header_seconds: float = HEADER_SECONDS) -> dict[str, Any]:
    """What ``durak serve`` passes to ``uvicorn.Config`` to bound idle and slow connections (a test may shorten
    the header bound: a class made here then, which a worker process could not import; ``durak serve`` keeps
    the default)."""
    protocol: type[HeaderBoundH11Protocol] = HeaderBoundH11Protocol
    if header_seconds != HEADER_SECONDS:
        protocol = type("ShortHeaderBoundH11Protocol", (HeaderBoundH11Protocol,), {"header_seconds": header_seconds})
    return {"http": protocol, "timeout_keep_alive": KEEP_ALIVE_SECONDS, "limit_concurrency": CONCURRENCY,
            "h11_max_incomplete_event_size": 16 * 1024}
