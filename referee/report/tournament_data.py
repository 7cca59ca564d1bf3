"""A tournament's report data, read from its database: the header, the leaderboard (the very JSON
``durak leaderboard --format json`` prints), head to head, how the ratings settled, the games, and each
shown game's viewer data.

The tournament seed is never read into it. The leaderboard is ``durak leaderboard``'s, over every stored game;
a game is shown (listed, replayable) only once every seat
rotation of its deal is stored: a replay of rotation 0 would tell the deck of rotation 1, still in play.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

from protocol.records import ResultRecord
from protocol.rules import rules_from_options
from referee import __version__
from referee.leaderboard import build_meta, build_rows, format_json
from referee.outcomes import Outcomes
from referee.ratings import Mode, rate
from referee.report.game_data import game_data
from referee.store import Store
from referee.tournament.config import TournamentConfig
from referee.tournament.schedule import rotation_count

#: Checkpoints of the ratings' history (each one a fit over the games stored up to it).
HISTORY_POINTS = 24


class ReportError(ValueError):
    """A database that holds no tournament to report."""


@dataclass(frozen=True)
class ReportData:
    page: dict[str, Any]  # embedded once in the page
    shown: list[int]  # the ids of the games it shows, in the order stored


def report_data(store: Store, tournament: int | None = None, *, mode: Mode = "fool") -> ReportData:
    """Everything the report shows of ``tournament`` (default: the active one)."""
    row = store.tournament_info(tournament)
    if row is None:
        raise ReportError(f"{str(store.path)!r} holds no tournament" if tournament is None
                          else f"{str(store.path)!r} holds no tournament {tournament}")
    tournament_id, name, created, config_text = row
    config = _config(config_text)
    outcomes = store.outcomes(tournament_id)
    per_deal = rotation_count(config.players, config.rotations) * config.series
    stored = store.game_rows(tournament_id)
    deal_games = Counter(deal for _, deal, _ in stored)
    shown = [(gid, text) for gid, deal, text in stored if deal_games[deal] >= per_deal]
    records = [msgspec.json.decode(text, type=ResultRecord) for _, text in shown]
    bots = store.bots(tournament_id)
    page: dict[str, Any] = {
        "header": _header(name, created, config, bots, len(stored), len(shown)),
        "games": _game_rows(shown, records, sorted(bots)),
        "leaderboard": None,
    }
    if outcomes.n_games:
        rating = rate(outcomes, mode)
        page["leaderboard"] = json.loads(format_json(build_rows(outcomes, rating), build_meta(rating)))
        page["h2h"] = {"bots": [b.name for b in rating.bots], "points": rating.h2h_points.round(3).tolist(),
                       "comparisons": rating.h2h_comparisons.round(3).tolist(), "mode": rating.mode}
        page["history"] = rating_history(outcomes, mode)
    return ReportData(page=page, shown=[gid for gid, _ in shown])


def _config(text: str) -> TournamentConfig:
    try:
        return msgspec.toml.decode(text, type=TournamentConfig)
    except msgspec.DecodeError as exc:
        raise ReportError(f"the stored tournament config does not decode: {exc}") from None


def _header(name: str, created: str, config: TournamentConfig, bots: dict[str, Any], stored: int,
            shown: int) -> dict[str, Any]:
    """What the tournament was: never the seed, nor the bots' commands and environments."""
    rules = rules_from_options(config.variant, dict(config.rules))
    return {
        "name": name, "created": created, "variant": config.variant, "players": config.players,
        "format": config.format, "deals": config.deals, "rotations": config.rotations, "series": config.series,
        "rules": msgspec.to_builtins(rules), "time": msgspec.to_builtins(config.time),
        "referee": __version__, "games": stored, "shown": shown,
        "bots": [{"name": b.name, "sha256": b.sha256, "version": b.version, "disqualified": b.disqualified}
                 for b in sorted(bots.values(), key=lambda b: b.name)],
    }


def _game_rows(shown: list[tuple[int, str]], records: list[ResultRecord], bots: list[str]) -> dict[str, Any]:
    """The games list in columns of bot indexes: id, key, players, fools, end, verdict kinds and offenders."""
    index = {name: i for i, name in enumerate(bots)}
    rows = []
    for (gid, _), record in zip(shown, records, strict=True):
        rows.append([gid, record.game, [index.get(p, -1) for p in record.players],
                     [index.get(f, -1) for f in record.fools], record.end,
                     [[v.kind, index.get(v.bot, -1)] for v in record.verdicts]])
    return {"bots": bots, "columns": ["id", "game", "players", "fools", "end", "verdicts"], "rows": rows}


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


def viewer_games(store: Store, ids: list[int], *, private: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    """The viewer's data of the games ``ids``, all-seeing; bots' stderr only when ``private``."""
    for gid, replay, stderr, strikes in store.replays_by_id(ids):
        yield gid, game_data(replay, stderr if private else (), private=private, game_id=gid, strikes=strikes)

