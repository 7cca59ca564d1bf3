"""The Dask executor: batches of slots played on a Dask cluster, in the referee's own worker processes there.

Dask only dispatches. A task is one batch of whole deals (:func:`play_batch`). On a Dask worker it is played
by a referee worker process (``python -m referee.tournament.worker``, one thread) from a pool that lives as
long as the Dask worker process (:class:`_RefereePool`): started when first needed, one per task running at
once, each pinned to a core that no other referee worker of that machine holds (a lock file per core), with
its bots' persistent processes. Referee workers are started from one thread that lives as long as the Dask
worker, so their parent-death signal, and their bots', fires when the Dask worker dies, and at no other time.

The coordinator sends the config's text and per-slot deal seeds (a job's slot), never the tournament seed.
Results come back a batch at a time; the coordinator stores a batch in one transaction, each slot once (a batch
that Dask runs again after losing a worker is deduplicated by slot).

Bots reach the workers by the same paths: every worker has the config's bot folders at the same absolute paths
and the bots' runtimes (node, a compiler's output, ...). Before the first game of a run on a worker
(:func:`check_worker`), it checks that it runs the coordinator's durak-referee version, hashes each bot's files
against the coordinator's digest, checks each bot's program as a launch would, and starts and handshakes each
bot once in its sandbox: any failure is one line naming the worker and the bot, and stops the run before a
game is played, never a run of forfeits.
"""

from __future__ import annotations

import itertools
import logging
import os
import secrets
import signal
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from referee import __version__
from referee.bots.cores import claim_core
from referee.bots.errors import BotError, BotLaunchError, LauncherError
from referee.bots.launcher import preflight
from referee.bots.process import BotProcess
from referee.bots.sandbox.isolation import Isolation, SandboxUnavailable
from referee.bots.session import BotClient
from referee.tournament.botfiles import BotFilesError, bot_files_sha256
from referee.tournament.config import ConfigError, LoadedConfig, ResolvedBot
from referee.tournament.worker import (
    WORKER_CLEANUP,
    BotSpec,
    Job,
    SlotDone,
    WorkerFailed,
    WorkerSetup,
    bot_command,
    play_job,
    setup_config,
    start_worker,
)

LOGGER = logging.getLogger("durak")
#: The least games a task holds: enough that Dask's few milliseconds a task are about 1% of its time.
BATCH_GAMES = 64
#: How long to wait for the Dask scheduler to answer, then for its first worker.
CONNECT_SECONDS = 30.0
_CHECK_SECONDS = 60.0  # for a worker's checks, plus twice each bot's startup time
_RECOUNT_SECONDS = 5.0
_DONE = msgspec.json.Decoder(SlotDone)


class ClusterRun(msgspec.Struct, frozen=True):
    """What every task of one run carries: how to set up a referee worker, and what to check first."""

    id: str  # random, per run: referee workers and checks are kept per run
    worker: WorkerSetup  # with the config's text; no core (each machine picks its own)
    bots: dict[str, tuple[str, str]]  # name -> (SHA-256 of its files, the version its handshake gave)
    referee: str  # the coordinator's durak-referee version


_RUN = msgspec.json.Decoder(ClusterRun)


class ClusterUnavailable(WorkerFailed):
    """The cluster cannot take the run: Dask missing, the scheduler unreachable, TLS without a client certificate,
    no worker, or a worker that fails its checks. Raised before any game is played there; one line."""


def connect(address: str) -> Any:
    """A ``distributed.Client`` (only partly typed: Any) of the scheduler at ``address``, with Dask's TLS settings,
    once it has a worker: how ``durak tournament``, ``league run`` and ``analyze`` reach a cluster. Dask is
    imported here, only when a cluster is asked for.

    :raises ClusterUnavailable: Dask is not installed, a malformed address, a TLS address without a client
        certificate in Dask's settings, a scheduler that does not answer or has no worker within
        :data:`CONNECT_SECONDS`."""
    try:
        import distributed
        from distributed.comm.addressing import get_address_host_port
    except ImportError:
        raise ClusterUnavailable("--cluster needs Dask: pip install -e '.[cluster]' (on every worker too)") from None
    settings: Any = distributed.Security  # distributed is only partly typed
    security = settings()  # Dask's TLS settings (its config files and DASK_* variables)
    if address.startswith("tls://") and not (security.tls_ca_file and security.tls_client_cert):
        raise ClusterUnavailable(f"{address} is a TLS scheduler, and Dask's settings hold no client certificate: "
                                 "set distributed.comm.tls.ca-file, .client.cert and .client.key (docs/SCALING.md)")
    make: Any = distributed.Client
    try:
        # a malformed address first: the client it would half-make waits a minute at exit, then prints a traceback
        get_address_host_port(address)
        client = make(address, timeout=CONNECT_SECONDS, set_as_default=False, security=security)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterUnavailable(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except TimeoutError:
        client.close()
        raise ClusterUnavailable(f"the Dask scheduler at {address} has no workers") from None
    except BaseException:
        client.close()
        raise
    return client


class ClusterExecutor:
    """The executor on a Dask cluster (:class:`referee.tournament.executors.SlotExecutor`).

    ``bots``: each bot's (files SHA-256, version) as the coordinator found them.

    :raises ClusterUnavailable: Dask is not installed, the scheduler cannot be reached or has no worker, or a
        worker fails its checks (the message names it and the bot).
    """

    batch_games = BATCH_GAMES

    def __init__(self, address: str, setup: WorkerSetup, loaded: LoadedConfig,
                 bots: dict[str, tuple[str, str]]) -> None:
        run = ClusterRun(id=secrets.token_hex(8), worker=msgspec.structs.replace(
            setup, config_text=loaded.path.read_text(), core=None), bots=bots, referee=__version__)
        self._run = run
        self._startup = loaded.time_control().startup_time
        self._payload = msgspec.json.encode(run)
        self._tasks: set[Any] = set()  # distributed.Future: distributed is only partly typed
        self._numbers = itertools.count()
        self._client = connect(address)
        try:
            if setup.sandbox != "bwrap":  # once the cluster is there: a cluster it cannot use is one line
                LOGGER.warning("sandbox %r leaves bots the network: on a cluster they can reach the scheduler and "
                               "the workers (docs/SCALING.md); use bwrap", setup.sandbox)
            self._capacity = self._check_workers()
        except BaseException:
            self._client.close()
            raise
        self._counted = time.monotonic()

    @property
    def capacity(self) -> int:
        """Two batches a worker thread, recounted every few seconds: workers may join or leave mid-run (one that
        joins checks itself before its first batch)."""
        now = time.monotonic()
        if now >= self._counted + _RECOUNT_SECONDS:
            self._counted = now
            self._capacity = 2 * max(1, sum(self._client.nthreads().values()))
        return self._capacity

    def _check_workers(self) -> int:
        """Run :func:`check_worker` on every worker; the batches worth keeping in flight (two a thread)."""
        workers: dict[str, Any] = self._client.scheduler_info()["workers"]
        checks = [self._client.submit(check_worker, self._payload, workers=[address], allow_other_workers=False,
                                      pure=False, key=f"durak-check-{self._run.id}-{address}")
                  for address in workers]
        # a check hashes every bot's files and starts each bot once: bounded, so that a stalled worker or a lost
        # connection is an error line, never a run that waits for ever before its first game
        limit = _CHECK_SECONDS + 2 * self._startup * len(self._run.bots)
        for address, check in zip(workers, checks, strict=True):
            try:
                check.result(timeout=limit)
            except WorkerCheckError as exc:
                raise ClusterUnavailable(str(exc)) from None
            except TimeoutError:
                raise ClusterUnavailable(f"Dask worker {address} did not finish its checks within {limit:.0f} s"
                                         ) from None
            except Exception as exc:  # Dask's own: the connection to the scheduler lost, the worker gone, ...
                raise ClusterUnavailable(f"the checks on Dask worker {address} failed: {type(exc).__name__}: {exc}"
                                         ) from None
        return 2 * max(1, sum(int(worker["nthreads"]) for worker in workers.values()))

    def check_version(self, spec: BotSpec, sha256: str) -> str | None:
        """Whether every worker can run a bot it learns of through its jobs (a league's new version): its files at
        the same path with the same digest, and a start with its handshake in its sandbox; the first problem (one
        line naming the worker), or None."""
        workers: dict[str, Any] = self._client.scheduler_info()["workers"]
        key = f"durak-version-{self._run.id}-{spec.name}-{secrets.token_hex(4)}"
        checks = [self._client.submit(check_version, self._payload, msgspec.json.encode(spec), sha256,
                                      workers=[address], allow_other_workers=False, pure=False,
                                      key=f"{key}-{address}") for address in workers]
        limit = _CHECK_SECONDS + 2 * self._startup
        for address, check in zip(workers, checks, strict=True):
            try:
                problem = check.result(timeout=limit)
            except Exception as exc:  # Dask's own, or the time limit: the worker cannot be said to run it
                return f"Dask worker {address}: the check failed: {type(exc).__name__}: {exc}"
            if problem is not None:
                return f"Dask worker {address}: {problem}"
        return None

    def submit(self, batch: list[Job]) -> Future[list[SlotDone]]:
        future: Future[list[SlotDone]] = Future()
        task = self._client.submit(play_batch, self._payload, [msgspec.json.encode(job) for job in batch],
                                   pure=False, key=f"durak-batch-{self._run.id}-{next(self._numbers)}")
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._settle(done, future))  # called in a thread of the client's
        return future

    def _settle(self, task: Any, future: Future[list[SlotDone]]) -> None:
        self._tasks.discard(task)
        try:
            lines = task.result()
            future.set_result([_DONE.decode(line) for line in lines])
        except (WorkerCheckError, WorkerFailed) as exc:
            future.set_exception(WorkerFailed(str(exc)))
        except Exception as exc:  # Dask's own: a task lost with too many workers (KilledWorker), cancelled, ...
            future.set_exception(WorkerFailed(f"a cluster task failed: {type(exc).__name__}: {exc}"))

    def shutdown(self, cancel: bool) -> None:
        """Cancel what is in flight (``cancel``), stop this run's referee workers on every worker, disconnect."""
        try:
            if cancel and self._tasks:
                self._client.cancel(list(self._tasks))
            self._client.run(close_run, self._run.id, cancel, wait=True)
        except Exception as exc:  # a scheduler gone: its workers' referee workers die with them
            LOGGER.warning("could not stop the run's referee workers on the cluster: %s", exc)
        finally:
            self._client.close()


# --- on the Dask workers ------------------------------------------------------------------------------


class WorkerCheckError(RuntimeError):
    """A Dask worker cannot play this run's games as the coordinator would; one line naming it and the bot."""


def play_batch(payload: bytes, jobs: list[bytes]) -> list[bytes]:
    """A Dask task: play ``jobs`` (encoded :class:`Job`) in order in one referee worker of this machine;
    their :class:`SlotDone` lines."""
    run = _RUN.decode(payload)
    pool = _pool()
    pool.check(run)
    referee = pool.checkout(run)
    try:
        lines = [play_job(referee.process, job) for job in jobs]
    except BaseException:
        pool.discard(referee)
        raise
    pool.checkin(referee)
    return lines


def check_worker(payload: bytes) -> None:
    """A Dask task: check this worker for the run, once per worker process (:class:`WorkerCheckError`)."""
    _pool().check(_RUN.decode(payload))


def check_version(payload: bytes, spec: bytes, sha256: str) -> str | None:
    """A Dask task: whether this worker can run a bot a job would name (a league's new version) as the coordinator
    does; the problem, or None."""
    run, bot = _RUN.decode(payload), msgspec.json.decode(spec, type=BotSpec)
    setup = run.worker
    try:
        loaded = setup_config(setup)
        here = bot_files_sha256(Path(bot.dir))
        if here != sha256:
            return (f"the files of {bot.name!r} in {bot.dir} are not the coordinator's (SHA-256 {here[:12]}... here, "
                    f"{sha256[:12]}... there): every worker needs the league's bot store at the same path")
        resolved = ResolvedBot(name=bot.name, argv=bot.argv, dir=Path(bot.dir), env=bot.env)
        return _bot_problem(resolved, None, "start", loaded, loaded.isolation(setup.protected,
                                                                              allow_root=setup.bots_as_root),
                            setup.protected)
    except (BotFilesError, FileNotFoundError, ConfigError, LauncherError, SandboxUnavailable) as exc:
        return f"{bot.name!r}: {exc}"
    except BotLaunchError as exc:
        return f"{bot.name!r}: {exc} (is its runtime installed on every worker?)"
    except BotError as exc:
        return f"{bot.name!r} does not start here as on the coordinator: {exc.verdict}: {exc.reason}"


def close_run(run_id: str, cancel: bool) -> int:
    """Run on every worker at the end of a run (``Client.run``): stop its referee workers, idle or busy (a
    cancelled batch's), in the background; ``cancel``: a batch in flight is abandoned at once. The number
    stopped."""
    return _pool().close_run(run_id, cancel)


class _Referee:
    """One referee worker process of a run, with the lock on its core."""

    def __init__(self, run_id: str, process: BotProcess, core_lock: int | None) -> None:
        self.run_id = run_id
        self.process = process
        self.core_lock = core_lock

    def close(self, cancel: bool) -> None:
        """Stop the referee worker: at the end of its jobs, or (``cancel``) now, its slot in flight abandoned (on
        SIGTERM it kills its bots at once); either way with the time to remove its bots' folders."""
        try:
            if cancel:
                self.process.launched.signal(signal.SIGTERM)
            self.process.close(grace=WORKER_CLEANUP)
        finally:
            if self.core_lock is not None:
                os.close(self.core_lock)


class _RefereePool:
    """The referee workers of one Dask worker process, per run, and the runs it has checked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._check_lock = threading.Lock()
        self._idle: list[_Referee] = []
        self._busy: set[_Referee] = set()
        self._checked: dict[str, str | None] = {}  # run id -> why this worker cannot play it, or None
        self._closed: set[str] = set()  # runs that ended: a referee worker checked in for one of them is closed
        self._launcher = ThreadPoolExecutor(1, thread_name_prefix="durak-launcher")  # lives as long as we do

    def check(self, run: ClusterRun) -> None:
        if run.id in self._closed:  # a batch that Dask started after the run was stopped: check nothing, play nothing
            raise WorkerFailed("the run has ended")
        with self._check_lock:
            if run.id not in self._checked:
                self._checked[run.id] = _problem(run)
            problem = self._checked[run.id]
        if problem is not None:
            raise WorkerCheckError(problem)

    def checkout(self, run: ClusterRun) -> _Referee:
        with self._lock:
            if run.id in self._closed:
                raise WorkerFailed("the run has ended")
            stale = [referee for referee in self._idle if referee.run_id != run.id]  # a coordinator that vanished
            mine = [referee for referee in self._idle if referee.run_id == run.id]
            self._idle = mine[:-1]
            referee = mine[-1] if mine else None
        _close_in_background(stale, cancel=False)
        if referee is None:
            referee = self._launcher.submit(_start_referee, run).result()
        with self._lock:
            self._busy.add(referee)
        return referee

    def checkin(self, referee: _Referee) -> None:
        with self._lock:
            self._busy.discard(referee)
            closed = referee.run_id in self._closed
            if not closed:
                self._idle.append(referee)
        if closed:  # its run ended while it played its last batch
            _close_in_background([referee], cancel=False)

    def discard(self, referee: _Referee) -> None:
        with self._lock:
            self._busy.discard(referee)
        _close_in_background([referee], cancel=True)

    def close_run(self, run_id: str, cancel: bool) -> int:
        """Close the run's idle referee workers; a busy one is only told to stop (``cancel``: SIGTERM cuts its
        slot short), and its task's thread closes it: a process is never closed under the thread using it."""
        with self._lock:
            idle = [r for r in self._idle if r.run_id == run_id]
            busy = [r for r in self._busy if r.run_id == run_id]
            self._idle = [r for r in self._idle if r.run_id != run_id]
            self._closed.add(run_id)
            self._checked.pop(run_id, None)
        _close_in_background(idle, cancel=False)
        for referee in busy if cancel else []:
            referee.process.launched.signal(signal.SIGTERM)
        return len(idle) + len(busy)


_POOL: _RefereePool | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> _RefereePool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = _RefereePool()
        return _POOL


def _start_referee(run: ClusterRun) -> _Referee:
    core, lock = claim_core()
    process = start_worker(msgspec.structs.replace(run.worker, core=core))
    return _Referee(run.id, process, lock)


def _close_in_background(referees: list[_Referee], cancel: bool) -> None:
    """Close without holding up the caller (a task thread, or the worker's event loop in ``Client.run``)."""
    for referee in referees:
        threading.Thread(target=referee.close, args=(cancel,), daemon=True).start()


def _problem(run: ClusterRun) -> str | None:
    """Why this worker cannot play the run as the coordinator would (one line), or None."""
    where = f"Dask worker {_address()}"
    if run.referee != __version__:
        return (f"{where} runs durak-referee {__version__}, the coordinator {run.referee}: install the same "
                "version on every worker")
    setup = run.worker
    try:
        loaded = setup_config(setup)
        isolation = loaded.isolation(setup.protected, allow_root=setup.bots_as_root)
    except (ConfigError, LauncherError, SandboxUnavailable) as exc:
        return f"{where}: {exc}"
    for bot in loaded.bots:
        digest, version = run.bots[bot.name]
        try:
            problem = _bot_problem(bot, digest, version, loaded, isolation, setup.protected)
        except (BotFilesError, FileNotFoundError, LauncherError, SandboxUnavailable) as exc:
            problem = str(exc)
        except BotLaunchError as exc:
            problem = f"{exc} (is its runtime installed on every worker?)"
        except BotError as exc:
            problem = f"it does not start here as on the coordinator: {exc.verdict}: {exc.reason}"
        if problem is not None:
            return f"{where}: bot {bot.name!r}: {problem}"
    return None


def _bot_problem(bot: ResolvedBot, digest: str | None, version: str, loaded: LoadedConfig, isolation: Isolation,
                 protected: list[str]) -> str | None:
    """Check one bot's files (unless ``digest`` is None: checked by the caller), program and start; a problem
    found, or an exception raised."""
    if digest is not None and (here := bot.hashed_files(protected).sha256) != digest:
        return (f"its files in {bot.dir} are not the coordinator's (SHA-256 {here[:12]}... here, {digest[:12]}... "
                "there): every worker needs the same bot files at the same paths (docs/SCALING.md)")
    preflight(bot_command(bot), isolation)
    if version:  # a bot that does not start on the coordinator forfeits everywhere: nothing to compare
        client = BotClient(bot.name, bot_command(bot), limits=loaded.resource_limits(),
                           time_control=loaded.time_control(), isolation=isolation)
        try:
            client.start()
        finally:
            client.stop()
    return None


def _address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return os.uname().nodename
