"""The JSON API: one route per page's data, each answer a Struct of :mod:`referee.web.models`. An object the viewer
may not see answers 404 exactly as a missing one does; the routes that need someone signed in answer 401 first.

Its routes are three controllers, by who may call them: :class:`PublicApi` (anyone: what a crowd reads, kept for
anonymous visitors by :func:`~referee.web.shown.shown`), :class:`AuthorApi` (a signed-in author) and
:class:`AdminApi` (the admin), each with its guard; a route's context comes by dependency injection."""

from __future__ import annotations

from functools import partial
from typing import Any, TypeVar

from litestar import Controller, Request, Response, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.status_codes import HTTP_202_ACCEPTED

from referee.web import models
from referee.web.actions import ARCHIVE_CEILING, ARCHIVE_TYPES, queue_action, queue_finals
from referee.web.analyses import take_game_analysis
from referee.web.answers import GameFilter
from referee.web.challenges import take_challenge
from referee.web.context import ADMIN_DEPENDENCIES, DEPENDENCIES, Ctx, requires_author
from referee.web.refusals import NOT_FOUND, Refused
from referee.web.shown import AUTHORS, BOARD, BOARD_ANSWER, REPLAY, bot_answer, bot_key, bot_marks, games_list, shown
from referee.web.uploads import take_upload

Req = Request[Any, Any, Any]
T = TypeVar("T")


def _found(value: T | None) -> T:
    if value is None:
        raise NotFoundException(NOT_FOUND)
    return value


class PublicApi(Controller):
    """What anyone may read (each answer as the viewer may see it)."""

    @get("/api/board", name="api:board", tags=["league"])
    async def api_board(self, request: Req) -> Response[models.Board]:
        """The league's board as the daemon last fitted it."""
        return await shown(request, BOARD_ANSWER, BOARD, lambda ctx: ctx.answers.board())

    @get("/api/bots/{name:str}", name="api:bot", tags=["league"])
    async def api_bot(self, request: Req, name: FromPath[str]) -> Response[models.BotOut]:
        """A bot: its versions, rating history, head to head, verdict kinds and latest games."""
        return await shown(request, bot_key(name), bot_marks(name), partial(bot_answer, name=name))

    @get("/api/games", name="api:games", tags=["league"])
    async def api_games(  # noqa: PLR0913 (a parameter per query parameter)
            self, request: Req, bot: FromQuery[str | None] = None, verdict: FromQuery[str | None] = None,
            players: FromQuery[int | None] = None, page: FromQuery[int] = 1, before: FromQuery[int | None] = None,
            after: FromQuery[int | None] = None) -> Response[models.GamesPage]:
        """The games this viewer may see, newest first, filtered by bot, verdict kind (or ``any``) and table size.
        ``page`` alone: that page, counted from the newest; with ``before`` (the ``before`` of the page above it)
        the games older than that, or with ``after`` (the ``after`` of the page below it) the newer ones: a page
        reached from its neighbour's costs the same however deep it is, and is not counted (``total`` and ``pages``
        null; ``older`` says whether an older page follows)."""
        wanted = GameFilter(bot, verdict, players, page, before, after)
        key, marks = games_list(request, wanted)
        return await shown(request, f"api {key}", marks,
                           lambda ctx: ctx.answers.games(wanted, ctx.web.settings.games_per_page))

    @get("/api/games/{number:int}", name="api:game", tags=["league"])
    async def api_game(self, request: Req, number: FromPath[int]) -> Response[models.GameOut]:
        """A game's replay data: every hand (once its group is done), and the viewer's own seats' views."""
        return await shown(request, f"api game {number}", REPLAY, lambda ctx: _found(ctx.answers.game(number)),
                           "replays", quick=lambda ctx: _found(ctx.answers.game(number, quick=True)))

    @get("/api/authors/{name:str}", name="api:author", tags=["authors"])
    async def api_author(self, request: Req, name: FromPath[str]) -> Response[models.AuthorOut]:
        """An author's bots; their uploads with logs for themselves and the admin."""
        return await shown(request, f"api author {name}", AUTHORS, lambda ctx: _found(ctx.answers.author(name)))


class AuthorApi(Controller):
    """A signed-in author's uploads, challenges and analyses (401 for nobody; another author's answer 404)."""

    tags = ("authors",)
    guards = (requires_author,)
    dependencies = DEPENDENCIES

    @get("/api/uploads/{upload_id:int}", name="api:upload", sync_to_thread=True)
    def api_upload(self, ctx: Ctx, upload_id: FromPath[int]) -> models.UploadOut:
        """An upload's status, steps and logs: its uploader's and the admin's only."""
        return _found(ctx.answers.upload(upload_id))

    @post("/api/uploads", name="api:uploads", status_code=HTTP_202_ACCEPTED,
          request_max_body_size=ARCHIVE_CEILING)
    async def api_upload_post(self, request: Req, ctx: Ctx, bot: FromQuery[str]) -> models.UploadAccepted:
        """Upload a bot's archive (the raw body: application/gzip, application/zip or application/octet-stream);
        the daemon extracts, builds and gates it. ``bot`` names the bot."""
        if request.headers.get("content-type", "").split(";")[0].strip().lower() not in ARCHIVE_TYPES:
            raise Refused(415, f"send the archive as one of {', '.join(ARCHIVE_TYPES)}")
        archive = await _body(request, ctx.web.settings.archive_bytes)
        assert ctx.viewer.author is not None  # the guard's
        row = take_upload(ctx.store, ctx.viewer.author, bot, archive, ctx.web.settings)
        return models.UploadAccepted(upload=row.id, status=row.status, url=f"/api/uploads/{row.id}")

    @post("/api/challenges", name="api:challenges", status_code=HTTP_202_ACCEPTED, sync_to_thread=True)
    def api_challenge_post(self, ctx: Ctx, data: JSONBody[models.SideIn]) -> models.SideQueued:
        """Ask for ``games`` unrated games of your bot against the latest versions of ``opponents`` (a challenge),
        within your hourly quotas; the daemon plays them at low priority on deals of your own seed domain."""
        assert ctx.viewer.author is not None  # the guard's
        row = take_challenge(ctx.store, ctx.viewer.author, data, ctx.web.settings)
        return models.SideQueued(challenge=row.id, status=row.status, url=f"/api/challenges/{row.id}")

    @post("/api/games/{number:int}/analyses", name="api:game-analyses", status_code=HTTP_202_ACCEPTED,
          sync_to_thread=True)
    def api_game_analysis(self, ctx: Ctx, number: FromPath[int], data: JSONBody[models.AnalysisIn],
                          ) -> models.AnalysisQueued:
        """Ask for the post-game analysis of ``seat`` (your own bot's) of a league game you may see, within your
        hourly caps; the daemon makes it at low priority. Its status and, once done, its marks on the seat's view
        come with the game (``GET /api/games/{number}``): yours alone until the game's group is complete, then
        anyone's."""
        return take_game_analysis(ctx, number, data)

    @get("/api/challenges/{challenge_id:int}", name="api:challenge", sync_to_thread=True)
    def api_challenge(self, ctx: Ctx, challenge_id: FromPath[int]) -> models.SideOut:
        """A challenge's status and games: its asker's and the admin's only."""
        return _found(ctx.answers.side(challenge_id))

    @get("/api/challenges/{challenge_id:int}/games/{number:int}", name="api:challenge-game", sync_to_thread=True)
    def api_challenge_game(self, ctx: Ctx, challenge_id: FromPath[int], number: FromPath[int]) -> models.GameOut:
        """A challenge's game for the replay viewer: every hand, and the asker's own seats' views with their
        stderr."""
        return _found(ctx.answers.side_game(challenge_id, number))


class AdminApi(Controller):
    """The admin's view and actions (401 for nobody, 404 for an author: as for a path that does not exist)."""

    tags = ("admin",)
    guards = (requires_author,)
    dependencies = ADMIN_DEPENDENCIES

    @get("/api/admin", name="api:admin", sync_to_thread=True)
    def api_admin(self, ctx: Ctx) -> models.AdminOut:
        """Authors and versions, for the admin."""
        return _found(ctx.answers.admin())

    @post("/api/admin/finals", name="api:admin-finals", status_code=HTTP_202_ACCEPTED, sync_to_thread=True)
    def api_admin_finals(self, ctx: Ctx, data: JSONBody[models.FinalsIn]) -> models.RequestQueued:
        """Ask the daemon for the finals: it completes the groups in flight, then the board's ``top`` active
        versions play them (``max_games`` at most; default the config's) and entries freeze for good."""
        return queue_finals(ctx.store, ctx.answers, data)

    @post("/api/admin/{action:str}", name="api:admin-action", status_code=HTTP_202_ACCEPTED, sync_to_thread=True)
    def api_admin_action(self, ctx: Ctx, action: FromPath[str], data: JSONBody[models.ActionIn],
                         ) -> models.RequestQueued:
        """Ask the daemon to retire, quarantine or reinstate a bot (a lifecycle request)."""
        return queue_action(ctx.store, ctx.answers, action, data.bot)


async def _body(request: Req, cap: int) -> bytes:
    """The request's body, refused with 413 past ``cap`` bytes: by its Content-Length before a byte is read, or,
    sent chunked, as soon as it streams past the cap (what came so far is dropped)."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or len(length) > 18 or int(length) > cap):
        raise Refused(413, f"the body is over {cap} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise Refused(413, f"the body is over {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


ROUTES = [PublicApi, AuthorApi, AdminApi]
