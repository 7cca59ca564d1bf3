"""The league's board: the tournaments' Bradley-Terry fit (:func:`referee.rating.bradley_terry.rate`) over every
version's games of complete deal groups (a group in flight or void is never rated), refitted on an interval.

One board for every table size, on one scale: the matchmaker draws each group's size at random, so every version
plays every size in about the same proportion and no size biases a comparison between two versions, while one
fit pools all of their games (a board per size would split them, and widen every error bar by about the square
root of the number of sizes).

A refit reads every rated game: 6.6-6.9 s at a million games of 200 versions (``bench/bench_league.py refit``), so
the daemon refits on a thread of its own (:class:`referee.league.course.LeagueCourse`), never in the coordinator's
way, and ``refit_seconds`` need only exceed that time.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from referee.rating.bradley_terry import RatingTable, rate
from referee.rating.leaderboard import render
from referee.rating.outcomes import Outcomes
from referee.results.arena_store import BoardRow
from referee.results.league_store import LeagueStore


@dataclass(frozen=True)
class Board:
    """A fit of the league: each version's rating and standard error (infinite where the games do not pin it),
    its rated games, and how long reading and fitting took."""

    outcomes: Outcomes
    table: RatingTable | None  # None before the first complete group
    ratings: dict[str, tuple[float, float]]
    rated: dict[str, int]
    seconds: float

    def text(self) -> str:
        """The board as ``durak leaderboard`` prints it (retired and quarantined versions marked)."""
        if self.table is None:
            return "the board is empty: no deal group is complete yet"
        return render(self.outcomes, rating=self.table)


def refit(store: LeagueStore, league_id: int) -> Board:
    """Read the rated games and fit them."""
    start = time.perf_counter()
    outcomes = store.outcomes(league_id)
    rated = dict(zip(outcomes.bots, map(int, np.bincount(outcomes.bot, minlength=len(outcomes.bots))), strict=True))
    if not outcomes.n_games:
        return Board(outcomes, None, {}, rated, time.perf_counter() - start)
    table = rate(outcomes)
    ratings = {bot.name: (bot.elo, bot.sd if bot.identified else math.inf) for bot in table.bots}
    return Board(outcomes, table, ratings, rated, time.perf_counter() - start)


#: The rating an entered version is shown (and seated) with before its first rated game: the pool's mean.
UNRATED_ELO = 1500.0


def board_rows(board: Board, fitted: str, entered: list[str] | tuple[str, ...] = ()) -> list[BoardRow]:
    """The board's lines as the web server reads them (:meth:`~referee.results.arena_store.ArenaStore.board`),
    best first; a version not pinned by its games has no standard error. Every ``entered`` version the fit does
    not hold yet follows, unrated: at the pool's mean, no error, no games, in the order entered."""
    rated = [] if board.table is None else board.table.bots
    rows = [BoardRow(version=bot.name, rank=rank, elo=bot.elo, sd=bot.sd if bot.identified else None,
                     games=board.rated.get(bot.name, 0), fitted=fitted) for rank, bot in enumerate(rated, start=1)]
    held = {row.version for row in rows}
    unrated = [name for name in entered if name not in held]
    return rows + [BoardRow(version=name, rank=rank, elo=UNRATED_ELO, sd=None, games=0, fitted=fitted)
                   for rank, name in enumerate(unrated, start=len(rows) + 1)]
