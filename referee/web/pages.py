"""The HTML pages: Jinja2 templates (autoescaped) over the same answers as the API, forms with CSRF tokens, the
login and logout, the upload form and the admin's actions. Pages need no inline script: their scripts come from
/static, and data for them sits in ``<script type="application/json">`` (never run).

The routes are three controllers, by who may call them, each with its guard (:mod:`referee.web.context`):
:class:`PublicPages` (anyone; the login form), :class:`AuthorPages` (a signed-in author: nobody else is sent
to the login form) and :class:`AdminPages` (the admin: an author gets 404). A route's context comes by
dependency injection, its form's CSRF token checked before the handler runs."""

from __future__ import annotations

from functools import partial
from typing import Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie, UploadFile
from litestar.exceptions import NotFoundException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect
from markupsafe import Markup

from protocol.rules import MAX_PLAYERS, MIN_PLAYERS
from referee.engine import VERDICTS
from referee.league.authors import author_of_token
from referee.rating.bradley_terry import Z95
from referee.rating.leaderboard import legend_entries
from referee.report.page import VIEWER_BODY, script_json
from referee.results.web_queries import WebStore
from referee.web import auth, models, urls
from referee.web.actions import ARCHIVE_CEILING, queue_action, queue_finals
from referee.web.analyses import take_game_analysis
from referee.web.answers import GameFilter
from referee.web.challenges import take_challenge
from referee.web.charts import rating_chart
from referee.web.context import (
    ADMIN_PAGE_DEPENDENCIES,
    PAGE_DEPENDENCIES,
    PAGE_EXCEPTIONS,
    Context,
    Ctx,
    WebState,
    requires_author_page,
    web_state,
)
from referee.web.limits import is_tls
from referee.web.long_tables import HISTORY_ROWS, latest_points
from referee.web.refusals import NOT_FOUND, Refused
from referee.web.rendering import page_text, render
from referee.web.shown import (
    AUTHORS,
    BOARD,
    BOARD_ANSWER,
    HTML,
    REPLAY,
    bot_answer,
    bot_key,
    bot_marks,
    games_list,
    shown,
    twin,
)
from referee.web.uploads import take_upload
from referee.web.visibility import ANONYMOUS

Req = Request[Any, Any, Any]


def _archive_length(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """An upload form's length, checked before its body is read: 411 without one, 413 past the archive cap (and
    the form's fields)."""
    web: WebState = connection.app.state["web"]
    length = connection.headers.get("content-length", "")
    if not length.isdigit():
        raise Refused(411, "an upload needs its Content-Length")
    if len(length) > 18 or int(length) > web.settings.archive_bytes + web.settings.form_bytes:
        raise Refused(413, f"the archive is over {web.settings.archive_bytes} bytes")


class PublicPages(Controller):
    """What anyone may read (each page as the viewer may see it), and the login form."""

    include_in_schema = False

    @get("/", name="page:board")
    async def board_page(self, request: Req) -> Response[Any]:
        def make(ctx: Context) -> str:
            board = twin(ctx, BOARD_ANSWER, BOARD, lambda ctx: ctx.answers.board(), models.Board)
            return page_text(ctx, "board.html", board=board, poll=ctx.web.settings.board_seconds)
        return await shown(request, "board", BOARD, make)

    @get("/bots/{name:str}", name="page:bot")
    async def bot_page(self, request: Req, name: FromPath[str]) -> Response[Any]:
        def make(ctx: Context) -> str:
            bot = twin(ctx, bot_key(name), bot_marks(name), partial(bot_answer, name=name), models.BotOut)
            return page_text(ctx, "bot.html", bot=bot, chart=rating_chart(bot.history), z95=Z95,
                             ci_legend=dict(legend_entries())["+-95%"], history_rows=latest_points(bot.history),
                             history_limit=HISTORY_ROWS)
        return await shown(request, f"bot {name}", bot_marks(name), make)

    @get("/games", name="page:games")
    async def games_page(  # noqa: PLR0913 (a parameter per query parameter)
            self, request: Req, bot: FromQuery[str | None] = None, verdict: FromQuery[str | None] = None,
            players: FromQuery[str | None] = None, page: FromQuery[int] = 1, before: FromQuery[int | None] = None,
            after: FromQuery[int | None] = None) -> Response[Any]:
        """The games list; its filter form sends every field, an unchosen one empty (``players=``: any size). Its
        "newer" and "older" links carry the page's first or last game's number (``after``, ``before``)."""
        if players and not (players.isdigit() and len(players) <= 2):
            raise Refused(400, f"players: a table size, not {players[:20]!r}")
        wanted = GameFilter(bot or None, verdict or None, int(players) if players else None, page, before, after)

        def make(ctx: Context) -> str:
            found = ctx.answers.games(wanted, ctx.web.settings.games_per_page)
            return page_text(ctx, "games.html", found=found, wanted=wanted, verdicts=VERDICTS,
                             sizes=range(MIN_PLAYERS, MAX_PLAYERS + 1))
        key, marks = games_list(request, wanted)
        return await shown(request, key, marks, make)

    @get("/games/{number:int}", name="page:game")
    async def game_page(self, request: Req, number: FromPath[int]) -> Response[Any]:
        def make(ctx: Context, quick: bool = False) -> str:
            game = ctx.answers.game(number, quick=quick)
            if game is None:
                raise NotFoundException(NOT_FOUND)
            data = script_json(game.views)
            if _framed(ctx, game):  # what a crowd asks for: a join, not a render (referee.web.frames)
                return ctx.web.replay_frame.fill({"title": game.title, "status": game.status, "data": Markup(data)})
            return page_text(ctx, "game.html", game=game, body=VIEWER_BODY, data=data,
                             analyze=urls.GAME_ANALYSES(number=number))
        return await shown(request, f"game {number}", REPLAY, make, "replays", quick=partial(make, quick=True))

    @get("/authors/{name:str}", name="page:author")
    async def author_page(self, request: Req, name: FromPath[str]) -> Response[Any]:
        return await shown(request, f"author {name}", AUTHORS, lambda ctx: _author_text(ctx, name))

    @get("/login", name="page:login")  # async, as /upload's
    async def login_page(self, request: Req) -> Response[str]:
        return _login_form(request, web_state(request), None, 200)

    @post("/login", name="page:login-post")
    async def login(self, request: Req) -> Response[Any]:
        web = web_state(request)
        form = await request.form()
        nonce = request.cookies.get(auth.LOGIN_COOKIE) or ""
        if not nonce or not auth.csrf_matches(auth.login_csrf(web.key, nonce), _field(form, auth.CSRF_FIELD)):
            raise PermissionDeniedException("CSRF token missing or wrong: reload the login page and try again")
        with WebStore(web.db_path) as store:
            author = author_of_token(store, _field(form, "token") or "")
            if author is None:
                return _login_form(request, web, "That token is not a valid author's token.", 401)
            cookie = auth.sign_session(store, web.key, author, max_age=web.settings.session_seconds)
        response: Response[Any] = Redirect(f"/authors/{author.name}", status_code=303)
        response.cookies.append(_cookie(request, web, auth.SESSION_COOKIE, cookie, web.settings.session_seconds))
        response.delete_cookie(auth.LOGIN_COOKIE, path="/")
        return response


class AuthorPages(Controller):
    """A signed-in author's challenges and uploads, and logging out (nobody is sent to the login form; another
    author's challenge answers 404)."""

    include_in_schema = False
    guards = (requires_author_page,)
    exception_handlers = PAGE_EXCEPTIONS
    dependencies = PAGE_DEPENDENCIES

    @post("/logout", name="page:logout")
    async def logout(self, ctx: Ctx) -> Response[Any]:
        """The session ended on the server: a copy of its cookie is refused from now on (a Bearer client has no
        session to end: the cookie is cleared all the same)."""
        if ctx.session is not None:
            auth.end_session(ctx.store, ctx.session)
        response: Response[Any] = Redirect("/", status_code=303)
        response.delete_cookie(auth.SESSION_COOKIE, path="/")
        return response

    @post("/challenges", name="page:challenges")
    async def challenge_form(self, request: Req, ctx: Ctx) -> Response[Any]:
        form = await request.form()
        assert ctx.viewer.author is not None  # the guard's
        games = _field(form, "games") or ""
        opponents = [value for value in form.getall("opponents", []) if isinstance(value, str)]
        asked = models.SideIn(bot=_field(form, "bot") or "", opponents=opponents,
                              games=int(games) if games.isdigit() and len(games) < 7 else 0)
        try:
            row = take_challenge(ctx.store, ctx.viewer.author, asked, ctx.web.settings)
        except Refused as exc:
            return _author(ctx, ctx.viewer.author, exc.detail, exc.status)
        return Redirect(f"/challenges/{row.id}", status_code=303)

    @post("/games/{number:int}/analyses", name="page:game-analyses")
    async def game_analysis_form(self, request: Req, ctx: Ctx, number: FromPath[int]) -> Response[Any]:
        """The replay's form: the analysis of the author's own bot's seat (refused: the error page, its status)."""
        seat = _field(await request.form(), "seat") or ""
        take_game_analysis(ctx, number, models.AnalysisIn(seat=int(seat) if seat.isdigit() and len(seat) < 3
                                                          else -1))
        return Redirect(f"{urls.game(number)}#analyses", status_code=303)

    @get("/challenges/{challenge_id:int}", name="page:challenge", sync_to_thread=True)
    def challenge_page(self, ctx: Ctx, challenge_id: FromPath[int]) -> Response[Any]:
        challenge = ctx.answers.side(challenge_id)
        if challenge is None:
            raise NotFoundException(NOT_FOUND)
        return render(ctx.web, "challenge.html", ctx, challenge=challenge)

    @get("/challenges/{challenge_id:int}/games/{number:int}", name="page:challenge-game", sync_to_thread=True)
    def challenge_game_page(self, ctx: Ctx, challenge_id: FromPath[int], number: FromPath[int]) -> Response[Any]:
        game = ctx.answers.side_game(challenge_id, number)
        if game is None:
            raise NotFoundException(NOT_FOUND)
        return render(ctx.web, "game.html", ctx, game=game, body=VIEWER_BODY, data=script_json(game.views),
                      side=challenge_id)

    # async: a sync GET beside an async POST on one path fails in Litestar 2.25
    @get("/upload", name="page:upload")
    async def upload_page(self, ctx: Ctx) -> Response[Any]:
        return render(ctx.web, "upload.html", ctx, error=None)

    @post("/upload", name="page:upload-post", request_max_body_size=ARCHIVE_CEILING, guards=[_archive_length])
    async def upload_form(self, request: Req, ctx: Ctx) -> Response[Any]:
        form = await request.form()
        assert ctx.viewer.author is not None  # the guard's
        file = form.get("archive")
        archive = await file.read() if isinstance(file, UploadFile) else b""
        try:
            row = take_upload(ctx.store, ctx.viewer.author, _field(form, "bot") or "", archive, ctx.web.settings)
        except Refused as exc:
            return render(ctx.web, "upload.html", ctx, status=exc.status, error=exc.detail)
        return Redirect(f"/authors/{ctx.viewer.author}#upload-{row.id}", status_code=303)


class AdminPages(Controller):
    """The admin's page and actions (nobody is sent to the login form; an author gets 404, as for a page that
    does not exist)."""

    include_in_schema = False
    guards = (requires_author_page,)
    exception_handlers = PAGE_EXCEPTIONS
    dependencies = ADMIN_PAGE_DEPENDENCIES

    @get("/admin", name="page:admin", sync_to_thread=True)
    def admin_page(self, ctx: Ctx) -> Response[Any]:
        admin = ctx.answers.admin()
        if admin is None:
            raise NotFoundException(NOT_FOUND)
        return render(ctx.web, "admin.html", ctx, admin=admin)

    @post("/admin/finals", name="page:admin-finals")
    async def admin_finals(self, request: Req, ctx: Ctx) -> Response[Any]:
        form = await request.form()
        top, budget = _field(form, "top") or "", _field(form, "max_games") or ""
        try:
            asked = msgspec.convert({"top": int(top) if top.isdigit() else 0,
                                     "max_games": int(budget) if budget.isdigit() else None}, models.FinalsIn)
        except msgspec.ValidationError as exc:
            raise Refused(400, f"finals: {exc}") from None
        queued = queue_finals(ctx.store, ctx.answers, asked)
        return render(ctx.web, "done.html", ctx, message=f"asked the daemon for the finals of the top {asked.top} "
                                                         f"(request {queued.request})")

    @post("/admin/{action:str}", name="page:admin-action")
    async def admin_action(self, request: Req, ctx: Ctx, action: FromPath[str]) -> Response[Any]:
        form = await request.form()
        queued = queue_action(ctx.store, ctx.answers, action, _field(form, "bot") or "")
        return render(ctx.web, "done.html", ctx, message=f"asked the daemon to {queued.kind} {queued.bot} "
                                                         f"(request {queued.request})")


def _framed(ctx: Context, game: models.GameOut | models.KeptGameOut) -> bool:
    """Whether a replay's page is the one its frame draws: one kept view, for a viewer who is not signed in, with no
    analyses to show or ask for."""
    return (isinstance(game, models.KeptGameOut) and len(game.views) == 1 and not game.analyses
            and not game.can_analyze and ctx.viewer == ANONYMOUS and not ctx.csrf)


def _author(ctx: Context, name: str, error: str | None = None, status: int = 200) -> Response[str]:
    """An author's page; for the author themselves, the challenge form (with ``error``, a refused one's)."""
    return Response(_author_text(ctx, name, error), media_type=HTML, status_code=status)


def _author_text(ctx: Context, name: str, error: str | None = None) -> str:
    author = ctx.answers.author(name)
    if author is None:
        raise NotFoundException(NOT_FOUND)
    opponents: list[str] = []
    mine: list[str] = []  # the author's bots that can challenge (their latest version plays)
    idle: list[str] = []  # the others, with why not ("alpha@2 is quarantined")
    if ctx.viewer.author == name:
        latest = {v.bot: v for v in ctx.answers.versions.values()}
        opponents = sorted(bot for bot, v in latest.items() if v.active and v.author != name)
        own = sorted((bot, v) for bot, v in latest.items() if v.author == name)
        mine = [bot for bot, v in own if v.active]
        idle = [f"{v.name} is {v.state(why=False)}" for _, v in own if not v.active]
    return page_text(ctx, "author.html", author=author, opponents=opponents, sizes=ctx.web.settings.table_sizes,
                     challenge_error=error, challengers=mine, idle=idle)


def _login_form(request: Req, web: WebState, error: str | None, status: int) -> Response[str]:
    """The login form with a fresh login nonce (its cookie) and the CSRF token bound to it."""
    nonce = auth.new_login_nonce()
    response = render(web, "login.html", None, status=status, login_csrf=auth.login_csrf(web.key, nonce), error=error)
    response.cookies.append(_cookie(request, web, auth.LOGIN_COOKIE, nonce, 900))
    return response


def _cookie(request: Req, web: WebState, name: str, value: str, max_age: int) -> Cookie:
    """HttpOnly, SameSite=Strict, Secure when the client came over TLS (directly or by a trusted proxy's word)."""
    client = request.client.host if request.client else None
    secure = is_tls(request.url.scheme, client, request.headers.get("x-forwarded-proto"), web.settings.trusted_proxies)
    return Cookie(key=name, value=value, max_age=max_age, path="/", httponly=True, samesite="strict", secure=secure)


def _field(form: Any, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) else None


ROUTES = [PublicPages, AuthorPages, AdminPages]
