"""Taking an upload: the bot name, who owns it, the author's quotas (bot names, uploads per hour, bytes kept),
then :meth:`ArenaStore.add_upload`, which queues the daemon's request. The archive itself is the daemon's to read."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

from referee.results.arena_store import UploadRow
from referee.results.web_queries import WebStore
from referee.web.settings import WebSettings

#: A bot's name, as the league's versions take it (``bot@number`` is made from it).
BOT_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,64}")


class UploadRefused(ValueError):
    """An upload the server refuses: ``status`` is the HTTP status, the message says why in one line."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def take_upload(store: WebStore, author: str, bot: str, archive: bytes, settings: WebSettings) -> UploadRow:
    """Check an upload against the rules and quotas and store it. :raises UploadRefused: why not."""
    if not BOT_NAME.fullmatch(bot):
        raise UploadRefused("bad bot name: 1-64 letters, digits and _ . + -", 400)
    if not archive:
        raise UploadRefused("an empty archive", 400)
    league = store.the_league()
    _check_bot_name(store, league.id, author, bot, settings.max_bots)
    recent, kept = store.upload_usage(author, (datetime.now(UTC) - timedelta(hours=1)).isoformat())
    if recent >= settings.uploads_per_hour:
        raise UploadRefused(f"upload quota: {settings.uploads_per_hour} uploads per hour, try again later", 429)
    if kept + len(archive) > settings.stored_bytes:
        raise UploadRefused(f"storage quota: your archives would take {kept + len(archive)} bytes, more than "
                            f"the {settings.stored_bytes} allowed", 413)
    return store.add_upload(league.id, author, bot, archive, hashlib.sha256(archive).hexdigest())


def _check_bot_name(store: WebStore, league_id: int, author: str, bot: str, max_bots: int) -> None:
    """A bot name is the author's if it is theirs already, or new and within their count; never another's."""
    owners = {v.bot: v.author for v in store.versions(league_id)}
    for upload in store.uploads(league_id, limit=10_000):  # names asked for, not yet versions
        if upload.status != "refused":
            owners.setdefault(upload.bot, upload.author)
    if owners.get(bot, author) != author:
        raise UploadRefused(f"the bot name {bot!r} belongs to another author", 403)
    theirs = {name for name, owner in owners.items() if owner == author}
    if bot not in theirs and len(theirs) >= max_bots:
        raise UploadRefused(f"bot quota: you have {len(theirs)} bots, the most allowed is {max_bots}", 403)
