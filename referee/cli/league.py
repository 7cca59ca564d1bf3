"""``durak league``: the league's daemon (``run``), its lifecycle commands (``add``, ``update``, ``retire``,
``reinstate``), what it holds (``status``) and its ``finals``.

A lifecycle command checks what it can at once (one line and exit 2 for an unknown bot, a name in use, a folder
that is missing or holds a link, an update that changed nothing), copies an add's or update's folder into the
league's bot store as the organizer (the daemon only ever reads the store), then writes its request to the
database. The daemon carries it out between batches; with no daemon running, the command carries it out itself,
with the config and seed the daemon keeps in the league's private folder. It waits for the outcome (``--wait``)
and prints it: an add or update refused by the gate exits 7.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated

import typer
from tabulate import tabulate

from referee.bots.plan import env_refusal
from referee.bots.sandbox.isolation import probe_bwrap
from referee.bots.words import expand_words
from referee.cli.app import app
from referee.cli.errors import UsageError, reported_errors
from referee.cli.exitcodes import ExitCode
from referee.cli.options import ClusterOption, JobsOption, RootOption, RunSandboxOption
from referee.cli.paths import check_league_database, check_writable
from referee.league.botstore import SnapshotError, folder_problem, folder_sha256, stage_folder, store_root
from referee.league.config import LoadedLeague, load_league
from referee.league.daemon import DaemonRequest, LeagueError, Stopped, protected_paths, run_league
from referee.league.finals import FinalsRequest, run_finals
from referee.league.lifecycle import LeagueLock, Lifecycle, wait_for
from referee.league.names import name_problem
from referee.league.private import LeaguePrivate, private_config
from referee.report.publisher import ReplayPublisher
from referee.results.arena_store import ArenaStore
from referee.results.league_store import LeagueStore, VersionRow
from referee.results.requests import (
    FEWEST_FINALISTS,
    MOST_FINALISTS,
    AddBot,
    Payload,
    QuarantineBot,
    ReinstateBot,
    RetireBot,
    UpdateBot,
)
from referee.results.rows import TournamentRow
from referee.text import visible

league_app = typer.Typer(name="league", help="A league: a competition that runs for weeks and takes new bots as it "
                         "runs (durak league run CONFIG starts its daemon).", no_args_is_help=True)
app.add_typer(league_app)

DbArg = Annotated[Path, typer.Argument(help="The league's database (durak league run made it).")]
NameArg = Annotated[str, typer.Argument(help="The bot's name in the league.")]
WaitOption = Annotated[float, typer.Option("--wait", min=0, help="Seconds to wait for the daemon to carry the "
                                           "request out (the gate included); 0: do not wait.")]
EnvOption = Annotated[list[str] | None, typer.Option("--env", help="An environment variable for the bot, "
                                                     "NAME=VALUE; repeatable.")]


@league_app.command("run")
def run_command(
    config: Annotated[Path, typer.Argument(help="The league config (sample_bots/league.toml is annotated).")],
    db: Annotated[Path | None, typer.Option("--db", help="The league's database (default: beside CONFIG, its "
                                            "stem + .db).")] = None,
    jobs: JobsOption = None,
    cluster: ClusterOption = None,
    sandbox: RunSandboxOption = None,
    bots_as_root: RootOption = False,
) -> None:
    """Run the league's daemon: play deal groups until stopped (Ctrl-C, SIGTERM), printing a progress line and
    the board at every refit; the same command resumes it. The first run keeps the config in the database. When
    the admin asks for the finals from the web, it completes the groups in flight, plays the finals, prints their
    board and ends."""
    with reported_errors():
        if jobs is not None and cluster is not None:
            raise UsageError("--jobs is for a league on this machine; with --cluster the Dask workers' threads "
                             "set how many games run at once")
        loaded = load_league(config, sandbox=sandbox)
        path = Path(os.path.abspath(db)) if db is not None else config.with_suffix(".db").absolute()
        check_writable(path, "the database")
        ended = run_league(loaded, DaemonRequest(path, jobs=jobs, cluster=cluster, bots_as_root=bots_as_root,
                                                 beside=(ReplayPublisher,)))
        # a stop by Ctrl-C or SIGTERM is how a league's run ends, not an error: exit 0 and what was kept; or the
        # finals the admin asked for from the web, played: the league is over
        typer.echo(ended.line if isinstance(ended, Stopped) else ended)


@league_app.command("add")
def add_command(  # noqa: PLR0913 (a typer command: a parameter per option)
    db: DbArg, name: NameArg,
    folder: Annotated[Path, typer.Option("--dir", help="The bot's folder: copied into the league's bot store "
                                         "(no link may be in it); the bot runs from that copy.")],
    command: Annotated[str, typer.Option("--command", help="The bot's command, run in its folder, split like a "
                                         "shell ('{python} bot.py': the referee's own Python; './bot').")],
    author: Annotated[str | None, typer.Option("--author", help="Who wrote it (no table seats two bots of one "
                                               "author); default: the bot's name.")] = None,
    env: EnvOption = None,
    wait: WaitOption = 300.0,
) -> None:
    """Enter a bot: its first version passes the gate (handshake and validation games), then is seated first."""
    with reported_errors():
        argv = _argv(command)
        check_league_database(db)
        with ArenaStore(db) as store:
            league = _league(store)
            _check_name(name)
            if any(v.bot == name for v in store.versions(league.id)):
                raise UsageError(f"the league has a bot {name!r} already: durak league update gives it a new version")
            _check_folder(folder)
            variables = _env(env)
            _ask(store, league, name, AddBot(staged=_stage(store, folder), command=argv, env=variables,
                                             author=author or name), wait)


@league_app.command("update")
def update_command(
    db: DbArg, name: NameArg,
    folder: Annotated[Path, typer.Option("--dir", help="The bot's folder, as for add.")],
    command: Annotated[str | None, typer.Option("--command", help="A new command (default: the last version's).")
                       ] = None,
    env: EnvOption = None,
    wait: WaitOption = 300.0,
) -> None:
    """Give a bot a new version (its files must have changed); the old one is retired, its games and rating kept."""
    with reported_errors(), league_store(db) as store:
        league = _league(store)
        latest = _latest(store, league, name)
        _check_folder(folder)
        try:
            unchanged = folder_sha256(folder) == latest.sha256
        except SnapshotError as exc:
            raise UsageError(str(exc)) from None
        if unchanged:
            raise UsageError(f"the files in {str(folder)!r} did not change since {latest.name}: no new version")
        argv = None if command is None else _argv(command)
        variables = _env(env) if env else None
        _ask(store, league, name, UpdateBot(staged=_stage(store, folder), command=argv, env=variables), wait)


@league_app.command("retire")
def retire_command(db: DbArg, name: NameArg, wait: WaitOption = 60.0) -> None:
    """Retire a bot: no new games; its versions stay on the board, marked."""
    _ask_of_a_bot(db, name, RetireBot(), wait)


@league_app.command("quarantine")
def quarantine_command(db: DbArg, name: NameArg, reason: Annotated[str, typer.Option(
        "--reason", help="Why, as the board and durak league status will say.")] = "by the organizer",
                       wait: WaitOption = 60.0) -> None:
    """Quarantine a bot's latest version: no new games, its open groups void, until reinstated."""
    with reported_errors(), league_store(db) as store:
        league = _league(store)
        _latest(store, league, name)
        _ask(store, league, name, QuarantineBot(reason=reason), wait)


@league_app.command("reinstate")
def reinstate_command(db: DbArg, name: NameArg, wait: WaitOption = 60.0) -> None:
    """Seat a bot's latest version again: lift its retirement or its quarantine."""
    _ask_of_a_bot(db, name, ReinstateBot(), wait)


def _ask_of_a_bot(db: Path, name: str, payload: Payload, wait: float) -> None:
    with reported_errors(), league_store(db) as store:
        league = _league(store)
        _latest(store, league, name)
        _ask(store, league, name, payload, wait)


@league_app.command("status")
def status_command(db: DbArg) -> None:
    """Every version (author, state, rated games as of the board's last refit, when added) and the requests not
    carried out yet."""
    with reported_errors(), league_store(db, write=False) as store:
        league = _league(store, open_to_entries=False)
        board = store.board(league.id)
        rated = {row.version: row.games for row in board}
        rows = [[visible(v.name), visible(v.author), visible(v.state()), rated.get(v.name, 0), v.added]
                for v in store.versions(league.id)]
        typer.echo(tabulate(rows, headers=["version", "author", "state", "rated games", "added"],
                            disable_numparse=True) if rows else "no versions yet")
        if rows:
            typer.echo(f"rated games as of the board's last refit ({board[0].fitted})" if board else
                       "rated games: no refit yet")
        for request in store.pending_requests(league.id):
            bot = f" {visible(request.bot)}" if request.bot else ""  # a finals request names no bot
            typer.echo(f"pending: request {request.id}: {request.kind}{bot} ({request.created})")


@league_app.command("finals")
def finals_command(
    db: DbArg,
    top: Annotated[int, typer.Option("--top", min=FEWEST_FINALISTS, max=MOST_FINALISTS,
                                     help="How many versions of the board play the finals.")],
    max_games: Annotated[int | None, typer.Option("--max-games", min=1, help="The budget (default: the config's "
                                                  "[league] finals_games).")] = None,
    jobs: JobsOption = None,
    bots_as_root: RootOption = False,
) -> None:
    """Freeze entries and play the board's top K on fresh duplicate deals, round robin at the largest table size,
    until every adjacent pair's LOS is at least 0.99 after a round, or the budget is spent."""
    with reported_errors():
        check_league_database(db)
        request = FinalsRequest(Path(os.path.abspath(db)), top, max_games, jobs, bots_as_root)
        typer.echo(run_finals(request))


# --- helpers ---------------------------------------------------------------------------------------------


def league_store(db: Path, *, write: bool = True) -> ArenaStore:
    """The league's database, once it is there (a mistyped path creates nothing) and, to ``write``, writable."""
    check_league_database(db, write=write)
    return ArenaStore(db) if write else ArenaStore(db, create=False)


def _league(store: LeagueStore, *, open_to_entries: bool = True) -> TournamentRow:
    league = store.league()
    if league is None:
        raise LeagueError(f"{store.path} holds no league: durak league run CONFIG --db {store.path} makes one")
    if open_to_entries and store.finals(league):
        raise LeagueError(f"the finals of league {league.name!r} have begun: entries are frozen")
    return league


def _latest(store: LeagueStore, league: TournamentRow, name: str) -> VersionRow:
    versions = [v for v in store.versions(league.id) if v.bot == name]
    if not versions:
        known = ", ".join(sorted({v.bot for v in store.versions(league.id)})) or "none yet"
        raise UsageError(f"no bot {name!r} in the league (its bots: {known})")
    return versions[-1]


def _check_name(name: str) -> None:
    if (problem := name_problem(name)) is not None:
        raise UsageError(problem)


def _check_folder(folder: Path) -> None:
    problem = folder_problem(folder)
    if problem is not None:
        raise UsageError(problem)


def _argv(command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"cannot split --command {command!r}: {exc}") from None
    if not argv:
        raise UsageError("--command is empty: it needs a program")
    return expand_words(argv)  # {python}: the referee's own interpreter, as in a config


def _env(options: list[str] | None) -> dict[str, str]:
    env: dict[str, str] = {}
    for option in options or []:
        name, equals, value = option.partition("=")
        if not equals:
            raise UsageError(f"--env takes NAME=VALUE, not {option!r}")
        if (why := env_refusal(name, value)) is not None:
            raise UsageError(f"--env {option!r}: {why}")
        env[name] = value
    return env


def _stage(store: LeagueStore, folder: Path) -> str:
    """Copy the bot's folder into the league's bot store as this user (the organizer), for the daemon to take."""
    try:
        return stage_folder(folder, store_root(store.path))
    except SnapshotError as exc:
        raise UsageError(str(exc)) from None


def _ask(store: ArenaStore, league: TournamentRow, bot: str, payload: Payload, wait: float) -> None:
    """Write the request; wait for the daemon to carry it out, or carry it out here when none runs."""
    request_id = store.add_request(league.id, bot, payload)
    typer.echo(f"request {request_id}: {payload.kind} {visible(bot)}", err=True)
    if wait <= 0:
        return
    done = wait_for(store, request_id, wait, carry_out=lambda: _carry_out_here(store, league))
    if done.status in ("pending", "working"):
        typer.echo(f"request {request_id} is still {done.status} after {wait:g} s: the daemon carries it out between "
                   "batches (durak league status shows it)", err=True)
        raise typer.Exit(int(ExitCode.CHECK_FAILED))
    typer.echo(f"{done.status}: {visible(done.result)}")
    if done.status != "done":
        raise typer.Exit(int(ExitCode.CHECK_FAILED))


def _carry_out_here(store: ArenaStore, league: TournamentRow) -> bool:
    """Carry out the pending requests if no daemon holds the league's lock; True if it did."""
    lock = LeagueLock(store.path)
    if not lock.acquire():
        return False
    try:
        private = LeaguePrivate(store.path)
        loaded: LoadedLeague = load_league(league.config_path, text=private_config(private, league), with_bots=False)
        isolation = loaded.table.isolation(protected_paths(store.path))
        if isolation.level == "bwrap":
            probe_bwrap()
        Lifecycle(store, private.with_seed(league), loaded, isolation).apply()
        return True
    finally:
        lock.release()
