"""The tournament coordinator: checks the database and the bots, then feeds slots to workers.

Workers (:mod:`referee.tournament.worker`) are child processes that play slots; this process
is the database's only writer and commits each finished slot in one transaction, so a run
killed at any moment loses at most the slots in flight, and resuming plays exactly those.
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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

import msgspec

from protocol.records import Verdict
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
from referee.tournament.botfiles import OUTPUT_PATTERNS, BotFiles, bot_files, bot_files_sha256
from referee.tournament.config import LoadedConfig, ResolvedBot, draw_seed
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


class PreflightError(TournamentError):
    """A bot failed its preflight (started and handshaken once before any game) and the config's ``preflight``
    key is ``"stop"``: no game was played."""


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


def run_tournament(loaded: LoadedConfig, db_path: Path, jobs: int | None, fresh: bool,
                   progress_stream: TextIO | None = None, *, seed_file: Path | None = None,
                   bots_as_root: bool = False, changed_bots: str | None = None) -> RunSummary:
    """Play every slot of the schedule not yet stored in ``db_path``, in ``jobs`` workers (None: one per core),
    each pinned with the bots of its games to a core of its own.

    A new tournament's seed is ``seed_file``'s (:func:`read_seed_file`), else drawn; it is kept in the
    database only. A stored tournament keeps its seed (``seed_file``, if given, must hold the same).
    Before the first game every bot is started and handshaken once in its sandbox (the preflight).
    ``changed_bots`` (one of :data:`CHANGED_POLICIES`) accepts bots whose identity changed since their stored
    games: ``replay`` moves those games to history and plays them again, ``keep`` keeps them rated; both
    lift a disqualification.

    :raises TournamentError: the database holds a different schedule, seed or bot (without ``fresh``).
    :raises PreflightError: a bot failed its preflight and the config says ``preflight = "stop"``.
    :raises SeedFileError: ``seed_file`` is not a private file holding a seed.
    :raises Interrupted: on Ctrl-C or SIGTERM, after the finished slots are stored.
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
    identities = [_identify(bot, protected) for bot in loaded.bots]
    summary: RunSummary | None = None
    with _stop_signals():
        try:
            with Store(db_path) as store:
                tournament = _open_tournament(store, loaded, fresh, seed)
                summary = RunSummary(tournament, 0, 0)
                _play_tournament(store, loaded, summary, identities, changed_bots, isolation, jobs,
                                 (protected, bots_as_root), progress_stream)
                return summary
        except KeyboardInterrupt as stop:
            signum = signal.SIGTERM if isinstance(stop, _Terminated) else signal.SIGINT
            stored = "no game played yet" if summary is None or not summary.total_games else \
                f"{summary.stored_before + summary.played} of {summary.total_games} games stored"
            raise Interrupted(f"interrupted: {stored}", signum) from None


def _play_tournament(store: Store, loaded: LoadedConfig, summary: RunSummary, identities: list[_Identity],
                     changed_bots: str | None, isolation: Isolation, jobs: int | None,
                     workers: tuple[list[str], bool], progress_stream: TextIO | None) -> None:
    """Check the bots against the stored tournament, preflight them, then play what is left."""
    tournament = summary.tournament
    rows = _check_bots(store, tournament, identities, changed_bots, summary)
    _preflight_bots(store, tournament, loaded, isolation, rows, summary)
    slots = schedule(loaded.config, tournament.seed)
    stored = store.stored_slots(tournament.id)
    stale = stored - {slot.key for slot in slots}
    if stale:
        raise TournamentError(f"{store.path} holds games this config does not schedule (e.g. {min(stale)}); "
                              "use --fresh to start a new tournament in it, or another --db")
    pending = [slot for slot in slots if slot.key not in stored]
    summary.total_games = sum(slot.games for slot in slots)
    summary.stored_before = store.count_games(tournament.id)
    disqualified = store.disqualified(tournament.id)
    progress = Progress(summary.total_games, summary.stored_before, stream=progress_stream)
    run = _Run(store, loaded, tournament, summary, disqualified, progress,
               {name: row.sha256 for name, row in rows.items()})
    protected, bots_as_root = workers
    with _WorkerPool(worker_cores(jobs), loaded, protected, bots_as_root) as pool:
        run.play(pending, pool)
    progress.finish()
    summary.disqualified = dict(sorted(disqualified.items()))


def _identify(bot: ResolvedBot, protected: list[str]) -> _Identity:
    """Hash the bot's files: its ``files`` patterns, or its whole folder less the referee's outputs (the
    results database of this run too, wherever it is)."""
    exclude = list(OUTPUT_PATTERNS)
    for path in protected:
        relative = os.path.relpath(path, bot.dir)
        if not relative.startswith(".."):
            exclude.append(relative)
    files = bot_files(bot.dir, bot=bot.name, include=bot.files, exclude=exclude)
    return _Identity(bot, msgspec.json.encode(bot.settings(), order="sorted").decode(), files)


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


class _Run:
    """The coordinator's loop: feed slots to the pool, store each finished one, track failure streaks."""

    def __init__(self, store: Store, loaded: LoadedConfig, tournament: TournamentRow, summary: RunSummary,
                 disqualified: dict[str, str], progress: Progress, files: dict[str, str]) -> None:
        self.store = store
        self.loaded = loaded
        self.tournament = tournament
        self.summary = summary
        self.disqualified = disqualified
        self.progress = progress
        self.files = files
        self.streaks: dict[str, list[Verdict]] = {}

    def play(self, pending: list[Slot], pool: _WorkerPool) -> None:
        waiting = deque(pending)
        playing: set[str] = set()  # deal keys in flight
        try:
            while waiting or playing:
                while len(playing) < pool.size and (slot := _next_of_another_deal(waiting, playing)) is not None:
                    pool.submit(Job(slot=slot, disqualified=dict(self.disqualified)))
                    playing.add(slot.deal_key)
                done = pool.next_result()
                slot = pool.slot_of(done.slot_key)
                playing.discard(slot.deal_key)
                self.store_slot(slot, done.games)
        except KeyboardInterrupt as stop:
            what = "SIGTERM" if isinstance(stop, _Terminated) else "Ctrl-C"
            kept = self.summary.stored_before + self.summary.played
            self.progress.note(f"durak: {what}: stopping now; the {pool.games_in_flight()} game(s) in flight are "
                               f"abandoned (not stored), the {kept} finished are kept ({what} again: stop without "
                               "cleaning up)")
            raise

    def store_slot(self, slot: Slot, games: list[GameRecord]) -> None:
        self.store.save_slot(self.tournament.id, [self.stored(slot, i, r) for i, r in enumerate(games)])
        self.summary.played += len(games)
        self.progress.advance(len(games))
        for name, reason in self.newly_disqualified(games):
            self.disqualified[name] = reason
            self.store.disqualify(self.tournament.id, name, reason)

    def stored(self, slot: Slot, index: int, record: GameRecord) -> StoredGame:
        return StoredGame(slot_key=slot.key, game_index=index, deal_seed=slot.deal_seed, rotation=slot.rotation,
                          record=record.to_result_record(), replay=replay_lines(record), stderr=record.stderr,
                          move_us=record.move_us, bot_files=[self.files.get(name, "") for name in record.names])

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

    def games_in_flight(self) -> int:
        return sum(slot.games for slot in self._slots.values())

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
        if exc_type is not None:
            self.abandon()
            return
        for thread in self._threads:  # idle threads end at once
            thread.join(timeout=0.1)
        # At the end of a run a worker still stops its bots and removes their folders (a bot may leave a deep
        # tree: cleanup is bounded by MAX_SECONDS); it is not cut short.
        for worker in self._workers:
            worker.close(grace=_WORKER_CLEANUP)
        for thread in self._threads:
            thread.join(timeout=5)

    def abandon(self) -> None:
        """Stop every worker now, the slots in flight unfinished: on SIGTERM a worker kills its bots at once
        (within a moment: no grace), removes their folders (bounded by MAX_SECONDS, instant unless a bot left a
        huge tree) and exits. A second Ctrl-C or SIGTERM meanwhile kills the workers outright (a bot's
        folder may be left behind then)."""
        forced = threading.Event()
        held = _on_stop_signals(forced)
        try:
            for worker in self._workers:
                worker.launched.signal(signal.SIGTERM)
            deadline = time.monotonic() + _WORKER_CLEANUP
            for thread in self._threads:  # a driving thread ends when its worker exits
                while thread.is_alive() and not forced.is_set() and time.monotonic() < deadline:
                    thread.join(timeout=0.05)
            for worker in self._workers:
                worker.close(grace=0.0 if forced.is_set() else max(0.0, deadline - time.monotonic()))
        finally:
            _restore_signals(held)


def _on_stop_signals(forced: threading.Event) -> dict[int, object] | None:
    """While workers stop: a further SIGINT or SIGTERM sets ``forced`` instead of raising."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def force(signum: int, frame: object) -> None:
        forced.set()

    return {signum: signal.signal(signum, force) for signum in (signal.SIGINT, signal.SIGTERM)}


def _restore_signals(held: dict[int, object] | None) -> None:
    for signum, handler in (held or {}).items():
        signal.signal(signum, handler)  # type: ignore[arg-type]
