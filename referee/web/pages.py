"""The HTML pages: Jinja2 templates (autoescaped) over the same answers as the API, forms with CSRF tokens, the
login and logout, the upload form and the admin's actions. Pages need no inline script: their scripts come from
/static, and data for them sits in ``<script type="application/json">`` (never run)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, get, post
from litestar.datastructures import Cookie, UploadFile
from litestar.exceptions import NotFoundException, PermissionDeniedException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect

from protocol.rules import MAX_PLAYERS, MIN_PLAYERS
from referee.engine import VERDICTS
from referee.league.authors import author_of_token
from referee.rating.bradley_terry import Z95
from referee.rating.leaderboard import legend_entries
from referee.report.page import VIEWER_BODY, script_json
from referee.results.web_queries import WebStore
from referee.web import auth, models
from referee.web.answers import GameFilter
from referee.web.api import ARCHIVE_CEILING, NOT_FOUND, queue_action, queue_finals
from referee.web.challenges import take_challenge
from referee.web.charts import rating_chart
from referee.web.context import Context, WebState, context, web_state
from referee.web.limits import is_tls
from referee.web.refusals import Refused
from referee.web.shown import AUTHORS, BOARD, HTML, REPLAY, bot_marks, list_marks, shown
from referee.web.uploads import take_upload
from referee.web.visibility import AdminSubject, sight

Req = Request[Any, Any, Any]


def render(web: WebState, template: str, ctx: Context | None, status: int = 200, **values: Any) -> Response[str]:
    """A page from ``template`` with the viewer and their CSRF token for its forms."""
    viewer = ctx.viewer if ctx is not None else None
    text = web.templates.get_template(template).render(viewer=viewer, csrf=ctx.csrf if ctx else "", **values)
    return Response(text, media_type=HTML, status_code=status)


def page_text(ctx: Context, template: str, **values: Any) -> str:
    """A page's text from ``template`` for the context's viewer (their CSRF token in its forms)."""
    return ctx.web.templates.get_template(template).render(viewer=ctx.viewer, csrf=ctx.csrf, **values)


def _signed_in_or_login(ctx: Context) -> Response[Any] | None:
    return None if ctx.viewer.signed_in else Redirect("/login", status_code=303)


@get("/", include_in_schema=False)
async def board_page(request: Req) -> Response[Any]:
    return await shown(request, "board", BOARD, lambda ctx: page_text(
        ctx, "board.html", board=ctx.answers.board(), poll=ctx.web.settings.board_seconds))


@get("/bots/{name:str}", include_in_schema=False)
async def bot_page(request: Req, name: FromPath[str]) -> Response[Any]:
    def make(ctx: Context) -> str:
        bot = ctx.answers.bot(name)
        if bot is None:
            raise NotFoundException(NOT_FOUND)
        return page_text(ctx, "bot.html", bot=bot, chart=rating_chart(bot.history), z95=Z95,
                         ci_legend=dict(legend_entries())["+-95%"])
    return await shown(request, f"bot {name}", bot_marks(name), make)


@get("/games", include_in_schema=False)
async def games_page(  # noqa: PLR0913 (a parameter per query parameter)
        request: Req, bot: FromQuery[str | None] = None, verdict: FromQuery[str | None] = None,
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
    return await shown(request, f"games {wanted}", list_marks(wanted), make)


@get("/games/{number:int}", include_in_schema=False)
async def game_page(request: Req, number: FromPath[int]) -> Response[Any]:
    def make(ctx: Context) -> str:
        game = ctx.answers.game(number)
        if game is None:
            raise NotFoundException(NOT_FOUND)
        return page_text(ctx, "game.html", game=game, body=VIEWER_BODY, data=script_json(game.views))
    return await shown(request, f"game {number}", REPLAY, make)


@get("/authors/{name:str}", include_in_schema=False)
async def author_page(request: Req, name: FromPath[str]) -> Response[Any]:
    return await shown(request, f"author {name}", AUTHORS, lambda ctx: _author_text(ctx, name))


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


@post("/challenges", include_in_schema=False)
async def challenge_form(request: Req) -> Response[Any]:
    form = await request.form()
    with context(request, form_csrf=_field(form, auth.CSRF_FIELD)) as ctx:
        wall = _signed_in_or_login(ctx)
        if wall is not None:
            return wall
        assert ctx.viewer.author is not None
        games = _field(form, "games") or ""
        opponents = [value for value in form.getall("opponents", []) if isinstance(value, str)]
        asked = models.SideIn(bot=_field(form, "bot") or "", opponents=opponents,
                              games=int(games) if games.isdigit() and len(games) < 7 else 0)
        try:
            row = take_challenge(ctx.store, ctx.viewer.author, asked, ctx.web.settings)
        except Refused as exc:
            return _author(ctx, ctx.viewer.author, exc.detail, exc.status)
        return Redirect(f"/challenges/{row.id}", status_code=303)


@get("/challenges/{challenge_id:int}", sync_to_thread=True, include_in_schema=False)
def challenge_page(request: Req, challenge_id: FromPath[int]) -> Response[Any]:
    with context(request) as ctx:
        wall = _signed_in_or_login(ctx)
        if wall is not None:
            return wall
        challenge = ctx.answers.side(challenge_id)
        if challenge is None:
            raise NotFoundException(NOT_FOUND)
        return render(ctx.web, "challenge.html", ctx, challenge=challenge)


@get("/challenges/{challenge_id:int}/games/{number:int}", sync_to_thread=True, include_in_schema=False)
def challenge_game_page(request: Req, challenge_id: FromPath[int], number: FromPath[int]) -> Response[Any]:
    with context(request) as ctx:
        wall = _signed_in_or_login(ctx)
        if wall is not None:
            return wall
        game = ctx.answers.side_game(challenge_id, number)
        if game is None:
            raise NotFoundException(NOT_FOUND)
        return render(ctx.web, "game.html", ctx, game=game, body=VIEWER_BODY, data=script_json(game.views),
                      side=challenge_id)


@get("/admin", sync_to_thread=True, include_in_schema=False)
def admin_page(request: Req) -> Response[Any]:
    with context(request) as ctx:
        wall = _signed_in_or_login(ctx)
        if wall is not None:
            return wall
        admin = ctx.answers.admin()
        if admin is None:
            raise NotFoundException(NOT_FOUND)
        return render(ctx.web, "admin.html", ctx, admin=admin)


@post("/admin/finals", include_in_schema=False)
async def admin_finals(request: Req) -> Response[Any]:
    form = await request.form()
    with context(request, form_csrf=_field(form, auth.CSRF_FIELD)) as ctx:
        wall = _signed_in_or_login(ctx)
        if wall is not None:
            return wall
        top, budget = _field(form, "top") or "", _field(form, "max_games") or ""
        try:
            asked = msgspec.convert({"top": int(top) if top.isdigit() else 0,
                                     "max_games": int(budget) if budget.isdigit() else None}, models.FinalsIn)
        except msgspec.ValidationError as exc:
            raise Refused(400, f"finals: {exc}") from None
        queued = queue_finals(ctx.store, ctx.answers, asked, sight(ctx.viewer, AdminSubject()))
        return render(ctx.web, "done.html", ctx, message=f"asked the daemon for the finals of the top {asked.top} "
                                                         f"(request {queued.request})")


@post("/admin/{action:str}", include_in_schema=False)
async def admin_action(request: Req, action: FromPath[str]) -> Response[Any]:
    form = await request.form()
    with context(request, form_csrf=_field(form, auth.CSRF_FIELD)) as ctx:
        wall = _signed_in_or_login(ctx)
        if wall is not None:
            return wall
        queued = queue_action(ctx.store, ctx.answers, action, _field(form, "bot") or "",
                              sight(ctx.viewer, AdminSubject()))
        return render(ctx.web, "done.html", ctx, message=f"asked the daemon to {queued.kind} {queued.bot} "
                                                         f"(request {queued.request})")


@get("/upload", include_in_schema=False)  # async: a sync GET beside an async POST on one path fails in Litestar 2.25
async def upload_page(request: Req) -> Response[Any]:
    with context(request) as ctx:
        return _signed_in_or_login(ctx) or render(ctx.web, "upload.html", ctx, error=None)


@post("/upload", include_in_schema=False, request_max_body_size=ARCHIVE_CEILING)
async def upload_form(request: Req) -> Response[Any]:
    web = web_state(request)
    length = request.headers.get("content-length", "")
    if not length.isdigit():
        raise Refused(411, "an upload needs its Content-Length")
    if len(length) > 18 or int(length) > web.settings.archive_bytes + web.settings.form_bytes:
        raise Refused(413, f"the archive is over {web.settings.archive_bytes} bytes")
    form = await request.form()
    with context(request, form_csrf=_field(form, auth.CSRF_FIELD)) as ctx:
        wall = _signed_in_or_login(ctx)
        if wall is not None:
            return wall
        assert ctx.viewer.author is not None
        file = form.get("archive")
        archive = await file.read() if isinstance(file, UploadFile) else b""
        try:
            row = take_upload(ctx.store, ctx.viewer.author, _field(form, "bot") or "", archive, web.settings)
        except Refused as exc:
            return render(web, "upload.html", ctx, status=exc.status, error=exc.detail)
        return Redirect(f"/authors/{ctx.viewer.author}#upload-{row.id}", status_code=303)


@get("/login", include_in_schema=False)  # async, as /upload's
async def login_page(request: Req) -> Response[str]:
    web = web_state(request)
    return _login_form(request, web, None, 200)


def _login_form(request: Req, web: WebState, error: str | None, status: int) -> Response[str]:
    """The login form with a fresh login nonce (its cookie) and the CSRF token bound to it."""
    nonce = auth.new_login_nonce()
    response = render(web, "login.html", None, status=status, login_csrf=auth.login_csrf(web.key, nonce), error=error)
    response.cookies.append(_cookie(request, web, auth.LOGIN_COOKIE, nonce, 900))
    return response


@post("/login", include_in_schema=False)
async def login(request: Req) -> Response[Any]:
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


@post("/logout", include_in_schema=False)
async def logout(request: Req) -> Response[Any]:
    form = await request.form()
    with context(request, form_csrf=_field(form, auth.CSRF_FIELD)) as ctx:
        if ctx.session is not None:  # ended on the server: a copy of the cookie is refused from now on
            auth.end_session(ctx.store, ctx.session)
        response: Response[Any] = Redirect("/", status_code=303)
        response.delete_cookie(auth.SESSION_COOKIE, path="/")
        return response


def _cookie(request: Req, web: WebState, name: str, value: str, max_age: int) -> Cookie:
    """HttpOnly, SameSite=Strict, Secure when the client came over TLS (directly or by a trusted proxy's word)."""
    client = request.client.host if request.client else None
    secure = is_tls(request.url.scheme, client, request.headers.get("x-forwarded-proto"), web.settings.trusted_proxies)
    return Cookie(key=name, value=value, max_age=max_age, path="/", httponly=True, samesite="strict", secure=secure)


def _field(form: Any, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) else None


ROUTES = [board_page, bot_page, games_page, game_page, author_page, challenge_form, challenge_page,
          challenge_game_page, admin_page, admin_finals, admin_action, upload_page, upload_form, login_page, login,
          logout]
