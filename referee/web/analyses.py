"""Asking for a post-game analysis from the web: of an author's own bot's seat in a league game they may see, or of
a person's own seat in their card table's finished game; then the author's hourly caps (``[arena]``
``analyses_per_hour`` requests, ``analysis_cpu_seconds_per_hour`` CPU seconds the daemon spent on theirs) and
:meth:`~referee.results.analysis_store.AnalysisStore.add_analysis`, which queues it for the daemon
(:mod:`referee.league.analyses`). Every refusal is one line with its status."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar.exceptions import NotFoundException

from referee.results.analysis_store import AnalysisAsked, AnalysisRow, NewAnalysis
from referee.results.stamps import stamp
from referee.results.table_store import TableRow
from referee.web import models, urls
from referee.web.context import Context
from referee.web.limits import HOUR, hour_frees
from referee.web.refusals import NOT_FOUND, Refused
from referee.web.visibility import GameSubject, Sight, sight

#: The seed of every analysis asked for from the web: with its playouts, ``durak analyze`` makes the same one.
SEED = 0


def take_game_analysis(ctx: Context, number: int, asked: models.AnalysisIn) -> models.AnalysisQueued:
    """Queue the analysis of seat ``asked.seat`` of the league's game ``number``. :raises Refused: why not (404
    for a game the viewer may not see, as for one that does not exist)."""
    found = ctx.store.league_game_line(ctx.answers.league.id, number)  # its row alone: the replay is the daemon's
    players = found.record.players if found is not None else []
    authors = tuple(ctx.answers.versions[p].author if p in ctx.answers.versions else "" for p in players)
    if found is None or sight(ctx.viewer, GameSubject(found.status, authors)) is Sight.HIDDEN:
        raise NotFoundException(NOT_FOUND)
    if not 0 <= asked.seat < len(players):
        raise Refused(422, f"seat {asked.seat} is not at this game's table of {len(players)} (seats 0 to "
                           f"{len(players) - 1})")
    if authors[asked.seat] != ctx.viewer.author:
        raise Refused(403, f"seat {asked.seat} is {players[asked.seat]}, not a bot of yours: ask for your own bot's "
                           "seat")
    row = _queue(ctx, NewAnalysis(authors[asked.seat], "game", found.id, asked.seat,
                                  ctx.web.settings.analysis_playouts, SEED))
    return models.AnalysisQueued(analysis=row.id, status=row.status, url=urls.GAME_API(number=number))


def take_table_analysis(ctx: Context, table: TableRow) -> models.AnalysisQueued:
    """Queue the analysis of the person's seat of their card table's game (``table`` is the viewer's own).
    :raises Refused: 409 while the game is not over, or for a table that ended without a game."""
    if table.game_id is None:
        raise Refused(409, "the table has no finished game to analyze" + (
            "" if table.status == "over" else ": ask once its game is over"))
    row = _queue(ctx, NewAnalysis(table.author, "table", table.game_id, table.seat,
                                  ctx.web.settings.analysis_playouts, SEED))
    return models.AnalysisQueued(analysis=row.id, status=row.status, url=urls.TABLE_REPLAY_API(table_id=table.id))


def _queue(ctx: Context, new: NewAnalysis) -> AnalysisRow:
    """Check the author's hourly caps, then queue. :raises Refused: 429 past a cap (with ``Retry-After``), 409 for a
    seat asked for already."""
    settings = ctx.web.settings
    now = datetime.now(UTC)
    asked, used = ctx.store.analysis_usage_times(new.author, stamp(now - HOUR))
    if len(asked) >= settings.analyses_per_hour:
        wait = hour_frees([(when, 1.0) for when in asked], len(asked) - settings.analyses_per_hour + 1, now)
        raise Refused(429, f"analysis quota: {settings.analyses_per_hour} requests per hour; you made {len(asked)} "
                           "in the last hour, try again later", {"Retry-After": wait})
    cpu = sum(seconds for _, seconds in used)
    if cpu >= settings.analysis_cpu_seconds_per_hour:
        wait = hour_frees(used, cpu - settings.analysis_cpu_seconds_per_hour + 1e-6, now)
        raise Refused(429, f"analysis quota: {settings.analysis_cpu_seconds_per_hour:g} CPU seconds per hour; your "
                           f"analyses took {cpu:.1f} in the last hour, try again later", {"Retry-After": wait})
    try:
        return ctx.store.add_analysis(ctx.answers.league.id, new)
    except AnalysisAsked as exc:
        raise Refused(409, f"{exc} (its status is on the replay)") from None
