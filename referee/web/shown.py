"""The routes a crowd reads (the board, bot pages, games lists, replays, author pages and their JSON twins), served
one way: an anonymous visitor gets the bytes kept for every visitor (:mod:`referee.web.published`) with an
``ETag``, ``Last-Modified`` and a ``Cache-Control`` a reverse proxy may honour (docs/WEB.md), or a 304 when the
``ETag`` they send is the page's; a signed-in viewer gets the page built for them, never kept (``no-store``).

A request is anonymous when it carries neither an ``Authorization`` header nor a session cookie: one that carries
a bad one is answered as its credentials deserve (401, or the cookie cleared), never from what is kept.
``If-Modified-Since`` is not honoured: ``Last-Modified`` has whole seconds, and two pages within one second would
share it (the ``ETag`` tells them apart)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio.to_thread
import msgspec
from litestar import Request, Response
from litestar.exceptions import NotFoundException

from referee.results.web_queries import WebStore
from referee.web import auth, models
from referee.web.answers import Answers, GameFilter
from referee.web.context import Context, WebState, context, web_state
from referee.web.front import Shelf, etag_matches
from referee.web.published import LEAGUE, VARY, LeagueFacts, Page
from referee.web.refusals import NOT_FOUND
from referee.web.visibility import ANONYMOUS

#: The read marks each route a crowd reads shows (beside the league's versions and row). A replay shown once never
#: changes (a complete group stays complete) unless deleted, or an analysis of it is done (its marks, once public).
BOARD, GAMES, REPLAY, AUTHORS = ("board",), ("games", "gone"), ("gone", "analyses"), ("authors",)
#: The marks that move at every deal group a league completes (a games list's, a bot's): read by a worker at most
#: once per ``games_seconds`` (:class:`~referee.web.published.Published`'s lagging marks).
LAGGING = ("games", "bot:")
#: A refit: every bot page is built anew, and takes its groups' marks up to date with it (once per refit, not twice).
CATCH_UP = BOARD


#: The key the board's JSON answer is kept under; its HTML page is drawn from that answer (:func:`twin`).
BOARD_ANSWER = "api board"


def bot_marks(name: str) -> tuple[str, ...]:
    """A bot's page: the board (its rating history) and its own groups."""
    return "board", f"bot:{name}"


def bot_key(name: str) -> str:
    """The key a bot's JSON answer is kept under; its HTML page is drawn from that answer (:func:`twin`)."""
    return f"api bot {name}"


def bot_answer(ctx: Context, name: str) -> models.BotOut:
    """A bot's answer for the viewer. :raises NotFoundException: no such bot."""
    bot = ctx.answers.bot(name)
    if bot is None:
        raise NotFoundException(NOT_FOUND)
    return bot


def list_marks(wanted: GameFilter) -> tuple[str, ...]:
    """A games list: every group's games, or one bot's groups'."""
    return GAMES if wanted.bot is None else (f"bot:{wanted.bot}", "gone")


def games_list(request: Req, wanted: GameFilter) -> tuple[str, tuple[str, ...]]:
    """A games list page's key and marks (its route's prefix aside). A page of the games older than a number below
    which every game's group is over (:meth:`~referee.web.published.Published.settled_below`) counts nothing and
    shows games that no longer change: it is kept until a game is deleted, not built again at every group. (The
    bench's crowd reads 950 such pages of the oldest games: built at every group, they were most of its cost.)"""
    settled = (wanted.before is not None and wanted.after is None
               and wanted.before <= web_state(request).published.settled_below())
    return (f"games {wanted} settled", ("gone",)) if settled else (f"games {wanted}", list_marks(wanted))


Req = Request[Any, Any, Any]
HTML = "text/html"  # Litestar adds "; charset=utf-8" to a text type's answer
JSON = "application/json"
#: What a route makes for a viewer: a page's text (HTML) or an answer (JSON).
Make = Callable[[Context], "str | msgspec.Struct"]
_ENCODER = msgspec.json.Encoder()
T = TypeVar("T", bound=msgspec.Struct)


async def shown(request: Req, key: str, marks: tuple[str, ...], make: Make, pool: str = "pages",
                quick: Make | None = None) -> Response[Any]:
    """The answer of a route a crowd reads: ``make``'s for this viewer, kept under ``key`` (the route and the
    parameters it parsed: what is not a parameter of the route never splits what is kept) in ``pool`` and the read
    ``marks`` it shows (beside :data:`~referee.web.published.LEAGUE`) for anonymous visitors.

    An anonymous page is built in the event loop: a few indexed reads and a template, a few ms at most, where a
    worker thread's hop and the GIL's handoffs between it and the loop cost more than they let run beside it (the
    bench, 50 clients: 0.87 ms of CPU per request with every build in a thread, 0.60 in the loop). ``quick``: the
    answer to build there instead of ``make``'s, which raises :class:`~referee.web.published.NotQuick` when it would
    not be quick (a replay the engine would replay); then ``make`` builds it in a thread, as it does a signed-in
    viewer's page."""
    web = web_state(request)
    if request.headers.get("authorization") is not None or auth.SESSION_COOKIE in request.cookies:
        return await anyio.to_thread.run_sync(_for_viewer, request, make)
    depends = LEAGUE + marks
    page = web.published.kept(key, depends, pool)
    if page is None:
        page = web.published.make_now(key, depends, partial(_for_anyone, web, quick or make), pool)
    if page is None:
        page = await anyio.to_thread.run_sync(web.published.make, key, depends, partial(_for_anyone, web, make),
                                              pool)
    web.front.remember(request.scope, Shelf(key, depends, pool))  # the next ask of this URL: answered in front
    return _answer(request, page, web.settings.public_seconds)


def twin(ctx: Context, key: str, marks: tuple[str, ...], make: Callable[[Context], T], kind: type[T]) -> T:
    """``make``'s answer, for a page drawn from the answer its JSON twin route sends (a bot's page, from
    ``/api/bots/NAME``'s). For an anonymous visitor, the twin's bytes as of this build's read transaction, kept
    under ``key`` and ``marks`` as :func:`shown` keeps them, or the answer built and kept as the twin's, decoded: the
    two pages cost one set of queries (a bot's: 3 of its 5 ms). A signed-in viewer's is built for them, as is one
    built outside a read transaction (a request whose credentials failed: only an anonymous build in one read
    transaction, as :func:`shown`'s, keeps the bytes under the marks they show)."""
    if ctx.viewer != ANONYMOUS or not ctx.store.reading:
        return make(ctx)
    page = ctx.web.published.alongside(ctx.store, key, LEAGUE + marks, partial(_for_anyone, ctx.web, make))
    return msgspec.json.decode(page.body, type=kind)


def _for_anyone(web: WebState, make: Make, store: WebStore, facts: LeagueFacts) -> tuple[bytes, str]:
    """The page as an anonymous visitor sees it (what is kept for them all)."""
    return encoded(make(Context(store, ANONYMOUS, Answers(store, ANONYMOUS, facts), web, None, False)))


def _for_viewer(request: Req, make: Make) -> Response[Any]:
    with context(request) as ctx:
        body, media_type = encoded(make(ctx))
    return Response(body, media_type=media_type)


def encoded(made: str | msgspec.Struct) -> tuple[bytes, str]:
    """A page's text as UTF-8 HTML, an answer as JSON."""
    if isinstance(made, str):
        return made.encode(), HTML
    return _ENCODER.encode(made), JSON


def _answer(request: Req, page: Page, seconds: int) -> Response[Any]:
    """The kept page's answer, as the front sends it (:func:`referee.web.front.send_page`: the same bytes)."""
    headers = {"etag": page.etag, "last-modified": page.modified, "vary": VARY,
               "cache-control": f"public, max-age={seconds}"}
    asked = request.headers.get("if-none-match")
    if asked and etag_matches(asked, page.etag):
        return Response(None, status_code=304, headers=headers)
    return Response(page.body, media_type=page.media_type, headers=headers)
