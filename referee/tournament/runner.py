"""The tournament run: open and check it (:mod:`.opening`), then play its course (:mod:`.course`) through the
coordinator (:mod:`.coordinator`) on an executor (:mod:`.executors`), with the stop signals of :mod:`.stop_signals`.

A run killed at any moment loses at most the slots in flight, and resuming plays exactly those.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from referee.bots.launcher import preflight
from referee.bots.sandbox.isolation import Isolation, probe_bwrap
from referee.results.store import DATABASE_SUFFIXES, Store
from referee.tournament.config import LoadedConfig
from referee.tournament.coordinator import Coordinator, GameSink
from referee.tournament.coordinator import RunSummary as RunSummary
from referee.tournament.course import Course, ScheduleCourse
from referee.tournament.errors import Interrupted as Interrupted
from referee.tournament.errors import PreflightError as PreflightError
from referee.tournament.errors import RunOptionsError
from referee.tournament.errors import TournamentError as TournamentError
from referee.tournament.executors import make_executor
from referee.tournament.opening import CHANGED_POLICIES as CHANGED_POLICIES
from referee.tournament.opening import BotIdentity, check_bots, identify_bot, open_tournament, preflight_bots
from referee.tournament.secret import protected_path, read_seed_file
from referee.tournament.stop_signals import sigterm_as_interrupt, stop_signal_number
from referee.tournament.worker import WorkerSetup, bot_command


@dataclass(frozen=True)
class RunRequest:
    """Where and how a run plays.

    Attributes:
        db_path: the results database (made, or resumed).
        jobs: workers on this machine (None: one per core); not with a cluster.
        fresh: start a new tournament in the database even if its stored one differs (the old is kept).
        seed_file: a private file holding the seed of a new tournament (:func:`read_seed_file`).
        bots_as_root: let bots that no unprivileged uid can reach run as root (trusted bots only).
        changed_bots: one of :data:`CHANGED_POLICIES`, for bots whose identity changed since their stored
            games: ``replay`` moves those games to history and plays them again, ``keep`` keeps them rated;
            both lift a disqualification.
        cluster: a Dask scheduler's address to play on (else the config's ``cluster`` key, if any).
    """

    db_path: Path
    jobs: int | None = None
    fresh: bool = False
    seed_file: Path | None = None
    bots_as_root: bool = False
    changed_bots: str | None = None
    cluster: str | None = None


@dataclass(frozen=True)
class _RunPlan:
    """What :func:`run_tournament` was asked, checked, for playing a course."""

    loaded: LoadedConfig
    isolation: Isolation
    identities: list[BotIdentity]
    changed_bots: str | None
    jobs: int | None  # --jobs: workers on this machine (None: one per core)
    cluster: str | None  # a Dask scheduler's address: play there
    setup: WorkerSetup
    progress_stream: TextIO | None


def run_tournament(loaded: LoadedConfig, request: RunRequest, progress_stream: TextIO | None = None, *,
                   course: Course | None = None) -> RunSummary:
    """Play every slot of the schedule not yet stored in ``request.db_path``, in ``request.jobs`` workers (None:
    one per core), each pinned with the bots of its games to a core of its own; or, given a cluster (a Dask
    scheduler's address, else the config's ``cluster`` key), on the workers of that Dask cluster, with a
    progress line on ``progress_stream``. ``course``: what to play in place of the config's schedule (an SPRT;
    ``loaded`` then holds only its bots).

    A new tournament's seed is the seed file's, else drawn; it is kept in the database only. A stored
    tournament keeps its seed (a seed file, if given, must hold the same). Before the first game every bot is
    started and handshaken once in its sandbox (the preflight).

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
    db_path, jobs, cluster, seed_file = request.db_path, request.jobs, request.cluster, request.seed_file
    fresh, bots_as_root, changed_bots = request.fresh, request.bots_as_root, request.changed_bots
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
    setup = WorkerSetup(config_path=str(loaded.path), sandbox=loaded.config.sandbox, protected=protected,
                        bots_as_root=bots_as_root)
    plan = _RunPlan(loaded, isolation, [identify_bot(bot, protected) for bot in loaded.bots], changed_bots, jobs,
                    cluster, setup, progress_stream)
    summary: RunSummary | None = None
    with sigterm_as_interrupt():
        try:
            with Store(db_path) as store:
                course = course or ScheduleCourse(loaded)
                tournament = open_tournament(store, loaded, fresh, seed, course.tournament_key)
                summary = RunSummary(tournament, 0, 0)
                _play_course(store, plan, summary, course)
                return summary
        except KeyboardInterrupt as stop:
            raise Interrupted(f"interrupted: {_kept_text(summary)}", stop_signal_number(stop)) from None


def _kept_text(summary: RunSummary | None) -> str:
    """What an interrupted run keeps, for its message: ``12 of 40 games stored``, or that none was played."""
    kept = 0 if summary is None else summary.stored_before + summary.played
    of = f" of {summary.total_games}" if summary is not None and summary.total_games else ""
    return f"{kept}{of} games stored" if kept or of else "no game played yet"


def _play_course(store: Store, plan: _RunPlan, summary: RunSummary, course: Course) -> None:
    """Check the bots against the stored tournament, preflight them, then play what is left of ``course`` where
    ``plan`` says (``--jobs``, ``--cluster``, the workers' setup)."""
    tournament, loaded = summary.tournament, plan.loaded
    rows, summary.superseded = check_bots(store, tournament, plan.identities, plan.changed_bots)
    preflight_bots(store, tournament, loaded, plan.isolation, rows)
    summary.stored_before = store.count_games(tournament.id)
    pending, total, progress = course.begin(store, tournament, summary.stored_before, plan.progress_stream)
    summary.total_games = total or 0  # 0: open-ended (an SPRT)
    disqualified = store.disqualified(tournament.id)
    sink = GameSink(store, tournament, {name: row.sha256 for name, row in rows.items()})
    coordinator = Coordinator(sink, course, summary, progress, loaded.config.max_failures, disqualified)
    executor = make_executor(plan.jobs, plan.cluster, plan.setup, loaded, rows, disqualified)
    cancel = True
    try:
        cancel = coordinator.play(pending, executor)
    finally:
        executor.shutdown(cancel)
    progress.finish()
    summary.disqualified = dict(sorted(disqualified.items()))
