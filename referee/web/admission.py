"""What every request passes before its handler reads anything of it: :func:`admit`, run by the app's middleware
:func:`admission`.

Litestar runs an app's middleware once the route is matched (its handler and path parameters are in the scope),
before the route's guards, before the handler's parameters are parsed (the query's validation) and before any body
is read (a handler reads it when it takes ``data``, a form, or calls ``request.body()``/``stream()``). A refusal
raised there is answered by the app's exception handlers, as a guard's is. (It was the app's guard: Litestar hands
each guard a copy of the route's handler, and a kept page's request took 42 us of the app's CPU, 34.5 without.)
So here, in this order:

1. the client address's rate limit (429 with ``Retry-After``): one token per request, taken here unless the front
   took it when it looked at the request first (:mod:`referee.web.front`);
2. a write (POST, PUT, PATCH, DELETE) other than the login form's needs a credential that holds now: a Bearer
   token of an author not revoked, or a live session cookie; without one, 401 before a byte of its body is read
   (uvicorn buffers at most 64 KiB of a body the app has not asked for, then stops reading the socket);
3. numbers out of range: an integer in the path beyond SQLite's 64 bits names nothing (404, as any id that does
   not exist), one in an integer query parameter is refused in one line (400). Every route's integer parameters
   are found from its signature, so a new route is covered as it is written.

What the viewer may do (CSRF, the author's rate limit, who sees what) stays with the handler
(:func:`referee.web.context.context`); this only keeps work and memory from those who have no business writing.
"""

from __future__ import annotations

import types
from typing import Any, Union, get_args, get_origin

from anyio import to_thread
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.exceptions import NotAuthorizedException, NotFoundException, TooManyRequestsException
from litestar.handlers.base import BaseRouteHandler
from litestar.params import ParameterKwarg, PathParameter
from litestar.types import ASGIApp, Receive, Scope, Send

from referee.results.web_queries import WebStore
from referee.web import auth
from referee.web.context import UNSAFE, WebState
from referee.web.front import ADDRESS_WAIT
from referee.web.limits import client_address, retry_after
from referee.web.refusals import NOT_FOUND, Refused

#: SQLite's integers: what an id or a number handed to a query may be.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
#: The writes anyone may send: the login form (whose CSRF token is bound to its own cookie). Its body is a form,
#: capped at the app's ``request_max_body_size`` (64 KiB).
ANONYMOUS_WRITES = frozenset({"/login"})
#: Each handler's integer query parameters, by its function.
_INT_QUERY: dict[Any, tuple[str, ...]] = {}


def admission(app: ASGIApp) -> ASGIApp:
    """Middleware: :func:`admit` runs for every HTTP request, before its route's guards and handler."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP:
            await admit(ASGIConnection(scope, receive), scope["route_handler"])
        await app(scope, receive, send)

    return middleware


async def admit(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """What a request passes first (see the module's text). :raises TooManyRequestsException, NotAuthorizedException,
    NotFoundException, Refused: in that order of checks."""
    web: WebState = connection.app.state["web"]
    wait = connection.scope.get("state", {}).pop(ADDRESS_WAIT, None)  # the front took this request's token
    if wait is None:
        peer = connection.client.host if connection.client else None
        address = client_address(peer, connection.headers.getall("x-forwarded-for", []), web.settings.trusted_proxies)
        wait = web.address_limits.take(f"address:{address}")
    if wait:
        raise TooManyRequestsException("rate limit", headers={"Retry-After": retry_after(wait)})
    writes = connection.scope.get("method") in UNSAFE and connection.scope["path"] not in ANONYMOUS_WRITES
    if writes and not await to_thread.run_sync(_has_credential, web, connection.headers.get("authorization"),
                                               connection.cookies.get(auth.SESSION_COOKIE)):
        raise NotAuthorizedException("sign in: Authorization: Bearer <token>, or log in",
                                         headers={"WWW-Authenticate": 'Bearer realm="durak"'})
    for value in connection.path_params.values():
        if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
            raise NotFoundException(NOT_FOUND)
    for name in int_query_params(handler):
        for raw in connection.query_params.getall(name, []):
            number = _integer(raw)
            if number is not None and not INT_MIN <= number <= INT_MAX:
                raise Refused(400, f"{name}: {raw[:20]}... is out of range" if len(raw) > 20 else
                              f"{name}: {raw} is out of range")


def _has_credential(web: WebState, authorization: str | None, cookie: str | None) -> bool:
    """Whether the request carries a credential that holds now (a Bearer token when it sends one, else a live
    session cookie)."""
    token = auth.bearer_token(authorization)
    with WebStore(web.db_path) as store:
        if token is not None:
            return auth.author_of_bearer(store, token) is not None
        return bool(cookie) and auth.verify_session(store, web.key, cookie or "", web.settings.session_seconds) \
            is not None


def int_query_params(handler: BaseRouteHandler) -> tuple[str, ...]:
    """The names of ``handler``'s integer query parameters (``int`` or ``int | None``), from its signature."""
    found = _INT_QUERY.get(handler.fn)
    if found is None:
        names = []
        for name, field in handler.parsed_fn_signature.parameters.items():
            kwarg = field.kwarg_definition
            if isinstance(kwarg, PathParameter) or (isinstance(kwarg, ParameterKwarg) and (kwarg.header or
                                                                                            kwarg.cookie)):
                continue
            if kwarg is not None and not isinstance(kwarg, ParameterKwarg):
                continue  # a body, a dependency
            if _is_int(field.annotation):
                names.append(kwarg.query if isinstance(kwarg, ParameterKwarg) and kwarg.query else name)
        found = _INT_QUERY[handler.fn] = tuple(names)
    return found


def _is_int(annotation: Any) -> bool:
    if annotation is int:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return any(arg is int for arg in get_args(annotation)) and all(arg in (int, type(None))
                                                                      for arg in get_args(annotation))
    return False


def _integer(raw: str) -> int | None:
    """``raw`` as an integer (None: not one, or too long to read: the parameter's own parsing refuses it)."""
    text = raw.strip()
    digits = text.lstrip("+-")
    if not digits.isdigit() or not digits.isascii() or len(digits) > 4000:
        return None
    return int(text)
