"""A tournament's report data, read from its database: the header, the leaderboard with its head to head and
per-bot statistics (the very document ``durak leaderboard --format json --h2h --stats`` prints), the move-time
distribution, how the ratings settled, the games (``durak games``' numbers), and each shown game's viewer data.

The tournament seed is never put into it. The leaderboard is ``durak leaderboard``'s, over every stored game;
a game is shown (listed, replayable) only once every seat rotation of its deal is stored (of both arms, for an
SPRT's group against a field): a replay of rotation 0 would tell the deck of rotation 1, still in play.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

from protocol.rules import rules_from_options
from referee import __version__
from referee.league.config import LeagueConfig
from referee.rating.bradley_terry import Mode, rate
from referee.rating.leaderboard import Meta, footer, legend_entries, render
from referee.rating.outcomes import Outcomes
from referee.rating.stats import move_time_histogram
from referee.report.game_data import SeatTraces, game_data
from referee.results.deals import games_of_deal
from referee.results.league_store import LeagueStore
from referee.results.sources import database_stats
from referee.results.store import BotRow, Store, StoredGameRow, TournamentRow
from referee.text import visible_data
from referee.tournament.config import TournamentConfig

#: Checkpoints of the ratings' history (each one a fit over the games stored up to it).
HISTORY_POINTS = 24


class ReportError(ValueError):
    """A tournament that cannot be reported: its stored config does not decode."""


@dataclass(frozen=True)
class ReportData:
    page: dict[str, Any]  # embedded once in the page
    shown: list[tuple[int, int]]  # the games it shows, in the order stored: (number as `durak games` has it, id)


def report_data(store: Store, tournament: int | None = None, *, mode: Mode = "fool") -> ReportData:
    """Everything the report shows of ``tournament`` (default: the active one).

    :raises StoreError: no such tournament.
    """
    chosen = store.tournament(tournament)
    league = chosen.kind == "league" and isinstance(store, LeagueStore)
    config = _league_table(chosen.config) if league else _config(chosen.config)
    games = list(store.games(chosen.id))  # `durak games`' query: its numbers, records and move times
    deal_games = Counter(g.record.deal for g in games)
    # a deal's games are known by any one of them (an SPRT's table size and arms are not the config's); a league's
    # games are there only once their group is complete or void
    shown = games if league else [g for g in games if deal_games[g.record.deal] >= games_of_deal(
        g.record.game, len(g.record.players), config.rotations, config.series)]
    bots = _versions(store, chosen.id) if isinstance(store, LeagueStore) and league else store.bots(chosen.id)
    if league:  # its deals: the groups shown
        config = msgspec.structs.replace(config, deals=max(1, len(deal_games)))
    page: dict[str, Any] = {
        "header": _header(chosen, config, bots, len(games), len(shown)),
        "games": _game_rows(shown, sorted(bots)),
        "leaderboard": None,
        "legend": legend_entries(),
    }
    outcomes = store.outcomes(chosen.id)
    if outcomes.n_games:
        stats = database_stats(store, chosen.id, games)
        text = render(outcomes, "json", rating=rate(outcomes, mode), h2h=True, stats=stats)
        page["leaderboard"] = document = json.loads(text)
        page["footer"] = footer(Meta(**document["meta"]), document["disqualified"])
        page["move_times"] = move_time_histogram((g.record, g.move_us) for g in games)
        page["history"] = rating_history(outcomes, mode)
    # every string as the page shows it (bots' names, versions, disqualification reasons): escaped once, here
    return ReportData(page=visible_data(page), shown=[(g.number, g.id) for g in shown])


def _config(text: str) -> TournamentConfig:
    try:
        return msgspec.toml.decode(text, type=TournamentConfig)
    except msgspec.DecodeError as exc:
        raise ReportError(f"the stored tournament config does not decode: {exc}") from None


def _league_table(text: str) -> TournamentConfig:
    """A league's config as the header shows a tournament's: its variant, rules and clock, its largest table, and
    "league" for the format (every group is one deal at every cyclic rotation of its table)."""
    try:
        config = msgspec.toml.decode(text, type=LeagueConfig)
    except msgspec.DecodeError as exc:
        raise ReportError(f"the stored league config does not decode: {exc}") from None
    return TournamentConfig(name=config.name, variant=config.variant, players=max(config.sizes), rules=config.rules,
                            time=config.time, limits=config.limits, bots=[])


def _versions(store: LeagueStore, league_id: int) -> dict[str, BotRow]:
    """A league's versions as the header lists a tournament's bots: each bot's versions, their state and author,
    and the digest of their files (never their commands or environments)."""
    rows = {}
    for v in store.versions(league_id):
        rows[v.name] = BotRow(v.name, [], "", v.sha256, f"{v.state()}; by {v.author}; added {v.added[:19]}",
                              disqualified=not v.active)
    return rows


def _header(tournament: TournamentRow, config: TournamentConfig, bots: dict[str, BotRow], stored: int,
            shown: int) -> dict[str, Any]:
    """What the tournament was: never the seed, nor the bots' commands and environments."""
    rules = rules_from_options(config.variant, dict(config.rules))
    return {
        "id": tournament.id, "name": tournament.name, "created": tournament.created, "variant": config.variant,
        "players": config.players, "format": "league" if tournament.kind == "league" else config.format,
        "deals": config.deals, "rotations": config.rotations,
        "series": config.series, "rules": msgspec.to_builtins(rules), "time": msgspec.to_builtins(config.time),
        "referee": __version__, "games": stored, "shown": shown,
        "bots": [{"name": b.name, "sha256": b.sha256, "files": dict(sorted(b.files.items())), "version": b.version,
                  "disqualified": b.disqualified} for b in sorted(bots.values(), key=lambda b: b.name)],
    }


def _game_rows(shown: list[StoredGameRow], bots: list[str]) -> dict[str, Any]:
    """The games list in columns of bot indexes: number, key, players, fools, end, verdict kinds and offenders."""
    index = {name: i for i, name in enumerate(bots)}
    rows = [[g.number, g.record.game, [index.get(p, -1) for p in g.record.players],
             [index.get(f, -1) for f in g.record.fools], g.record.end,
             [[v.kind, index.get(v.bot, -1)] for v in g.record.verdicts]] for g in shown]
    return {"bots": bots, "columns": ["number", "game", "players", "fools", "end", "verdicts"], "rows": rows}


def rating_history(outcomes: Outcomes, mode: Mode, points: int = HISTORY_POINTS) -> dict[str, Any]:
    """Each bot's Elo fitted on the first n games stored, for ``points`` values of n up to all of them."""
    total = outcomes.n_games
    marks = sorted({max(1, round(total * (k + 1) / points)) for k in range(points)})
    series: dict[str, list[float | None]] = {name: [] for name in outcomes.bots}
    for n in marks:
        try:
            rating = rate(_first_games(outcomes, n), mode)
        except (ArithmeticError, RuntimeError, ValueError):  # too few games to fit yet
            rating = None
        elo = {} if rating is None else {b.name: round(b.elo, 1) for b in rating.bots}
        for name in outcomes.bots:
            series[name].append(elo.get(name))
    return {"games": marks, "elo": series}


def _first_games(outcomes: Outcomes, n: int) -> Outcomes:
    """The first ``n`` games of ``outcomes`` (the seats of a game are stored one after another)."""
    seats = int(np.sum(outcomes.size[:n]))
    return Outcomes(bots=outcomes.bots, clusters=outcomes.clusters, bot=outcomes.bot[:seats],
                    place=outcomes.place[:seats], fool=outcomes.fool[:seats], size=outcomes.size[:n],
                    cluster=outcomes.cluster[:n], drawn=outcomes.drawn[:n], disqualified=outcomes.disqualified)


def viewer_games(store: Store, shown: list[tuple[int, int]], *, private: bool
                 ) -> Iterator[tuple[int, dict[str, Any]]]:
    """The viewer's data of the ``shown`` games ((number, id) pairs), all-seeing, by number; bots' stderr only
    when ``private``."""
    numbers = {gid: number for number, gid in shown}
    for game in store.replays_by_id([gid for _, gid in shown]):
        number = numbers[game.id]
        traces = SeatTraces(game.stderr if private else (), game.record.strikes, game.move_us)
        yield number, game_data(game.replay, traces, private=private, game_id=number)
