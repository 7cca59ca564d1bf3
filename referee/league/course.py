"""What a league plays: deal groups issued one by one by the matchmaker, handed to the tournament's coordinator as
slots (:class:`~referee.tournament.course.Course`), with the league's housekeeping between batches.

Between batches (each time the coordinator asks for more): the pending lifecycle requests are carried out
(:mod:`.lifecycle`), the board is refitted when its interval is up (and as soon as the first group is complete), and
groups that can no longer complete (one of their versions quarantined meanwhile: its seats would forfeit) are void.
A version retired (by ``retire`` or an ``update``) is seated in no new group, but plays out the groups it sits in:
its process is as good as before, so they complete and are rated, and only then do its seats forfeit and its
processes stop. A group is stored when it is issued, before any of its games starts, so a restart completes it
first; its games are stored one by one, and it is complete, and rated, once all k are.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from referee.background import as_background
from referee.league.board import Board, Ledger, board_rows
from referee.league.config import LoadedLeague
from referee.league.lifecycle import Change, Lifecycle
from referee.league.matchmaker import finish, issue, next_group, rerate, with_versions
from referee.league.side import SideQueue, is_side_deal
from referee.league.state import as_row, group_of, group_slots, rebuild_state, version_state
from referee.results.arena_store import ArenaStore
from referee.results.league_store import SUMMARIES_SCHEMA, LeagueStore, RequestRow, VersionRow
from referee.results.record import GameRecord
from referee.results.rows import TournamentRow
from referee.results.stamps import stamp
from referee.results.store import Store
from referee.tournament.course import TournamentKey
from referee.tournament.progress import Progress
from referee.tournament.schedule import Slot
from referee.tournament.worker import BotSpec, Job

#: Seconds between two looks at the lifecycle requests (each a query): bots come and go within this.
REQUEST_INTERVAL = 0.5


class LeagueProgress(Progress):
    """The daemon's line: games stored, the rate, the versions playing, the last refit."""

    def __init__(self, done: int, stream: TextIO | None) -> None:
        super().__init__(1 << 62, done, stream)
        self.active = 0  # kept by the course as versions come and go, not only at a refit
        self.refit = "no refit yet"

    def line(self, now: float | None = None) -> str:
        elapsed = (now or time.monotonic()) - self._start
        rate = (self.done - self._start_done) / elapsed if elapsed > 0 else 0.0
        return f"league: {self.done} games, {rate:,.1f} games/s, {self.active} versions active, {self.refit}"


class LeagueCourse:
    """The coordinator's course of a league (open-ended: :meth:`more` issues the next group, or nothing for now)."""

    tournament_key: TournamentKey | None = None  # the daemon opens its league row itself

    def __init__(self, store: ArenaStore, league: TournamentRow, loaded: LoadedLeague, lifecycle: Lifecycle,
                 disqualified: dict[str, str], *, clock: Callable[[], float] = time.monotonic) -> None:
        self.store, self.league, self.loaded, self.lifecycle = store, league, loaded, lifecycle
        self.disqualified = disqualified  # the coordinator's: versions whose seats forfeit without a process
        self.clock = clock
        self.versions = {v.name: v for v in store.versions(league.id)}
        #: The complete groups' summaries read so far: a refit reads only the new ones (:mod:`.board`).
        self.ledger = Ledger(league.id)
        if store.schema_version >= SUMMARIES_SCHEMA:
            store.fill_summaries(league.id)  # groups completed before their summaries were kept: once, in chunks
        store.thin_history(league.id)  # a rating history kept whole before its points were thinned: once
        self.board = self.ledger.refit(store)
        self.state = rebuild_state(league.seed, list(self.versions.values()), store.groups(league.id),
                                   self.board.ratings, self.board.rated, loaded.match_settings())
        self.open = {group.number: group for group in self.state.in_flight}
        self.stored = {number: store.group_games(league.id, number) for number in self.open}
        for number in list(self.open):  # a daemon killed between storing a group's last game and closing the
            self._complete_if_stored(number)  # group left it open with nothing to play: closed here, not held for ever
        self.progress: LeagueProgress | None = None
        #: Called with a version reinstated: the coordinator forgets its run of failed games.
        self.on_reinstated: Callable[[str], None] = lambda name: None
        self.files = {v.name: v.sha256 for v in self.versions.values()}  # the sink's: each game's bots' digests
        self._next_requests = self._next_refit = 0.0
        self._printed = False  # whether the board has been printed
        self._saved: tuple[int, frozenset[str]] | None = None  # the stored board's rated games and versions
        #: Retired versions still seated in open groups, and why: they play those out, then their seats forfeit.
        self.retiring: dict[str, str] = {}
        self._refitting: _Refit | None = None
        self.side = SideQueue(store, league, loaded)
        #: The admin's request for the finals, once seen: no group or side game is handed out after it.
        self.finals: RequestRow | None = None
        for version in self.versions.values():
            if not version.active:
                seated = any(version.name in group.table for group in self.open.values())
                stops = self.retiring if version.retired is not None and seated else self.disqualified
                stops[version.name] = version.state()

    def _complete_if_stored(self, number: int) -> bool:
        """Close the open group ``number`` as complete if every one of its games is stored; whether it was. (One
        left open would hold its versions' seats in flight, and the finals, which wait for the groups in flight.)"""
        group = self.open[number]
        if self.stored[number] < group.size:
            return False
        self.store.close_group(self.league.id, number, "complete")
        self.state = finish(self.state, group)
        del self.open[number], self.stored[number]
        return True

    # -- the coordinator's course ------------------------------------------------------

    def begin(self, store: Store, tournament: TournamentRow, stored_games: int,
              stream: TextIO | None) -> tuple[list[Slot], int | None, Progress]:
        self.progress = LeagueProgress(stored_games, stream)
        self._void_stopped()
        self._count_active()
        return self.resumed(), None, self.progress

    def resumed(self) -> list[Slot]:
        """The unstored games of the groups in flight (after a restart: what the last run left)."""
        stored = self.store.stored_slots(self.league.id)
        return [slot for number in sorted(self.open) for slot in group_slots(self.open[number])
                if slot.key not in stored]

    def more(self) -> list[Slot]:
        """The league's next group, and a side game after it if none is in flight (:mod:`.side`: low priority);
        nothing once the finals are asked for (the groups in flight are completed first)."""
        self.housekeeping()
        if self.finals is not None:
            return []
        slots: list[Slot] = []
        settings = self.loaded.match_settings()
        group = next_group(self.state, settings)
        if group is not None:
            self.store.issue_group(self.league.id, as_row(group))  # before any of its games starts
            self.state = issue(self.state, group, group.number, settings)  # its number: as a restart replays it
            self.open[group.number] = group
            self.stored[group.number] = 0
            slots = group_slots(group)
        return slots + self.side.more(self.versions, self.disqualified)

    def tournament_of(self, slot: Slot) -> int:
        """The tournament row a finished slot is stored in: the league's, or a side request's own."""
        return self.side.tournament_of(slot) if is_side_deal(slot.deal_key) else self.league.id

    def on_stored(self, done: list[tuple[Slot, list[GameRecord]]]) -> bool:
        for slot, games in done:
            if is_side_deal(slot.deal_key):
                self.side.on_stored(slot)
                continue
            number = group_of(slot)
            if number not in self.open:
                continue  # a game of a group made void meanwhile: kept, never rated
            self.stored[number] += len(games)
            if self._complete_if_stored(number) and self.board.table is None:
                self._next_refit = 0.0  # the first complete group: on the board at the next look, not in 30 s
        self._release_retiring()
        return False

    def job(self, slot: Slot, disqualified: dict[str, str]) -> Job:
        """The slot, the versions that forfeit, how to start the table's versions (from their snapshots), and
        which versions are gone (a worker stops their processes)."""
        specs = [BotSpec(name=v.name, argv=v.command, dir=v.dir, env=v.env)
                 for name in slot.table if (v := self.versions.get(name)) is not None]
        return Job(slot=slot, disqualified=dict(disqualified), bots=specs, gone=sorted(disqualified))

    # -- between batches ----------------------------------------------------------------

    def housekeeping(self, *, force: bool = False) -> list[Change]:
        """Carry out the pending requests and refit the board, each when its interval is up (or ``force``)."""
        now = self.clock()
        changes: list[Change] = []
        if force or now >= self._next_requests:
            self._next_requests = now + REQUEST_INTERVAL
            changes = self.lifecycle.apply()
            for change in changes:
                self._take(change)
            if self.finals is None:
                self.finals = next((r for r in self.store.pending_requests(self.league.id) if r.kind == "finals"),
                                   None)
                if self.finals is not None and self.progress is not None:
                    self.progress.note(f"league: request {self.finals.id} (finals): no new group; the finals begin "
                                       "once the groups in flight are complete")
        if self._refitting is not None and self._refitting.done.is_set():
            self.take_board(self._refitting.board())
            self._refitting = None
        if force:
            self.take_board(self.ledger.refit(self.store))
            self._next_refit = now + self.loaded.settings.refit_seconds
        elif now >= self._next_refit and self._refitting is None:
            self._next_refit = now + self.loaded.settings.refit_seconds
            self._refitting = _Refit(self.store.path, self.ledger)
        return changes

    def take_board(self, board: Board, *, quiet: bool = False) -> Board:
        """Seat by a new board's ratings; print it when games were rated since it was last printed (unless
        ``quiet``: the refit at shutdown), and store it for the web server."""
        printed = self.board.n_games if self._printed else -1
        self._printed = True
        self.board = board
        self._save_board()
        self.state = rerate(self.state, self.board.ratings)
        self.state = replace(self.state, versions=tuple(replace(v, games=self.board.rated.get(v.id, 0))
                                                        for v in self.state.versions))
        if self.progress is not None:
            self._count_active()
            self.progress.refit = (f"last refit {time.strftime('%H:%M:%S')} ({self.board.seconds:.2f} s, "
                                   f"{self.board.n_games} rated games)")
            if self.board.n_games != printed and not quiet:
                self.progress.note(self.board.text())
        return self.board

    def final_refit(self) -> None:
        """Refit now and store the board (the daemon stops): the web's board is then ``durak leaderboard``'s."""
        self.take_board(self.ledger.refit(self.store), quiet=True)

    def _save_board(self) -> None:
        """Store the board for the web server (it never refits) when its rated games or the versions entered
        changed: every entered version has a row, the unrated ones after the rated (no error, no games)."""
        saved = (self.board.n_games, frozenset(self.versions))
        if saved != self._saved:
            self._saved = saved
            self.store.save_board(self.league.id, board_rows(self.board, stamp(), list(self.versions)))

    def _count_active(self) -> None:
        if self.progress is not None:
            self.progress.active = sum(v.active for v in self.state.versions)

    def quarantine(self, name: str, reason: str) -> None:
        """A version that lost too many games in a row by a verdict gets no new games; its open groups are void."""
        self.store.set_version(self.league.id, name, quarantined=reason)
        self._stop(name, replace(self.versions[name], quarantined=reason).state())

    def _take(self, change: Change) -> None:
        if self.progress is not None:
            self.progress.note(f"league: request {change.request.id} ({change.request.kind} {change.request.bot}): "
                               f"{change.result}")
        if change.added is not None:
            self._learn(change.added)
            self._save_board()  # listed on the web's board at once, unrated
        states = {v.name: v.state() for v in self.store.versions(self.league.id)} if change.stopped else {}
        for name in change.stopped:
            self._stop(name, states.get(name, "retired"))
        if change.reinstated is not None:
            self._learn(next(v for v in self.store.versions(self.league.id) if v.name == change.reinstated))
            self.disqualified.pop(change.reinstated, None)
            self.retiring.pop(change.reinstated, None)
            self.on_reinstated(change.reinstated)
            self._count_active()

    def _learn(self, version: VersionRow) -> None:
        self.versions[version.name] = version
        self.files[version.name] = version.sha256
        old = next((v for v in self.state.versions if v.id == version.name), None)
        fresh = version_state(version, rating=self.board.ratings.get(version.name),
                              games=self.board.rated.get(version.name, 0))
        self.state = with_versions(self.state, fresh if old is None else replace(old, active=version.active))
        self._count_active()

    def _stop(self, name: str, why: str) -> None:
        """No new group for ``name``. A retired version plays out its open groups (:attr:`retiring`); any other
        stop voids them at once (its seats would forfeit)."""
        version = next((v for v in self.state.versions if v.id == name), None)
        if version is not None:
            self.state = with_versions(self.state, replace(version, active=False))
        if why == "retired" and any(name in group.table for group in self.open.values()):
            self.retiring[name] = why
        else:
            self.retiring.pop(name, None)
            self.disqualified[name] = why
        self._void_stopped()
        self._release_retiring()
        self.side.stop(name, why)
        self._count_active()

    def _release_retiring(self) -> None:
        """A retired version whose open groups are all closed: its seats forfeit from now, its processes stop."""
        for name, why in list(self.retiring.items()):
            if not any(name in group.table for group in self.open.values()):
                del self.retiring[name]
                self.disqualified[name] = why

    def _void_stopped(self) -> None:
        """Make void every open group that seats a version no longer playing."""
        for number, group in list(self.open.items()):
            stopped = [name for name in group.table if name in self.disqualified]
            if stopped:
                self.store.close_group(self.league.id, number, "void", f"{stopped[0]}: {self.disqualified[stopped[0]]}")
                self.state = finish(self.state, group, games=0)
                del self.open[number], self.stored[number]


class _Refit:
    """A refit on a thread of its own, over a connection of its own (the database is in WAL mode: it reads while the
    coordinator stores): it reads only the groups completed since the last refit, each read a short transaction, but
    its fit's algebra over a thousand versions still takes a fraction of a second the coordinator need not wait. The
    thread runs at the lowest CPU priority (:func:`~referee.background.as_background`): the games' moves (timed) and
    the web's requests come first, and a board a few seconds later costs nobody anything."""

    def __init__(self, path: Path, ledger: Ledger) -> None:
        self.done = threading.Event()
        self._board: Board | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, args=(path, ledger), name="league refit", daemon=True).start()

    def _run(self, path: Path, ledger: Ledger) -> None:
        as_background()
        try:
            with LeagueStore(path, create=False) as reader:
                self._board = ledger.refit(reader)
        except BaseException as error:  # raised where the board is taken
            self._error = error
        finally:
            self.done.set()

    def board(self) -> Board:
        if self._error is not None:
            raise self._error
        assert self._board is not None
        return self._board

