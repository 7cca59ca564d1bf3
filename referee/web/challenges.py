"""Taking a challenge (an unrated side request of kind ``challenge``): the asker's own bot and its latest version,
the opponents, the table size, the number of games, then the author's hourly quotas, and
:meth:`~referee.results.side_store.SideStore.add_side`, which queues it for the daemon. Every refusal is one line."""

from __future__ import annotations

from datetime import UTC, datetime

from referee.results.league_store import VersionRow
from referee.results.side_store import SideRow
from referee.results.stamps import stamp
from referee.results.web_queries import WebStore
from referee.web.limits import HOUR, hour_frees
from referee.web.models import SideIn
from referee.web.refusals import Refused
from referee.web.settings import WebSettings


def take_challenge(store: WebStore, author: str, asked: SideIn, settings: WebSettings) -> SideRow:
    """Check a challenge against the rules and the quotas and queue it. :raises Refused: why not."""
    league = store.the_league()
    latest: dict[str, VersionRow] = {}
    for version in store.versions(league.id):  # in the order added: a bot's latest comes last
        latest[version.bot] = version
    mine = _playing(latest, asked.bot)
    if mine.author != author:
        raise Refused(403, f"the bot {asked.bot!r} is another author's: challenge with a bot of yours")
    if asked.bot in asked.opponents or len(set(asked.opponents)) != len(asked.opponents):
        raise Refused(400, "name each opponent once, and not your challenging bot")
    seats = (mine.name, *(_playing(latest, bot).name for bot in asked.opponents))
    if len(seats) not in settings.table_sizes:
        sizes = ", ".join(map(str, settings.table_sizes))
        raise Refused(400, f"a table of {len(seats)} (your bot and {len(asked.opponents)} opponent(s)) is not "
                           f"one the league plays ({sizes})")
    if not 1 <= asked.games <= settings.side_games_per_hour:
        raise Refused(400, f"games: ask for 1 to {settings.side_games_per_hour}")
    now = datetime.now(UTC)
    asked_before, played = store.side_usage_times(author, stamp(now - HOUR))
    asked_games, cpu = sum(games for _, games in asked_before), sum(seconds for _, seconds in played)
    if asked_games + asked.games > settings.side_games_per_hour:
        wait = hour_frees(asked_before, asked_games + asked.games - settings.side_games_per_hour, now)
        raise Refused(429, f"challenge quota: {settings.side_games_per_hour} games per hour; you asked for "
                           f"{asked_games} in the last hour, try again later", {"Retry-After": wait})
    if cpu >= settings.side_cpu_seconds_per_hour:
        # under the quota once strictly below it: more than the excess must leave the hour
        wait = hour_frees(played, cpu - settings.side_cpu_seconds_per_hour + 1e-6, now)
        raise Refused(429, f"challenge quota: {settings.side_cpu_seconds_per_hour:g} CPU seconds per hour; "
                           f"your side games took {cpu:.1f} in the last hour, try again later", {"Retry-After": wait})
    return store.add_side(league.id, "challenge", author, seats, asked.games)


def _playing(latest: dict[str, VersionRow], bot: str) -> VersionRow:
    """``bot``'s latest version, if it plays; :raises Refused: no such bot, or its latest does not."""
    if bot not in latest:  # looked up, never used as a path: any name the league holds may be asked for
        raise Refused(404, f"no bot {bot!r} in the league")
    version = latest[bot]
    if not version.active:
        raise Refused(409, f"{version.name}, the latest version of {bot!r}, is {version.state(why=False)}: it plays "
                      "no games")
    return version
