"""A card table's live feed as server-sent events, ``GET /api/tables/N/events``: each of the seat's messages as
the daemon stored it is one event (``id:`` its number, ``data:`` the exact line a bot at that seat is sent), and
after each batch, and whenever the table changes, an ``event: state`` (:class:`~referee.web.models.TableState`:
the status, the clock, the replay's address). A reconnecting ``EventSource`` sends ``Last-Event-ID`` and gets the
messages after it; ``?since=K`` starts at message K.

The daemon writes the messages; this server only looks at the database every
``table_stream_look_seconds``. Each look runs in a worker thread (two indexed reads on the stream's own
connection, normally well under a millisecond, but SQLite may wait on a lock for up to its busy timeout, which
must not stall the event loop and every other stream with it). A quiet stream gets a comment every
``table_stream_heartbeat_seconds``; a stream ends after the table's last message once it is over, after
``table_stream_seconds`` (the browser reconnects), or when its viewer is no longer the table's author (checked at
connect and every ``table_stream_recheck_seconds``: a revoked session or token ends the stream, and its reconnect
gets 401). Open streams are capped per author and in all (:class:`~referee.web.limits.StreamSlots`): 429 past
a cap.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncGenerator
from typing import Any

import msgspec
from anyio import sleep, to_thread
from litestar import Request, get
from litestar.background_tasks import BackgroundTask
from litestar.params import FromPath, FromQuery
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from protocol.views import PlayerView
from referee.results.table_store import TableRow
from referee.results.web_queries import WebStore
from referee.web.context import DEPENDENCIES, Ctx, WebState, requires_author, viewer_now
from referee.web.limits import LEASES, StreamLease
from referee.web.refusals import Refused
from referee.web.tables import final_view, own_table, table_state
from referee.web.visibility import Sight, TableSubject, sight

Req = Request[Any, Any, Any]

#: How soon the browser reconnects after a stream ends (its ``retry:``, milliseconds).
RETRY_MS = 500
#: The longest ``Last-Event-ID`` read (a message number); anything else is ignored.
_MAX_ID_DIGITS = 9


def resume_from(last_event_id: str | None, since: int) -> int:
    """The first message to send: the one after ``Last-Event-ID`` (a reconnect's), else ``since``."""
    if last_event_id is not None and last_event_id.isdigit() and len(last_event_id) <= _MAX_ID_DIGITS:
        return int(last_event_id) + 1
    return max(0, since)


class _Look(msgspec.Struct, frozen=True):
    """One look at the database: the table (None: gone), its messages from the stream's next one on, whether
    the viewer may still see it (only when asked to check), and the seat's view at the end once the table is over."""

    table: TableRow | None
    lines: list[str]
    allowed: bool
    view: PlayerView | None = None


def _look(request: Req, store: WebStore, web: WebState, table_id: int, since: int, recheck: bool) -> _Look:
    table = store.table(table_id)  # the row before the messages: see tables.table_state
    if table is None:
        return _Look(None, [], False)
    allowed = not recheck or sight(viewer_now(request, store, web), TableSubject(table.author)) is not Sight.HIDDEN
    return _Look(table, store.table_messages(table_id, since), allowed, final_view(store, table))


async def table_events(request: Req, web: WebState, table_id: int, start: int,
                       lease: StreamLease) -> AsyncGenerator[ServerSentEventMessage, None]:
    """The stream's events from message ``start`` on, until the table is over, the stream's life is up or its
    viewer may no longer see the table; its slot given back when it ends."""
    settings = web.settings
    store: WebStore | None = None
    try:
        store = await to_thread.run_sync(WebStore, web.db_path)
        yield ServerSentEventMessage(data=None, retry=RETRY_MS)
        began = quiet_since = checked = time.monotonic()
        sent, last_state = start, None
        while True:
            now = time.monotonic()
            recheck = now - checked >= settings.table_stream_recheck_seconds
            checked = now if recheck else checked
            look = await to_thread.run_sync(_look, request, store, web, table_id, sent, recheck)
            if look.table is None or not look.allowed:
                return
            for line in look.lines:
                yield ServerSentEventMessage(id=sent, data=line)
                sent += 1
            state = table_state(look.table, sent, look.view)
            key = (sent, state.status, look.table.deadline, state.replay, state.reason)
            if key != last_state:
                yield ServerSentEventMessage(event="state", data=msgspec.json.encode(state).decode())
                last_state, quiet_since = key, time.monotonic()
            if state.status == "over" or time.monotonic() - began >= settings.table_stream_seconds:
                return
            if time.monotonic() - quiet_since >= settings.table_stream_heartbeat_seconds:
                yield ServerSentEventMessage(data=None, comment="heartbeat")
                quiet_since = time.monotonic()
            await sleep(settings.table_stream_look_seconds)
    finally:
        lease.release()
        if store is not None:
            store.close()


@get("/api/tables/{table_id:int}/events", name="api:table-events", sync_to_thread=True, tags=["tables"],
     media_type="text/event-stream", guards=[requires_author], dependencies=DEPENDENCIES)
def api_table_events(request: Req, ctx: Ctx, table_id: FromPath[int], since: FromQuery[int] = 0,
                     ) -> ServerSentEvent:
    """The seat's protocol messages as server-sent events (text/event-stream): each message one event, ``id:`` its
    number, ``data:`` the exact line; an ``event: state`` (``next``, ``status``, ``clock_ms``, ``replay``,
    ``reason``) after each batch. Starts after ``Last-Event-ID`` if sent, else at message ``since``; ends once the
    table is over (reconnect for more otherwise). 429 past the open streams' caps."""
    table, web = own_table(ctx, table_id), ctx.web
    lease = web.table_streams.take(table.author)
    if isinstance(lease, str):
        raise Refused(429, lease, {"Retry-After": "5"})
    request.scope.setdefault("state", {}).setdefault(LEASES, []).append(lease)  # given back as the call ends
    events = table_events(request, web, table.id, resume_from(request.headers.get("last-event-id"), since), lease)
    weakref.finalize(events, lease.release)  # a stream never started (the client gone at once) gives it back too
    # A client that goes away cancels the response's task, which leaves the generator suspended: its ``finally``
    # (the slot, the connection) would wait for the garbage collector. Closing it after the response, which
    # Litestar runs on a disconnect too, gives both back at once.
    return ServerSentEvent(events, headers={"Cache-Control": "no-store"}, background=BackgroundTask(events.aclose))


ROUTES = [api_table_events]
