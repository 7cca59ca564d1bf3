"""The coordinator's loop: submit batches of slots to an executor, store each finished slot once, and disqualify
a bot that keeps losing by a verdict. This process is the database's only writer.

Words: a slot is *waiting* (not submitted yet), *in flight* (submitted, not finished) or *stored* (in the
database, committed with its batch in one transaction); a deal is in flight while any of its slots is.
"""

from __future__ import annotations

import sys
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field

from protocol.records import Verdict
from referee.results.record import GameRecord
from referee.results.replay import replay_lines
from referee.results.store import Store, StoredGame, TournamentRow
from referee.tournament.course import Course
from referee.tournament.executors import SlotExecutor
from referee.tournament.progress import Progress
from referee.tournament.schedule import Slot
from referee.tournament.stop_signals import deferred_stop_signals, stop_name
from referee.tournament.worker import SlotDone


@dataclass
class RunSummary:
    tournament: TournamentRow
    total_games: int
    stored_before: int
    played: int = 0
    disqualified: dict[str, str] = field(default_factory=dict)  # bot -> why
    superseded: int = 0  # stored games moved to history by --changed-bots replay


@dataclass(frozen=True)
class GameSink:
    """Where finished games go: the store, the tournament row and each bot's files digest (kept per game)."""

    store: Store
    tournament: TournamentRow
    bot_files: dict[str, str]

    def save(self, done: list[tuple[Slot, list[GameRecord]]]) -> list[bool]:
        """Store ``done``'s slots in one transaction; for each, whether it is new (not stored already)."""
        rows = [[game_row(slot, i, record, self.bot_files) for i, record in enumerate(games)] for slot, games in done]
        return self.store.save_slots(self.tournament.id, rows)

    def disqualify(self, name: str, reason: str) -> None:
        self.store.disqualify(self.tournament.id, name, reason)


class Coordinator:
    """Feeds batches of slots to the executor, stores each finished slot once, tracks failure streaks.

    ``disqualified`` (bot -> why) is the run's: bots disqualified as it goes are added to it."""

    def __init__(self, sink: GameSink, course: Course, summary: RunSummary, progress: Progress,
                 max_failures: int, disqualified: dict[str, str]) -> None:
        self.sink = sink
        self.course = course
        self.summary = summary
        self.progress = progress
        self.max_failures = max_failures
        self.disqualified = disqualified
        self.streaks: dict[str, list[Verdict]] = {}

    def play(self, pending: list[Slot], executor: SlotExecutor) -> bool:
        """Play ``pending`` and whatever the course adds (:meth:`Course.more`) until there is no more or the course
        ends the run; True when it ended it (the batches still in flight are to be abandoned)."""
        waiting = deque(pending)
        in_flight: dict[Future[list[SlotDone]], list[Slot]] = {}
        deals_in_flight: set[str] = set()
        slots = {slot.key: slot for slot in pending}
        # games not submitted yet; an open-ended course (no total) does not know: full batches then
        left = sum(slot.games for slot in pending) if self.summary.total_games else sys.maxsize
        try:
            with deferred_stop_signals() as raise_if_stopped:  # raised at a safe point, not inside a lock
                while True:
                    raise_if_stopped()
                    self._top_up(waiting, slots, deals_in_flight, executor.capacity)
                    if not (waiting or in_flight):
                        return False
                    while len(in_flight) < executor.capacity and (batch := _next_batch(waiting, deals_in_flight,
                                                                                       _share(left, executor))):
                        jobs = [self.course.job(slot, self.disqualified) for slot in batch]
                        in_flight[executor.submit(jobs)] = batch
                        deals_in_flight.update(slot.deal_key for slot in batch)
                        left -= sum(slot.games for slot in batch)
                    finished, _ = wait(in_flight, timeout=0.2, return_when=FIRST_COMPLETED)  # Ctrl-C seen in 0.2 s
                    for future in finished:
                        deals_in_flight.difference_update(slot.deal_key for slot in in_flight.pop(future))
                        if self.store_slots([(slots[done.slot_key], done.games) for done in _slots_done(future)]):
                            return True
        except KeyboardInterrupt as stop:
            what = stop_name(stop)
            kept = self.summary.stored_before + self.summary.played
            abandoned = sum(slot.games for batch in in_flight.values() for slot in batch)
            self.progress.note(f"durak: {what}: stopping now; the {abandoned} game(s) in flight are abandoned (not "
                               f"stored), the {kept} finished are kept ({what} again: stop without cleaning up)")
            raise

    def _top_up(self, waiting: deque[Slot], slots: dict[str, Slot], deals_in_flight: set[str], capacity: int) -> None:
        """Ask the course for more slots until enough deals wait to fill every worker (a deal's slots are played
        one at a time)."""
        while not _deals_ready(waiting, deals_in_flight, capacity) and (more := self.course.more()):
            waiting.extend(more)
            slots.update((slot.key, slot) for slot in more)

    def store_slots(self, done: list[tuple[Slot, list[GameRecord]]]) -> bool:
        """Store a finished batch's slots in one transaction; a slot stored already (a batch that a cluster
        played again) is counted once. True: the course ends the run."""
        new_flags = self.sink.save(done)
        ended = self.course.on_stored(done)  # before the progress is drawn: an SPRT's line shows its new state
        for (_, games), new in zip(done, new_flags, strict=True):
            if not new:
                continue
            self.summary.played += len(games)
            self.progress.advance(len(games))
            for name, reason in self.newly_disqualified(games):
                self.disqualified[name] = reason
                self.sink.disqualify(name, reason)
        return ended

    def newly_disqualified(self, games: list[GameRecord]) -> list[tuple[str, str]]:
        """Update each bot's run of games lost by a verdict; the bots that just reached ``max_failures``,
        with the reason."""
        limit = self.max_failures
        newly: list[tuple[str, str]] = []
        for record in games:
            failed = {v.bot: v for v in record.verdicts if v.kind != "disqualified"}
            for name in record.names:
                streak = self.streaks.setdefault(name, [])
                if name in failed:
                    streak.append(failed[name])
                else:
                    streak.clear()
                if len(streak) >= limit and name not in self.disqualified and name not in dict(newly):
                    last = streak[-1]
                    newly.append((name, f"lost {limit} games in a row by a verdict (the last: {last.kind}: "
                                        f"{last.reason})"))
        return newly


def game_row(slot: Slot, index: int, record: GameRecord, files: dict[str, str]) -> StoredGame:
    """Game ``index`` of ``slot`` as the store keeps it; ``files``: each bot's files digest."""
    return StoredGame(slot_key=slot.key, game_index=index, deal_seed=slot.deal_seed, rotation=slot.rotation,
                      record=record.to_result_record(), replay=replay_lines(record), stderr=record.stderr,
                      move_us=record.move_us, bot_files=[files.get(name, "") for name in record.names])


def _slots_done(future: Future[list[SlotDone]]) -> list[SlotDone]:
    return future.result()  # a WorkerFailed propagates as itself: the CLI's exit code for a worker that died


def _deals_ready(waiting: deque[Slot], deals_in_flight: set[str], enough: int) -> bool:
    """Whether ``enough`` deals not in flight wait to be played. It looks only as far as it must (the waiting
    slots of a round robin are its whole schedule: counting them all before every batch made a long run
    quadratic)."""
    ready: set[str] = set()
    for slot in waiting:
        if slot.deal_key not in deals_in_flight:
            ready.add(slot.deal_key)
            if len(ready) >= enough:
                return True
    return False


def _share(left: int, executor: SlotExecutor) -> int:
    """The games of the next batch: the executor's batch size, less towards the end of the run (a fair share of
    what is left for each batch in flight), so that the last batches end together."""
    return max(1, min(executor.batch_games, -(-left // executor.capacity)))


def _next_batch(waiting: deque[Slot], deals_in_flight: set[str], games: int) -> list[Slot]:
    """Slots for one worker to play in order, holding at least ``games`` games (or all that can go now): none
    of a deal in flight elsewhere. A worker plays its batch one slot at a time, so two rotations of one deal
    never run at once."""
    batch: list[Slot] = []
    held = 0
    while held < games and (slot := _next_of_another_deal(waiting, deals_in_flight)):
        batch.append(slot)
        held += slot.games
    return batch


def _next_of_another_deal(waiting: deque[Slot], deals_in_flight: set[str]) -> Slot | None:
    """Take the first waiting slot whose deal is not in flight: two rotations of one deal never run at once,
    so processes of one bot in different seats of a deal cannot tell each other hands over any channel that
    needs both running (timing, shared caches, futexes), whatever the sandbox leaves open."""
    for index, slot in enumerate(waiting):
        if slot.deal_key not in deals_in_flight:
            del waiting[index]
            return slot
    return None
