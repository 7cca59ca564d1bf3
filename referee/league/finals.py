"""A league's finals (``durak league finals DB --top K``): entries frozen, the board's top K active versions play a
round robin at the largest table size (every set of that many of them a table) on fresh duplicate deals, one deal
per table a round at every cyclic rotation, from the finals' own seed; after each round the finals' games are
fitted, and the finals end once every adjacent pair of the fit is decided (LOS at least 0.99) or the budget of
games is spent. The final board is that fit alone.

The finals hold the league's lock, so no daemon plays meanwhile (when the admin asks for them from the web, the
running daemon stops issuing groups, completes those in flight, lets go of the lock and runs them itself:
:func:`referee.league.daemon.run_league`); once a finals has begun the league takes no new entries and its daemon
does not run again. A finals broken off resumes where it stopped, with the same finalists.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import msgspec

from referee.bots.sandbox.isolation import probe_bwrap
from referee.engine.rng import derive_seed
from referee.league.board import refit
from referee.league.config import load_league
from referee.league.lifecycle import LeagueLock
from referee.league.private import LeaguePrivate, private_config
from referee.rating.bradley_terry import RatingTable, rate
from referee.rating.leaderboard import render
from referee.results.league_store import LeagueStore, VersionRow
from referee.results.record import GameRecord
from referee.results.requests import FEWEST_FINALISTS
from referee.results.rows import TournamentRow
from referee.results.store import Store
from referee.tournament.coordinator import Coordinator, GameSink, RunSummary
from referee.tournament.course import TournamentKey
from referee.tournament.errors import Interrupted, TournamentError
from referee.tournament.executors import make_executor
from referee.tournament.progress import Progress
from referee.tournament.schedule import Slot
from referee.tournament.stop_signals import sigterm_as_interrupt, stop_signal_number
from referee.tournament.worker import BotSpec, Job, WorkerSetup

#: Every adjacent pair of the final board must be this sure (LOS) for the finals to end before their budget.
DECIDED = 0.99


@dataclass(frozen=True)
class FinalsRequest:
    db_path: Path
    top: int
    max_games: int | None = None  # None: the config's [league] finals_games
    jobs: int | None = None
    bots_as_root: bool = False


def decided(table: RatingTable) -> bool:
    """Whether every adjacent pair of the board is decided: LOS of each over the next at least :data:`DECIDED`."""
    return all(bot.los_next is not None and bot.los_next >= DECIDED for bot in table.bots[:-1])


class FinalsCourse:
    """Rounds of the finalists' round robin, a round at a time, until decided or the budget is spent."""

    tournament_key: TournamentKey | None = None

    def __init__(self, store: Store, finals: TournamentRow, finalists: list[VersionRow], size: int,
                 budget: int) -> None:
        self.store, self.finals, self.size, self.budget = store, finals, size, budget
        self.finalists = {v.name: v for v in finalists}
        self.tables = list(itertools.combinations(sorted(self.finalists), size))
        self.stored_keys = store.stored_slots(finals.id)
        self.round = len(self.stored_keys) // (len(self.tables) * size)  # the first round not wholly stored
        self.handed = self.round  # rounds handed to the coordinator
        self.ended = False
        self.games = len(self.stored_keys)

    def round_slots(self, number: int) -> list[Slot]:
        slots = []
        for index, table in enumerate(self.tables):
            seed = derive_seed(self.finals.seed, "finals", number, index)
            deal_key = f"f{number}|t{index}"
            slots += [Slot(key=f"{deal_key}|r{rotation}", table=(*table[rotation:], *table[:rotation]),
                           table_key=",".join(table), deal=number, deal_key=deal_key, deal_seed=seed,
                           rotation=rotation, games=1) for rotation in range(self.size)]
        return [slot for slot in slots if slot.key not in self.stored_keys]

    def begin(self, store: Store, tournament: TournamentRow, stored_games: int,
              stream: TextIO | None) -> tuple[list[Slot], int | None, Progress]:
        return [], None, Progress(self.budget, stored_games, stream=stream)

    def more(self) -> list[Slot]:
        while not self.ended and self.handed == self.round and self.games < self.budget:
            slots = self.round_slots(self.handed)
            self.handed += 1
            if slots:
                return slots
            self._round_done()
        return []

    def on_stored(self, done: list[tuple[Slot, list[GameRecord]]]) -> bool:
        for slot, games in done:
            self.stored_keys.add(slot.key)
            self.games += len(games)
        if all(key in self.stored_keys for key in self.round_keys(self.round)):
            self._round_done()
        return self.ended or self.games >= self.budget

    def round_keys(self, number: int) -> list[str]:
        return [f"f{number}|t{index}|r{rotation}" for index in range(len(self.tables)) for rotation in range(self.size)]

    def _round_done(self) -> None:
        self.round += 1
        outcomes = self.store.outcomes(self.finals.id)
        self.ended = outcomes.n_games > 0 and decided(rate(outcomes))

    def job(self, slot: Slot, disqualified: dict[str, str]) -> Job:
        specs = [BotSpec(name=v.name, argv=v.command, dir=v.dir, env=v.env)
                 for name in slot.table if (v := self.finalists.get(name)) is not None]
        return Job(slot=slot, disqualified=dict(disqualified), bots=specs)


def finalists(rated: Iterable[str], versions: Mapping[str, VersionRow], top: int) -> list[VersionRow]:
    """Who plays the finals: the first ``top`` of the ``rated`` versions (best first: a fit's, never a version
    listed unrated) that are still active. The one rule, for the finals themselves (a fresh fit) and for the web,
    which refuses the admin's request when it cannot begin (the board as last fitted)."""
    return [versions[name] for name in rated if name in versions and versions[name].active][:top]


def finals_problem(chosen: list[VersionRow]) -> str | None:
    """Why finals of ``chosen`` cannot begin (None: they can)."""
    if len(chosen) < FEWEST_FINALISTS:
        return f"the board has {len(chosen)} active rated version(s): finals need {FEWEST_FINALISTS} or more"
    return None


def run_finals(request: FinalsRequest, progress_stream: TextIO | None = None) -> str:
    """Play (or resume) the league's finals; the final board's text.

    :raises TournamentError: no league, a daemon running, fewer than two active versions.
    :raises Interrupted: on Ctrl-C or SIGTERM (the finished games are kept; the same command resumes).
    """
    lock = LeagueLock(request.db_path)
    if not lock.acquire():
        raise TournamentError(f"a league daemon runs on {request.db_path}: stop it before its finals (entries freeze)")
    try:
        with sigterm_as_interrupt(), LeagueStore(request.db_path) as store:
            league = store.league()
            if league is None:
                raise TournamentError(f"{request.db_path} holds no league")
            return _play(store, league, request, progress_stream)
    except KeyboardInterrupt as stop:
        raise Interrupted("interrupted: the finals' finished games are kept; the same command resumes them",
                          stop_signal_number(stop)) from None
    finally:
        lock.release()


def _play(store: LeagueStore, league: TournamentRow, request: FinalsRequest, stream: TextIO | None) -> str:
    private = LeaguePrivate(request.db_path)
    loaded = load_league(league.config_path, text=private_config(private, league), with_bots=False)
    finals, finalists = _finals_of(store, league, request.top, private)
    size = min(max(loaded.config.sizes), len(finalists))
    budget = request.max_games or loaded.settings.finals_games
    course = FinalsCourse(store, finals, finalists, size, budget)
    protected = [str(request.db_path.resolve()) + suffix for suffix in ("", "-wal", "-shm", "-journal")]
    isolation = loaded.table.isolation(protected, allow_root=request.bots_as_root)
    if isolation.level == "bwrap":
        probe_bwrap()
    setup = WorkerSetup(config_path=str(loaded.table.path), sandbox=loaded.config.sandbox, protected=protected,
                        bots_as_root=request.bots_as_root, table=msgspec.structs.replace(loaded.table.config, bots=[]),
                        max_live=loaded.settings.max_live_bots)
    disqualified: dict[str, str] = {}
    pending, _, progress = course.begin(store, finals, course.games, stream)
    summary = RunSummary(finals, budget, course.games)
    coordinator = Coordinator(GameSink(store, finals, {v.name: v.sha256 for v in finalists}), course, summary, progress,
                              loaded.settings.max_failures, disqualified)
    executor = make_executor(request.jobs, None, setup, loaded.table, {}, disqualified)
    try:
        coordinator.play(pending, executor)
    finally:
        executor.shutdown(True)
        progress.finish()
    outcomes = store.outcomes(finals.id)
    if not outcomes.n_games:
        return "the finals played no game"
    table = rate(outcomes)
    state = "every adjacent pair decided" if decided(table) else f"the budget of {budget} games spent"
    return f"finals of {league.name!r} ({len(finalists)} versions, {course.games} games: {state})\n" + \
        render(outcomes, rating=table)


def _finals_of(store: LeagueStore, league: TournamentRow, top: int,
               private: LeaguePrivate) -> tuple[TournamentRow, list[VersionRow]]:
    """The finals to resume (its finalists kept in its row) or new ones: the board's top ``top`` active versions;
    their seed kept in the league's private folder."""
    versions = {v.name: v for v in store.versions(league.id)}
    earlier = store.finals(league)
    if earlier:
        finals = private.with_seed(earlier[-1])
        return finals, [versions[name] for name in json.loads(finals.config)["finalists"]]
    board = refit(store, league.id)
    chosen = finalists([bot.name for bot in board.table.bots] if board.table is not None else [], versions, top)
    problem = finals_problem(chosen)
    if problem is not None:
        raise TournamentError(problem)
    finals = store.create_finals(league, f"{league.name}: finals", 0,
                                 json.dumps({"finalists": [v.name for v in chosen]}))
    return private.keep_new_seed(finals), chosen
