"""The ``durak`` command line: thin wrappers that parse, call the library and format.

Every expected failure becomes one line on stderr and an exit code of :class:`ExitCode`;
a traceback appears only with ``--debug``.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import typer
from tabulate import tabulate

from protocol.messages import PROTOCOL_VERSION
from protocol.records import ResultRecord
from protocol.rules import (
    OPTIONS,
    VARIANT_TITLES,
    VARIANTS,
    RulesError,
    applicable_options,
    parse_option_value,
    rules_from_options,
)
from referee import __version__
from referee.bots.errors import BotLaunchError, LauncherError
from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.sandbox.isolation import Level, SandboxUnavailable
from referee.cli.exitcodes import ExitCode
from referee.cli.rules_summary import SUMMARIES
from referee.engine import InvalidDealError, engine_build
from referee.games.botargs import BotArgError, parse_bot_arg
from referee.games.checkbot import CheckSetupError, check_bot, format_report, rules_to_check
from referee.games.play import PlayOptions, ResultsWriteError, prepare_isolation, run_play
from referee.games.selfplay import selfplay
from referee.rating.bradley_terry import AnchorError
from referee.rating.leaderboard import LEGEND, render
from referee.report.game_data import game_data
from referee.report.page import PageWriteError, viewer_page, write_private
from referee.report.tournament_data import ReportError
from referee.report.tournament_page import LiveReport, ReportWriter
from referee.results.replay import ReplayError, parse_replay, replay_lines, replays_of_log, seat_of, tell
from referee.results.sources import ResultsReadError, load_outcomes, load_stats
from referee.results.store import Store, StoreError, is_database
from referee.text import json_line, visible
from referee.tournament.config import BotFilesError, ConfigError, load_config
from referee.tournament.runner import Interrupted, PreflightError, TournamentError, run_tournament
from referee.tournament.secret import SeedFileError, write_seed_file
from referee.tournament.sprt_run import SprtCourse, SprtError, SprtRequest, format_state, sprt_setup

app = typer.Typer(
    name="durak",
    help="Referee for Durak card-game bots: rules, games between bot programs, tournaments and ratings.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_debug = False


def _print_version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


def version_text() -> str:
    """``durak-referee 0.1.0, protocol 2, engine compiled, Python 3.11.2``: what a bug report needs."""
    return (f"durak-referee {__version__}, protocol {PROTOCOL_VERSION}, engine {engine_build()}, "
            f"Python {'.'.join(map(str, sys.version_info[:3]))}")


@app.callback()
def _options(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors (before or after the command)."
                                        )] = False,
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="Print the referee's version and protocol, and exit.")] = False,
) -> None:
    global _debug
    _debug = _debug or debug


def fail(message: str, code: ExitCode) -> typer.Exit:
    typer.echo(f"durak: error: {visible(message)}", err=True)  # it may quote a bot's words
    return typer.Exit(int(code))


class UsageError(ValueError):
    """Command-line arguments that do not make sense together or are malformed (exit code 2)."""


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn the library's expected errors into one line and an exit code."""
    try:
        yield
    except (UsageError, BotArgError, AnchorError, SprtError) as exc:
        if _debug:
            raise
        raise fail(str(exc), ExitCode.USAGE) from None
    except PreflightError as exc:
        if _debug:
            raise
        raise fail(str(exc), ExitCode.BOT_PROGRAM) from None
    except (RulesError, InvalidDealError, ResultsReadError, ReplayError,
            ConfigError, BotFilesError, SeedFileError, TournamentError, ReportError) as exc:
        if _debug:
            raise
        raise fail(str(exc), ExitCode.CONFIG) from None
    except (ResultsWriteError, StoreError, PageWriteError) as exc:
        if _debug:
            raise
        raise fail(str(exc), ExitCode.DATABASE) from None
    except SandboxUnavailable as exc:
        if _debug:
            raise
        raise fail(str(exc), ExitCode.SANDBOX) from None
    except (BotLaunchError, LauncherError, CheckSetupError) as exc:
        if _debug:
            raise
        raise fail(str(exc), ExitCode.BOT_PROGRAM) from None
    except Interrupted as exc:
        code = ExitCode.TERMINATED if exc.signal_number == signal.SIGTERM else ExitCode.INTERRUPTED
        raise fail(str(exc), code) from None
    except KeyboardInterrupt:
        raise fail("interrupted", ExitCode.INTERRUPTED) from None


def parse_set_options(pairs: list[str]) -> dict[str, object]:
    """``["first_bout_limit=5", ...]`` -> options; a missing ``=`` is a RulesError."""
    options: dict[str, object] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise RulesError(f"--set takes OPTION=VALUE, not {pair!r}")
        options[name.strip()] = parse_option_value(value)
    return options


SandboxLevel = Level
SandboxOption = Annotated[SandboxLevel | None, typer.Option(
    "--sandbox", help="Bot isolation: bwrap (default: bubblewrap with its own uid, cgroups, seccomp, private "
                      "files, no network), process (weaker, opt-in: no private files), or none (trusted bots). "
                      "See docs/ISOLATION.md.")]
PrivateOption = Annotated[bool, typer.Option(
    "--private", help="Put every bot's stderr in the report (the organizer's own copy: stderr is private to "
                      "its bot). Left out by default.")]
RootOption = Annotated[bool, typer.Option(
    "--bots-as-root", help="Trusted bots only: at the process level, run a bot as root (with a warning) where "
                           "its own uid cannot reach its files, instead of refusing it.")]
VariantArg = Annotated[str, typer.Option("--variant", "-v", help=f"One of {', '.join(VARIANTS)}.")]
HtmlOption = Annotated[str | None, typer.Option(
    "--html", help="Also write the replay viewer: one HTML page (mode 600) that works offline, cards drawn, "
                   "stepped with buttons or arrow keys.")]
SetOption = Annotated[list[str] | None, typer.Option("--set", help="A rule option, OPTION=VALUE (repeatable).")]


@app.command()
def rules(variant: Annotated[str | None, typer.Argument(help="A variant; all variants when left out.")] = None
          ) -> None:
    """Print a variant's rules summary and its options with their defaults."""
    with reported_errors():
        if variant is None:
            rows = [[v, VARIANT_TITLES[v]] for v in VARIANTS]
            typer.echo(tabulate(rows, headers=["variant", "game"]))
            typer.echo("\n`durak rules VARIANT` for a summary and options; seeds/RULES.md for every rule.")
            return
        defaults = rules_from_options(variant, {})
        typer.echo(f"{variant}: {VARIANT_TITLES[variant]}\n")
        typer.echo(SUMMARIES[variant] + "\n")
        rows = [[name, _show(getattr(defaults, name)), OPTIONS[name][2]] for name in applicable_options(variant)]
        typer.echo(tabulate(rows, headers=["option", "default", "meaning"], maxcolwidths=[None, None, 70]))


def _show(value: object) -> str:
    return msgspec.json.encode(value).decode() if not isinstance(value, str) else value


@app.command(name="selfplay")
def selfplay_command(
    variant: VariantArg = "podkidnoy",
    players: Annotated[int, typer.Option("--players", "-n", min=2, max=6, help="Players at the table, 2-6.")] = 2,
    deck: Annotated[int, typer.Option("--deck", help="36 or 52 cards.")] = 36,
    games: Annotated[int, typer.Option("--games", "-g", min=1, help="Games to play.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed for the deals and the players.")] = 1,
    set_: SetOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Play games in-process between random legal players: a smoke test and the engine benchmark.

    Prints games per second, mean actions (decisions) per game and how often each seat was the fool.
    """
    with reported_errors():
        game_rules = rules_from_options(variant, {"deck": deck, **parse_set_options(set_ or [])})
        stats = selfplay(game_rules, players, games, seed)
    if as_json:
        typer.echo(msgspec.json.encode(stats.to_dict()).decode())
        return
    typer.echo(f"{stats.games} games of {variant}, {players} players, {deck} cards, seed {seed}")
    typer.echo(f"{stats.games_per_second:,.0f} games/s ({stats.seconds:.2f} s), "
               f"{stats.mean_actions:.1f} actions per game, {stats.draws} draws, {stats.capped} action caps")
    rows = [[seat, fools, f"{100 * fools / stats.games:.1f}%"] for seat, fools in enumerate(stats.fools)]
    typer.echo(tabulate(rows, headers=["seat", "fool", "fool %"], colalign=("right", "right", "right")))


@app.command()
def play(
    bots: Annotated[list[str], typer.Argument(
        help="Bot commands, one per seat in seat order, split like a shell; NAME=COMMAND names a bot.")],
    variant: VariantArg = "podkidnoy",
    deck: Annotated[int, typer.Option("--deck", help="36 or 52 cards.")] = 36,
    games: Annotated[int, typer.Option("--games", "-g", min=1, help="Games in the series (fixed seats).")] = 1,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="Deal seed; drawn at random if left out.")
                    ] = None,
    deal: Annotated[str | None, typer.Option("--deal", help="A full deck order, top first (one game).")] = None,
    dealer: Annotated[int | None, typer.Option("--dealer", min=0, help="The first dealer's seat.")] = 0,
    set_: SetOption = None,
    move_time: Annotated[float, typer.Option("--move-time", min=0.001, help="Seconds per decision.")] = 1.0,
    startup_time: Annotated[float, typer.Option("--startup-time", min=0.001,
                                                help="Seconds for a bot to start and answer the handshake.")] = 10.0,
    time_bank: Annotated[float | None, typer.Option("--time-bank", min=0.0,
                                                    help="Extra seconds per game shared by all moves.")] = None,
    log: Annotated[str | None, typer.Option("--log", help="Write the full replay as JSON lines to this file.")
                   ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one result record (JSON) per game.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Print every action as it happens.")] = False,
    stderr: Annotated[list[str] | None, typer.Option(
        "--stderr", help="Print what this seat's bot writes to stderr (a seat number, a bot name, or all; "
                         "repeatable): after each game, or live beside its moves with --verbose. A bot that "
                         "forfeits has its last lines printed anyway.")] = None,
    env: Annotated[list[str] | None, typer.Option(
        "--env", help="Give the bots an environment variable, NAME=VALUE, or to one seat SEAT:NAME=VALUE (a seat "
                      "number or bot name); repeatable. Bots get nothing else of this environment.")] = None,
    html: HtmlOption = None,
    sandbox: SandboxOption = None,
    bots_as_root: RootOption = False,
) -> None:
    """Play one game, or a series at fixed seats, between bot programs.

    Each bot is a command such as "python sample_bots/python/random_bot.py" (quote it) or
    "alice=./my_bot". The number of bots is the number of players. Exits 0 when the games finish,
    whoever lost; verdicts (timeout, crash, illegal, protocol) are reported per game.
    """
    with reported_errors():
        options = PlayOptions(
            rules=rules_from_options(variant, {"deck": deck, **parse_set_options(set_ or [])}),
            bots=bots, games=games, seed=seed, deal=deal, dealer=dealer, move_time=move_time,
            startup_time=startup_time, time_bank=time_bank, log=log, as_json=as_json, verbose=verbose,
            sandbox=sandbox or "bwrap", bots_as_root=bots_as_root, stderr=tuple(stderr or ()), env=tuple(env or ()),
        )
        if html is not None:
            _check_writable(html)
        records = run_play(options, typer.echo)
        if html is not None:
            write_private(html, viewer_page([game_data(replay_lines(r), strikes=r.strikes, move_us=r.move_us)
                                             for r in records]))


@app.command(name="check-bot")
def check_bot_command(
    command: Annotated[str, typer.Argument(help="The bot's command, split like a shell.")],
    variants: Annotated[list[str] | None, typer.Option(
        "--variant", "-v", help=f"Check this variant (repeatable; default: all of {', '.join(VARIANTS)}).")] = None,
    decks: Annotated[list[int] | None, typer.Option(
        "--deck", help="Check this deck, 36 or 52 (repeatable; default: both).")] = None,
    set_: SetOption = None,
    games: Annotated[int, typer.Option("--games", "-g", min=1, help="Games per seat, variant and deck.")] = 1,
    players: Annotated[int, typer.Option("--players", "-n", min=2, max=6, help="Players at the table.")] = 2,
    move_time: Annotated[float, typer.Option("--move-time", min=0.001, help="Seconds per decision.")] = 1.0,
    startup_time: Annotated[float, typer.Option("--startup-time", min=0.001, help="Seconds to start.")] = 10.0,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Deal seed.")] = 1,
    sandbox: SandboxOption = None,
    bots_as_root: RootOption = False,
) -> None:
    """Check that a bot speaks the protocol: handshake, then games of every variant and deck (or those
    chosen) in every seat against the sample random bot, every reply validated, move times reported.

    With --set, variants that an option does not apply to are left out unless named with --variant.
    The report says what was played. Exits 0 when the bot passes and 7 when it misbehaves, with the reasons.
    """
    with reported_errors():
        _, argv = parse_bot_arg(command)
        checked = rules_to_check(variants or [], decks or [], parse_set_options(set_ or []))
        report = check_bot(BotCommand(argv, env=scrubbed_env()), games_per_seat=games, players=players,
                           move_time=move_time, startup_time=startup_time, seed=seed, rules=checked,
                           isolation=prepare_isolation(sandbox or "bwrap", [], allow_root=bots_as_root))
    for line in format_report(report):
        typer.echo(line)
    if not report.passed:
        raise typer.Exit(int(ExitCode.CHECK_FAILED))


TournamentOption = Annotated[int | None, typer.Option(
    "--tournament", "-t", min=1, help="Which tournament of the database, by id (durak tournaments DB lists "
                                      "them); default: the active one, the latest.")]


def default_database(config: str) -> Path:
    """A config's database when ``--db`` is left out: its stem + ``.db``, next to it (wherever it is run from)."""
    path = Path(os.path.abspath(config))
    return path.with_name(path.stem + ".db")


@app.command()
def tournament(
    config: Annotated[str, typer.Argument(help="The tournament config (TOML), e.g. sample_bots/tournament.toml.")],
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, help="Games in parallel, each on a core of its own with its bots (default: one "
                                    "per core; more than the cores warns).")] = None,
    db: Annotated[str | None, typer.Option(
        "--db", help="The results database (default: CONFIG's stem + .db, next to CONFIG).")] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Start a new tournament in the database, keeping the old.")
                     ] = False,
    sandbox: Annotated[SandboxLevel | None, typer.Option(
        "--sandbox", help="Override the config's sandbox key: bwrap (default), process (weaker) or none.")] = None,
    seed_file: Annotated[str | None, typer.Option(
        "--seed-file", help="A new tournament's seed: a file holding one integer that only you can read (mode "
                            "600; others are refused). Default: drawn at the first run. Either way the database "
                            "keeps it (no config may hold it); durak seed DB prints it.")] = None,
    changed_bots: Annotated[Literal["replay", "keep"] | None, typer.Option(
        "--changed-bots", help="What to do with a bot whose command, env, files setting or files changed since "
                               "its stored games (refused without this): replay = play its stored games again "
                               "with the new version (the old ones kept as history, not rated); keep = keep "
                               "them rated. Either lifts its disqualification.")] = None,
    report: Annotated[str | None, typer.Option(
        "--report", help="Keep an HTML report of the tournament (durak report) in this file while it runs: "
                         "rewritten every few seconds, mode 600; the page reloads itself. A deal's games "
                         "appear once all its seat rotations are stored.")] = None,
    private: PrivateOption = False,
    bots_as_root: RootOption = False,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", help="Play on a Dask cluster: its scheduler's address (tcp://HOST:8786, tls://...; default: "
                          "the config's cluster key, else this machine). Needs pip install -e '.[cluster]'; "
                          "docs/SCALING.md says how to set up the workers and why to use TLS.")] = None,
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
    with reported_errors():
        if jobs is not None and cluster is not None:
            raise UsageError("--jobs is for a run on this machine: with --cluster, the Dask workers' threads "
                             "(dask worker --nthreads) set how many games run at once")
        loaded = load_config(config, sandbox=sandbox)
        db_path = Path(os.path.abspath(db)) if db is not None else default_database(config)
        if report is not None:
            _check_writable(report)
        try:
            with LiveReport(db_path, report, private=private) if report is not None else nullcontext():
                summary = run_tournament(loaded, db_path, jobs, fresh, bots_as_root=bots_as_root,
                                         seed_file=Path(seed_file) if seed_file is not None else None,
                                         changed_bots=changed_bots, cluster=cluster)
        except Interrupted as stop:
            # never --fresh again (a new tournament) nor --seed-file or --changed-bots (done by then)
            again = [*(["--jobs", str(jobs)] if jobs else []), *(["--cluster", cluster] if cluster else []),
                     *(["--sandbox", sandbox] if sandbox else []),
                     *(["--bots-as-root"] if bots_as_root else [])]
            resume = shlex.join(["durak", "tournament", str(loaded.path), "--db", str(db_path), *again])
            raise Interrupted(f"{stop}; to resume: {resume}", stop.signal_number) from None
        typer.echo(f"tournament '{visible(summary.tournament.name)}' (id {summary.tournament.id}) in {db_path}: "
                   f"{summary.played} games played now, {summary.stored_before + summary.played}/"
                   f"{summary.total_games} stored")
        if summary.superseded:
            typer.echo(f"{summary.superseded} games of changed bots moved to history (not rated) and played again")
        for name, why in summary.disqualified.items():
            typer.echo(f"disqualified: {visible(name)}: {visible(why)}")
        typer.echo("")
        typer.echo(render(load_outcomes(db_path), stats=load_stats(db_path)))


#: The exit code of each decision of ``durak sprt``.
SPRT_EXIT = {"H1": ExitCode.SPRT_H1, "H0": ExitCode.SPRT_H0, "truncated": ExitCode.SPRT_TRUNCATED}


def default_sprt_database(config: str) -> Path:
    """An SPRT's database when ``--db`` is left out: the config's stem + ``-sprt.db``, next to it."""
    path = Path(os.path.abspath(config))
    return path.with_name(path.stem + "-sprt.db")


@app.command()
def sprt(
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
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, help="Games in parallel, each on a core of its own (default: one per core).")] = None,
    db: Annotated[str | None, typer.Option(
        "--db", help="The results database (default: CONFIG's stem + -sprt.db, next to CONFIG).")] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Start a new test in the database, keeping the old.")
                     ] = False,
    sandbox: Annotated[SandboxLevel | None, typer.Option(
        "--sandbox", help="Override the config's sandbox key: bwrap (default), process (weaker) or none.")] = None,
    seed_file: Annotated[str | None, typer.Option(
        "--seed-file", help="A new test's seed: a file holding one integer that only you can read (as for "
                            "durak tournament). Default: drawn at the first run.")] = None,
    changed_bots: Annotated[Literal["replay", "keep"] | None, typer.Option(
        "--changed-bots", help="What to do with a bot that changed since its stored games (as for durak "
                               "tournament); refused without this.")] = None,
    bots_as_root: RootOption = False,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", help="Play on a Dask cluster: its scheduler's address (as for durak tournament).")] = None,
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
    with reported_errors():
        if jobs is not None and cluster is not None:
            raise UsageError("--jobs is for a run on this machine: with --cluster, the Dask workers' threads "
                             "(dask worker --nthreads) set how many games run at once")
        request = SprtRequest(new, base, tuple(field or ()), elo0, elo1, alpha, beta, max_games, mode)
        new, base, field_bots, test = request.resolve(loaded := load_config(config, sandbox=sandbox))
        loaded, plan = sprt_setup(loaded, new, base, field_bots)
        course = SprtCourse(loaded, plan, test)
        db_path = Path(os.path.abspath(db)) if db is not None else default_sprt_database(config)
        try:
            summary = run_tournament(loaded, db_path, jobs, fresh, bots_as_root=bots_as_root,
                                     seed_file=Path(seed_file) if seed_file is not None else None,
                                     changed_bots=changed_bots, cluster=cluster, course=course)
        except Interrupted as stop:
            # the test's own options in full (floats by repr: exact), so that the resume is the same test
            again = [str(loaded.path), new, base, *(f"--field={name}" for name in plan.field),
                     f"--elo0={test.elo0!r}", f"--elo1={test.elo1!r}", f"--alpha={test.alpha!r}",
                     f"--beta={test.beta!r}", f"--mode={test.mode}",
                     *([f"--max-games={test.max_games}"] if test.max_games else []), "--db", str(db_path),
                     *(["--jobs", str(jobs)] if jobs else []),
                     *(["--cluster", cluster] if cluster else []), *(["--sandbox", sandbox] if sandbox else []),
                     *(["--bots-as-root"] if bots_as_root else [])]
            raise Interrupted(f"{stop}; to resume: {shlex.join(['durak', 'sprt', *again])}",
                              stop.signal_number) from None
        state = course.state
        typer.echo(f"sprt '{visible(summary.tournament.name)}' (id {summary.tournament.id}) in {db_path}: "
                   f"{summary.played} games played now, {summary.stored_before + summary.played} stored")
        for name, why in summary.disqualified.items():
            typer.echo(f"disqualified: {visible(name)}: {visible(why)}")
        typer.echo(format_state(state))
        meaning = {"H1": f"{new} is at least {test.elo1:g} Elo stronger than {base}",
                   "H0": f"{new} is at most {test.elo0:g} Elo stronger than {base}",
                   "truncated": f"no decision after {state.games} games (--max-games {test.max_games}, whole "
                                f"deal groups of {plan.games_per_group})"}
        typer.echo(f"{state.decision}: {visible(meaning[state.decision])}")
        raise typer.Exit(int(SPRT_EXIT[state.decision]))


@app.command(help=f"""Rate the bots of a database or results file: Bradley-Terry Elo with error bars.

--stats adds per-bot statistics (fool rate by seat, move time median/p99/max,
verdict counts). In CSV and JSON every share is a percentage 0-100 (keys
ending _pct), every time milliseconds (_ms), booleans true/false; a CSV holds
one table (the rows, or --h2h pairs, or --stats). The columns:

\b
{LEGEND}
""")
def leaderboard(
    source: Annotated[str, typer.Argument(help="A results database, or a JSON-lines file of result records.")],
    mode: Annotated[Literal["fool", "order"], typer.Option(
        "--mode", help="fool: everyone beats the fool; order: finishing order.")] = "fool",
    output_format: Annotated[Literal["table", "csv", "json"], typer.Option("--format", help="table, csv or json.")
                             ] = "table",
    anchor: Annotated[str | None, typer.Option(
        "--anchor", help="BOT=ELO fixes one bot, a number the pool mean; default pool mean 1500.")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, help="Error bars from N deal resamples.")] = 0,
    h2h: Annotated[bool, typer.Option("--h2h", help="Also the head-to-head table (JSON: an h2h list; CSV: only "
                                                    "it).")] = False,
    stats: Annotated[bool, typer.Option("--stats", help="Also per-bot statistics (JSON: a stats list; CSV: only "
                                                        "them).")] = False,
    tournament_id: TournamentOption = None,
) -> None:
    with reported_errors():
        if output_format == "csv" and h2h and stats:
            raise UsageError("--format csv writes one table: ask for --h2h or --stats, not both")
        outcomes = load_outcomes(source, tournament_id)
        bot_rows = load_stats(source, tournament_id) if stats else None
        typer.echo(render(outcomes, mode, output_format, anchor, bootstrap, h2h, bot_rows))


@contextmanager
def reading(db: str) -> Iterator[Store]:
    """A results database opened read-only; what cannot be read is a ResultsReadError."""
    if not is_database(db):
        raise ResultsReadError(f"{db!r} is not a results database")
    try:
        with Store(db, create=False) as store:
            yield store
    except StoreError as exc:
        raise ResultsReadError(str(exc)) from None


@app.command()
def export(
    db: Annotated[str, typer.Argument(help="A results database.")],
    output: Annotated[str | None, typer.Option("--output", "-o", help="Write to this file, not stdout.")] = None,
    stderr: Annotated[bool, typer.Option(
        "--stderr", help="The organizer's export: add each seat's stderr, by move, to its record (`stderr`). "
                         "Each bot's stderr is its author's: do not publish it.")] = False,
    tournament_id: TournamentOption = None,
) -> None:
    """Write the result records of a database's tournament as JSON lines (one game per line)."""
    with reported_errors(), reading(db) as store:
        chosen = store.tournament(tournament_id).id
        texts = ((msgspec.json.encode(r).decode() for r in store.records_with_stderr(chosen)) if stderr
                 else store.record_texts(chosen))
        lines = "".join(json_line(text) + "\n" for text in texts).encode()
        if output is None:
            sys.stdout.buffer.write(lines)
            sys.stdout.buffer.flush()
        else:
            try:
                Path(output).write_bytes(lines)
            except OSError as exc:
                raise ResultsWriteError(f"cannot write {output!r}: {exc.strerror}") from None


@app.command()
def tournaments(db: Annotated[str, typer.Argument(help="A results database.")]) -> None:
    """List the tournaments of a database (--fresh starts a new one and keeps the old); * marks the active one,
    which every command reads unless given --tournament ID."""
    with reported_errors(), reading(db) as store:
        rows = [[f"{t.id}{' *' if t.active else ''}", visible(t.name), t.created, t.games, visible(t.config_path)]
                for t in store.tournaments()]
    typer.echo(tabulate(rows, headers=["id", "name", "created", "games", "config"], disable_numparse=True,
                        colalign=("right", "left", "left", "right", "left")))


@app.command()
def games(
    db: Annotated[str, typer.Argument(help="A results database.")],
    bot: Annotated[str | None, typer.Option("--bot", help="Only games this bot played.")] = None,
    verdict: Annotated[str | None, typer.Option(
        "--verdict", help="Only games with a verdict of this kind (timeout, crash, memory, illegal, protocol, "
                          "disqualified), or 'any'.")] = None,
    fool: Annotated[str | None, typer.Option("--fool", help="Only games this bot was a fool in.")] = None,
    output_format: Annotated[Literal["table", "json"], typer.Option("--format", help="table or json (lines).")
                             ] = "table",
    tournament_id: TournamentOption = None,
) -> None:
    """List a tournament's stored games: number (for durak replay DB NUMBER), game id, players by seat, fools,
    verdicts."""
    with reported_errors(), reading(db) as store:
        chosen = store.tournament(tournament_id)
        shown = [row for row in store.games(chosen.id) if _wanted(row.record, bot, verdict, fool)]
    if output_format == "json":
        for row in shown:
            typer.echo(json_line(msgspec.json.encode({"number": row.number, "tournament": chosen.id,
                                                      **msgspec.to_builtins(row.record)})))
        return
    cells = [[row.number, visible(row.record.game), " ".join(map(visible, row.record.players)),
              " ".join(map(visible, row.record.fools)) or "-", row.record.end,
              "; ".join(f"{visible(v.bot)} {v.kind}" for v in row.record.verdicts) or "-"] for row in shown]
    typer.echo(tabulate(cells, headers=["#", "game", "players", "fools", "end", "verdicts"], disable_numparse=True,
                        colalign=("right", "left", "left", "left", "left", "left")))
    typer.echo(f"{len(shown)} game(s) of tournament {chosen.id} '{visible(chosen.name)}'; "
               "durak replay DB # tells one")


def _wanted(record: ResultRecord, bot: str | None, verdict: str | None, fool: str | None) -> bool:
    if bot is not None and bot not in record.players:
        return False
    if fool is not None and fool not in record.fools:
        return False
    if verdict is not None:
        return any(verdict in ("any", v.kind) for v in record.verdicts)
    return True


@app.command()
def seed(
    db: Annotated[str, typer.Argument(help="A results database.")],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write it to this file (mode 600), for --seed-file, instead of printing it.")] = None,
    tournament_id: TournamentOption = None,
) -> None:
    """Print the seed of a database's tournament: every deck follows from it, so publish it only once the
    tournament is over (until then any bot that learns it knows every hand)."""
    with reported_errors():
        with reading(db) as store:
            chosen = store.tournament(tournament_id)
        if output is None:
            typer.echo(str(chosen.seed))
            return
        try:
            write_seed_file(output, chosen.seed)
        except OSError as exc:
            raise ResultsWriteError(f"cannot write {output!r}: {exc.strerror}") from None


@app.command()
def replay(
    source: Annotated[str, typer.Argument(help="A results database, or a `durak play --log` file.")],
    game: Annotated[str | None, typer.Argument(
        help="The game: its id (as in durak export) or its number (as durak games lists them; in a log file, "
             "its place in the file). May be left out for a log file of one game.")] = None,
    seat: Annotated[str | None, typer.Option(
        "--seat", help="Tell only what this bot saw, with what it wrote to stderr beside its moves.")] = None,
    stderr: Annotated[bool, typer.Option(
        "--stderr", help="The organizer's view: every seat's stderr beside its moves.")] = False,
    tournament_id: TournamentOption = None,
    html: HtmlOption = None,
) -> None:
    """Tell a stored or logged game as a person would read it, every hand shown; --seat BOT shows that bot's view
    and its own stderr (no other bot's), --stderr every bot's (a database keeps it; a log file does not).

    With --html FILE, write the replay viewer instead: with --seat it holds only what that bot saw and its own
    stderr, never another hand; all-seeing, bots' stderr only with --stderr.
    """
    with reported_errors():
        stored = None
        if is_database(source):
            if game is None:
                raise UsageError("name the game to replay: its id or number (durak games DB lists them)")
            with reading(source) as store:
                stored = store.replay(game, store.tournament(tournament_id).id)
            data = stored.replay
        else:
            if tournament_id is not None:
                raise UsageError("--tournament chooses a tournament of a database; a log file has none")
            data = _logged_game(source, game)
        header, _, _ = parse_replay(data)
        seat_index = None if seat is None else seat_of(header.names, seat)
        if html is not None:
            shown = ([game_data(data, stored.stderr, seat=seat_index, private=stderr, game_id=stored.number,
                                strikes=stored.record.strikes, move_us=stored.move_us)] if stored is not None
                     else [game_data(data, seat=seat_index)])
            write_private(html, viewer_page(shown))
            typer.echo(f"wrote {html}")
            return
        for line in tell(data, seat_index, stored.stderr if stored is not None and (seat is not None or stderr)
                         else None):
            typer.echo(line)


def _logged_game(path: str, game: str | None) -> bytes:
    """One game of a ``durak play --log`` file, by id or 1-based number; the only one if ``game`` is None."""
    try:
        replays = replays_of_log(Path(path).read_bytes())
    except OSError as exc:
        raise ResultsReadError(f"cannot read {path!r}: {exc.strerror}") from None
    if not replays:
        raise ReplayError(f"{path!r} holds no game")
    if game is None:
        if len(replays) > 1:
            raise UsageError(f"{path!r} holds {len(replays)} games: name one by number (1-{len(replays)}) or id")
        return replays[0]
    for data in replays:
        if parse_replay(data)[0].game == game:
            return data
    if game.isdigit() and 1 <= int(game) <= len(replays):
        return replays[int(game) - 1]
    raise ReplayError(f"no game {game!r} in {path!r} (it holds {len(replays)})")


@app.command()
def report(
    db: Annotated[str, typer.Argument(help="A results database.")],
    tournament_id: TournamentOption = None,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="The HTML file (default: DB's name + .html). Past 500 games the games' replays go "
                               "in FILE.files/ beside it.")] = None,
    mode: Annotated[Literal["fool", "order"], typer.Option(
        "--mode", help="Rating mode: fool or order (as durak leaderboard --mode).")] = "fool",
    private: PrivateOption = False,
) -> None:
    """Write a tournament's report: one HTML page that works offline (file://), mode 600.

    The header (rules, time controls, referee version, bot file hashes; never the seed), the leaderboard
    as a chart and a table with head to head and per-bot statistics (the rows of durak leaderboard --format
    json --h2h --stats), the move-time distribution, how the ratings settled, and the games as durak games
    numbers them (#game=N in the page is durak replay DB N), each opening in the replay viewer with every
    move's time. A deal's games appear once all its seat rotations are stored.
    """
    with reported_errors():
        with reading(db) as store:
            chosen = store.tournament(tournament_id).id
        target = Path(output) if output is not None else Path(Path(db).stem + ".html")
        files = ReportWriter(db, target, tournament=chosen, mode=mode, private=private,
                             jobs=os.cpu_count() or 1).write()
        typer.echo(f"wrote {target}: {files.games} games, {files.page_bytes + files.game_bytes:,} bytes")


def _check_writable(path: str) -> None:
    """Refuse a page path whose folder is missing before any game is played for it."""
    folder = Path(path).parent
    if not folder.is_dir():
        raise PageWriteError(f"cannot write {path!r}: no folder {str(folder)!r}")


@app.command()
def schema() -> None:
    """Print the JSON Schema of every protocol message (the committed protocol/schema.json)."""
    from protocol.messages import json_schema

    typer.echo(schema_text(json_schema()))


def schema_text(schema: dict[str, object]) -> str:
    return msgspec.json.format(msgspec.json.encode(schema), indent=2).decode()


class _VisibleFormatter(logging.Formatter):
    """Warnings may quote a bot's words or paths: shown with control characters escaped."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


def main() -> None:
    """Console entry point (``durak`` and ``python -m referee``)."""
    handler = logging.StreamHandler()
    handler.setFormatter(_VisibleFormatter("durak: warning: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    if not sys.platform.startswith("linux"):
        typer.echo("durak: note: the referee targets Linux (rlimits, signals, bubblewrap); "
                   "bot games may not work here.", err=True)
    args = sys.argv[1:]
    cut = args.index("--") if "--" in args else len(args)
    if "--debug" in args[:cut]:  # accepted after the command too: `durak play ... --debug`
        global _debug
        _debug = True
        args = [arg for index, arg in enumerate(args) if arg != "--debug" or index > cut]
    try:
        app(args=args, prog_name="durak")
    except Exception as exc:
        if _debug:
            raise
        typer.echo(visible(f"durak: internal error: {type(exc).__name__}: {exc} (rerun with --debug)"), err=True)
        sys.exit(int(ExitCode.INTERNAL))
