"""Every error class of referee/ and protocol/ has an exit code (its own or a base's) or is known to be caught
before the command line; a worker that dies mid-run and a cluster that cannot take the run have codes of their own."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import signal
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import pytest
from clirun import invoke

import protocol
import referee
from referee.cli.errors import ERROR_CODES, exit_code_of
from referee.cli.exitcodes import ExitCode
from referee.tournament import config as config_module
from referee.tournament import runner as runner_module
from referee.tournament import worker as worker_module
from referee.tournament.executors import local as local_executor
from referee.tournament.runner import TournamentError

HOSTILE = Path(__file__).parent / "hostile"

#: Errors that never reach the command line, each with where it is caught (or why reaching it is a bug, which
#: main reports as "internal error").
INTERNAL = {
    "protocol.actions.InvalidActionError": "a bot's malformed action: a verdict in games/match.py _why_illegal",
    "protocol.cards.InvalidCardError": "becomes InvalidActionError (protocol/actions.py) or InvalidDealError "
                                       "(engine/deal.py)",
    "referee.bots.errors.BotError": "a verdict: caught in games/match.py, games/checkbot.py, bots/session.py",
    "referee.bots.errors.BotCrashed": "a verdict (crash) in games/match.py",
    "referee.bots.errors.BotOutOfMemory": "a verdict (memory) in games/match.py",
    "referee.bots.errors.BotTimeout": "a verdict (timeout) in games/match.py",
    "referee.bots.errors.BotProtocolError": "a verdict (protocol) in games/match.py",
    "referee.bots.errors.BotIllegalAction": "a verdict (illegal) in games/match.py",
    "referee.games.human.Resigned": "a verdict (resigned) in games/match.py",
    "referee.tournament.worker.Disqualified": "a verdict (disqualified) in games/match.py",
    "referee.bots.sandbox.cgroups.run.CgroupError": "becomes LauncherError in bots/launcher.py bot_cgroup",
    "referee.bots.sandbox.seccomp.SeccompUnavailable": "a warning in bots/launcher.py _seccomp_fd",
    "referee.bots.sandbox.cleanup._GiveUp": "caught in bots/sandbox/cleanup.py",
    "referee.engine.errors.IllegalActionError": "the referee asks only legal actions: reaching the CLI is a bug "
                                                "(report/steps.py catches it in a replay)",
    "referee.engine.errors.GameOverError": "the referee stops at the game's end: reaching the CLI is a bug",
    "referee.rating.bradley_terry.ConvergenceError": "a fit that does not converge is a bug to report",
    "referee.analysis.exact.BudgetExceeded": "caught in analysis/evaluate.py _exact: the decision is estimated",
    "referee.tournament.executors.dask.WorkerCheckError": "becomes ClusterUnavailable or WorkerFailed in "
                                                   "tournament/executors/dask.py",
    "referee.tournament.errors.Interrupted": "exits 130/143 by its signal in cli/errors.py reported_errors",
    "referee.tournament.stop_signals.Terminated": "becomes Interrupted in tournament/runner.py run_tournament",
    "referee.tournament.worker._Stopped": "caught in tournament/worker.py (a worker told to stop)",
    "referee.league.archive_formats.ArchiveError": "a refused upload, recorded in its row: league/uploads.py unpack",
    "referee.league.manifest.ManifestError": "a refused upload (league/uploads.py), a UsageError in cli/submit.py",
    "referee.league.uploads.UploadRefused": "a refused request in league/lifecycle.py _upload",
    "referee.league.build.BuildRefused": "a refused build step in league/lifecycle.py _build",
    "referee.league.botstore.SnapshotError": "a refused request in league/lifecycle.py, a UsageError in "
                                             "cli/league.py",
    "referee.web.refusals.Refused": "an HTTP answer (its status) in web/app.py's exception handlers",
    "referee.web.context.SignInFirst": "a 303 to /login: web/context.py's PAGE_EXCEPTIONS, on the author's pages",
    "referee.web.published.NotQuick": "a build that would not be quick in the event loop: caught in web/published.py "
                                      "make_now (it is made in a thread instead)",
    "referee.league.tables.Abandoned": "a card table given up as the daemon stops: caught in league/tables.py play",
    "referee.league.analyses.AnalysisFailed": "an analysis request failed with why: caught in league/analyses.py "
                                              "(the runner's step)",
    "referee.league.analyses.Abandoned": "an analysis given up as the daemon stops: caught in league/analyses.py "
                                         "(put back at the next start)",
    "referee.results.requests.PayloadProblem": "a request row that does not decode: RequestRow.problem, refused in "
                                               "league/lifecycle.py",
}


def error_classes(packages: Iterable[ModuleType]) -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of ``packages``, by qualified name (``__main__`` left out:
    importing it runs the CLI)."""
    found: dict[str, type[BaseException]] = {}
    for package in packages:
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def unreported(classes: dict[str, type[BaseException]]) -> list[str]:
    """The classes with no exit code along their MRO and no entry in :data:`INTERNAL`."""
    return sorted(name for name, cls in classes.items()
                  if name not in INTERNAL and not any(base in ERROR_CODES for base in cls.__mro__))


def test_every_error_class_has_an_exit_code_or_says_where_it_is_caught() -> None:
    classes = error_classes([referee, protocol])
    assert len(classes) > 30  # the walk found the modules
    assert unreported(classes) == []
    assert sorted(set(INTERNAL) - set(classes)) == []  # no stale entry
    assert [name for name in INTERNAL if exit_code_of(classes[name]("x")) is not None] == []  # nor a mapped one


def test_the_walk_reports_an_error_class_nobody_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutant: a new error class in a real module is reported; a new subclass of a mapped one is not."""
    orphan = type("FreshConfigTrouble", (RuntimeError,), {"__module__": config_module.__name__})
    child = type("FreshTournamentTrouble", (TournamentError,), {"__module__": runner_module.__name__})
    monkeypatch.setattr(config_module, "FreshConfigTrouble", orphan, raising=False)
    monkeypatch.setattr(runner_module, "FreshTournamentTrouble", child, raising=False)
    assert unreported(error_classes([referee])) == ["referee.tournament.config.FreshConfigTrouble"]
    assert exit_code_of(child("x")) == ExitCode.CONFIG and exit_code_of(orphan("x")) is None


def test_the_nearest_entry_along_the_mro_wins() -> None:
    from referee.tournament.executors.dask import ClusterUnavailable
    from referee.tournament.runner import PreflightError, RunOptionsError
    from referee.tournament.worker import WorkerFailed

    assert exit_code_of(PreflightError("x")) == ExitCode.BOT_PROGRAM  # not its base's CONFIG
    assert exit_code_of(RunOptionsError("x")) == ExitCode.USAGE
    assert exit_code_of(ClusterUnavailable("x")) == ExitCode.CLUSTER and int(ExitCode.CLUSTER) == 8
    assert exit_code_of(WorkerFailed("x")) == ExitCode.WORKER_FAILED and int(ExitCode.WORKER_FAILED) == 9
    assert {8, 9}.isdisjoint({ExitCode.SPRT_H1, ExitCode.SPRT_H0, ExitCode.SPRT_TRUNCATED})


def _config(folder: Path, deals: int) -> Path:
    path = folder / "t.toml"
    path.write_text(f'name = "t"\ndeals = {deals}\n[time]\nmove = 2.0\n'
                    f'[[bots]]\nname = "a"\ncommand = "{{python}} bot.py play"\ndir = "{HOSTILE}"\n'
                    f'[[bots]]\nname = "b"\ncommand = "{{python}} bot.py play"\ndir = "{HOSTILE}"\n')
    return path


def _stored(db: Path) -> int:
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(db)) as con:
        return int(con.execute("SELECT count(*) FROM games").fetchone()[0])


def test_a_worker_that_dies_mid_run_exits_9_with_the_command_that_resumes(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker process is killed before its third slot: the two stored games stay, the error line ends with
    the resume command, and that command finishes the run. (Before, this was exit 3, "bad config".)"""
    config, db = _config(tmp_path, deals=4), tmp_path / "t.db"
    play_job, calls = worker_module.play_job, []

    def dying(worker: object, job: bytes) -> bytes:
        calls.append(job)
        if len(calls) == 3:
            os.kill(worker.pid, signal.SIGKILL)  # type: ignore[attr-defined]  # a BotProcess: the worker dies
        return play_job(worker, job)  # type: ignore[arg-type]

    monkeypatch.setattr(local_executor, "play_job", dying)
    died = invoke("tournament", str(config), "--db", str(db), "--jobs", "1")
    assert died.code == ExitCode.WORKER_FAILED, died.output
    lines = [line for line in died.output.splitlines() if line.startswith("durak: error:")]  # and progress
    assert len(lines) == 1 and lines[0].startswith("durak: error: a worker failed: "), died.output
    assert lines[0].endswith(f"; to resume: durak tournament {config} --db {db} --jobs 1")
    assert "Traceback" not in died.output
    assert _stored(db) == 2  # a slot a game: the two played before the worker died
    monkeypatch.setattr(local_executor, "play_job", play_job)
    resumed = invoke(*lines[0].split("to resume: durak ")[1].split())
    assert resumed.code == 0, resumed.output
    assert "6 games played now, 8/8 stored" in resumed.output and _stored(db) == 8


def test_a_cluster_that_cannot_take_the_run_exits_8_and_plays_nothing(tmp_path: Path) -> None:
    """A TLS scheduler without a client certificate in Dask's settings: refused before connecting."""
    pytest.importorskip("distributed")
    config, db = _config(tmp_path, deals=1), tmp_path / "t.db"
    done = invoke("tournament", str(config), "--db", str(db), "--cluster", "tls://127.0.0.1:9")
    assert done.code == ExitCode.CLUSTER, done.output
    assert "hold no client certificate" in done.output and "to resume" not in done.output
    assert "Traceback" not in done.output


def test_jobs_with_a_cluster_is_refused_once_for_sprt_too(tmp_path: Path) -> None:
    """The run checks --jobs against --cluster for both commands (the CLI no longer has checks of its own)."""
    config, db = _config(tmp_path, deals=1), tmp_path / "s.db"
    done = invoke("sprt", str(config), "a", "b", "--elo0", "0", "--elo1", "10", "--db", str(db),
                                    "--jobs", "2", "--cluster", "tcp://127.0.0.1:9")
    assert done.code == ExitCode.USAGE, done.output
    assert done.output.strip().splitlines() == [
        "durak: error: --jobs is for a run on this machine: with --cluster, the Dask workers' threads (dask worker "
        "--nthreads) set how many games run at once"]
    assert not db.exists()
