"""The commands that run a stored, resumable schedule: ``tournament`` and ``sprt``, with the run options they
share and the one message that tells how to resume a run that stopped."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import typer

from referee.bots.sandbox.isolation import Level
from referee.cli.app import app
from referee.cli.errors import reported_errors
from referee.cli.exitcodes import ExitCode
from referee.cli.options import (
    ChangedBotsOption,
    ClusterOption,
    DbOption,
    FreshOption,
    JobsOption,
    PrivateOption,
    RootOption,
    RunSandboxOption,
    SeedFileOption,
)
from referee.cli.paths import check_writable
from referee.rating.leaderboard import render
from referee.report.tournament_page import LiveReport
from referee.results.sources import load_outcomes, load_stats
from referee.text import visible
from referee.tournament.config import LoadedConfig, load_config
from referee.tournament.course import Course
from referee.tournament.errors import Interrupted
from referee.tournament.executors.dask import ClusterUnavailable
from referee.tournament.runner import RunRequest, RunSummary, run_tournament
from referee.tournament.sprt_run import SprtCourse, SprtRequest, format_state, sprt_setup
from referee.tournament.worker import WorkerFailed


@dataclass(frozen=True)
class RunOptions:
    """The options of ``durak tournament`` and ``durak sprt`` that say how and where a run plays."""

    jobs: int | None
    db: str | None
    fresh: bool
    sandbox: Level | None
    seed_file: str | None
    changed_bots: Literal["replay", "keep"] | None
    bots_as_root: bool
    cluster: str | None

    def database(self, default: Path) -> Path:
        """``--db`` as an absolute path (the resume command may run elsewhere), else ``default``."""
        return Path(os.path.abspath(self.db)) if self.db is not None else default

    def repeated(self) -> list[str]:
        """The options a resume repeats: never --fresh (a new tournament) nor --seed-file or --changed-bots
        (done by then)."""
        again = ["--jobs", str(self.jobs)] if self.jobs else []
        again += ["--cluster", self.cluster] if self.cluster else []
        again += ["--sandbox", self.sandbox] if self.sandbox else []
        return again + (["--bots-as-root"] if self.bots_as_root else [])


def resume_command(command: str, arguments: list[str], db_path: Path, options: RunOptions) -> str:
    """The command line that goes on with a stopped run: ``durak COMMAND ARGUMENTS --db DB`` and its options."""
    return shlex.join(["durak", command, *arguments, "--db", str(db_path), *options.repeated()])


@contextmanager
def resumable(resume: str) -> Iterator[None]:
    """A run stopped by a signal or by a worker that died keeps its finished games: the error's message ends
    with ``resume``, the command that goes on where it stopped."""
    try:
        yield
    except Interrupted as stop:
        raise Interrupted(f"{stop}; to resume: {resume}", stop.signal_number) from None
    except ClusterUnavailable:
        raise  # nothing was played there: the cluster needs mending first
    except WorkerFailed as failed:
        raise WorkerFailed(f"{failed}; to resume: {resume}") from None


def run(loaded: LoadedConfig, db_path: Path, options: RunOptions, course: Course | None = None) -> RunSummary:
    """:func:`run_tournament` with the run options of the command line."""
    request = RunRequest(db_path, jobs=options.jobs, fresh=options.fresh, bots_as_root=options.bots_as_root,
                         seed_file=Path(options.seed_file) if options.seed_file is not None else None,
                         changed_bots=options.changed_bots, cluster=options.cluster)
    return run_tournament(loaded, request, course=course)


def echo_summary(kind: str, summary: RunSummary, db_path: Path, total: bool) -> None:
    """What a run did, as ``tournament`` and ``sprt`` print it: played now and stored (of the schedule's
    ``total``, when it has one), the games of changed bots played again, the disqualified bots and why."""
    stored = summary.stored_before + summary.played
    of = f"/{summary.total_games}" if total else ""
    typer.echo(f"{kind} '{visible(summary.tournament.name)}' (id {summary.tournament.id}) in {db_path}: "
               f"{summary.played} games played now, {stored}{of} stored")
    if summary.superseded:
        typer.echo(f"{summary.superseded} games of changed bots moved to history (not rated) and played again")
    for name, why in summary.disqualified.items():
        typer.echo(f"disqualified: {visible(name)}: {visible(why)}")


def default_database(config: str) -> Path:
    """A config's database when ``--db`` is left out: its stem + ``.db``, next to it (wherever it is run from)."""
    path = Path(os.path.abspath(config))
    return path.with_name(path.stem + ".db")


@app.command()
def tournament(  # noqa: PLR0913 (a typer command: a parameter per option)
    config: Annotated[str, typer.Argument(help="The tournament config (TOML), e.g. sample_bots/tournament.toml.")],
    jobs: JobsOption = None,
    db: DbOption = None,
    fresh: FreshOption = False,
    sandbox: RunSandboxOption = None,
    seed_file: SeedFileOption = None,
    changed_bots: ChangedBotsOption = None,
    report: Annotated[str | None, typer.Option(
        "--report", help="Keep an HTML report of the tournament (durak report) in this file while it runs: "
                         "rewritten every few seconds, mode 600; the page reloads itself. A deal's games "
                         "appear once all its seat rotations are stored.")] = None,
    private: PrivateOption = False,
    bots_as_root: RootOption = False,
    cluster: ClusterOption = None,
) -> None:
    """Run a tournament, resuming from the database, then print the leaderboard and per-bot statistics.

    Before the first game every bot is started and handshaken once in its sandbox: a bot that fails stops
    the run (exit 4) with its stderr, unless the config says preflight = "disqualify". The same config on
    the same database plays only the games not stored yet; Ctrl-C or SIGTERM stops at once (the games in
    flight are abandoned, not stored) and prints the command that resumes. The seed, from which every deck
    follows, is secret: it is in no config (a seed key is an error, since bots may read the config), it is
    drawn at the first run (or read from --seed-file) and kept only in the database (mode 600), and it is
    not printed. `durak seed DB` prints it, to publish it once the tournament is over or to give it to
    another database with --seed-file.
    """
    options = RunOptions(jobs, db, fresh, sandbox, seed_file, changed_bots, bots_as_root, cluster)
    with reported_errors():
        loaded = load_config(config, sandbox=sandbox)
        db_path = options.database(default_database(config))
        check_writable(db_path, "the database")
        if report is not None:
            check_writable(report, "the report")
        with resumable(resume_command("tournament", [str(loaded.path)], db_path, options)), \
                LiveReport(db_path, report, private=private) if report is not None else nullcontext():
            summary = run(loaded, db_path, options)
        echo_summary("tournament", summary, db_path, total=True)
        typer.echo("")
        typer.echo(render(load_outcomes(db_path), stats=load_stats(db_path)))


#: The exit code of each decision of ``durak sprt``.
SPRT_EXIT = {"H1": ExitCode.SPRT_H1, "H0": ExitCode.SPRT_H0, "truncated": ExitCode.SPRT_TRUNCATED}


def default_sprt_database(config: str) -> Path:
    """An SPRT's database when ``--db`` is left out: the config's stem + ``-sprt.db``, next to it."""
    path = Path(os.path.abspath(config))
    return path.with_name(path.stem + "-sprt.db")


@app.command()
def sprt(  # noqa: PLR0913 (a typer command: a parameter per option)
    config: Annotated[str, typer.Argument(help="The config (TOML) whose bots, rules, time, limits, sandbox, "
                                               "rotations and series the test uses; its schedule keys are ignored.")],
    new: Annotated[str | None, typer.Argument(
        help="The bot under test: a bot name of CONFIG (default: its [sprt] new).", show_default=False)] = None,
    base: Annotated[str | None, typer.Argument(
        help="The bot it is measured against: a bot name of CONFIG (default: its [sprt] base).",
        show_default=False)] = None,
    elo0: Annotated[float | None, typer.Option(
        "--elo0", help="H0: NEW is at most this many Elo stronger than BASE (default: [sprt] elo0).")] = None,
    elo1: Annotated[float | None, typer.Option(
        "--elo1", help="H1: NEW is at least this many Elo stronger, > --elo0 (default: [sprt] elo1).")] = None,
    field: Annotated[list[str] | None, typer.Option(
        "--field", help="A bot of CONFIG that NEW and BASE each play against, in turn (repeat for more seats); "
                        "without it ([sprt] field) NEW plays BASE head to head.")] = None,
    alpha: Annotated[float | None, typer.Option(
        "--alpha", help="The chance of accepting H1 when H0 holds (default: [sprt] alpha, or 0.05).")] = None,
    beta: Annotated[float | None, typer.Option(
        "--beta", help="The chance of accepting H0 when H1 holds (default: [sprt] beta, or 0.05).")] = None,
    max_games: Annotated[int | None, typer.Option(
        "--max-games", min=1, help="Stop without a decision (truncated) once this many games count; default: "
                                   "[sprt] max_games, or play until a decision.")] = None,
    mode: Annotated[Literal["fool", "order"] | None, typer.Option(
        "--mode", help="The Elo scale: the leaderboard's fool or order mode (default: [sprt] mode, or fool).")
                    ] = None,
    jobs: JobsOption = None,
    db: DbOption = None,
    fresh: FreshOption = False,
    sandbox: RunSandboxOption = None,
    seed_file: SeedFileOption = None,
    changed_bots: ChangedBotsOption = None,
    bots_as_root: RootOption = False,
    cluster: ClusterOption = None,
) -> None:
    """A sequential test (SPRT) of NEW against BASE on duplicate deals: play until it knows, then exit 10 (H1
    accepted: NEW is at least --elo1 stronger), 11 (H0 accepted: at most --elo0) or 12 (truncated by
    --max-games).

    Arguments left out come from CONFIG's [sprt] table (sample_bots/tournament.toml shows its keys).

    Each deal is played in every seat rotation by NEW and again by BASE, in the same seats against the same
    opponents (head to head: NEW against BASE, the deal in both seatings); each arm has its own bot
    processes. The test runs over these deal groups in schedule order, so it is stored and resumable like a
    tournament: the same command on the same database goes on where it stopped (Ctrl-C, SIGTERM) and reaches
    the same decision. A progress line shows the log-likelihood ratio with its bounds, the Elo difference with
    its 95% interval, the groups and games counted and the decision.
    """
    options = RunOptions(jobs, db, fresh, sandbox, seed_file, changed_bots, bots_as_root, cluster)
    with reported_errors():
        request = SprtRequest(new, base, tuple(field or ()), elo0, elo1, alpha, beta, max_games, mode)
        new, base, field_bots, test = request.resolve(loaded := load_config(config, sandbox=sandbox))
        loaded, plan = sprt_setup(loaded, new, base, field_bots)
        course = SprtCourse(loaded, plan, test)
        db_path = options.database(default_sprt_database(config))
        check_writable(db_path, "the database")
        # the test's own options in full (floats by repr: exact), so that the resume is the same test
        arguments = [str(loaded.path), new, base, *(f"--field={name}" for name in plan.field),
                     f"--elo0={test.elo0!r}", f"--elo1={test.elo1!r}", f"--alpha={test.alpha!r}",
                     f"--beta={test.beta!r}", f"--mode={test.mode}",
                     *([f"--max-games={test.max_games}"] if test.max_games else [])]
        with resumable(resume_command("sprt", arguments, db_path, options)):
            summary = run(loaded, db_path, options, course)
        state = course.state
        echo_summary("sprt", summary, db_path, total=False)
        typer.echo(format_state(state))
        meaning = {"H1": f"{new} is at least {test.elo1:g} Elo stronger than {base}",
                   "H0": f"{new} is at most {test.elo0:g} Elo stronger than {base}",
                   "truncated": f"no decision after {state.games} games (--max-games {test.max_games}, whole "
                                f"deal groups of {plan.games_per_group})"}
        typer.echo(f"{state.decision}: {visible(meaning[state.decision])}")
        raise typer.Exit(int(SPRT_EXIT[state.decision]))
