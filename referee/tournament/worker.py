"""A tournament worker process: plays the slots the coordinator sends and reports each one.

Run as ``python -m referee.tournament.worker``. It speaks JSON lines on stdin/stdout: first a
:class:`WorkerSetup`, then one :class:`Job` per slot, answered by one :class:`SlotDone`; EOF
ends it. It keeps its bot processes across slots (``restart = "never"``): instance r of each
bot plays only rotation r (of one SPRT arm), so no process ever meets the same deal twice. :func:`start_worker` and
:func:`play_job` drive one from an executor, local or on a cluster's worker.

A league's worker learns its bots from its jobs, not from a config: each job names how to start the bots of its
table (:class:`BotSpec`) and which bots are gone (their processes are stopped); it keeps at most
``max_live`` bot processes, stopping the least recently used.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import msgspec

from protocol.messages import BotHello
from referee.bots.errors import BotError
from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.limits import ResourceLimits
from referee.bots.process import BotProcess
from referee.bots.sandbox.cleanup import MAX_SECONDS
from referee.bots.sandbox.isolation import Isolation
from referee.bots.session import BotClient
from referee.games.match import Series, play_series
from referee.results.record import GameRecord
from referee.results.reproduce import slot_bot_seed
from referee.tournament.config import LoadedConfig, ResolvedBot, TournamentConfig, check_config, load_config
from referee.tournament.schedule import Slot, instance_for

_NO_LIMITS = ResourceLimits(memory_mb=None, file_size_mb=None, open_files=None)
_WORKER_LINE = 1 << 30  # a slot's records with their replays
_SLOT_DEADLINE = 24 * 3600.0  # a worker always answers; this only bounds a referee bug
#: Seconds a worker has, at the end of a run, to stop its bots and remove their folders (a bot may leave a
#: deep tree), or, when the run is broken off, to remove their folders once its bots are killed.
WORKER_CLEANUP = MAX_SECONDS + 10.0


class WorkerFailed(RuntimeError):
    """A worker cannot play (it died, or a cluster's worker failed its checks); one line."""


class WorkerSetup(msgspec.Struct, frozen=True):
    config_path: str  # where the config is (its bots' folders are relative to its own)
    sandbox: str  # the config's, or --sandbox
    protected: list[str]  # paths no bot may see: the results database and its journal
    core: int | None = None  # the CPU this worker and every bot of its games run on
    bots_as_root: bool = False  # --bots-as-root
    config_text: str | None = None  # the config itself, when the file may not be on this machine (a cluster)
    #: A league's table, checked as a config's (its bots come with the jobs); None: the config's
    table: TournamentConfig | None = None
    max_live: int | None = None  # bot processes kept at most (a league's); None: every one


class BotSpec(msgspec.Struct, frozen=True):
    """How a worker starts a bot it learns of through a job: a league's version, from its snapshot."""

    name: str
    argv: list[str]
    dir: str
    env: dict[str, str] = {}


class Job(msgspec.Struct, frozen=True):
    slot: Slot
    disqualified: dict[str, str] = {}  # bots whose seats forfeit without starting them, and why
    bots: list[BotSpec] = []  # the table's bots, for a worker that learns them from its jobs (a league's)
    gone: list[str] = []  # bots whose processes are to be stopped (a league's retired or quarantined versions)


class Disqualified(BotError):
    """The bot failed too many times in a row; its remaining games are forfeits, without starting it."""

    verdict = "disqualified"


class DisqualifiedClient(BotClient):
    """Stands in for a disqualified bot: it forfeits every game at the start."""

    def start(self) -> BotHello:
        raise Disqualified(f"disqualified: {self.why}")

    def __init__(self, name: str, why: str) -> None:
        super().__init__(name, BotCommand(["disqualified"]))
        self.why = why


class SlotDone(msgspec.Struct, frozen=True):
    slot_key: str
    games: list[GameRecord]


def setup_config(setup: WorkerSetup) -> LoadedConfig:
    """The config a worker plays by: a tournament's (its file, or the text sent), or a league's table.

    :raises ConfigError: it does not load here.
    """
    if setup.table is not None:  # a league's: its bots come with the jobs
        return check_config(setup.table, setup.config_path, sandbox=setup.sandbox, table_only=True)
    return load_config(setup.config_path, sandbox=setup.sandbox, text=setup.config_text)


def start_worker(setup: WorkerSetup) -> BotProcess:
    """A worker process (``python -m referee.tournament.worker``), set up; it dies with the thread that calls
    this (its parent-death signal), and its bots die with it."""
    worker = BotProcess(BotCommand([sys.executable, "-m", "referee.tournament.worker"]), _NO_LIMITS,
                        max_line=_WORKER_LINE)
    worker.write_line(msgspec.json.encode(setup), time.monotonic() + 10)
    return worker


def play_job(worker: BotProcess, job: bytes) -> bytes:
    """One slot (a :class:`Job`, encoded) played by a worker: its :class:`SlotDone` line, undecoded.

    :raises WorkerFailed: the worker died or broke the protocol; the message ends with its last stderr.
    """
    try:
        line, _ = worker.exchange(job, _SLOT_DEADLINE)
        return line
    except (BotError, OSError, ValueError) as exc:
        tail = " | ".join(worker.stderr_log.last_lines(3))
        raise WorkerFailed(f"a worker failed: {exc} {tail}".strip()) from None


def bot_command(bot: ResolvedBot) -> BotCommand:
    """The bot's command in its own folder, with a scrubbed environment plus the config's ``env`` (HOME and TMPDIR
    are the launcher's: the bot's private writable folder, as in ``durak play``)."""
    return BotCommand(bot.argv, cwd=bot.dir, env=scrubbed_env(bot.env))


class SlotPlayer:
    """Plays slots with persistent bot clients, one per (bot, instance), at most ``max_live`` of them running
    (the least recently used is stopped first; None: no cap)."""

    def __init__(self, loaded: LoadedConfig, isolation: Isolation, max_live: int | None = None) -> None:
        self.loaded = loaded
        self.isolation = isolation
        self.max_live = max_live
        self.bots = {bot.name: bot for bot in loaded.bots}
        self.clients: dict[tuple[str, tuple[int, int]], BotClient] = {}  # least recently used first

    def client(self, name: str, instance: tuple[int, int]) -> BotClient:
        key = (name, instance)
        if key in self.clients:
            self.clients[key] = self.clients.pop(key)  # now the most recently used
        else:
            self.clients[key] = BotClient(
                name, bot_command(self.bots[name]), limits=self.loaded.resource_limits(),
                time_control=self.loaded.time_control(), isolation=self.isolation)
        return self.clients[key]

    def learn(self, job: Job) -> None:
        """Take in the bots a job names, and stop the processes of those it says are gone."""
        for spec in job.bots:
            self.bots[spec.name] = ResolvedBot(name=spec.name, argv=spec.argv, dir=Path(spec.dir), env=spec.env)
        gone = set(job.gone)
        for key in [key for key in self.clients if key[0] in gone]:
            self.clients.pop(key).stop()

    def _evict(self, keep: set[tuple[str, tuple[int, int]]]) -> None:
        """Stop the least recently used running clients, beyond ``max_live``, that this slot does not use."""
        if self.max_live is None:
            return
        running = [key for key, client in self.clients.items() if client.is_running and key not in keep]
        for key in running[:max(0, len(running) + len(keep) - self.max_live)]:
            self.clients.pop(key).stop()

    def play(self, slot: Slot, disqualified: dict[str, str]) -> list[GameRecord]:
        restart = self.loaded.config.restart == "game"
        instance = (0, 0) if restart else instance_for(slot)
        clients = [DisqualifiedClient(name, disqualified[name]) if name in disqualified
                   else self.client(name, instance) for name in slot.table]
        self._evict({(name, instance) for name in slot.table})
        series = Series(self.loaded.rules, slot.games, slot.deal_seed, series_id=f"{slot.key}|g",
                        deal_key=slot.deal_key, bot_seed=slot_bot_seed(slot.deal_seed, slot.rotation))
        records = play_series(series, clients, on_game=(lambda _record: self._stop(clients)) if restart else None)
        return records

    @staticmethod
    def _stop(clients: list[BotClient], grace: float = 0.5) -> None:
        for client in clients:
            client.stop(grace)

    def close(self, grace: float = 0.5) -> None:
        """Stop every bot process; each gets ``grace`` seconds to exit on its own."""
        self._stop(list(self.clients.values()), grace)


class _Stopped(BaseException):
    """SIGTERM from the coordinator: the slot in flight is abandoned (a BaseException: no handler of a bot's
    errors may swallow it)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Stopped()


def main() -> None:
    read = sys.stdin.buffer.readline
    out = sys.stdout.buffer
    setup = msgspec.json.decode(read(), type=WorkerSetup)
    if setup.core is not None:  # before any bot starts: each bot's cpuset is the cores its launcher may use
        os.sched_setaffinity(0, {setup.core})
    loaded = setup_config(setup)
    player = SlotPlayer(loaded, loaded.isolation(setup.protected, allow_root=setup.bots_as_root), setup.max_live)
    job_decoder = msgspec.json.Decoder(Job)
    encoder = msgspec.json.Encoder()
    grace = 0.5
    signal.signal(signal.SIGTERM, _on_sigterm)  # the run is stopped: stop the bots at once, store nothing
    try:
        while line := read():
            job = job_decoder.decode(line)
            player.learn(job)
            done = SlotDone(slot_key=job.slot.key, games=player.play(job.slot, job.disqualified))
            out.write(encoder.encode(done) + b"\n")
            out.flush()
    except _Stopped:
        grace = 0.0
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the cleanup is not cut short
        player.close(grace)


if __name__ == "__main__":
    main()
