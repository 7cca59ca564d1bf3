"""Commands around single games: ``rules``, ``selfplay``, ``play`` and ``check-bot``."""

from __future__ import annotations

import sys
from typing import Annotated

import msgspec
import typer
from tabulate import tabulate

from protocol.rules import OPTIONS, VARIANT_TITLES, VARIANTS, applicable_options, rules_from_options
from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.limits import TimeControl
from referee.cli.app import app
from referee.cli.errors import UsageError, reported_errors
from referee.cli.exitcodes import ExitCode
from referee.cli.options import (
    AllCoresOption,
    HtmlOption,
    RootOption,
    SandboxOption,
    SetOption,
    VariantArg,
    parse_set_options,
)
from referee.cli.paths import check_writable
from referee.cli.rules_summary import SUMMARIES
from referee.cli.terminal import TerminalPerson, colours_wanted
from referee.games.botargs import parse_bot_arg, seat_dirs, seat_env
from referee.games.checkbot import CheckPlan, check_bot, format_report, rules_to_check
from referee.games.human import HumanClock
from referee.games.play import HUMAN_NAME, PlayOptions, prepare_isolation, run_play
from referee.games.selfplay import selfplay
from referee.report.game_data import SeatTraces, game_data
from referee.report.page import viewer_page, write_private
from referee.results.replay import replay_lines


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
def selfplay_command(  # noqa: PLR0913 (a typer command: a parameter per option)
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
def play(  # noqa: PLR0913 (a typer command: a parameter per option)
    bots: Annotated[list[str], typer.Argument(
        help="Bot commands, one per seat in seat order, split like a shell; NAME=COMMAND names a bot. With "
             "--human, the bots of the other seats, in turn.")],
    human: Annotated[int | None, typer.Option(
        "--human", min=0, help="Play this seat yourself, in the terminal, against the bots (one game); Ctrl-C "
                               "resigns (exit 14).")] = None,
    players: Annotated[int | None, typer.Option(
        "--players", "-n", min=2, max=6, help="With --human: the table's size, the bots given filling the other "
                                              "seats in turn (default: one more than the bots).")] = None,
    human_time: Annotated[float, typer.Option(
        "--human-time", min=0.01, help="With --human: your seconds per move before the bank is drawn on.")] = 60.0,
    human_bank: Annotated[float, typer.Option(
        "--human-bank", min=0.0, help="With --human: your extra seconds for the game, shared by all moves.")
                          ] = 300.0,
    variant: VariantArg = "podkidnoy",
    deck: Annotated[int, typer.Option("--deck", help="36 or 52 cards.")] = 36,
    games: Annotated[int, typer.Option("--games", "-g", min=1, help="Games in the series (fixed seats).")] = 1,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="Deal seed; drawn at random if left out.")
                    ] = None,
    deal: Annotated[str | None, typer.Option("--deal", help="A full deck order, top first (one game).")] = None,
    dealer: Annotated[int | None, typer.Option("--dealer", min=0, help="The first dealer's seat.")] = 0,
    leader: Annotated[int | None, typer.Option(
        "--leader", min=0, help="The seat that moves first in the first game (default: the lowest trump's "
                                "holder; fools_fool: the lowest diamond's), as a series' later game has it.")
                      ] = None,
    bot_seeds: Annotated[str | None, typer.Option(
        "--bot-seeds", help="The first game's seeds for the bots, one per seat, comma-separated (default: "
                            "derived from --seed), as durak replay DB GAME prints them.")] = None,
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
    dirs: Annotated[list[str] | None, typer.Option(
        "--dir", help="A bot's own folder, [SEAT:]DIR (a seat number or a NAME= name; without it the first bot's; "
                      "repeatable): its command runs there and the sandbox shows it that folder, as a tournament's "
                      "dir does. Its name defaults to the folder's.")] = None,
    all_cores: AllCoresOption = False,
    html: HtmlOption = None,
    sandbox: SandboxOption = None,
    bots_as_root: RootOption = False,
) -> None:
    """Play one game, or a series at fixed seats, between bot programs.

    Each bot is a command such as "{python} sample_bots/python/random_bot.py" (quote it; {python} is the
    referee's own interpreter) or "alice=./my_bot". The number of bots is the number of players. Exits 0 when the
    games finish, whoever lost; verdicts (timeout, crash, illegal, protocol) are reported per game.

    With --human SEAT you play that seat in the terminal: at each of your turns the table is drawn, the legal
    actions numbered (type a number or an action; Enter for the only one; ? shows the rules), with your clock
    counting down; after the game, the whole deal.
    """
    with reported_errors():
        options = PlayOptions(
            rules=rules_from_options(variant, {"deck": deck, **parse_set_options(set_ or [])}),
            bots=bots, games=games, seed=seed, deal=deal, dealer=dealer, leader=leader,
            bot_seeds=_seeds(bot_seeds) if bot_seeds is not None else None, move_time=move_time,
            startup_time=startup_time, time_bank=time_bank, log=log, as_json=as_json, verbose=verbose,
            sandbox=sandbox or "bwrap", bots_as_root=bots_as_root, stderr=tuple(stderr or ()), env=tuple(env or ()),
            dirs=tuple(dirs or ()), all_cores=all_cores, human=human, players=players,
            human_clock=HumanClock(move_time=human_time, bank=human_bank),
        )
        if html is not None:
            check_writable(html, "the page")
        if log is not None:
            check_writable(log, "the log")
        if human is None:
            records = run_play(options, typer.echo)
        else:
            person = TerminalPerson(sys.stdout, sys.stdin.fileno(), f"{variant}: {SUMMARIES[variant]}",
                                    colour=colours_wanted(sys.stdout))
            with person.ctrl_c_resigns():
                records = run_play(options, typer.echo, person)
        if html is not None:
            pages = [game_data(replay_lines(r), SeatTraces(strikes=r.strikes, move_us=r.move_us)) for r in records]
            write_private(html, viewer_page(pages))
    if any(v.kind == "resigned" and v.bot == HUMAN_NAME for r in records for v in r.verdicts):
        typer.echo("you resigned: the game is your forfeit" + (f", written to {log}" if log else ""), err=True)
        raise typer.Exit(int(ExitCode.RESIGNED))


def _seeds(text: str) -> tuple[int, ...]:
    """``--bot-seeds 1,2``: each a seed of 0 to 2^63 - 1."""
    try:
        seeds = tuple(int(word) for word in text.split(","))
    except ValueError:
        raise UsageError(f"--bot-seeds takes seeds separated by commas, one per seat, not {text!r}") from None
    if any(not 0 <= seed < 1 << 63 for seed in seeds):
        raise UsageError("--bot-seeds: a seed is 0 to 2^63 - 1")
    return seeds


@app.command(name="check-bot")
def check_bot_command(  # noqa: PLR0913 (a typer command: a parameter per option)
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
    env: Annotated[list[str] | None, typer.Option(
        "--env", help="Give the bot an environment variable, NAME=VALUE; repeatable. It gets nothing else of "
                      "this environment.")] = None,
    folder: Annotated[str | None, typer.Option(
        "--dir", help="The bot's own folder: its command runs there and the sandbox shows it that folder, as a "
                      "tournament's dir does.")] = None,
    all_cores: AllCoresOption = False,
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
        plan = CheckPlan(rules=checked, players=players, games_per_seat=games, seed=seed,
                         clock=TimeControl(move_time=move_time, startup_time=startup_time), all_cores=all_cores)
        (settings,) = seat_env(env or [], ["bot"])
        (cwd,) = seat_dirs([folder] if folder is not None else [], [None])
        report = check_bot(BotCommand(argv, cwd=cwd, env=scrubbed_env(settings)), plan,
                           prepare_isolation(sandbox or "bwrap", [], allow_root=bots_as_root))
    for line in format_report(report):
        typer.echo(line)
    if not report.passed:
        raise typer.Exit(int(ExitCode.CHECK_FAILED))

