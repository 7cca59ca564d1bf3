"""The JSON API: one route per page's data, each answer a Struct of :mod:`referee.web.models`. An object the viewer
may not see answers 404 exactly as a missing one does; the routes that need someone signed in answer 401 first."""

from __future__ import annotations

from typing import Any, TypeVar

from litestar import Request, Response, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.status_codes import HTTP_202_ACCEPTED

from referee.league.names import name_problem
from referee.results.requests import AskFinals, Payload, QuarantineBot, ReinstateBot, RetireBot
from referee.results.side_store import SideRow
from referee.results.web_queries import WebStore
from referee.web import models
from referee.web.answers import Answers, GameFilter
from referee.web.challenges import take_challenge
from referee.web.context import Context, context, login_wall, web_state
from referee.web.refusals import Refused
from referee.web.shown import AUTHORS, BOARD, REPLAY, bot_marks, list_marks, shown
from referee.web.uploads import take_upload
from referee.web.visibility import AdminSubject, Sight, sight

#: Lifecycle requests the admin may ask for from the web (the daemon carries them out). Quarantine is the gate's
#: and the daemon's own verdict, not a request kind; "reinstate" lifts it.
#: The admin's lifecycle actions, each the request it writes.
ADMIN_ACTIONS: dict[str, Payload] = {"retire": RetireBot(by="web"), "quarantine": QuarantineBot(by="web"),
                                     "reinstate": ReinstateBot(by="web")}
NOT_FOUND = "Not Found"  # the router's own text for an unknown path: one answer for every 404

Req = Request[Any, Any, Any]
T = TypeVar("T")


def _found(value: T | None) -> T:
    if value is None:
        raise NotFoundException(NOT_FOUND)
    return value


@get("/api/board", tags=["league"])
async def api_board(request: Req) -> Response[models.Board]:
    """The league's board as the daemon last fitted it."""
    return await shown(request, "api board", BOARD, lambda ctx: ctx.answers.board())


@get("/api/bots/{name:str}", tags=["league"])
async def api_bot(request: Req, name: FromPath[str]) -> Response[models.BotOut]:
    """A bot: its versions, rating history, head to head, verdict kinds and latest games."""
    return await shown(request, f"api bot {name}", bot_marks(name), lambda ctx: _found(ctx.answers.bot(name)))


@get("/api/games", tags=["league"])
async def api_games(  # noqa: PLR0913 (a parameter per query parameter)
        request: Req, bot: FromQuery[str | None] = None, verdict: FromQuery[str | None] = None,
        players: FromQuery[int | None] = None, page: FromQuery[int] = 1, before: FromQuery[int | None] = None,
        after: FromQuery[int | None] = None) -> Response[models.GamesPage]:
    """The games this viewer may see, newest first, filtered by bot, verdict kind (or ``any``) and table size.
    ``page`` alone: that page, counted from the newest; with ``before`` (the ``before`` of the page above it) the
    games older than that, or with ``after`` (the ``after`` of the page below it) the newer ones: a page reached
    from its neighbour's costs the same however deep it is."""
    wanted = GameFilter(bot, verdict, players, page, before, after)
    return await shown(request, f"api games {wanted}", list_marks(wanted),
                       lambda ctx: ctx.answers.games(wanted, ctx.web.settings.games_per_page))


@get("/api/games/{number:int}", tags=["league"])
async def api_game(request: Req, number: FromPath[int]) -> Response[models.GameOut]:
    """A game's replay data: every hand (once its group is done), and the viewer's own seats' views."""
    return await shown(request, f"api game {number}", REPLAY, lambda ctx: _found(ctx.answers.game(number)))


@get("/api/authors/{name:str}", tags=["authors"])
async def api_author(request: Req, name: FromPath[str]) -> Response[models.AuthorOut]:
    """An author's bots; their uploads with logs for themselves and the admin."""
    return await shown(request, f"api author {name}", AUTHORS, lambda ctx: _found(ctx.answers.author(name)))


@get("/api/uploads/{upload_id:int}", sync_to_thread=True, tags=["authors"])
def api_upload(request: Req, upload_id: FromPath[int]) -> models.UploadOut:
    """An upload's status, steps and logs: its uploader's and the admin's only."""
    with context(request) as ctx:
        login_wall(ctx)
        return _found(ctx.answers.upload(upload_id))


#: What an upload's raw body may be sent as (the daemon reads the archive itself, whatever it says it is).
ARCHIVE_TYPES = ("application/gzip", "application/zip", "application/octet-stream")
#: The most any upload route reads, whatever the settings (the configured archive cap is checked below it).
ARCHIVE_CEILING = 256 * 1024 * 1024


@post("/api/uploads", status_code=HTTP_202_ACCEPTED, tags=["authors"], request_max_body_size=ARCHIVE_CEILING)
async def api_upload_post(request: Req, bot: FromQuery[str]) -> models.UploadAccepted:
    """Upload a bot's archive (the raw body: application/gzip, application/zip or application/octet-stream); the
    daemon extracts, builds and gates it. ``bot`` names the bot."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() not in ARCHIVE_TYPES:
        raise Refused(415, f"send the archive as one of {', '.join(ARCHIVE_TYPES)}")
    archive = await _body(request, web_state(request).settings.archive_bytes)
    with context(request) as ctx:
        login_wall(ctx)
        assert ctx.viewer.author is not None
        row = take_upload(ctx.store, ctx.viewer.author, bot, archive, ctx.web.settings)
        return models.UploadAccepted(upload=row.id, status=row.status, url=f"/api/uploads/{row.id}")


@post("/api/challenges", status_code=HTTP_202_ACCEPTED, sync_to_thread=True, tags=["authors"])
def api_challenge_post(request: Req, data: JSONBody[models.SideIn]) -> models.SideQueued:
    """Ask for ``games`` unrated games of your bot against the latest versions of ``opponents`` (a challenge),
    within your hourly quotas; the daemon plays them at low priority on deals of your own seed domain."""
    with context(request) as ctx:
        login_wall(ctx)
        row = queue_challenge(ctx, data)
        return models.SideQueued(challenge=row.id, status=row.status, url=f"/api/challenges/{row.id}")


@get("/api/challenges/{challenge_id:int}", sync_to_thread=True, tags=["authors"])
def api_challenge(request: Req, challenge_id: FromPath[int]) -> models.SideOut:
    """A challenge's status and games: its asker's and the admin's only."""
    with context(request) as ctx:
        login_wall(ctx)
        return _found(ctx.answers.side(challenge_id))


@get("/api/challenges/{challenge_id:int}/games/{number:int}", sync_to_thread=True, tags=["authors"])
def api_challenge_game(request: Req, challenge_id: FromPath[int], number: FromPath[int]) -> models.GameOut:
    """A challenge's game for the replay viewer: every hand, and the asker's own seats' views with their stderr."""
    with context(request) as ctx:
        login_wall(ctx)
        return _found(ctx.answers.side_game(challenge_id, number))


def queue_challenge(ctx: Context, asked: models.SideIn) -> SideRow:
    """The signed-in viewer's challenge, queued; :raises Refused: refused (its status, one line)."""
    assert ctx.viewer.author is not None
    return take_challenge(ctx.store, ctx.viewer.author, asked, ctx.web.settings)


@get("/api/admin", sync_to_thread=True, tags=["admin"])
def api_admin(request: Req) -> models.AdminOut:
    """Authors and versions, for the admin."""
    with context(request) as ctx:
        login_wall(ctx)
        return _found(ctx.answers.admin())


@post("/api/admin/finals", status_code=HTTP_202_ACCEPTED, sync_to_thread=True, tags=["admin"])
def api_admin_finals(request: Req, data: JSONBody[models.FinalsIn]) -> models.RequestQueued:
    """Ask the daemon for the finals: it completes the groups in flight, then the board's ``top`` active versions
    play them (``max_games`` at most; default the config's) and entries freeze for good."""
    with context(request) as ctx:
        login_wall(ctx)
        return queue_finals(ctx.store, ctx.answers, data, sight(ctx.viewer, AdminSubject()))


def queue_finals(store: WebStore, answers: Answers, asked: models.FinalsIn, seen: Sight) -> models.RequestQueued:
    """A ``finals`` request, if the viewer is the admin (else 404) and the finals can begin (else 409)."""
    if seen is Sight.HIDDEN:
        raise NotFoundException(NOT_FOUND)
    if store.finals(answers.league):
        raise Refused(409, "the finals have begun already")
    earlier = store.latest_request(answers.league.id, "finals")
    if earlier is not None and earlier.status == "pending":
        raise Refused(409, f"the finals were asked for already (request {earlier.id}, pending)")
    rated = [row.version for row in store.board(answers.league.id)
             if (v := answers.versions.get(row.version)) is not None and v.active]
    if len(rated) < 2:
        raise Refused(409, f"the board has {len(rated)} active rated version(s): finals need two or more")
    request_id = store.add_request(answers.league.id, "", AskFinals(top=asked.top, max_games=asked.max_games,
                                                                    by="web"))
    return models.RequestQueued(request=request_id, kind="finals", bot="")


@post("/api/admin/{action:str}", status_code=HTTP_202_ACCEPTED, sync_to_thread=True, tags=["admin"])
def api_admin_action(request: Req, action: FromPath[str], data: JSONBody[models.ActionIn]) -> models.RequestQueued:
    """Ask the daemon to retire, quarantine or reinstate a bot (a lifecycle request)."""
    with context(request) as ctx:
        login_wall(ctx)
        return queue_action(ctx.store, ctx.answers, action, data.bot, sight(ctx.viewer, AdminSubject()))


def queue_action(store: WebStore, answers: Answers, action: str, bot: str, seen: Sight) -> models.RequestQueued:
    """A lifecycle request for ``bot``, if the viewer is the admin and the bot exists (else 404)."""
    if seen is Sight.HIDDEN or action not in ADMIN_ACTIONS or name_problem(bot) is not None:
        raise NotFoundException(NOT_FOUND)
    if not any(v.bot == bot for v in answers.versions.values()):
        raise NotFoundException(NOT_FOUND)
    request_id = store.add_request(answers.league.id, bot, ADMIN_ACTIONS[action])
    return models.RequestQueued(request=request_id, kind=action, bot=bot)


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


ROUTES = [api_board, api_bot, api_games, api_game, api_author, api_upload, api_upload_post, api_challenge_post,
          api_challenge, api_challenge_game, api_admin, api_admin_finals, api_admin_action]
