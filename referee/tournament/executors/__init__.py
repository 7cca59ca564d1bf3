"""Where batches of slots are played: one seam shaped like :mod:`concurrent.futures` (``submit`` -> Future),
on this machine's cores (:mod:`.local`) or a Dask cluster's (:mod:`.dask`). Executors never touch the store."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Protocol

from referee.results.store import BotRow
from referee.tournament.config import LoadedConfig
from referee.tournament.executors.local import LocalExecutor, worker_cores
from referee.tournament.worker import BotSpec, Job, SlotDone, WorkerSetup


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

    def check_version(self, spec: BotSpec, sha256: str) -> str | None:
        """Whether every worker can run a bot that jobs will name (a league's new version), files and start; the
        first problem (one line), or None."""

    def shutdown(self, cancel: bool) -> None:
        """Stop the workers; ``cancel``: the batches in flight are abandoned (Ctrl-C, an error)."""


def make_executor(jobs: int | None, cluster: str | None, setup: WorkerSetup, loaded: LoadedConfig,
                  rows: dict[str, BotRow], disqualified: dict[str, str]) -> SlotExecutor:
    """The local executor with ``jobs`` workers (None: one per core), or the Dask one at ``cluster``.

    :raises TournamentError: the cluster cannot be reached or one of its workers fails its checks."""
    if cluster is None:
        return LocalExecutor(worker_cores(jobs), setup)
    from referee.tournament.executors.dask import ClusterExecutor  # the optional extra: imported only when asked for

    # a disqualified bot is never started: a worker checks its files, not that it starts
    bots = {name: (row.sha256, "" if name in disqualified else row.version) for name, row in rows.items()}
    return ClusterExecutor(cluster, setup, loaded, bots)
