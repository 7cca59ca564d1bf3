"""One request's context: its store (opened per request: SQLite connections are not shared between the worker's
threads), who is asking (Bearer or session cookie) and the checks every route shares: the author's rate limit and,
for a cookie session's writes, the CSRF token.

Routes take it by dependency injection (``ctx: Ctx``: :data:`DEPENDENCIES` for the API, :data:`PAGE_DEPENDENCIES`
for pages, whose forms carry their CSRF token as a field). Who may call a route is said once, by the controller it
belongs to: its guard (:func:`requires_author`, or :func:`requires_author_page`, which sends nobody to the login
form) and, for the admin's, its context (:data:`ADMIN_DEPENDENCIES`: 404 for anyone else, once the body's cap and
the CSRF token are checked, as for any write). A handler never checks it by hand. The guard's look at the
credentials is kept for the request, so the context does not look again."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anyio import to_thread
from jinja2 import Environment
from litestar import Request, Response
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency, Provide
from litestar.exceptions import (
    NotAuthorizedException,
    NotFoundException,
    PermissionDeniedException,
    TooManyRequestsException,
)
from litestar.handlers.base import BaseRouteHandler
from litestar.response import Redirect
from litestar.types import ExceptionHandlersMap

from referee.results.web_queries import WebStore
from referee.web import auth
from referee.web.answers import Answers
from referee.web.frames import Frame
from referee.web.front import Front
from referee.web.limits import RateLimiter, StreamSlots, retry_after
from referee.web.published import Published
from referee.web.refusals import NOT_FOUND
from referee.web.settings import WebSettings
from referee.web.visibility import ANONYMOUS, AdminSubject, Sight, Viewer, sight

UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Where a request's credentials, once looked at, are kept for the rest of it (the scope's state).
_WHO = "durak_who"
Connection = ASGIConnection[Any, Any, Any, Any]


@dataclass(frozen=True)
class WebState:
    """What the app keeps between requests (one per worker process)."""

    db_path: Path
    settings: WebSettings
    key: bytes  # the session key, read once at start
    address_limits: RateLimiter
    author_limits: RateLimiter
    templates: Environment
    move_limits: RateLimiter  # a person's moves at the card tables, per author
    table_streams: StreamSlots  # the card tables' open event streams
    published: Published  # the pages kept for anonymous visitors, and the league's facts
    replay_frame: Frame  # a replay's page for anyone not signed in, drawn as a join (referee.web.frames)
    front: Front  # the kept pages answered before the app routes a request (referee.web.front)


@dataclass(frozen=True)
class Context:
    store: WebStore
    viewer: Viewer
    answers: Answers
    web: WebState
    session: auth.Session | None
    bearer: bool

    @property
    def csrf(self) -> str:
        """The CSRF token the session's forms carry ("" without a session)."""
        return auth.session_csrf(self.web.key, self.session) if self.session is not None else ""


def web_state(request: ASGIConnection[Any, Any, Any, Any]) -> WebState:
    state: WebState = request.app.state["web"]
    return state


@contextmanager
def context(request: Request[Any, Any, Any], form_csrf: str | None = None) -> Iterator[Context]:
    """The request's context; :raises NotAuthorizedException: a bad Bearer token; TooManyRequestsException: the
    author's budget is spent; PermissionDeniedException: a cookie session's write without its CSRF token."""
    web = web_state(request)
    store = WebStore(web.db_path)
    try:
        session, bearer = _who(request, store, web)
        viewer = auth.viewer_of(session.author) if session is not None else ANONYMOUS
        if viewer.author is not None:
            wait = web.author_limits.take(f"author:{viewer.author}")
            if wait:
                raise TooManyRequestsException("rate limit", headers={"Retry-After": retry_after(wait)})
        if request.method in UNSAFE and not bearer and session is not None:
            given = form_csrf if form_csrf is not None else request.headers.get(auth.CSRF_HEADER)
            if not auth.csrf_matches(auth.session_csrf(web.key, session), given):
                raise PermissionDeniedException("CSRF token missing or wrong: reload the page and try again")
        answers = Answers(store, viewer, web.published.facts(store))
        yield Context(store, viewer, answers, web, None if bearer else session, bearer)
    finally:
        store.close()


def viewer_now(request: Request[Any, Any, Any], store: WebStore, web: WebState) -> Viewer:
    """Who the request's credentials name now (a long-lived stream asks again: a session revoked, an author's
    epoch moved on or a token replaced since it began make it anonymous); no rate limit taken."""
    try:
        session, _ = _look_up(request, store, web)  # never what the guard found when the stream began
    except NotAuthorizedException:
        return ANONYMOUS
    return auth.viewer_of(session.author) if session is not None else ANONYMOUS


def _who(request: Connection, store: WebStore, web: WebState) -> tuple[auth.Session | None, bool]:
    """The session of a Bearer token (nonce-less) or of the session cookie, as the request's guard found it if it
    looked (:func:`guard_viewer`), else looked up now."""
    state = request.scope.setdefault("state", {})
    found: tuple[auth.Session | None, bool] | None = state.get(_WHO)
    return found if found is not None else _look_up(request, store, web)


def _look_up(request: Connection, store: WebStore, web: WebState) -> tuple[auth.Session | None, bool]:
    """The session of a Bearer token (nonce-less) or of the session cookie; a cookie that fails is marked to be
    cleared. A Bearer request's cookies are ignored: it is the token's, not the browser's."""
    token = auth.bearer_token(request.headers.get("authorization"))
    if token is not None:
        author = auth.author_of_bearer(store, token)
        if author is None:
            raise NotAuthorizedException("bad token", headers={"WWW-Authenticate": 'Bearer realm="durak"'})
        return auth.Session(author, ""), True
    cookie = request.cookies.get(auth.SESSION_COOKIE)
    if not cookie:
        return None, False
    session = auth.verify_session(store, web.key, cookie, web.settings.session_seconds)
    if session is None:
        request.scope.setdefault("state", {})["clear_session"] = True
    return session, False


# -- who may call a route: the controllers' guards ------------------------------------------------------


class SignInFirst(Exception):
    """A page that needs someone signed in, asked by nobody: answered with the login form (a 303 to /login)."""


def _to_login(request: Request[Any, Any, Any], exc: SignInFirst) -> Response[Any]:
    return Redirect("/login", status_code=303)


#: The exception handler of the controllers whose guard is :func:`requires_author_page`.
PAGE_EXCEPTIONS: ExceptionHandlersMap = {SignInFirst: _to_login}


async def guard_viewer(connection: Connection) -> Viewer:
    """Who the request's credentials name (:raises NotAuthorizedException: a bad Bearer token), looked at once per
    request (in a worker thread: it reads the database) and kept for its context."""
    state = connection.scope.setdefault("state", {})
    if _WHO not in state:
        state[_WHO] = await to_thread.run_sync(_look_up_once, connection)
    session, _ = state[_WHO]
    return auth.viewer_of(session.author) if session is not None else ANONYMOUS


def _look_up_once(connection: Connection) -> tuple[auth.Session | None, bool]:
    web = web_state(connection)
    with WebStore(web.db_path) as store:
        return _look_up(connection, store, web)


def _wall(page: bool) -> Exception:
    if page:
        return SignInFirst()
    return NotAuthorizedException("sign in: Authorization: Bearer <token>",
                                  headers={"WWW-Authenticate": 'Bearer realm="durak"'})


async def requires_author(connection: Connection, _: BaseRouteHandler) -> None:
    """The API's guard for signed-in routes: 401 for nobody."""
    if not (await guard_viewer(connection)).signed_in:
        raise _wall(page=False)


async def requires_author_page(connection: Connection, _: BaseRouteHandler) -> None:
    """The pages' guard for signed-in routes: nobody is sent to the login form."""
    if not (await guard_viewer(connection)).signed_in:
        raise _wall(page=True)


def _admin_only(viewer: Viewer) -> None:
    if sight(viewer, AdminSubject()) is Sight.HIDDEN:
        raise NotFoundException(NOT_FOUND)


#: The guards that let only someone signed in through (a route under neither is open to anyone:
#: tests/test_web_routes.py holds every route to the visibility matrix).
SIGN_IN_GUARDS = (requires_author, requires_author_page)


# -- the context, by dependency injection ----------------------------------------------------------------


async def provide_context(request: Request[Any, Any, Any]) -> AsyncIterator[Context]:
    """An API route's context (a cookie session's write carries its CSRF token in ``X-CSRF-Token``)."""
    async with _entered(context(request)) as ctx:
        yield ctx


async def provide_page_context(request: Request[Any, Any, Any]) -> AsyncIterator[Context]:
    """A page's context: a form's CSRF token is its ``csrf`` field (the form is read once: the handler's
    ``request.form()`` gets the same)."""
    async with _entered(context(request, await _form_csrf(request))) as ctx:
        yield ctx


async def provide_admin_context(request: Request[Any, Any, Any]) -> AsyncIterator[Context]:
    """The admin's API context: 404 for anyone else, as for a path that does not exist (after the body's cap and
    the CSRF token, as for any write: the admin's routes sit behind :func:`requires_author` first)."""
    async with _entered(context(request)) as ctx:
        _admin_only(ctx.viewer)
        yield ctx


async def provide_admin_page_context(request: Request[Any, Any, Any]) -> AsyncIterator[Context]:
    """The admin's page context: 404 for anyone else."""
    async with _entered(context(request, await _form_csrf(request))) as ctx:
        _admin_only(ctx.viewer)
        yield ctx


async def _form_csrf(request: Request[Any, Any, Any]) -> str | None:
    if request.method not in UNSAFE:
        return None
    value = (await request.form()).get(auth.CSRF_FIELD)
    return value if isinstance(value, str) else None


@asynccontextmanager
async def _entered(manager: AbstractContextManager[Context]) -> AsyncIterator[Context]:
    """``manager`` entered in a worker thread (it opens the store and reads the league's facts) and left on the
    loop (closing a connection does not wait)."""
    ctx = await to_thread.run_sync(manager.__enter__)
    try:
        yield ctx
    finally:
        manager.__exit__(None, None, None)


#: A handler's context, injected by name (``ctx: Ctx``) from its controller's dependencies: the API's, the pages',
#: and the admin's (which is 404 for anyone else).
Ctx = NamedDependency[Context]
DEPENDENCIES = {"ctx": Provide(provide_context)}
PAGE_DEPENDENCIES = {"ctx": Provide(provide_page_context)}
ADMIN_DEPENDENCIES = {"ctx": Provide(provide_admin_context)}
ADMIN_PAGE_DEPENDENCIES = {"ctx": Provide(provide_admin_page_context)}
