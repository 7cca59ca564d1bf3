"""Taking an upload: the bot name, who owns it, the author's quotas (bot names, uploads per hour, bytes kept),
then :meth:`ArenaStore.add_upload`, which queues the daemon's request. The archive itself is the daemon's to read."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from referee.league.names import name_problem
from referee.results.arena_store import UploadRow
from referee.results.stamps import stamp
from referee.results.web_queries import WebStore
from referee.web.refusals import Refused
from referee.web.settings import WebSettings


def take_upload(store: WebStore, author: str, bot: str, archive: bytes, settings: WebSettings) -> UploadRow:
    """Check an upload against the rules and quotas and store it. :raises Refused: why not (its status, one line)."""
    if (problem := name_problem(bot)) is not None:
        raise Refused(400, problem)
    if not archive:
        raise Refused(400, "an empty archive")
    league = store.the_league()
    _check_bot_name(store, league.id, author, bot, settings.max_bots)
    recent, kept = store.upload_usage(author, stamp(datetime.now(UTC) - timedelta(hours=1)))
    if recent >= settings.uploads_per_hour:
        raise Refused(429, f"upload quota: {settings.uploads_per_hour} uploads per hour, try again later")
    if kept + len(archive) > settings.stored_bytes:
        raise Refused(413, f"storage quota: your archives would take {kept + len(archive)} bytes, more than "
                            f"the {settings.stored_bytes} allowed")
    return store.add_upload(league.id, author, bot, archive, hashlib.sha256(archive).hexdigest())


def _check_bot_name(store: WebStore, league_id: int, author: str, bot: str, max_bots: int) -> None:
    """A bot name is the author's if it is theirs already, or new and within their count; never another's."""
    owners = {v.bot: v.author for v in store.versions(league_id)}
    for upload in store.uploads(league_id, limit=10_000):  # names asked for, not yet versions
        if upload.status != "refused":
            owners.setdefault(upload.bot, upload.author)
    if owners.get(bot, author) != author:
        raise Refused(403, f"the bot name {bot!r} belongs to another author")
    theirs = {name for name, owner in owners.items() if owner == author}
    if bot not in theirs and len(theirs) >= max_bots:
        raise Refused(403, f"bot quota: you have {len(theirs)} bots, the most allowed is {max_bots}")
