"""The tournament coordinator: checks the database and the bots, then feeds slots to workers.

Workers (:mod:`referee.tournament.worker`) are child processes that play slots; this process
is the database's only writer and commits each finished slot in one transaction, so a run
killed at any moment loses at most the slots in flight, and resuming plays exactly those.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import msgspec

from referee.bots.cleanup import MAX_SECONDS
from referee.bots.errors import BotError
from referee.bots.isolation import Isolation, probe_bwrap
from referee.bots.launcher import BotCommand, preflight
from referee.bots.limits import ResourceLimits
from referee.bots.process import BotProcess
from referee.bots.session import BotClient
from referee.match import GameRecord
from referee.replay import replay_lines
from referee.store import DATABASE_SUFFIXES, BotRow, Store, StoredGame, TournamentRow
from referee.tournament.config import LoadedConfig, bot_files_sha256, draw_seed
from referee.tournament.progress import Progress
from referee.tournament.schedule import Slot, schedule
from referee.tournament.secret import protected_path, read_seed_file
from referee.tournament.worker import Job, SlotDone, WorkerSetup, bot_command

LOGGER = logging.getLogger("durak")
_NO_LIMITS = ResourceLimits(memory_mb=None, file_size_mb=None, open_files=None)
_WORKER_LINE = 1 << 30  # a slot's records with their replays
_SLOT_DEADLINE = 24 * 3600.0  # a worker always answers; this only bounds a referee bug
_WORKER_CLEANUP = MAX_SECONDS + 10.0  # seconds a worker has to stop its bots and remove their folders at the end


class TournamentError(RuntimeError):
    """The run cannot start or go on (a changed schedule or bot, a failed worker); one line."""


class Interrupted(RuntimeError):
    """Ctrl-C: the finished slots are stored; the message says how to resume."""


@dataclass
class RunSummary:
    tournament: TournamentRow
    total_games: int
    stored_before: int
    played: int = 0
    disqualified: list[str] = field(default_factory=list)


def run_tournament(loaded: LoadedConfig, db_path: Path, jobs: int | None, fresh: bool,
                   progress_stream: TextIO | None = None, *, seed_file: Path | None = None,
                   bots_as_root: bool = False) -> RunSummary:
    """Play every slot of the schedule not yet stored in ``db_path``, in ``jobs`` workers (None: one per core),
    each pinned with the bots of its games to a core of its own.

    A new tournament's seed is ``seed_file``'s (:func:`read_seed_file`), else drawn; it is kept in the
    database only. A stored tournament keeps its seed (``seed_file``, if given, must hold the same).

    :raises TournamentError: the database holds a different schedule, seed or bot (without ``fresh``).
    :raises SeedFileError: ``seed_file`` is not a private file holding a seed.
    :raises Interrupted: on Ctrl-C, after the finished slots are stored.
    :raises StoreError: the database cannot be written (finished slots stay stored).
    """
    seed = read_seed_file(seed_file) if seed_file is not None else None
    protected = [str(db_path.resolve()) + suffix for suffix in DATABASE_SUFFIXES]
    protected += [protected_path(seed_file)] if seed_file is not None else []
    isolation = loaded.isolation(protected, allow_root=bots_as_root)
    if isolation.level == "bwrap":
        probe_bwrap()
    for bot in loaded.bots:
        preflight(bot_command(bot), isolation)
    with Store(db_path) as store:
        tournament = _open_tournament(store, loaded, fresh, seed)
        _check_bots(store, tournament, loaded, isolation)
        slots = schedule(loaded.config, tournament.seed)
        stored = store.stored_slots(tournament.id)
        stale = stored - {slot.key for slot in slots}
        if stale:
            raise TournamentError(f"{db_path} holds games this config does not schedule (e.g. {min(stale)}); "
                                  "use --fresh to start a new tournament in it, or another --db")
        pending = [slot for slot in slots if slot.key not in stored]
        total = sum(slot.games for slot in slots)
        summary = RunSummary(tournament, total, store.count_games(tournament.id))
        disqualified = {name for name, row in store.bots(tournament.id).items() if row.disqualified}
        progress = Progress(total, summary.stored_before, stream=progress_stream)
        with _WorkerPool(worker_cores(jobs), loaded, protected, bots_as_root) as pool:
            _run(store, loaded, tournament, pending, pool, summary, disqualified, progress)
        progress.finish()
        summary.disqualified = sorted(disqualified)
        return summary


def _open_tournament(store: Store, loaded: LoadedConfig, fresh: bool, seed: int | None) -> TournamentRow:
    active = store.active_tournament()
    fingerprint = loaded.schedule_fingerprint()
    if active is not None and not fresh:
        # a database made while configs held seeds stored the fingerprint of `seed = <its seed>`
        if active.fingerprint not in (fingerprint, loaded.schedule_fingerprint(legacy_seed=active.seed)):
            raise TournamentError(
                f"{store.path} holds tournament {active.name!r} with a different schedule (variant, rules, "
                "table size, format, rotations or series changed); use --fresh to start a new tournament "
                "in it (the old games are kept), or another --db")
        if seed is not None and seed != active.seed:
            raise TournamentError(f"{store.path} holds tournament {active.name!r} with another seed than the "
                                  "seed file's; leave out --seed-file to resume it, or use --fresh or another --db")
        return active
    seed = seed if seed is not None else draw_seed()
    return store.create_tournament(loaded.config.name, str(loaded.path), loaded.path.read_text(), fingerprint, seed)


def _check_bots(store: Store, tournament: TournamentRow, loaded: LoadedConfig, isolation: Isolation) -> None:
    """Hash each bot's files and ask its version; a bot that changed since its stored games is refused."""
    stored = store.bots(tournament.id)
    for bot in loaded.bots:
        version = _probe_version(BotClient(bot.name, bot_command(bot), isolation=isolation))
        row = BotRow(bot.name, list(bot.argv), str(bot.dir), bot_files_sha256(bot.dir, bot=bot.name), version)
        old = stored.get(bot.name)
        if old is not None and (old.sha256, old.version) != (row.sha256, row.version):
            what = "its files changed" if old.sha256 != row.sha256 else f"version {old.version!r} -> {row.version!r}"
            raise TournamentError(f"bot {bot.name!r} changed since its stored games ({what}); use --fresh to start "
                                  "a new tournament, or another --db")
        if old is None:
            store.save_bot(tournament.id, row)


def _probe_version(client: BotClient) -> str:
    """The version the bot reports in its handshake; empty if it does not start (it will forfeit)."""
    try:
        return client.start().version
    except BotError:
        return ""
    finally:
        client.stop()


def _run(store: Store, loaded: LoadedConfig, tournament: TournamentRow, pending: list[Slot], pool: _WorkerPool,
         summary: RunSummary, disqualified: set[str], progress: Progress) -> None:
    waiting = deque(pending)
    streaks: dict[str, int] = {}
    playing: set[str] = set()  # deal keys in flight
    try:
        while waiting or playing:
            while len(playing) < pool.size and (slot := _next_of_another_deal(waiting, playing)) is not None:
                pool.submit(Job(slot=slot, disqualified=sorted(disqualified)))
                playing.add(slot.deal_key)
            done = pool.next_result()
            slot = pool.slot_of(done.slot_key)
            playing.discard(slot.deal_key)
            store.save_slot(tournament.id, [_stored(slot, i, r) for i, r in enumerate(done.games)])
            summary.played += len(done.games)
            progress.advance(len(done.games))
            for name in _newly_disqualified(done.games, streaks, loaded.config.max_failures, disqualified):
                disqualified.add(name)
                store.disqualify(tournament.id, name)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: {summary.stored_before + summary.played} of {summary.total_games} games "
                          "stored; run the same command again to resume") from None


def _next_of_another_deal(waiting: deque[Slot], playing: set[str]) -> Slot | None:
    """Take the first waiting slot whose deal is not being played: two rotations of one deal never run at once,
    so processes of one bot in different seats of a deal cannot tell each other hands over any channel that
    needs both running (timing, shared caches, futexes), whatever the sandbox leaves open."""
    for index, slot in enumerate(waiting):
        if slot.deal_key not in playing:
            del waiting[index]
            return slot
    return None


def _stored(slot: Slot, index: int, record: GameRecord) -> StoredGame:
    return StoredGame(slot_key=slot.key, game_index=index, deal_seed=slot.deal_seed, rotation=slot.rotation,
                      record=record.to_result_record(), replay=replay_lines(record), stderr=record.stderr)


def _newly_disqualified(games: list[GameRecord], streaks: dict[str, int], limit: int,
                        disqualified: set[str]) -> list[str]:
    """Update each bot's run of games lost by a verdict; the bots that just reached ``limit``."""
    newly = []
    for record in games:
        failed = {v.bot for v in record.verdicts if v.kind != "disqualified"}
        for name in record.names:
            streaks[name] = streaks.get(name, 0) + 1 if name in failed else 0
            if streaks[name] >= limit and name not in disqualified and name not in newly:
                newly.append(name)
    return newly


def worker_cores(jobs: int | None) -> list[int]:
    """The core of each worker: one per core this process may use, or ``jobs`` of them, round robin (more
    workers than cores share cores, and so do their bots: a warning says so)."""
    cores = sorted(os.sched_getaffinity(0))
    if jobs is not None and jobs > len(cores):
        LOGGER.warning("--jobs %d is more than the %d cores: games will share cores, and a bot's helpers may slow "
                       "the bots of another game", jobs, len(cores))
    return [cores[index % len(cores)] for index in range(len(cores) if jobs is None else jobs)]


class _WorkerPool:
    """Worker processes, each pinned to its core and driven by a thread that sends it jobs and collects its
    answers."""

    def __init__(self, cores: list[int], loaded: LoadedConfig, protected: list[str], bots_as_root: bool) -> None:
        self.size = len(cores)
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._results: queue.Queue[SlotDone | BaseException] = queue.Queue()
        self._slots: dict[str, Slot] = {}
        command = BotCommand([sys.executable, "-m", "referee.tournament.worker"])
        # launched from this thread: a worker's parent-death signal follows the thread that started it
        self._workers = [BotProcess(command, _NO_LIMITS, max_line=_WORKER_LINE) for _ in cores]
        for worker, core in zip(self._workers, cores, strict=True):
            setup = WorkerSetup(config_path=str(loaded.path), sandbox=loaded.config.sandbox, protected=protected,
                                core=core, bots_as_root=bots_as_root)
            worker.write_line(msgspec.json.encode(setup), time.monotonic() + 10)
        self._threads = [threading.Thread(target=self._drive, args=(w,), daemon=True) for w in self._workers]
        for thread in self._threads:
            thread.start()

    def submit(self, job: Job) -> None:
        self._slots[job.slot.key] = job.slot
        self._jobs.put(job)

    def slot_of(self, key: str) -> Slot:
        return self._slots.pop(key)

    def next_result(self) -> SlotDone:
        while True:
            try:
                result = self._results.get(timeout=0.2)  # short waits keep Ctrl-C responsive
            except queue.Empty:
                continue
            if isinstance(result, BaseException):
                raise TournamentError(f"a worker failed: {result}")
            return result

    def _drive(self, worker: BotProcess) -> None:
        decoder = msgspec.json.Decoder(SlotDone)
        while (job := self._jobs.get()) is not None:
            try:
                line, _ = worker.exchange(msgspec.json.encode(job), _SLOT_DEADLINE)
                self._results.put(decoder.decode(line))
            except (BotError, msgspec.DecodeError, OSError, ValueError) as exc:
                tail = " | ".join(worker.stderr_log.last_lines(3))
                self._results.put(TournamentError(f"{exc} {tail}".strip()))
                return

    def __enter__(self) -> _WorkerPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:  # idle threads end at once; one mid-slot is cut short by close()
            thread.join(timeout=0.1)
        # At the end of a run a worker still stops its bots and removes their folders (a bot may leave a deep
        # tree: cleanup is bounded by MAX_SECONDS); it is not cut short then, only when the run was broken off.
        grace = 2.0 if exc_type is not None else _WORKER_CLEANUP
        for worker in self._workers:
            worker.close(grace=grace)
        for thread in self._threads:
            thread.join(timeout=5)
