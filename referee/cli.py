"""The ``durak`` command line: thin wrappers that parse, call the library and format.

Every expected failure becomes one line on stderr and an exit code of :class:`ExitCode`;
a traceback appears only with ``--debug``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from tabulate import tabulate

from protocol.messages import PROTOCOL_VERSION
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
from referee.botargs import BotArgError, parse_bot_arg
from referee.bots.errors import BotLaunchError, LauncherError
from referee.bots.isolation import SandboxUnavailable
from referee.bots.launcher import BotCommand, scrubbed_env
from referee.checkbot import CheckSetupError, check_bot, format_report, rules_to_check
from referee.engine import InvalidDealError
from referee.exitcodes import ExitCode
from referee.leaderboard import render
from referee.play import PlayOptions, ResultsWriteError, prepare_isolation, run_play
from referee.ratings import AnchorError
from referee.replay import ReplayError, parse_replay, seat_of, tell
from referee.results import ResultsReadError, load_outcomes
from referee.rules_summary import SUMMARIES
from referee.selfplay import selfplay
from referee.store import Store, StoreError, is_database
from referee.text import json_line, visible
from referee.tournament.config import BotFilesError, ConfigError, load_config
from referee.tournament.runner import Interrupted, TournamentError, run_tournament
from referee.tournament.secret import SeedFileError, write_seed_file

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
    """``durak-referee 0.1.0, protocol 2, Python 3.11.2``: what a bug report needs."""
    return (f"durak-referee {__version__}, protocol {PROTOCOL_VERSION}, "
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


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn the library's expected errors into one line and an exit code."""
    try:
        yield
    except (RulesError, InvalidDealError, BotArgError, ResultsReadError, ReplayError, AnchorError,
            ConfigError, BotFilesError, SeedFileError, TournamentError) as exc:
        if _debug:
            raise
        raise fail(str(exc), ExitCode.CONFIG) from None
    except (ResultsWriteError, StoreError) as exc:
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
    except (KeyboardInterrupt, Interrupted) as exc:
        raise fail(str(exc) or "interrupted", ExitCode.INTERRUPTED) from None


def parse_set_options(pairs: list[str]) -> dict[str, object]:
    """``["first_bout_limit=5", ...]`` -> options; a missing ``=`` is a RulesError."""
    options: dict[str, object] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise RulesError(f"--set takes OPTION=VALUE, not {pair!r}")
        options[name.strip()] = parse_option_value(value)
    return options


SandboxOption = Annotated[str | None, typer.Option(
    "--sandbox", help="Bot isolation: bwrap (default: bubblewrap with its own uid, cgroups, seccomp, private "
                      "files, no network), process (weaker, opt-in: no private files), or none (trusted bots). "
                      "See docs/ISOLATION.md.")]
RootOption = Annotated[bool, typer.Option(
    "--bots-as-root", help="Trusted bots only: at the process level, run a bot as root (with a warning) where "
                           "its own uid cannot reach its files, instead of refusing it.")]
VariantArg = Annotated[str, typer.Option("--variant", "-v", help=f"One of {', '.join(VARIANTS)}.")]
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
        run_play(options, typer.echo)


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


@app.command()
def tournament(
    config: Annotated[str, typer.Argument(help="The tournament config (TOML), e.g. sample_bots/tournament.toml.")],
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, help="Games in parallel, each on a core of its own with its bots (default: one "
                                    "per core; more than the cores warns).")] = None,
    db: Annotated[str | None, typer.Option("--db", help="The results database (default: CONFIG's name + .db).")
                  ] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Start a new tournament in the database, keeping the old.")
                     ] = False,
    sandbox: Annotated[str | None, typer.Option(
        "--sandbox", help="Override the config's sandbox key: bwrap (default), process (weaker) or none.")] = None,
    seed_file: Annotated[str | None, typer.Option(
        "--seed-file", help="A new tournament's seed: a file holding one integer that only you can read (mode "
                            "600; others are refused). Default: drawn at the first run. Either way the database "
                            "keeps it (no config may hold it); durak seed DB prints it.")] = None,
    bots_as_root: RootOption = False,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", help="Play on a Dask cluster: its scheduler's address (tcp://HOST:8786, tls://...; default: "
                          "the config's cluster key, else this machine). Needs pip install -e '.[cluster]'; "
                          "docs/SCALING.md says how to set up the workers and why to use TLS.")] = None,
) -> None:
    """Run a tournament, resuming from the database, then print the leaderboard.

    The same config on the same database plays only the games not stored yet; Ctrl-C stops cleanly.
    The seed, from which every deck follows, is secret: it is in no config (a seed key is an error,
    since bots may read the config), it is drawn at the first run (or read from --seed-file) and kept
    only in the database (mode 600), and it is not printed. `durak seed DB` prints it, to publish it
    once the tournament is over or to give it to another database with --seed-file.
    """
    with reported_errors():
        loaded = load_config(config, sandbox=sandbox)
        db_path = Path(db) if db is not None else Path(Path(config).stem + ".db")
        summary = run_tournament(loaded, db_path, jobs, fresh, bots_as_root=bots_as_root,
                                 seed_file=Path(seed_file) if seed_file is not None else None, cluster=cluster)
        typer.echo(f"tournament '{visible(summary.tournament.name)}' in {db_path}: {summary.played} games played "
                   f"now, {summary.stored_before + summary.played}/{summary.total_games} stored")
        if summary.disqualified:
            typer.echo(f"disqualified: {', '.join(map(visible, summary.disqualified))}")
        typer.echo("")
        typer.echo(render(load_outcomes(db_path)))


@app.command()
def leaderboard(
    source: Annotated[str, typer.Argument(help="A results database, or a JSON-lines file of result records.")],
    mode: Annotated[str, typer.Option("--mode", help="fool: everyone beats the fool; order: finishing order.")
                    ] = "fool",
    output_format: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
    anchor: Annotated[str | None, typer.Option("--anchor", help="BOT=ELO fixes one bot; default pool mean 1500.")
                      ] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, help="Error bars from N deal resamples.")] = 0,
    h2h: Annotated[bool, typer.Option("--h2h", help="Also print the head-to-head table.")] = False,
) -> None:
    """Rate the bots of a database or results file: Bradley-Terry Elo with error bars."""
    with reported_errors():
        if mode not in ("fool", "order"):
            raise RulesError(f"--mode must be fool or order, not {mode!r}")
        if output_format not in ("table", "csv", "json"):
            raise RulesError(f"--format must be table, csv or json, not {output_format!r}")
        typer.echo(render(load_outcomes(source), mode, output_format, anchor, bootstrap, h2h))  # type: ignore[arg-type]


@app.command()
def export(
    db: Annotated[str, typer.Argument(help="A results database.")],
    output: Annotated[str | None, typer.Option("--output", "-o", help="Write to this file, not stdout.")] = None,
    stderr: Annotated[bool, typer.Option(
        "--stderr", help="The organizer's export: add each seat's stderr, by move, to its record (`stderr`). "
                         "Each bot's stderr is its author's: do not publish it.")] = False,
) -> None:
    """Write the result records of a database's tournament as JSON lines (one game per line)."""
    with reported_errors():
        if not is_database(db):
            raise ResultsReadError(f"{db!r} is not a results database")
        try:
            with Store(db, create=False) as store:
                texts = ((msgspec.json.encode(r).decode() for r in store.records_with_stderr()) if stderr
                         else store.record_texts())
                lines = "".join(json_line(text) + "\n" for text in texts).encode()
        except StoreError as exc:
            raise ResultsReadError(str(exc)) from None
        if output is None:
            sys.stdout.buffer.write(lines)
            sys.stdout.buffer.flush()
        else:
            try:
                Path(output).write_bytes(lines)
            except OSError as exc:
                raise ResultsWriteError(f"cannot write {output!r}: {exc.strerror}") from None


@app.command()
def seed(
    db: Annotated[str, typer.Argument(help="A results database.")],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write it to this file (mode 600), for --seed-file, instead of printing it.")] = None,
) -> None:
    """Print the seed of a database's tournament: every deck follows from it, so publish it only once the
    tournament is over (until then any bot that learns it knows every hand)."""
    with reported_errors():
        if not is_database(db):
            raise ResultsReadError(f"{db!r} is not a results database")
        try:
            with Store(db, create=False) as store:
                active = store.active_tournament()
        except StoreError as exc:
            raise ResultsReadError(str(exc)) from None
        if active is None:
            raise ResultsReadError(f"{db!r} holds no tournament")
        if output is None:
            typer.echo(str(active.seed))
            return
        try:
            write_seed_file(output, active.seed)
        except OSError as exc:
            raise ResultsWriteError(f"cannot write {output!r}: {exc.strerror}") from None


@app.command()
def replay(
    db: Annotated[str, typer.Argument(help="A results database.")],
    game: Annotated[str, typer.Argument(help="A game key (as in durak export) or the game's number.")],
    seat: Annotated[str | None, typer.Option(
        "--seat", help="Tell only what this bot saw, with what it wrote to stderr beside its moves.")] = None,
    stderr: Annotated[bool, typer.Option(
        "--stderr", help="The organizer's view: every seat's stderr beside its moves.")] = False,
) -> None:
    """Tell a stored game as a person would read it, every hand shown; --seat BOT shows that bot's view and its
    own stderr (no other bot's), --stderr every bot's."""
    with reported_errors():
        try:
            with Store(db, create=False) as store:
                data, written = store.replay(game)
        except StoreError as exc:
            raise ResultsReadError(str(exc)) from None
        header, _, _ = parse_replay(data)
        seat_index = None if seat is None else seat_of(header.names, seat)
        for line in tell(data, seat_index, written if seat is not None or stderr else None):
            typer.echo(line)


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
