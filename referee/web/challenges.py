"""Taking a challenge (an unrated side request of kind ``challenge``): the asker's own bot and its latest version,
the opponents, the table size, the number of games, then the author's hourly quotas, and
:meth:`~referee.results.side_store.SideStore.add_side`, which queues it for the daemon. Every refusal is one line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from referee.results.league_store import VersionRow
from referee.results.side_store import SideRow
from referee.results.web_queries import WebStore
from referee.web.models import SideIn
from referee.web.settings import WebSettings


class ChallengeRefused(ValueError):
    """A challenge the server refuses: ``status`` is the HTTP status, the message says why in one line."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def take_challenge(store: WebStore, author: str, asked: SideIn, settings: WebSettings) -> SideRow:
    """Check a challenge against the rules and the quotas and queue it. :raises ChallengeRefused: why not."""
    league = store.the_league()
    latest: dict[str, VersionRow] = {}
    for version in store.versions(league.id):  # in the order added: a bot's latest comes last
        latest[version.bot] = version
    mine = _playing(latest, asked.bot)
    if mine.author != author:
        raise ChallengeRefused(f"the bot {asked.bot!r} is another author's: challenge with a bot of yours", 403)
    if asked.bot in asked.opponents or len(set(asked.opponents)) != len(asked.opponents):
        raise ChallengeRefused("name each opponent once, and not your challenging bot", 400)
    seats = (mine.name, *(_playing(latest, bot).name for bot in asked.opponents))
    if len(seats) not in settings.table_sizes:
        sizes = ", ".join(map(str, settings.table_sizes))
        raise ChallengeRefused(f"a table of {len(seats)} (your bot and {len(asked.opponents)} opponent(s)) is not "
                               f"one the league plays ({sizes})", 400)
    if not 1 <= asked.games <= settings.side_games_per_hour:
        raise ChallengeRefused(f"games: ask for 1 to {settings.side_games_per_hour}", 400)
    asked_games, cpu = store.side_usage(author, (datetime.now(UTC) - timedelta(hours=1)).isoformat())
    if asked_games + asked.games > settings.side_games_per_hour:
        raise ChallengeRefused(f"challenge quota: {settings.side_games_per_hour} games per hour; you asked for "
                               f"{asked_games} in the last hour, try again later", 429)
    if cpu >= settings.side_cpu_seconds_per_hour:
        raise ChallengeRefused(f"challenge quota: {settings.side_cpu_seconds_per_hour:g} CPU seconds per hour; "
                               f"your side games took {cpu:.1f} in the last hour, try again later", 429)
    return store.add_side(league.id, "challenge", author, seats, asked.games)


def _playing(latest: dict[str, VersionRow], bot: str) -> VersionRow:
    """``bot``'s latest version, if it plays; :raises ChallengeRefused: no such bot, or its latest does not."""
    if bot not in latest:  # looked up, never used as a path: any name the league holds may be asked for
        raise ChallengeRefused(f"no bot {bot!r} in the league", 404)
    version = latest[bot]
    if not version.active:
        state = "retired" if version.retired is not None else "quarantined"
        raise ChallengeRefused(f"{version.name}, the latest version of {bot!r}, is {state}: it plays no games", 409)
    return version
