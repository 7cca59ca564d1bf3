"""The executor on this machine: referee worker processes, each pinned to a core of its own with its bots."""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import threading
import time
from concurrent.futures import Future

import msgspec

from referee.bots.process import BotProcess
from referee.tournament.stop_signals import noted_stop_signals
from referee.tournament.worker import (
    WORKER_CLEANUP,
    BotSpec,
    Job,
    SlotDone,
    WorkerFailed,
    WorkerSetup,
    play_job,
    start_worker,
)

LOGGER = logging.getLogger("durak")
#: A worker's answer to one job.
DONE = msgspec.json.Decoder(SlotDone)


def worker_cores(jobs: int | None) -> list[int]:
    """The core of each worker: one per core this process may use, or ``jobs`` of them, round robin (more
    workers than cores share cores, and so do their bots: a warning says so)."""
    cores = sorted(os.sched_getaffinity(0))
    if jobs is not None and jobs > len(cores):
        LOGGER.warning("--jobs %d is more than the %d cores: games will share cores, and a bot's helpers may slow "
                       "the bots of another game", jobs, len(cores))
    return [cores[index % len(cores)] for index in range(len(cores) if jobs is None else jobs)]


class LocalExecutor:
    """The executor on this machine (:class:`referee.tournament.executors.SlotExecutor`): worker processes, each
    pinned to its core and driven by a thread that plays a batch's jobs in order and collects the answers."""

    batch_games = 1  # a slot a batch: each finished slot is stored before its worker's next job is sent

    def __init__(self, cores: list[int], setup: WorkerSetup) -> None:
        self.capacity = len(cores)
        self._batches: queue.Queue[tuple[list[Job], Future[list[SlotDone]]] | None] = queue.Queue()
        # launched from this thread: a worker's parent-death signal follows the thread that started it
        self._workers = [start_worker(msgspec.structs.replace(setup, core=core)) for core in cores]
        self._threads = [threading.Thread(target=self._drive, args=(w,), daemon=True) for w in self._workers]
        for thread in self._threads:
            thread.start()

    def check_version(self, spec: BotSpec, sha256: str) -> str | None:
        """Every worker here runs a bot as the coordinator does (one machine, one file system): no problem."""
        return None

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
        if cancel:  # drop the batches no worker has taken: a driving thread may take the last one meanwhile
            with contextlib.suppress(queue.Empty):
                while True:
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
        with noted_stop_signals() as forced:
            for worker in self._workers:
                worker.launched.signal(signal.SIGTERM)
            deadline = time.monotonic() + WORKER_CLEANUP
            for thread in self._threads:  # a driving thread ends when its worker exits
                while thread.is_alive() and not forced.any and time.monotonic() < deadline:
                    thread.join(timeout=0.05)
            for worker in self._workers:
                worker.close(grace=0.0 if forced.any else max(0.0, deadline - time.monotonic()))
