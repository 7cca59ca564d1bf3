"""The league's board: the tournaments' Bradley-Terry fit over every version's games of complete deal groups (a group
in flight or void is never rated), refitted on an interval.

One board for every table size, on one scale: the matchmaker gives every version each size in the configured
proportion (within a few groups) and balances whom it meets at each size (:mod:`.matchmaker`), so no size biases a
comparison between two versions, while one fit pools all of their games (a board per size would split them, and
widen every error bar by about the square root of the number of sizes). Where a bot's strength differs by size,
the mix of opponents at each size still adds to the spread of two versions' difference beyond the error bars:
two versions of identical code reached LOS 0.95 in 4.0% of simulated leagues without such a difference, 9.0%
with 100 Elo between sizes (``bench/bench_fairness.py copies``; a board per size, averaged: 5.0%).

A refit reads no game: each complete group's summary is stored when it completes (``league_summaries``), and the
fit of the summaries (:mod:`referee.rating.summaries`) is the fit of the games, error bars included. A
:class:`Ledger` keeps the summaries read so far, so that a refit reads only the groups completed since the last one,
each read a short transaction (the web's reads never hold the write-ahead log long), and starts Newton's iterations
from the last fit's ratings; the pairs' totals are kept as the summaries are read (:class:`Summaries`), and whether
every complete group has its summary is counted again only after a game was deleted. What a refit costs is then the
fit's dense algebra over the versions (a solve per Newton step, the inverse, the sandwich's products over 1,000 x
1,000), its passes over the pairs compared (at most one per pair of versions), and one numpy pass over the groups'
summaries, which the sandwich's errors need (each group's score at the final ratings: no coarser statistic is
exact). At 1,000 versions, in-process: 0.32 s of CPU a refit at 100,000 games and 0.49 s at a million (the pass
over the groups 11 and 92 ms; the games' fit took 86 s). The fit runs on one BLAS thread: numpy's OpenBLAS would
take every core for half again the CPU.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

from threadpoolctl import threadpool_limits

from referee.rating.bradley_terry import RatingTable, rate
from referee.rating.leaderboard import GameStats, build_meta, format_table, game_stats, mark, rows_of
from referee.rating.summaries import Summaries, decode_summaries, summarize
from referee.results.arena_store import BoardRow
from referee.results.league_store import SUMMARIES_SCHEMA, SUMMARY_CHUNK, LeagueStore


@dataclass(frozen=True)
class Board:
    """A fit of the league: each version's rating and standard error (infinite where the games do not pin it),
    its rated games, and how long reading and fitting took."""

    table: RatingTable | None  # None before the first complete group
    ratings: dict[str, tuple[float, float]]
    rated: dict[str, int]
    seconds: float
    n_games: int = 0  # rated games
    stats: dict[str, GameStats] = field(default_factory=dict)  # the board's per-game columns, by version
    disqualified: dict[str, str] = field(default_factory=dict)  # versions that no longer play, and why

    def text(self) -> str:
        """The board as ``durak leaderboard`` prints it (retired and quarantined versions marked)."""
        if self.table is None:
            return "the board is empty: no deal group is complete yet"
        return format_table(rows_of(self.table, self.stats), build_meta(self.table), self.disqualified)


class Ledger:
    """A league's complete groups as read so far (their summaries) and the last fit's ratings: each refit reads only
    the summaries stored since the last one, and starts from the ratings it left. One refit at a time (a lock: the
    daemon's thread and a refit at shutdown may overlap)."""

    def __init__(self, league_id: int) -> None:
        self.league_id = league_id
        self._lock = threading.Lock()
        self._theta: dict[str, float] = {}
        self._forget()

    def _forget(self) -> None:
        """Start over: no summary read yet."""
        self._summaries = Summaries()
        self._last = 0  # the last summary row read
        self._rows = 0  # summary rows read
        # The games' deletions counted (LeagueStore.games_deleted) when the rows read were last found to be every
        # complete group's summary; None: not found so yet.
        self._whole_at: int | None = None

    def refit(self, store: LeagueStore) -> Board:
        """Read what is new and fit every group."""
        with self._lock:
            start = time.perf_counter()
            if store.schema_version < SUMMARIES_SCHEMA:  # a database this reader may not migrate: its games
                return _refit_games(store, self.league_id, start)
            extra = self._catch_up(store)
            # One BLAS thread: with one per core, numpy's OpenBLAS spent 0.48 s of CPU on a 0.24 s refit of 1,000
            # versions against 0.31 on one thread (100,000 games), and took every core from the games and the web.
            with threadpool_limits(1, user_api="blas"):
                fitted = self._summaries.fit(start=self._theta, extra=extra)
            self._theta = fitted.theta
            why = store.disqualified(self.league_id)
            stats = {name: GameStats(*columns, name in why, mark(why[name]) if name in why else "")
                     for name, columns in fitted.columns.items()}
            return _board(fitted.table, stats, why, fitted.n_games, time.perf_counter() - start)

    def _catch_up(self, store: LeagueStore) -> Summaries | None:
        """Read the summaries stored since the last refit: the bulk a chunk per read (each a short transaction of
        its own), the tail in one snapshot. Complete groups with no summary yet (a database of an older schema not
        yet filled: :meth:`~referee.results.league_store.LeagueStore.fill_summaries`) are summarized from their games
        for this fit only, never kept: their summaries are read once stored.

        Whether the rows read are every complete group's summary is counted (the league's groups and summaries: a
        pass over each, 22 ms at a million games) only until it is so, and again after a game was deleted: a group
        completes with its summary in one transaction, so only a deletion can make it untrue again."""
        while self._read_chunk(store) == SUMMARY_CHUNK:
            pass
        with store.snapshot():
            deleted = store.games_deleted()
            counted = None if deleted == self._whole_at else store.summary_counts(self.league_id)
            while self._read_chunk(store) == SUMMARY_CHUNK:
                pass
            if counted is None:
                return None
            complete, stored = counted
            consistent = self._rows == stored
            self._whole_at = deleted if consistent and complete == stored else None
            extra, after = Summaries(), -1  # group numbers start at 0
            while consistent and complete > stored and (batch := store.unsummarized(self.league_id, after)):
                extra.add(summarize(games) for _, games in batch)
                after = batch[-1][0]
        if not consistent:  # rows gone (never, but for a hand-edited database): read them all again
            self._forget()
            return self._catch_up(store)
        return extra if extra.groups else None

    def _read_chunk(self, store: LeagueStore) -> int:
        rows = store.summaries(self.league_id, self._last)
        if rows:
            self._summaries.add(decode_summaries([text for _, text in rows]))
            self._last = rows[-1][0]
            self._rows += len(rows)
        return len(rows)


def refit(store: LeagueStore, league_id: int) -> Board:
    """Fit the league's complete groups (all of their summaries read anew: a daemon keeps a :class:`Ledger`)."""
    return Ledger(league_id).refit(store)


def _refit_games(store: LeagueStore, league_id: int, start: float) -> Board:
    """The fit of the games themselves, for a database of a schema before the summaries."""
    outcomes = store.outcomes(league_id)
    table = rate(outcomes) if outcomes.n_games else None
    return _board(table, game_stats(outcomes), dict(outcomes.disqualified), outcomes.n_games,
                  time.perf_counter() - start)


def _board(table: RatingTable | None, stats: dict[str, GameStats], disqualified: dict[str, str], n_games: int,
           seconds: float) -> Board:
    ratings = {} if table is None else {bot.name: (bot.elo, bot.sd if bot.identified else math.inf)
                                        for bot in table.bots}
    rated = {name: s.games for name, s in stats.items()}
    return Board(table, ratings, rated, seconds, n_games, stats, disqualified)


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
