"""One request's context: its store (opened per request: SQLite connections are not shared between the worker's
threads), who is asking (Bearer or session cookie) and the checks every route shares: the author's rate limit and,
for a cookie session's writes, the CSRF token."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment
from litestar import Request
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException, TooManyRequestsException

from referee.results.web_queries import WebStore
from referee.web import auth
from referee.web.answers import Answers
from referee.web.limits import RateLimiter, StreamSlots, retry_after
from referee.web.published import Published
from referee.web.settings import WebSettings
from referee.web.visibility import ANONYMOUS, Viewer

UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


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


def web_state(request: Request[Any, Any, Any]) -> WebState:
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
        session, _ = _who(request, store, web)
    except NotAuthorizedException:
        return ANONYMOUS
    return auth.viewer_of(session.author) if session is not None else ANONYMOUS


def _who(request: Request[Any, Any, Any], store: WebStore, web: WebState) -> tuple[auth.Session | None, bool]:
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
        request.state.clear_session = True
    return session, False


def login_wall(ctx: Context) -> None:
    """API routes that need someone signed in: 401 for nobody (pages redirect to /login instead)."""
    if not ctx.viewer.signed_in:
        raise NotAuthorizedException("sign in: Authorization: Bearer <token>",
                                     headers={"WWW-Authenticate": 'Bearer realm="durak"'})
