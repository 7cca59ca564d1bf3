"""The board's live part (:class:`~referee.web.models.BoardLive`), which the board page's script polls: each
version's latest game, the games of the last hour and what is playing now.

It is not kept under read marks as the board is: it changes as deal groups are issued (which raises no mark:
nothing a visitor may see of a group in flight changes) and as the clock turns (the last hour), and marks raised at
every group would rebuild the board's chart and rows at every group. It is read afresh instead (a few index seeks
per version), for an anonymous crowd at most once a :data:`KEPT_SECONDS` per worker process: every visitor's poll
within it gets the same bytes."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

from litestar import Request, Response, get

from referee.web import auth, models, urls
from referee.web.context import context
from referee.web.shown import encoded

#: How long an anonymous answer is served again (the page polls every ``board_seconds``, 5 by default).
KEPT_SECONDS = 1.0
_STATE = "board_live"  # the app state's key for the kept answer
_clock = time.monotonic


class _Kept:
    """One worker's latest anonymous answer, and when it was made."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.made = -KEPT_SECONDS
        self.body = b""


@get(urls.BOARD_LIVE_API.path, name=urls.BOARD_LIVE_API.name, sync_to_thread=True, tags=["league"])
def api_board_live(request: Request[Any, Any, Any]) -> Response[models.BoardLive]:
    """The board's live part: games shown in the last hour, deal groups in flight, and per version its latest game
    and whether it is playing now (nothing of a group in flight's games)."""
    if request.headers.get("authorization") is not None or auth.SESSION_COOKIE in request.cookies:
        with context(request) as ctx:  # a viewer's own (the admin's shows the games of groups in flight)
            body = encoded(ctx.answers.live(datetime.now(UTC)))[0]
        return _json(body)
    kept: _Kept = request.app.state.setdefault(_STATE, _Kept())
    with kept.lock:  # one build at a time: a crowd's polls wait for it rather than each making one
        if _clock() - kept.made >= KEPT_SECONDS:
            with context(request) as ctx:
                kept.body = encoded(ctx.answers.live(datetime.now(UTC)))[0]
            kept.made = _clock()
        body = kept.body
    return _json(body)


def _json(body: bytes) -> Response[Any]:
    return Response(body, media_type="application/json")


ROUTES = [api_board_live]
