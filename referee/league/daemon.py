"""The league's daemon (``durak league run``): one long-running process over one league database, the only one that
runs bots and writes games. It plays deal groups through the tournament's coordinator, executors and workers
(and the web arena's card tables, :mod:`referee.league.tables`, and post-game analyses,
:mod:`referee.league.analyses`, in threads beside them) until stopped, and resumes
after Ctrl-C, SIGTERM or kill -9 with nothing lost and nothing played twice (each group is stored when issued, each
game in its own transaction, and no (group, rotation) can be stored twice).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

import msgspec

from referee.bots.sandbox.isolation import Isolation, probe_bwrap
from referee.league.analyses import AnalysisRunner
from referee.league.botstore import SnapshotError, stage_folder, store_root
from referee.league.config import LoadedLeague
from referee.league.course import LeagueCourse
from referee.league.finals import FinalsRequest, run_finals
from referee.league.lifecycle import LeagueLock, Lifecycle
from referee.league.private import LeaguePrivate
from referee.league.side import is_side_deal
from referee.league.tables import TableRunner
from referee.results.arena_store import ArenaStore
from referee.results.league_store import LeagueStore, RequestRow
from referee.results.record import GameRecord
from referee.results.requests import AddBot, AskFinals
from referee.results.rows import TournamentRow
from referee.results.store import DATABASE_SUFFIXES
from referee.text import visible
from referee.tournament.coordinator import Coordinator, GameSink, RunSummary, game_row
from referee.tournament.errors import Interrupted, TournamentError
from referee.tournament.executors import make_executor
from referee.tournament.schedule import Slot
from referee.tournament.stop_signals import sigterm_as_interrupt, stop_name
from referee.tournament.worker import WorkerSetup

#: Seconds the daemon waits, with nothing it can play, before it looks for new versions again.
IDLE_WAIT = 0.5


class LeagueError(TournamentError):
    """A league that cannot run: another daemon holds it, or its database holds a league with other games."""


@dataclass(frozen=True)
class DaemonRequest:
    """Where and how the daemon plays: its database, ``jobs`` workers here (None: one per core) or a Dask
    cluster, and whether bots no unprivileged uid can reach may run as root (trusted bots only)."""

    db_path: Path
    jobs: int | None = None
    cluster: str | None = None
    bots_as_root: bool = False
    #: What runs beside the league while it plays, each made over the database's path (the layers above pass
    #: theirs in: ``durak league run`` the replay views' publisher, :class:`referee.report.publisher.ReplayPublisher`).
    beside: tuple[Callable[[Path], Beside], ...] = ()


class Beside(Protocol):
    """A thread beside the league: started when the league opens, stopped when it stops."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class LeagueSink(GameSink):
    """The coordinator's store of finished games, for a league: a version that loses ``max_failures`` games in a
    row by a verdict is quarantined (not disqualified: it may be reinstated)."""

    course: LeagueCourse

    def save(self, done: list[tuple[Slot, list[GameRecord]]]) -> list[bool]:
        """Store each slot in its own row's games: the league's, or a side request's (never rated)."""
        flags: dict[int, bool] = {}
        by_row: dict[int, list[int]] = {}
        for index, (slot, _) in enumerate(done):
            by_row.setdefault(self.course.tournament_of(slot), []).append(index)
        for row, indices in by_row.items():
            rows = [[game_row(done[i][0], n, record, self.bot_files) for n, record in enumerate(done[i][1])]
                    for i in indices]
            flags.update(zip(indices, self.store.save_slots(row, rows), strict=True))
        return [flags[index] for index in range(len(done))]

    def disqualify(self, name: str, reason: str) -> None:
        self.course.quarantine(name, reason)


class LeagueCoordinator(Coordinator):
    """The coordinator of a league: a run of verdicts is judged on league games only (a side game is unrated, and
    counts for nothing: an author may not get another's version quarantined by challenging it)."""

    def newly_disqualified(self, games: list[GameRecord]) -> list[tuple[str, str]]:
        return super().newly_disqualified([record for record in games if not is_side_deal(record.deal)])


def protected_paths(db_path: Path) -> list[str]:
    """What no bot may see: the database and its journals (the bot store is shown a version at a time)."""
    return [str(db_path.resolve()) + suffix for suffix in DATABASE_SUFFIXES]


def open_league(store: LeagueStore, loaded: LoadedLeague) -> TournamentRow:
    """The database's league, checked against the config (its games' definition may not change; its matchmaking
    settings may, and the config's text is kept), or a new one with a drawn seed and the config's bots asked in
    (each bot's folder copied into the bot store first, as the organizer). The seed and the config's text are kept
    in the league's private folder (:mod:`.private`), out of the web server's reach; the row returned holds the
    seed.

    :raises LeagueError: the database holds a league whose rules, time, limits, pause or restart differ, or a
        tournament; a config bot's folder cannot be copied.
    :raises PrivateError: the private folder is not the daemon's own, or has lost a seed.
    """
    private = LeaguePrivate(store.path)
    league = store.league()
    if league is None:
        if store.active_tournament() is not None:
            raise LeagueError(f"{store.path} holds a tournament, not a league: give the league a database of its own")
        staged = {}
        for bot in loaded.table.bots:  # before the league is made: a folder that cannot be a version makes nothing
            try:
                staged[bot.name] = stage_folder(bot.dir, store_root(store.path))
            except (SnapshotError, OSError) as exc:
                raise LeagueError(f"bot {bot.name!r}: {exc}") from None
        league = private.keep_new_seed(store.create_league(loaded.config.name, str(loaded.table.path), loaded.text,
                                                           loaded.fingerprint(), 0))
        private.keep_config(loaded.text)
        for bot in loaded.table.bots:
            store.add_request(league.id, bot.name, AddBot(staged=staged[bot.name], command=list(bot.argv),
                                                          env=dict(bot.env), author=loaded.authors[bot.name]))
        return league
    if store.finals(league):
        raise LeagueError(f"{store.path}: the finals of league {league.name!r} have begun, so entries are frozen and "
                          "its daemon does not run again (durak league finals resumes them)")
    if league.fingerprint != loaded.fingerprint():
        raise LeagueError(f"{store.path} holds league {league.name!r}, whose games differ from this config's (its "
                          "rules, time, limits, pause or restart changed; the [league] settings and table sizes may "
                          "change): use the config it was started with, or another --db")
    if league.config != loaded.text:
        store.update_config(league.id, loaded.text)
    private.keep_config(loaded.text)
    return private.take_seed_from(store, league)


@dataclass(frozen=True)
class Stopped:
    """The daemon stopped as asked (Ctrl-C, SIGTERM): not an error. ``line`` says what was kept."""

    line: str


def run_league(loaded: LoadedLeague, request: DaemonRequest, progress_stream: TextIO | None = None) -> str | Stopped:
    """Play the league until stopped, or until the admin asks for its finals (a ``finals`` request, from the web):
    then no new group is issued, the groups in flight are completed, the daemon lets go of the league's lock and
    plays the finals (:func:`referee.league.finals.run_finals`, which takes the lock; entries freeze), and returns
    their board's text. Finals that cannot begin (fewer than two active rated versions) are refused, and the league
    plays on. A stop by Ctrl-C or SIGTERM is the normal end of a league's run: once the finished games are stored
    and the board refitted, it returns :class:`Stopped`, saying what was kept.

    :raises LeagueError: another daemon runs it, or the database holds other games.
    :raises Interrupted: on Ctrl-C or SIGTERM while the finals play (as ``durak league finals``).
    :raises StoreError, WorkerFailed, ClusterUnavailable: as a tournament's run.
    """
    while True:
        asked = _run_until_finals(loaded, request, progress_stream)
        if isinstance(asked, Stopped):
            return asked
        text = _finals(request, asked, progress_stream)
        if text is not None:
            return text


def _run_until_finals(loaded: LoadedLeague, request: DaemonRequest,
                      progress_stream: TextIO | None) -> RequestRow | Stopped:
    lock = LeagueLock(request.db_path)
    if not lock.acquire():
        raise LeagueError(f"a league daemon runs on {request.db_path} already (it holds {lock.path})")
    protected = protected_paths(request.db_path)
    isolation = loaded.table.isolation(protected, allow_root=request.bots_as_root)
    if isolation.level == "bwrap":
        probe_bwrap()
    try:
        with sigterm_as_interrupt(), ArenaStore(request.db_path) as store:
            league = open_league(store, loaded)
            tables = TableRunner(request.db_path, loaded, isolation)  # the web's card tables, beside the league
            analyses = AnalysisRunner(request.db_path, loaded.arena)  # and the authors' analyses
            beside: list[Beside] = [tables, analyses, *(make(request.db_path) for make in request.beside)]
            for started in beside:
                started.start()
            try:
                return _play(store, league, loaded, request, progress_stream, isolation)
            finally:
                for started in reversed(beside):
                    started.stop()
    except KeyboardInterrupt as stop:
        return Stopped(f"league stopped ({stop_name(stop)}): the games stored are kept, none twice; the same command "
                       "resumes it")
    finally:
        lock.release()


def _finals(request: DaemonRequest, asked: RequestRow, progress_stream: TextIO | None) -> str | None:
    """Play the finals the admin asked for; their board's text, or None: they cannot begin (the request refused)."""
    asked_for = asked.payload if isinstance(asked.payload, AskFinals) else AskFinals(top=0)
    finals = FinalsRequest(request.db_path, asked_for.top, asked_for.max_games, jobs=request.jobs,
                           bots_as_root=request.bots_as_root)
    try:
        if asked.problem:
            raise TournamentError(asked.problem)
        text = run_finals(finals, progress_stream)
    except Interrupted:
        raise  # the request stays pending; durak league finals resumes the finals
    except TournamentError as exc:
        with LeagueStore(request.db_path) as store:
            store.finish_request(asked.id, "refused", str(exc))
        return None
    with LeagueStore(request.db_path) as store:
        store.finish_request(asked.id, "done", text)
    return text


def _play(store: ArenaStore, league: TournamentRow, loaded: LoadedLeague, request: DaemonRequest,
          progress_stream: TextIO | None, isolation: Isolation) -> RequestRow | Stopped:
    """Play until stopped (Ctrl-C, SIGTERM: :class:`Stopped`, once the board is refitted) or until the finals are
    asked for: that request, once the groups in flight are complete."""
    disqualified: dict[str, str] = {}
    course = LeagueCourse(store, league, loaded, Lifecycle(store, league, loaded, isolation), disqualified)
    stored = store.count_games(league.id)
    pending, _, progress = course.begin(store, league, stored, progress_stream)
    progress.note(f"league {visible(league.name)!r} in {store.path}: {stored} games stored, "
                  f"{sum(v.active for v in course.versions.values())} versions playing, "
                  f"{_in_flight(course)} in flight resumed first ({len(pending)} games to play)")
    summary = RunSummary(league, 0, stored)
    sink = LeagueSink(store, league, course.files, course)
    coordinator = LeagueCoordinator(sink, course, summary, progress, loaded.settings.max_failures, disqualified)

    def forget_failures(name: str) -> None:  # a reinstated version starts afresh: max_failures more to quarantine
        coordinator.streaks.pop(name, None)

    course.on_reinstated = forget_failures
    table = msgspec.structs.replace(loaded.table.config, bots=[])  # a worker learns the bots from its jobs
    setup = WorkerSetup(config_path=str(loaded.table.path), sandbox=loaded.config.sandbox, protected=protected_paths(
        request.db_path), bots_as_root=request.bots_as_root, table=table, max_live=loaded.settings.max_live_bots)
    executor = make_executor(request.jobs, request.cluster or loaded.config.cluster, setup, loaded.table, {},
                             disqualified)
    course.lifecycle.remote_check = executor.check_version  # on a cluster, every worker checks a new version
    try:
        course.housekeeping(force=True)
        while True:
            coordinator.play(pending, executor)
            if course.finals is not None:
                return course.finals
            time.sleep(IDLE_WAIT)  # nothing to play now: fewer than two versions can meet, or every one is busy
            course.housekeeping()
            pending = []
    except KeyboardInterrupt as caught:
        stop = caught
    finally:
        executor.shutdown(True)
        progress.finish()
    refitted = _final_refit(course)
    return Stopped(f"league stopped ({stop_name(stop)}): {progress.done} games stored, none twice; "
                   f"{_in_flight(course)} in flight resume first at the next start (the same command); {refitted}")


def _in_flight(course: LeagueCourse) -> str:
    groups = len(course.open)
    return f"{groups} group{'' if groups == 1 else 's'}"


def _final_refit(course: LeagueCourse) -> str:
    """Refit and store the board at a stop, so that the web's board is the games stored; a second stop skips it."""
    try:
        course.final_refit()
    except KeyboardInterrupt:
        return "the board was not refitted (stopped twice)"
    return f"the board refitted on {course.board.n_games} rated games"
