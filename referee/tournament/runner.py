"""The tournament coordinator: checks the database and the bots, then feeds slots to an executor.

An executor (:class:`SlotExecutor`, shaped like :mod:`concurrent.futures`) plays batches of slots in
referee worker processes (:mod:`referee.tournament.worker`): the local one (:class:`LocalExecutor`) on this
machine's cores, the Dask one (:mod:`referee.tournament.cluster`) on a cluster's. This process is the
database's only writer and commits each finished batch in one transaction, so a run killed at any moment
loses at most the slots in flight, and resuming plays exactly those.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TextIO

import msgspec

from protocol.records import Verdict
from referee.bots.errors import BotError
from referee.bots.launcher import preflight
from referee.bots.process import BotProcess
from referee.bots.sandbox.isolation import Isolation, probe_bwrap
from referee.bots.session import BotClient
from referee.results.record import GameRecord
from referee.results.replay import replay_lines
from referee.results.store import DATABASE_SUFFIXES, BotRow, Store, StoredGame, TournamentRow
from referee.tournament.botfiles import BotFiles, bot_files_sha256
from referee.tournament.config import LoadedConfig, ResolvedBot, draw_seed
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


class PreflightError(TournamentError):
    """A bot failed its preflight (started and handshaken once before any game) and the config's ``preflight``
    key is ``"stop"``: no game was played."""


class RunOptionsError(TournamentError):
    """Options of the command line that do not go together (``--jobs`` with ``--cluster``): a usage error."""


class Interrupted(RuntimeError):
    """Ctrl-C or SIGTERM: the finished slots are stored, those in flight abandoned; the message says how many
    are stored. ``signal_number`` is the signal's (the exit code is 128 + it)."""

    def __init__(self, message: str, signal_number: int = signal.SIGINT) -> None:
        super().__init__(message)
        self.signal_number = signal_number


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt."""


#: What ``--changed-bots`` may say to do with a bot whose identity changed since its stored games.
CHANGED_POLICIES = ("replay", "keep")


@dataclass
class RunSummary:
    tournament: TournamentRow
    total_games: int
    stored_before: int
    played: int = 0
    disqualified: dict[str, str] = field(default_factory=dict)  # bot -> why
    superseded: int = 0  # stored games moved to history by --changed-bots replay


@dataclass(frozen=True)
class _Identity:
    """A bot as the config and its folder define it now."""

    bot: ResolvedBot
    settings: str  # JSON of ResolvedBot.settings()
    files: BotFiles


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


class Course(Protocol):
    """What a run plays: the config's schedule (a tournament, :class:`ScheduleCourse`), or an SPRT's deal
    groups until it decides (:class:`referee.tournament.sprt_run.SprtCourse`)."""

    #: The tournament row's name and fingerprint; None: the config's (with its legacy fingerprints).
    identity: tuple[str, str] | None

    def begin(self, store: Store, tournament: TournamentRow, stored_games: int,
              stream: TextIO | None) -> tuple[list[Slot], int | None, Progress]:
        """The slots to play first (none stored yet), the run's total games (None: open-ended) and its progress.

        :raises TournamentError: the database holds slots that this course does not schedule."""

    def more(self) -> list[Slot]:
        """The next slots of an open-ended course, asked for whenever too few are waiting; [] when there are
        no more."""

    def stored(self, done: list[tuple[Slot, list[GameRecord]]]) -> bool:
        """Called with each batch once stored; True ends the run (the batches in flight are abandoned)."""


class ScheduleCourse:
    """A tournament: every slot of the config's schedule not stored yet."""

    identity: tuple[str, str] | None = None

    def __init__(self, loaded: LoadedConfig) -> None:
        self.loaded = loaded

    def begin(self, store: Store, tournament: TournamentRow, stored_games: int,
              stream: TextIO | None) -> tuple[list[Slot], int | None, Progress]:
        slots = schedule(self.loaded.config, tournament.seed)
        stored = store.stored_slots(tournament.id)
        stale = stored - {slot.key for slot in slots}
        if stale:
            raise TournamentError(f"{store.path} holds games this config does not schedule (e.g. {min(stale)}); "
                                  "use --fresh to start a new tournament in it, or another --db")
        total = sum(slot.games for slot in slots)
        return [slot for slot in slots if slot.key not in stored], total, Progress(total, stored_games, stream=stream)

    def more(self) -> list[Slot]:
        return []

    def stored(self, done: list[tuple[Slot, list[GameRecord]]]) -> bool:
        return False


def run_tournament(loaded: LoadedConfig, db_path: Path, jobs: int | None, fresh: bool,
                   progress_stream: TextIO | None = None, *, seed_file: Path | None = None,
                   bots_as_root: bool = False, changed_bots: str | None = None,
                   cluster: str | None = None, course: Course | None = None) -> RunSummary:
    """Play every slot of the schedule not yet stored in ``db_path``, in ``jobs`` workers (None: one per core),
    each pinned with the bots of its games to a core of its own; or, given ``cluster`` (a Dask scheduler's
    address, else the config's ``cluster`` key), on the workers of that Dask cluster. ``course``: what to play
    in place of the config's schedule (an SPRT; ``loaded`` then holds only its bots).

    A new tournament's seed is ``seed_file``'s (:func:`read_seed_file`), else drawn; it is kept in the
    database only. A stored tournament keeps its seed (``seed_file``, if given, must hold the same).
    Before the first game every bot is started and handshaken once in its sandbox (the preflight).
    ``changed_bots`` (one of :data:`CHANGED_POLICIES`) accepts bots whose identity changed since their stored
    games: ``replay`` moves those games to history and plays them again, ``keep`` keeps them rated; both
    lift a disqualification.

    :raises TournamentError: the database holds a different schedule, seed or bot (without ``fresh``), or
        ``jobs`` is given for the config's cluster.
    :raises RunOptionsError: ``jobs`` and ``cluster`` are both given.
    :raises ClusterUnavailable: the cluster cannot be reached or one of its workers fails its checks.
    :raises WorkerFailed: a worker died mid-run (the finished slots stay stored).
    :raises PreflightError: a bot failed its preflight and the config says ``preflight = "stop"``.
    :raises SeedFileError: ``seed_file`` is not a private file holding a seed.
    :raises Interrupted: on Ctrl-C or SIGTERM, after the finished slots are stored.
    :raises StoreError: the database cannot be written (finished slots stay stored).
    """
    if jobs is not None and cluster is not None:
        raise RunOptionsError("--jobs is for a run on this machine: with --cluster, the Dask workers' threads "
                              "(dask worker --nthreads) set how many games run at once")
    if jobs is not None and loaded.config.cluster is not None:
        raise TournamentError("--jobs is for a run on this machine: with a cluster, the workers' threads "
                              "(dask worker --nthreads) set how many games run at once")
    seed = read_seed_file(seed_file) if seed_file is not None else None
    protected = [str(db_path.resolve()) + suffix for suffix in DATABASE_SUFFIXES]
    protected += [protected_path(seed_file)] if seed_file is not None else []
    isolation = loaded.isolation(protected, allow_root=bots_as_root)
    if isolation.level == "bwrap":
        probe_bwrap()
    for bot in loaded.bots:
        preflight(bot_command(bot), isolation)
    cluster = cluster or loaded.config.cluster
    identities = [_identify(bot, protected) for bot in loaded.bots]
    summary: RunSummary | None = None
    with _stop_signals():
        try:
            with Store(db_path) as store:
                playing: Course = course or ScheduleCourse(loaded)
                tournament = _open_tournament(store, loaded, fresh, seed, playing.identity)
                summary = RunSummary(tournament, 0, 0)
                setup = WorkerSetup(config_path=str(loaded.path), sandbox=loaded.config.sandbox,
                                    protected=protected, bots_as_root=bots_as_root)
                _play_tournament(store, loaded, summary, identities, changed_bots, isolation,
                                 (jobs, cluster, setup), progress_stream, playing)
                return summary
        except KeyboardInterrupt as stop:
            signum = signal.SIGTERM if isinstance(stop, _Terminated) else signal.SIGINT
            kept = 0 if summary is None else summary.stored_before + summary.played
            of = f" of {summary.total_games}" if summary is not None and summary.total_games else ""
            stored = f"{kept}{of} games stored" if kept or of else "no game played yet"
            raise Interrupted(f"interrupted: {stored}", signum) from None


def _play_tournament(store: Store, loaded: LoadedConfig, summary: RunSummary, identities: list[_Identity],
                     changed_bots: str | None, isolation: Isolation, where: tuple[int | None, str | None, WorkerSetup],
                     progress_stream: TextIO | None, course: Course) -> None:
    """Check the bots against the stored tournament, preflight them, then play what is left of ``course`` where
    ``where`` (``--jobs``, ``--cluster``, the workers' setup) says."""
    tournament = summary.tournament
    rows = _check_bots(store, tournament, identities, changed_bots, summary)
    _preflight_bots(store, tournament, loaded, isolation, rows, summary)
    summary.stored_before = store.count_games(tournament.id)
    pending, total, progress = course.begin(store, tournament, summary.stored_before, progress_stream)
    summary.total_games = total or 0  # 0: open-ended (an SPRT)
    disqualified = store.disqualified(tournament.id)
    run = _Run(store, loaded, tournament, summary, disqualified, progress,
               {name: row.sha256 for name, row in rows.items()}, course)
    jobs, cluster, setup = where
    executor = _executor(jobs, cluster, setup, loaded, rows, disqualified)
    cancel = True
    try:
        cancel = run.play(pending, executor)
    finally:
        executor.shutdown(cancel)
    progress.finish()
    summary.disqualified = dict(sorted(disqualified.items()))


def _executor(jobs: int | None, cluster: str | None, setup: WorkerSetup, loaded: LoadedConfig,
              rows: dict[str, BotRow], disqualified: dict[str, str]) -> SlotExecutor:
    if cluster is None:
        return LocalExecutor(worker_cores(jobs), setup)
    from referee.tournament.cluster import ClusterExecutor  # the optional extra: imported only when asked for

    # a disqualified bot is never started: a worker checks its files, not that it starts
    bots = {name: (row.sha256, "" if name in disqualified else row.version) for name, row in rows.items()}
    return ClusterExecutor(cluster, setup, loaded, bots)


def _identify(bot: ResolvedBot, protected: list[str]) -> _Identity:
    return _Identity(bot, msgspec.json.encode(bot.settings(), order="sorted").decode(), bot.hashed_files(protected))


def _open_tournament(store: Store, loaded: LoadedConfig, fresh: bool, seed: int | None,
                     sprt: tuple[str, str] | None = None) -> TournamentRow:
    """The database's active tournament, checked against the config, or a new one. ``sprt``: an SPRT's name
    and fingerprint (:mod:`referee.tournament.sprt_run`), in place of the config's."""
    active = store.active_tournament()
    name, fingerprint = sprt or (loaded.config.name, loaded.schedule_fingerprint())
    if active is not None and not fresh:
        # a database made while configs held seeds stored the fingerprint of `seed = <its seed>`
        legacy = () if sprt else (loaded.schedule_fingerprint(legacy_seed=active.seed),)
        if active.fingerprint not in (fingerprint, *legacy):
            changed = ("another SPRT (its bots, Elo bounds, alpha, beta, mode, variant, rules, rotations or "
                       "series differ)") if sprt else ("a different schedule (variant, rules, table size, format, "
                                                      "rotations or series changed)")
            kind = "test" if sprt else "tournament"
            raise TournamentError(f"{store.path} holds {kind} {active.name!r} with {changed}; use --fresh to start a "
                                  f"new {kind} in it (the old games are kept), or another --db")
        if seed is not None and seed != active.seed:
            raise TournamentError(f"{store.path} holds tournament {active.name!r} with another seed than the "
                                  "seed file's; leave out --seed-file to resume it, or use --fresh or another --db")
        return active
    seed = seed if seed is not None else draw_seed()
    return store.create_tournament(name, str(loaded.path), loaded.path.read_text(), fingerprint, seed)


def _check_bots(store: Store, tournament: TournamentRow, identities: list[_Identity], changed_bots: str | None,
                summary: RunSummary) -> dict[str, BotRow]:
    """Compare each bot with its stored row; a bot that changed since its stored games is refused, naming
    what changed, unless ``changed_bots`` says what to do. Returns the rows to play with."""
    stored = store.bots(tournament.id)
    playing = store.bots_with_games(tournament.id)
    rows: dict[str, BotRow] = {}
    refused: list[str] = []
    for identity in identities:
        bot = identity.bot
        row = BotRow(bot.name, list(bot.argv), str(bot.dir), identity.files.sha256, "",
                     settings=identity.settings, files=identity.files.manifest)
        old = stored.get(bot.name)
        changes = [] if old is None else _changes(old, identity)
        if old is not None and not changes:
            row = replace(row, version=old.version, disqualified=old.disqualified, reason=old.reason)
        elif old is not None and bot.name in playing:
            if changed_bots is None:
                refused.append(f"bot {bot.name!r} changed since its stored games ({'; '.join(changes)})")
            elif changed_bots == "replay":
                summary.superseded += store.supersede(tournament.id, [bot.name], f"bot {bot.name} replaced")
        rows[bot.name] = row
    if refused:
        raise TournamentError(
            f"{'; '.join(refused)}. Say what to do: --changed-bots replay (its stored games are played again "
            "with the new version; the old ones are kept as history, not rated) or --changed-bots keep (its "
            "stored games stay rated); or --fresh for a new tournament, or another --db")
    for row in rows.values():
        if stored.get(row.name) != row:
            store.save_bot(tournament.id, row)
    return rows


def _changes(old: BotRow, identity: _Identity) -> list[str]:
    """What makes ``identity`` another bot than the stored ``old`` row: settings and files, each named."""
    if not old.settings:  # a row of schema 1 kept only the digest over the whole folder
        legacy = bot_files_sha256(identity.bot.dir, bot=identity.bot.name)
        return [] if legacy == old.sha256 else ["its files changed (an older database lists none)"]
    changes = []
    was, now = msgspec.json.decode(old.settings), msgspec.json.decode(identity.settings)
    for key in sorted(set(was) | set(now)):
        if was.get(key) != now.get(key):
            changes.append(f"its {key} changed: {_short(was.get(key))} -> {_short(now.get(key))}")
    return changes + identity.files.changes(old.files)


def _short(value: object) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."


def _preflight_bots(store: Store, tournament: TournamentRow, loaded: LoadedConfig, isolation: Isolation,
                    rows: dict[str, BotRow], summary: RunSummary) -> None:
    """Start and handshake every bot once, in its sandbox, before any game; record each one's version.

    A bot that fails stops the run (:class:`PreflightError`), or with ``preflight = "disqualify"`` is
    disqualified, its games forfeits."""
    failures = []
    for bot in loaded.bots:
        row = rows[bot.name]
        if row.disqualified:
            continue
        client = BotClient(bot.name, bot_command(bot), limits=loaded.resource_limits(),
                           time_control=loaded.time_control(), isolation=isolation)
        try:
            version = client.start().version
        except BotError as exc:
            client.stop(grace=0.0)
            failure = _preflight_failure(exc, "".join(chunk.text for chunk in client.take_stderr()))
            if loaded.config.preflight == "stop":
                failures.append(f"bot {bot.name!r} {failure}")
            else:
                store.disqualify(tournament.id, bot.name, failure)
            continue
        finally:
            client.stop()
        if version != row.version:  # recorded, never part of the bot's identity
            rows[bot.name] = replace(row, version=version)
            store.save_bot(tournament.id, rows[bot.name])
    if failures:
        raise PreflightError(f"{'; '.join(failures)}; no game was played (preflight = \"disqualify\" in the "
                             "config plays on without such bots)")


def _preflight_failure(exc: BotError, stderr: str) -> str:
    tail = [line for line in stderr.splitlines() if line.strip()][-3:]
    shown = f"; its stderr ends: {' | '.join(tail)}" if tail and tail[-1][:60] not in exc.reason else ""
    return f"failed its preflight (started once before any game): {exc.verdict}: {exc.reason}{shown}"


@contextmanager
def _stop_signals() -> Iterator[None]:
    """SIGTERM stops the run like Ctrl-C (in the main thread only, where Python runs signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _deferred_stop_signals() -> Iterator[Callable[[], None]]:
    """Ctrl-C and SIGTERM only noted while the coordinator's loop runs; the loop calls the yielded function at a
    safe point, which raises them (KeyboardInterrupt, :class:`_Terminated`). Raised from a signal handler they
    could land inside a lock that a driving thread or the shutdown needs next (a future's condition, the
    batch queue's mutex) and hang the stop, or between a batch's storing and its counting."""
    noted: list[int] = []

    def raise_if_stopped() -> None:
        if noted:
            raise _Terminated() if noted[0] == signal.SIGTERM else KeyboardInterrupt()

    held = _on_stop_signals(noted.append)
    try:
        yield raise_if_stopped
    finally:
        _restore_signals(held)
    raise_if_stopped()  # one that came as the loop ended is not lost


class _Run:
    """The coordinator's loop: feed batches of slots to the executor, store each finished slot once, track
    failure streaks."""

    def __init__(self, store: Store, loaded: LoadedConfig, tournament: TournamentRow, summary: RunSummary,
                 disqualified: dict[str, str], progress: Progress, files: dict[str, str],
                 course: Course) -> None:
        self.store = store
        self.loaded = loaded
        self.tournament = tournament
        self.summary = summary
        self.disqualified = disqualified
        self.progress = progress
        self.files = files
        self.course = course
        self.streaks: dict[str, list[Verdict]] = {}

    def play(self, pending: list[Slot], executor: SlotExecutor) -> bool:
        """Play ``pending`` and whatever the course adds (:meth:`Course.more`) until there is no more or the course
        ends the run; True when it ended it (the batches still in flight are to be abandoned)."""
        waiting = deque(pending)
        flying: dict[Future[list[SlotDone]], list[Slot]] = {}
        playing: set[str] = set()  # deal keys in flight
        slots = {slot.key: slot for slot in pending}
        # games not submitted yet; an open-ended course (no total) does not know: full batches then
        left = sum(slot.games for slot in pending) if self.summary.total_games else sys.maxsize
        try:
            with _deferred_stop_signals() as raise_if_stopped:  # raised at a safe point, not inside a lock
                while True:
                    raise_if_stopped()
                    self._top_up(waiting, slots, playing, executor.capacity)
                    if not (waiting or flying):
                        return False
                    while len(flying) < executor.capacity and (batch := _next_batch(waiting, playing,
                                                                                     _share(left, executor))):
                        jobs = [Job(slot=slot, disqualified=dict(self.disqualified)) for slot in batch]
                        flying[executor.submit(jobs)] = batch
                        playing.update(slot.deal_key for slot in batch)
                        left -= sum(slot.games for slot in batch)
                    finished, _ = wait(flying, timeout=0.2, return_when=FIRST_COMPLETED)  # Ctrl-C seen in 0.2 s
                    for future in finished:
                        playing.difference_update(slot.deal_key for slot in flying.pop(future))
                        if self.store_slots([(slots[done.slot_key], done.games) for done in _slots_done(future)]):
                            return True
        except KeyboardInterrupt as stop:
            what = "SIGTERM" if isinstance(stop, _Terminated) else "Ctrl-C"
            kept = self.summary.stored_before + self.summary.played
            abandoned = sum(slot.games for batch in flying.values() for slot in batch)
            self.progress.note(f"durak: {what}: stopping now; the {abandoned} game(s) in flight are abandoned (not "
                               f"stored), the {kept} finished are kept ({what} again: stop without cleaning up)")
            raise

    def _top_up(self, waiting: deque[Slot], slots: dict[str, Slot], playing: set[str], capacity: int) -> None:
        """Ask the course for more slots until enough deals wait to fill every worker (a deal's slots are played
        one at a time)."""
        while not _deals_ready(waiting, playing, capacity) and (more := self.course.more()):
            waiting.extend(more)
            slots.update((slot.key, slot) for slot in more)

    def store_slots(self, done: list[tuple[Slot, list[GameRecord]]]) -> bool:
        """Store a finished batch's slots in one transaction; a slot stored already (a batch that a cluster
        played again) is counted once. True: the course ends the run."""
        rows = [[stored_game(slot, i, record, self.files) for i, record in enumerate(games)] for slot, games in done]
        saved = self.store.save_slots(self.tournament.id, rows)
        ended = self.course.stored(done)  # before the progress is drawn: an SPRT's line shows its new state
        for (_, games), new in zip(done, saved, strict=True):
            if not new:
                continue
            self.summary.played += len(games)
            self.progress.advance(len(games))
            for name, reason in self.newly_disqualified(games):
                self.disqualified[name] = reason
                self.store.disqualify(self.tournament.id, name, reason)
        return ended

    def newly_disqualified(self, games: list[GameRecord]) -> list[tuple[str, str]]:
        """Update each bot's run of games lost by a verdict; the bots that just reached ``max_failures``,
        with the reason."""
        limit = self.loaded.config.max_failures
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


def stored_game(slot: Slot, index: int, record: GameRecord, files: dict[str, str]) -> StoredGame:
    """Game ``index`` of ``slot`` as the store keeps it; ``files``: each bot's files digest."""
    return StoredGame(slot_key=slot.key, game_index=index, deal_seed=slot.deal_seed, rotation=slot.rotation,
                      record=record.to_result_record(), replay=replay_lines(record), stderr=record.stderr,
                      move_us=record.move_us, bot_files=[files.get(name, "") for name in record.names])


def _slots_done(future: Future[list[SlotDone]]) -> list[SlotDone]:
    return future.result()  # a WorkerFailed propagates as itself: the CLI's exit code for a worker that died


def _deals_ready(waiting: deque[Slot], playing: set[str], enough: int) -> bool:
    """Whether ``enough`` deals not in flight wait to be played. It looks only as far as it must (the waiting
    slots of a round robin are its whole schedule: counting them all before every batch made a long run
    quadratic)."""
    ready: set[str] = set()
    for slot in waiting:
        if slot.deal_key not in playing:
            ready.add(slot.deal_key)
            if len(ready) >= enough:
                return True
    return False


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
        if cancel:
            self._abandon()
            return
        for thread in self._threads:  # idle threads end at once
            thread.join(timeout=0.1)
        # At the end of a run a worker still stops its bots and removes their folders (a bot may leave a deep
        # tree: cleanup is bounded by MAX_SECONDS); it is not cut short.
        for worker in self._workers:
            worker.close(grace=WORKER_CLEANUP)
        for thread in self._threads:
            thread.join(timeout=5)

    def _abandon(self) -> None:
        """Stop every worker now, the slots in flight unfinished: on SIGTERM a worker kills its bots at once
        (within a moment: no grace), removes their folders (bounded by MAX_SECONDS, instant unless a bot left a
        huge tree) and exits. A second Ctrl-C or SIGTERM meanwhile kills the workers outright (a bot's
        folder may be left behind then)."""
        forced = threading.Event()
        held = _on_stop_signals(lambda signum: forced.set())
        try:
            for worker in self._workers:
                worker.launched.signal(signal.SIGTERM)
            deadline = time.monotonic() + WORKER_CLEANUP
            for thread in self._threads:  # a driving thread ends when its worker exits
                while thread.is_alive() and not forced.is_set() and time.monotonic() < deadline:
                    thread.join(timeout=0.05)
            for worker in self._workers:
                worker.close(grace=0.0 if forced.is_set() else max(0.0, deadline - time.monotonic()))
        finally:
            _restore_signals(held)


def _on_stop_signals(note: Callable[[int], object]) -> dict[int, object] | None:
    """Until :func:`_restore_signals`: a SIGINT or SIGTERM calls ``note`` with its number instead of raising
    (in the main thread only, where Python runs signal handlers; elsewhere nothing changes: None)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: object) -> None:
        note(signum)

    return {signum: signal.signal(signum, handler) for signum in (signal.SIGINT, signal.SIGTERM)}


def _restore_signals(held: dict[int, object] | None) -> None:
    for signum, handler in (held or {}).items():
        signal.signal(signum, handler)  # type: ignore[arg-type]
