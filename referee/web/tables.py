"""The card tables: a signed-in author opens a table (a variant, the league versions to play, their seat) and plays
it in the browser; the daemon plays it (:mod:`referee.league.tables`). This server only relays: it hands the page
the seat's protocol messages as the daemon stored them (the bytes a bot at that seat is sent, nothing else) and
stores the person's answer to the open request, if it is one of its legal strings.

A table is its author's alone (:class:`~referee.web.visibility.TableSubject`): anyone else, the admin included,
gets 404 as for a table that does not exist. Its replay (every hand) is served only once the game is over. The
page follows the messages as server-sent events (:mod:`referee.web.table_events`); API clients may poll them here.
"""

from __future__ import annotations

import time
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.response import Redirect
from litestar.status_codes import HTTP_201_CREATED, HTTP_202_ACCEPTED

from protocol.cards import parse_cards
from protocol.events import ActionTaken
from protocol.messages import Request as SeatRequest
from protocol.messages import referee_decoder
from protocol.rules import MAX_PLAYERS, MIN_PLAYERS, VARIANTS, Rules, RulesError
from protocol.views import PlayerView
from referee.engine import new_game
from referee.engine.deal import check_table
from referee.engine.errors import InvalidDealError
from referee.hand_order import hand_order_key
from referee.report.game_data import game_data
from referee.report.page import VIEWER_BODY, script_json
from referee.results.replay import ReplayError, parse_replay
from referee.results.reproduce import first_mover, previous_fool
from referee.results.table_store import NewTable, TableRow
from referee.results.web_queries import WebStore
from referee.web import models, urls
from referee.web.analyses import take_table_analysis
from referee.web.answers import Shown
from referee.web.context import (
    DEPENDENCIES,
    PAGE_DEPENDENCIES,
    PAGE_EXCEPTIONS,
    Context,
    Ctx,
    requires_author,
    requires_author_page,
)
from referee.web.limits import retry_after
from referee.web.refusals import NOT_FOUND, REFUSALS, Refused, refusal
from referee.web.rendering import render
from referee.web.visibility import Sight, TableSubject, sight

Req = Request[Any, Any, Any]


# -- what the routes share ---------------------------------------------------------------------------


def playable_bots(ctx: Context) -> list[str]:
    """The versions the viewer may seat at a table: the league's active ones (the author's own only, if the
    arena's ``table_bots`` says so)."""
    own = ctx.web.settings.table_bots == "own"
    return [name for name, v in ctx.answers.versions.items() if v.active and (not own or v.author == ctx.viewer.author)]


def check_new_table(ctx: Context, wanted: models.TableIn) -> NewTable:
    """:raises Refused: 422 for an unknown variant, a bot the viewer may not seat, a table size or seat the game has
    not."""
    if wanted.variant not in VARIANTS:
        raise Refused(422, f"unknown variant {wanted.variant!r}: one of {', '.join(VARIANTS)}")
    allowed = set(playable_bots(ctx))
    for bot in wanted.bots:
        if bot not in allowed:
            raise Refused(422, f"{bot!r} is not a bot you may play (GET /api/tables lists them)")
    players = len(wanted.bots) + 1
    try:
        check_table(Rules(variant=wanted.variant), players)  # a variant: checked above
    except (InvalidDealError, RulesError) as exc:
        raise Refused(422, str(exc)) from None
    if not 0 <= wanted.seat < players:
        raise Refused(422, f"seat {wanted.seat} is not at a table of {players}")
    assert ctx.viewer.author is not None
    return NewTable(ctx.viewer.author, wanted.variant, wanted.seat, list(wanted.bots))


def open_table(ctx: Context, wanted: models.TableIn) -> TableRow:
    """:raises Refused: 422 for a table that cannot be; TableRefused: a cap is reached (429)."""
    new = check_new_table(ctx, wanted)
    return ctx.store.open_table(ctx.answers.league.id, new, per_author=ctx.web.settings.tables_per_author,
                                total=ctx.web.settings.tables_total)


def own_table(ctx: Context, table_id: int) -> TableRow:
    """The viewer's table; 404 for any other, or none (the same answer)."""
    table = ctx.store.table(table_id)
    if table is None or table.tournament_id != ctx.answers.league.id or \
            sight(ctx.viewer, TableSubject(table.author)) is Sight.HIDDEN:
        raise NotFoundException(NOT_FOUND)
    return table


def table_out(table: TableRow) -> models.TableOut:
    return models.TableOut(id=table.id, variant=table.variant, players=table.players, seat=table.seat,
                           bots=table.bots, status=table.status, created=table.created, reason=table.reason,
                           url=f"/tables/{table.id}", messages=f"/api/tables/{table.id}/messages",
                           events=f"/api/tables/{table.id}/events",
                           replay=_replay_url(table))


def _replay_url(table: TableRow) -> str | None:
    return f"/tables/{table.id}/replay" if table.game_id is not None else None


def table_messages(ctx: Context, table: TableRow, since: int) -> models.TableMessages:
    lines = ctx.store.table_messages(table.id, max(0, since))  # after the table's row: see table_state
    return models.TableMessages(since=max(0, since), next=max(0, since) + len(lines), messages=lines,
                                status=table.status, clock_ms=clock_ms(table), replay=_replay_url(table),
                                reason=table.reason, view=final_view(ctx.store, table))


def table_state(table: TableRow, sent: int, view: PlayerView | None = None) -> models.TableState:
    """The table as read with its messages (the row first, then the messages: the daemon stores the last message
    before it marks the table over, so an ``over`` read first has every message after it); ``view``: the seat's
    :func:`final_view` once over."""
    return models.TableState(next=sent, status=table.status, clock_ms=clock_ms(table), replay=_replay_url(table),
                             reason=table.reason, view=view)


def final_view(store: WebStore, table: TableRow) -> PlayerView | None:
    """The seat's view once the game is over: the game over message carries the last events but no view, so the
    page would draw the table as the last request showed it. This is the engine's own view of that seat after
    every event, from the stored game played again (no second copy of the rules in the page). None before the
    end, for a table that ended without a game, or for a stored game that does not replay."""
    if table.status != "over" or table.game_id is None:
        return None
    stored = next(iter(store.replays_by_id([table.game_id])), None)
    if stored is None:
        return None
    try:
        return view_at_end(stored.replay, table.seat)
    except (ReplayError, ValueError, StopIteration):
        return None


def view_at_end(replay: bytes, seat: int) -> PlayerView:
    """``seat``'s view at the end of the game ``replay`` holds (JSON lines), dealt and played again by the engine.

    :raises ReplayError: the replay does not decode; ValueError: its actions are not legal.
    """
    header, events, end = parse_replay(replay)
    rules, players = header.rules, len(header.names)
    leader = first_mover(events)
    game = new_game(rules, players, deck=parse_cards(" ".join(header.deck)), dealer=header.dealer,
                    fool=None if leader is None else previous_fool(rules, leader, players))
    done = len(game.events)  # the deal's
    while done < len(events) and game.result is None:
        event = events[done]
        if not isinstance(event, ActionTaken):
            raise ReplayError(f"the replay does not follow the rules at event {done + 1}")
        game.apply_str(event.action)
        done = len(game.events)  # with the events that followed from it (an automatic pass among them)
    result = end.result
    if game.result is None and result.end == "forfeit" and result.forfeit_seat is not None:
        game.forfeit(result.forfeit_seat, result.verdict or "crash", result.reason or "")
    return game.view(seat)


def clock_ms(table: TableRow) -> int | None:
    """The time left on the open request (None: nothing asked now)."""
    return None if table.deadline is None else max(0, round((table.deadline - time.time()) * 1000))


def take_move(ctx: Context, table: TableRow, move: models.MoveIn) -> models.MoveAccepted:
    """The person's answer, stored if it answers the open request with one of its legal strings before its
    deadline (409 otherwise: the page is out of date); 429 past the author's move budget."""
    wait = ctx.web.move_limits.take(f"moves:{table.author}")
    if wait:
        raise Refused(429, "too many moves", {"Retry-After": retry_after(wait)})
    stale = Refused(409, "that request is not open (reload the table)")
    if table.status != "playing" or table.deadline is None or time.time() > table.deadline:
        raise stale
    last = ctx.store.last_table_message(table.id)
    asked = referee_decoder.decode(last) if last is not None else None  # the daemon's own line: a message
    if not isinstance(asked, SeatRequest) or asked.id != move.request:
        raise stale
    if move.action not in asked.legal:
        raise Refused(409, f"{move.action!r} is not one of the request's legal actions")
    if not ctx.store.add_move(table.id, move.request, move.action):
        raise Refused(409, "that request was answered already")
    return models.MoveAccepted(request=move.request, action=move.action)


def table_replay(ctx: Context, table: TableRow) -> models.GameOut:
    """The stored game, every hand (the game is over), no bot's stderr nor verdict reason, and the person's seat's
    view with the marks of their analysis once it is done; 404 before."""
    if table.game_id is None:
        raise NotFoundException(NOT_FOUND)
    stored, = ctx.store.replays_by_id([table.game_id])
    views = [game_data(stored.replay, reasons=False, game_id=table.id)]
    analyses, askable = ctx.answers.analyses(stored, views, Shown(table.id, False, True, False), [table.seat])
    return models.GameOut(number=table.id, status=table.status, views=views, analyses=analyses,
                          can_analyze=askable)


def choices(ctx: Context) -> models.TableChoices:
    assert ctx.viewer.author is not None
    mine = ctx.store.tables(ctx.answers.league.id, author=ctx.viewer.author)
    return models.TableChoices(variants=list(VARIANTS), bots=playable_bots(ctx), min_players=MIN_PLAYERS,
                               max_players=MAX_PLAYERS, tables=[table_out(t) for t in reversed(mine)])


# -- the API ------------------------------------------------------------------------------------------


class TableApi(Controller):
    """A signed-in author's card tables (401 for nobody; anyone else's table, the admin's included, 404). The
    table's event stream is :mod:`referee.web.table_events`'s."""

    tags = ("tables",)
    guards = (requires_author,)
    dependencies = DEPENDENCIES

    @get("/api/tables", name="api:tables", sync_to_thread=True)
    def api_tables(self, ctx: Ctx) -> models.TableChoices:
        """The viewer's card tables, newest first, and what they may open one with."""
        return choices(ctx)

    @post("/api/tables", name="api:tables-post", status_code=HTTP_201_CREATED, sync_to_thread=True)
    def api_open_table(self, ctx: Ctx, data: JSONBody[models.TableIn]) -> models.TableOut:
        """Open a card table (the daemon seats the bots and deals); 429 when the viewer or the arena has the most
        open tables allowed."""
        return table_out(open_table(ctx, data))

    @get("/api/tables/{table_id:int}", name="api:table", sync_to_thread=True)
    def api_table(self, ctx: Ctx, table_id: FromPath[int]) -> models.TableOut:
        """One of the viewer's tables."""
        return table_out(own_table(ctx, table_id))

    @get("/api/tables/{table_id:int}/messages", name="api:table-messages", sync_to_thread=True)
    def api_table_messages(self, ctx: Ctx, table_id: FromPath[int], since: FromQuery[int] = 0,
                           ) -> models.TableMessages:
        """The seat's protocol messages from number ``since`` (0: all, as after a reload)."""
        return table_messages(ctx, own_table(ctx, table_id), since)

    @post("/api/tables/{table_id:int}/moves", name="api:table-moves", status_code=HTTP_202_ACCEPTED,
          sync_to_thread=True)
    def api_table_move(self, ctx: Ctx, table_id: FromPath[int], data: JSONBody[models.MoveIn],
                       ) -> models.MoveAccepted:
        """Answer the open request with one of its legal strings (a cookie session sends its X-CSRF-Token)."""
        return take_move(ctx, own_table(ctx, table_id), data)

    @post("/api/tables/{table_id:int}/resign", name="api:table-resign", status_code=HTTP_202_ACCEPTED,
          sync_to_thread=True)
    def api_table_resign(self, ctx: Ctx, table_id: FromPath[int]) -> models.TableOut:
        """Give the game up (the seat forfeits, verdict ``resigned``); 409 when the table is not playing."""
        table = own_table(ctx, table_id)
        if not ctx.store.resign_table(table.id):
            raise Refused(409, "the table is not playing")
        return table_out(table)

    @post("/api/tables/{table_id:int}/analysis", name="api:table-analysis", status_code=HTTP_202_ACCEPTED,
          sync_to_thread=True)
    def api_table_analysis(self, ctx: Ctx, table_id: FromPath[int]) -> models.AnalysisQueued:
        """Ask for the post-game analysis of your seat of the table's finished game (409 before it is over); its
        status and, once done, your mistakes marked on your seat's view come with the replay."""
        return take_table_analysis(ctx, own_table(ctx, table_id))

    @get("/api/tables/{table_id:int}/replay", name="api:table-replay", sync_to_thread=True)
    def api_table_replay(self, ctx: Ctx, table_id: FromPath[int]) -> models.GameOut:
        """The table's game for the replay viewer, once it is over."""
        return table_replay(ctx, own_table(ctx, table_id))


# -- the pages ---------------------------------------------------------------------------------------


class TablePages(Controller):
    """The card tables' pages: a signed-in author's (nobody is sent to the login form)."""

    include_in_schema = False
    guards = (requires_author_page,)
    exception_handlers = PAGE_EXCEPTIONS
    dependencies = PAGE_DEPENDENCIES

    # async: a sync GET beside an async POST on one path fails in Litestar
    @get("/tables", name="page:tables")
    async def tables_page(self, ctx: Ctx) -> Response[Any]:
        offered = choices(ctx)
        return render(ctx.web, "tables.html", ctx, choices=offered, error=None, picked=picked_on_form(
            offered.variants[0], 0, offered.bots[:1]))

    @post("/tables", name="page:tables-post")
    async def tables_form(self, request: Req, ctx: Ctx) -> Response[Any]:
        form = await request.form()
        try:
            table = open_table(ctx, table_from_form(form))
        except REFUSALS as exc:
            refused = refusal(exc)
            seat = form.get("seat")
            picked = {"variant": form.get("variant"), "seat": int(seat) if isinstance(seat, str) and seat.isdigit()
                      else 0, "at": {k: form.get(f"at{k}") for k in range(MAX_PLAYERS)}}
            return render(ctx.web, "tables.html", ctx, status=refused.status, choices=choices(ctx),
                          error=refused.detail, picked=picked)
        return Redirect(f"/tables/{table.id}", status_code=303)

    @get("/tables/{table_id:int}", name="page:table", sync_to_thread=True)
    def table_page(self, ctx: Ctx, table_id: FromPath[int]) -> Response[Any]:
        table = own_table(ctx, table_id)
        data = {"id": table.id, "messages": f"/api/tables/{table.id}/messages",
                "events": f"/api/tables/{table.id}/events",
                "moves": f"/api/tables/{table.id}/moves", "resign": f"/api/tables/{table.id}/resign",
                "csrf": ctx.csrf, "hand_order": hand_order_key()}
        return render(ctx.web, "table.html", ctx, table=table_out(table), data=script_json(data))

    @post("/tables/{table_id:int}/analysis", name="page:table-analysis")
    async def table_analysis_form(self, ctx: Ctx, table_id: FromPath[int]) -> Response[Any]:
        """The button after game over: the person's analysis asked for, then the replay (where it shows)."""
        take_table_analysis(ctx, own_table(ctx, table_id))
        return Redirect(f"{urls.TABLE_REPLAY(table_id=table_id)}#analyses", status_code=303)

    @get("/tables/{table_id:int}/replay", name="page:table-replay", sync_to_thread=True)
    def table_replay_page(self, ctx: Ctx, table_id: FromPath[int]) -> Response[Any]:
        game = table_replay(ctx, own_table(ctx, table_id))
        return render(ctx.web, "game.html", ctx, game=game, body=VIEWER_BODY, data=script_json(game.views),
                      analyze=urls.TABLE_ANALYSIS(table_id=table_id), table=table_id)


def picked_on_form(variant: str, seat: int, bots: list[str]) -> dict[str, Any]:
    """What the form shows chosen: the variant, the person's seat and the bots at the other seats in seat order."""
    others = [k for k in range(MAX_PLAYERS) if k != seat]
    return {"variant": variant, "seat": seat, "at": dict(zip(others, bots, strict=False))}


def table_from_form(form: Any) -> models.TableIn:
    """The table the form asks for. Its rows are the seats (``at0``, ``at1``, ...: the bot at that seat, or none)
    and ``seat`` the person's row, so each bot sits where its row says; a form without rows (a script's post)
    names the bots at the other seats in seat order (``bots``), as the API does.

    :raises Refused: 422 for an empty seat below a taken one (the seats of a table are 0 to its size - 1).
    """
    text = form.get("seat")
    seat = int(text) if isinstance(text, str) and text.isdigit() and len(text) < 3 else 0
    variant = str(form.get("variant") or "")
    if not any(f"at{k}" in form for k in range(MAX_PLAYERS)):
        return models.TableIn(variant=variant, bots=[b for b in form.getall("bots") if isinstance(b, str) and b],
                              seat=seat)
    rows = {k: bot for k in range(MAX_PLAYERS) if k != seat and isinstance(bot := form.get(f"at{k}"), str) and bot}
    taken = [*rows, seat]
    for empty in range(max(taken) + 1):
        if empty not in taken:
            raise Refused(422, f"seat {empty} is empty: a table's seats are filled from seat 0 up, yours included")
    return models.TableIn(variant=variant, bots=[rows[k] for k in sorted(rows)], seat=seat)


ROUTES = [TableApi, TablePages]
