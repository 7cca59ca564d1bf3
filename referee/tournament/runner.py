"""The tournament coordinator: checks the database and the bots, then feeds slots to an executor.

An executor (:class:`SlotExecutor`, shaped like :mod:`concurrent.futures`) plays batches of slots in
referee worker processes (:mod:`referee.tournament.worker`): the local one (:class:`LocalExecutor`) on this
machine's cores, the Dask one (:mod:`referee.tournament.cluster`) on a cluster's. This process is the
database's only writer and commits each finished slot in one transaction, so a run killed at any moment loses
at most the slots in flight, and resuming plays exactly those.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TextIO

import msgspec

from referee.bots.errors import BotError
from referee.bots.isolation import Isolation, probe_bwrap
from referee.bots.launcher import preflight
from referee.bots.process import BotProcess
from referee.bots.session import BotClient
from referee.match import GameRecord
from referee.replay import replay_lines
from referee.store import DATABASE_SUFFIXES, BotRow, Store, StoredGame, TournamentRow
from referee.tournament.config import LoadedConfig, bot_files_sha256, draw_seed
from referee.tournament.progress import Progress
from referee.tournament.schedule import Slot, schedule
from referee.tournament.secret import protected_path, read_seed_file
from referee.tournament.worker import (
    WORKER_CLEANUP,
    Job,
    SlotDone,
    WorkerFailed,
    WorkerSetup,
    bot_command,
    play_job,
    start_worker,
)

LOGGER = logging.getLogger("durak")
#: A worker's answer to one job.
DONE = msgspec.json.Decoder(SlotDone)


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


class SlotExecutor(Protocol):
    """Where batches of slots are played, shaped like :class:`concurrent.futures.Executor`.

    A batch is slots played in order by one referee worker; its future holds one :class:`SlotDone` per slot,
    or raises :class:`WorkerFailed`. Executors never touch the store.
    """

    #: The least number of games a batch should hold (slots are added, in schedule order, until it does).
    batch_games: int

    @property
    def capacity(self) -> int:
        """Batches worth keeping submitted at once (enough to keep every worker busy)."""

    def submit(self, batch: list[Job]) -> Future[list[SlotDone]]: ...

    def shutdown(self, cancel: bool) -> None:
        """Stop the workers; ``cancel``: the batches in flight are abandoned (Ctrl-C, an error)."""


def run_tournament(loaded: LoadedConfig, db_path: Path, jobs: int | None, fresh: bool,
                   progress_stream: TextIO | None = None, *, seed_file: Path | None = None,
                   bots_as_root: bool = False, cluster: str | None = None) -> RunSummary:
    """Play every slot of the schedule not yet stored in ``db_path``, in ``jobs`` workers (None: one per core),
    each pinned with the bots of its games to a core of its own; or, given ``cluster`` (a Dask scheduler's
    address, else the config's ``cluster`` key), on the workers of that Dask cluster.

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
    cluster = cluster or loaded.config.cluster
    if cluster is not None and jobs is not None:
        raise TournamentError("--jobs is for a run on this machine: with a cluster, the workers' threads "
                              "(dask worker --nthreads) set how many games run at once")
    with Store(db_path) as store:
        tournament = _open_tournament(store, loaded, fresh, seed)
        bots = _check_bots(store, tournament, loaded, isolation)
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
        setup = WorkerSetup(config_path=str(loaded.path), sandbox=loaded.config.sandbox, protected=protected,
                            bots_as_root=bots_as_root)
        executor = _executor(cluster, jobs, setup, loaded, bots)
        cancel = True
        try:
            _run(store, loaded, tournament, pending, executor, summary, disqualified, progress)
            cancel = False
        finally:
            executor.shutdown(cancel)
        progress.finish()
        summary.disqualified = sorted(disqualified)
        return summary


def _executor(cluster: str | None, jobs: int | None, setup: WorkerSetup, loaded: LoadedConfig,
              bots: dict[str, BotRow]) -> SlotExecutor:
    if cluster is None:
        return LocalExecutor(worker_cores(jobs), setup)
    from referee.tournament.cluster import ClusterExecutor  # the optional extra: imported only when asked for

    try:
        return ClusterExecutor(cluster, setup, loaded, {name: (row.sha256, row.version) for name, row in bots.items()})
    except WorkerFailed as exc:
        raise TournamentError(str(exc)) from None


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


def _check_bots(store: Store, tournament: TournamentRow, loaded: LoadedConfig,
                isolation: Isolation) -> dict[str, BotRow]:
    """Hash each bot's files and ask its version; a bot that changed since its stored games is refused.
    Returns each bot's row as played now."""
    stored = store.bots(tournament.id)
    rows = {}
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
        rows[bot.name] = row
    return rows


def _probe_version(client: BotClient) -> str:
    """The version the bot reports in its handshake; empty if it does not start (it will forfeit)."""
    try:
        return client.start().version
    except BotError:
        return ""
    finally:
        client.stop()


def _run(store: Store, loaded: LoadedConfig, tournament: TournamentRow, pending: list[Slot],
         executor: SlotExecutor, summary: RunSummary, disqualified: set[str], progress: Progress) -> None:
    waiting = deque(pending)
    streaks: dict[str, int] = {}
    flying: dict[Future[list[SlotDone]], list[Slot]] = {}
    playing: set[str] = set()  # deal keys in flight
    slots = {slot.key: slot for slot in pending}
    left = sum(slot.games for slot in pending)  # games not submitted yet
    try:
        while waiting or flying:
            while len(flying) < executor.capacity and (batch := _next_batch(waiting, playing, _share(left, executor))):
                future = executor.submit([Job(slot=slot, disqualified=sorted(disqualified)) for slot in batch])
                flying[future] = batch
                playing.update(slot.deal_key for slot in batch)
                left -= sum(slot.games for slot in batch)
            finished, _ = wait(flying, timeout=0.2, return_when=FIRST_COMPLETED)  # short: Ctrl-C stays prompt
            for future in finished:
                playing.difference_update(slot.deal_key for slot in flying.pop(future))
                for done in _slots_done(future):
                    slot = slots[done.slot_key]
                    if not store.save_slot(tournament.id, [_stored(slot, i, r) for i, r in enumerate(done.games)]):
                        continue  # stored already (a batch that a cluster played again): counted once
                    summary.played += len(done.games)
                    progress.advance(len(done.games))
                    for name in _newly_disqualified(done.games, streaks, loaded.config.max_failures, disqualified):
                        disqualified.add(name)
                        store.disqualify(tournament.id, name)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: {summary.stored_before + summary.played} of {summary.total_games} games "
                          "stored; run the same command again to resume") from None


def _slots_done(future: Future[list[SlotDone]]) -> list[SlotDone]:
    try:
        return future.result()
    except WorkerFailed as exc:
        raise TournamentError(str(exc)) from None


def _share(left: int, executor: SlotExecutor) -> int:
    """The games of the next batch: the executor's batch size, less towards the end of the run (a fair share of
    what is left for each batch in flight), so that the last batches end together."""
    return max(1, min(executor.batch_games, -(-left // executor.capacity)))


def _next_batch(waiting: deque[Slot], playing: set[str], games: int) -> list[Slot]:
    """Slots for one worker to play in order, holding at least ``games`` games (or all that can go now): none
    of a deal in flight elsewhere. A worker plays its batch one slot at a time, so two rotations of one deal
    never run at once."""
    batch: list[Slot] = []
    held = 0
    while held < games and (slot := _next_of_another_deal(waiting, playing)):
        batch.append(slot)
        held += slot.games
    return batch


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


class LocalExecutor:
    """The executor on this machine: worker processes, each pinned to its core and driven by a thread that
    plays a batch's jobs in order and collects the answers."""

    batch_games = 1  # a slot a batch: each finished slot is stored before its worker's next job is sent

    def __init__(self, cores: list[int], setup: WorkerSetup) -> None:
        self.capacity = len(cores)
        self._batches: queue.Queue[tuple[list[Job], Future[list[SlotDone]]] | None] = queue.Queue()
        # launched from this thread: a worker's parent-death signal follows the thread that started it
        self._workers = [start_worker(msgspec.structs.replace(setup, core=core)) for core in cores]
        self._threads = [threading.Thread(target=self._drive, args=(w,), daemon=True) for w in self._workers]
        for thread in self._threads:
            thread.start()

    def submit(self, batch: list[Job]) -> Future[list[SlotDone]]:
        future: Future[list[SlotDone]] = Future()
        self._batches.put((batch, future))
        return future

    def _drive(self, worker: BotProcess) -> None:
        while (item := self._batches.get()) is not None:
            batch, future = item
            try:
                future.set_result([DONE.decode(play_job(worker, msgspec.json.encode(job))) for job in batch])
            except (WorkerFailed, msgspec.DecodeError) as exc:
                future.set_exception(WorkerFailed(str(exc)))
                return

    def shutdown(self, cancel: bool) -> None:
        while cancel and not self._batches.empty():
            self._batches.get_nowait()
        for _ in self._threads:
            self._batches.put(None)
        for thread in self._threads:  # idle threads end at once; one mid-slot is cut short by close()
            thread.join(timeout=0.1)
        # At the end of a run a worker still stops its bots and removes their folders (a bot may leave a deep
        # tree: cleanup is bounded by MAX_SECONDS); it is not cut short then, only when the run was broken off.
        grace = 2.0 if cancel else WORKER_CLEANUP
        for worker in self._workers:
            worker.close(grace=grace)
        for thread in self._threads:
            thread.join(timeout=5)
