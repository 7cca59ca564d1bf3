"""The front: a page kept for anonymous visitors answered before the app routes the request, as a reverse proxy's
cache answers before its upstream.

A crowd's request for a kept page cost 45 us of the app's CPU (in-process, with the bench's headers), of which
the page itself (its lookup among the kept pages and its marks) was 5: the rest was Litestar's routing, its
``Request`` and ``Response`` objects, parsing headers the page does not read, and writing its headers through
several layers. The bare stack, Litestar answering fixed bytes, took 19.5. So the route that answers a URL for
an anonymous visitor (:func:`referee.web.shown.shown`) tells the front where it kept that URL's page (:meth:`Front.
remember`: the page's key, marks and pool, which the route derives from the URL alone), and the next anonymous
``GET`` of exactly that URL (path and query, as sent) is answered here, by the same rules the route applies:

- **anonymous only**: a request with an ``Authorization`` header, or a ``Cookie`` header that names the session
  cookie (found in the raw header, whatever else it holds: a request that might be signed in goes to the app), is
  passed to the app, which builds its page for that viewer;
- **the same rate limit first**: the client's address (behind a trusted proxy, from ``X-Forwarded-For``) spends
  one token, as admission spends it (:mod:`referee.web.admission`); the front notes what it found in the request's
  scope, so that a request it passes on is not charged twice, and a refused one is refused by the app's 429;
- **current or not at all**: the page is answered only if it is kept and none of its marks has moved past it
  (:meth:`~referee.web.published.Published.kept`); otherwise the app builds it, as before;
- **the same bytes**: the route's status (200, or 304 for a matching ``If-None-Match``), headers and body, in the
  order the app sends them (tests/test_web_front.py compares every route's answer with and without the front).

What a URL maps to is a function of the URL (the route parses its path and query into the key), so remembering it
is safe whatever the URL holds; the map is bounded (:data:`URLS`, the first remembered out first), so URLs made up
to fill it only push out others, which are then answered by the app once and remembered again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from litestar.types import HTTPScope, Scope, Send

from referee.web import auth
from referee.web.headers import SECURITY_PAIRS
from referee.web.limits import RateLimiter, client_address
from referee.web.published import Page, Published

#: The URLs whose pages the front remembers (each a few hundred bytes: tens of MB at most).
URLS = 65_536
#: Where a request's scope holds the seconds its address must wait (0.0: admitted), once the front has taken its
#: token: admission then does not take another (:func:`referee.web.admission.admit`).
ADDRESS_WAIT = "address_wait"
#: The session cookie's name as it appears in a raw ``Cookie`` header.
_SESSION = auth.SESSION_COOKIE.encode()


@dataclass(frozen=True)
class Shelf:
    """Where a URL's page is kept: its key, the marks it depends on and its pool (:class:`Published`'s)."""

    key: str
    marks: tuple[str, ...]
    pool: str


class Front:
    """The pages of :class:`Published` that anonymous visitors asked for by URL, answered before the app (see the
    module's text). ``limits``: the addresses' rate limits (the app's); ``trusted``: the proxies whose
    ``X-Forwarded-For`` is believed; ``public_seconds``: the ``max-age`` a kept page is sent with."""

    def __init__(self, published: Published, limits: RateLimiter, trusted: frozenset[str], public_seconds: int,
                 urls: int = URLS) -> None:
        self._published, self._limits, self._trusted, self._most = published, limits, trusted, urls
        self._shelves: OrderedDict[tuple[str, bytes], Shelf] = OrderedDict()
        self._lock = threading.Lock()  # for remember(): the routes a crowd reads call it on the event loop, but a
        # handler run in a thread could too
        self._tail = kept_headers_tail(public_seconds)

    def remember(self, scope: Scope, shelf: Shelf) -> None:
        """The page of the URL ``scope`` asked for is kept on ``shelf`` (the route's answer to an anonymous
        ``GET``)."""
        if scope.get("method") != "GET":
            return
        url = (scope["path"], scope.get("query_string", b""))
        with self._lock:
            if self._shelves.get(url) == shelf:
                return
            self._shelves[url] = shelf
            if len(self._shelves) > self._most:
                self._shelves.popitem(last=False)

    async def answer(self, scope: HTTPScope, send: Send) -> bool:
        """Answer an anonymous ``GET`` of a remembered URL from its kept page, if current: True when answered (the
        app must not be called), False to pass it on to the app."""
        if scope["method"] != "GET":
            return False
        shelf = self._shelves.get((scope["path"], scope["query_string"]))
        if shelf is None:
            return False
        headers = scope["headers"]
        if may_be_signed_in(headers):
            return False
        forwarded: list[str] = []
        asked: bytes | None = None
        for name, value in headers:
            low = name.lower()
            if low == b"x-forwarded-for":
                forwarded.append(value.decode("latin-1"))
            elif low == b"if-none-match" and asked is None:  # the first, as the app reads it
                asked = value
        client = scope.get("client")
        address = client_address(client[0] if client else None, forwarded, self._trusted)
        wait = scope.setdefault("state", {})[ADDRESS_WAIT] = self._limits.take(f"address:{address}")
        if wait:
            return False  # the app answers 429, its way
        try:
            page = self._published.kept(shelf.key, shelf.marks, shelf.pool)
        except Exception:  # reading the marks failed (the database): the app answers it as it answers any failure
            return False
        if page is None:
            return False
        await send_page(send, page, self._tail, asked)
        return True


def may_be_signed_in(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a request's raw headers carry a credential: an ``Authorization`` header, or a ``Cookie`` header in
    which the session cookie's name appears (anywhere: a request that may be signed in is the app's to answer)."""
    # Names lowered here though ASGI servers send them lowered (uvicorn does): the ASGI spec says "should".
    return any((low := name.lower()) == b"authorization" or (low == b"cookie" and _SESSION in value)
               for name, value in headers)


def kept_headers_tail(public_seconds: int) -> tuple[tuple[bytes, bytes], list[tuple[bytes, bytes]]]:
    """What a kept page's answer sends beside the page's own headers: its ``Cache-Control``, and the security
    headers every answer has."""
    return (b"cache-control", f"public, max-age={public_seconds}".encode()), list(SECURITY_PAIRS)


async def send_page(send: Send, page: Page, tail: tuple[tuple[bytes, bytes], list[tuple[bytes, bytes]]],
                    asked: bytes | None) -> None:
    """``page``'s answer as the app sends it: 304 without a body when ``asked`` (``If-None-Match``) names its
    ``ETag``, else 200 with it; the headers in the app's order (validators, caching, entity, security)."""
    caching, security = tail
    if asked is not None and etag_matches(asked.decode("latin-1"), page.etag):
        await send({"type": "http.response.start", "status": 304, "headers": [*page.validators, caching, *security]})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [*page.validators, caching, *page.entity, *security]})
    await send({"type": "http.response.body", "body": page.body, "more_body": False})


def etag_matches(asked: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` value names ``etag`` (weakly compared, as RFC 9110 says for GET)."""
    return any(tag.strip().removeprefix("W/") in (etag, "*") for tag in asked.split(","))
