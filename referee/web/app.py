"""The Litestar app: routes (pages, API, /static), the security headers on every answer, the admission every
request passes first (the per-address rate limit, a write's credential, numbers in range: :mod:`referee.web.admission`),
body caps, and error pages (every refusal answered here). :func:`create_app` checks the database once (a league,
this schema) before serving."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

from jinja2 import BaseLoader, Environment, PackageLoader, select_autoescape
from litestar import Litestar, MediaType, Request, Response
from litestar.datastructures import State
from litestar.enums import ScopeType
from litestar.exceptions import HTTPException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.types import HTTPScope, LifeSpanReceive, LifeSpanScope, LifeSpanSend, Message, Receive, Scope, Send

from referee import __version__
from referee.report.page import VIEWER_BODY
from referee.results.web_queries import WebStore
from referee.text import visible_value
from referee.web import api, auth, live, pages, table_events, tables
from referee.web.admission import admission
from referee.web.context import WebState
from referee.web.frames import replay_frame
from referee.web.front import Front
from referee.web.headers import SECURITY_PAIRS
from referee.web.limits import RateLimiter, StreamSlots, give_back_leases
from referee.web.page_values import template_globals
from referee.web.published import Lag, Published
from referee.web.refusals import DOMAIN, Refused, refusal
from referee.web.serving import settle_collector
from referee.web.settings import WebSettings
from referee.web.shown import CATCH_UP, LAGGING
from referee.web.static import favicon, static_file

_SECURITY_NAMES = frozenset(name for name, _ in SECURITY_PAIRS)
_NO_STORE = (b"cache-control", b"no-store")


def template_environment(loader: BaseLoader | None = None) -> Environment:
    """The pages' Jinja environment, over ``loader`` (default: the package's templates; a test's own)."""
    templates = Environment(loader=loader or PackageLoader("referee.web", "templates"),
                            autoescape=select_autoescape(default=True, default_for_string=True),
                            finalize=visible_value,  # every {{ ... }}: entrant text with its controls escaped
                            # the package's templates do not change under a running server: with the default,
                            # every page built looked at each of its templates' files (a stat)
                            auto_reload=False)
    templates.globals.update(template_globals())  # what templates are told by the Python that owns it
    return templates


def create_app(db_path: str | Path, settings: WebSettings | None = None) -> Arena:
    """The web app over a league's database. :raises StoreError: no database, another schema, or no league."""
    settings = settings or WebSettings()
    with WebStore(db_path) as store:
        store.the_league()
        key = store.web_key()
    templates = template_environment()
    published = Published(Path(db_path), settings.kept_bytes, settings.marks_seconds,
                          lag=Lag(LAGGING, settings.games_seconds, CATCH_UP))
    address_limits = RateLimiter(settings.rate_per_second, settings.rate_burst)
    state = WebState(db_path=Path(db_path), settings=settings, key=key, address_limits=address_limits,
                     author_limits=RateLimiter(settings.rate_per_second, settings.rate_burst), templates=templates,
                     move_limits=RateLimiter(settings.moves_per_second, settings.moves_burst),
                     table_streams=StreamSlots(settings.table_streams_per_author, settings.table_streams_total),
                     published=published, replay_frame=replay_frame(templates, VIEWER_BODY),
                     front=Front(published, address_limits, settings.trusted_proxies, settings.public_seconds))
    return Arena(
        state.front,
        route_handlers=[*api.ROUTES, *pages.ROUTES, *tables.ROUTES, *table_events.ROUTES, *live.ROUTES, static_file,
                        favicon],
        state=_state(state),
        middleware=[give_back_leases, admission],
        before_send=[_security_headers],
        exception_handlers={HTTPException: _error, Refused: _refused, **{kind: _refused for kind in DOMAIN}},
        request_max_body_size=settings.form_bytes,
        openapi_config=OpenAPIConfig(
            # The document only: the render pages (Swagger UI, ReDoc, ...) load scripts from a CDN, which the CSP
            # (and this server's policy of serving its own scripts only) forbids.
            title="durak-referee web arena", version=__version__, path="/schema", render_plugins=[JsonRenderPlugin()],
            components=Components(security_schemes={"bearer": SecurityScheme(type="http", scheme="bearer")}),
            security=[{"bearer": []}]),
        debug=False,
    )


class Arena(Litestar):
    """The app, with the front before it: an anonymous ``GET`` of a URL whose page is kept and current is answered
    from those bytes before Litestar routes it (:mod:`referee.web.front`); every other request is Litestar's."""

    __slots__ = ("front",)

    def __init__(self, front: Front, **config: Any) -> None:
        super().__init__(**config)
        self.front = front

    async def __call__(self, scope: Scope | LifeSpanScope, receive: Receive | LifeSpanReceive,
                       send: Send | LifeSpanSend) -> None:
        if scope["type"] == ScopeType.HTTP and await self.front.answer(cast(HTTPScope, scope), cast(Send, send)):
            return
        await super().__call__(scope, receive, send)


def _state(web: WebState) -> State:
    return State({"web": web})


async def _security_headers(message: Message, scope: Scope) -> None:
    """Every answer's security headers (in place of any the route set); no-store unless the route set its own
    caching (the kept pages and /static do); a session cookie that failed its checks cleared. The headers are
    written as the raw pairs ASGI sends, not through ``MutableScopeHeaders``, whose every write decodes and looks
    through all of them again (a kept page's request: 47 -> 45 us of the app's CPU)."""
    if message["type"] != "http.response.start":
        return
    sent = list(message.get("headers", ()))
    message["headers"] = sent
    names = {name.lower() for name, _ in sent}
    if not names.isdisjoint(_SECURITY_NAMES):
        sent[:] = [(name, value) for name, value in sent if name.lower() not in _SECURITY_NAMES]
    sent.extend(SECURITY_PAIRS)
    if b"cache-control" not in names:
        sent.append(_NO_STORE)
    state = scope.get("state") or {}
    if state.get("clear_session"):
        sent.append((b"set-cookie", f"{auth.SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict".encode()))


def _error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    return _answer(request, exc.status_code, exc.detail, dict(exc.headers or {}))


def _refused(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """Every refusal's answer (:mod:`referee.web.refusals`): its status, its line and its headers."""
    refused = refusal(exc)
    return _answer(request, refused.status, refused.detail, refused.headers)


def _answer(request: Request[Any, Any, Any], status: int, detail: str, headers: dict[str, str]) -> Response[Any]:
    """API routes answer errors as JSON; pages as a small page. One text per status: a hidden object's 404 is a
    missing one's."""
    if request.url.path.startswith(("/api/", "/schema")) or not _wants_html(request):
        return Response({"status_code": status, "detail": detail}, status_code=status, media_type=MediaType.JSON,
                        headers=headers)
    web: WebState = request.app.state["web"]
    text = web.templates.get_template("error.html").render(viewer=None, csrf="", status=status, detail=detail)
    return Response(text, status_code=status, media_type=MediaType.HTML, headers=headers)


def _wants_html(request: Request[Any, Any, Any]) -> bool:
    return "text/html" in request.headers.get("accept", "") or request.method == "POST"


#: The environment that carries ``durak serve``'s database and settings into each uvicorn worker process.
DB_ENV, SETTINGS_ENV = "DURAK_WEB_DB", "DURAK_WEB_SETTINGS"


def app_from_environment() -> Litestar:
    """The app of ``durak serve``'s workers (uvicorn's factory: a worker process imports it by name)."""
    import msgspec

    settings = msgspec.json.decode(os.environ.get(SETTINGS_ENV, "{}"), type=WebSettings)
    app = create_app(os.environ[DB_ENV], settings)
    settle_collector()
    return app
