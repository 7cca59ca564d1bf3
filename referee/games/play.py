"""``durak play``: a game or a series between bot programs, reported for people or programs."""

from __future__ import annotations

import contextlib
import os
import secrets
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

import msgspec
from tabulate import tabulate

from protocol.cards import CARD_NAMES, card_list
from protocol.events import AnyEvent
from protocol.records import stderr_text
from protocol.rules import Rules
from referee.bots.cores import one_core
from referee.bots.launcher import BotCommand, preflight
from referee.bots.limits import ResourceLimits, TimeControl
from referee.bots.sandbox.isolation import Isolation, isolation_for, probe_bwrap
from referee.bots.session import BotClient
from referee.bots.summary import describe_resources
from referee.engine import Game, InvalidDealError, check_table, parse_deal
from referee.engine.rng import derive_seed
from referee.games.botargs import BotArgError, bot_commands, seat_of_bot
from referee.games.human import HumanClock, HumanSeat, Person
from referee.games.match import Series, play_series
from referee.games.seat import Seat
from referee.results.narrate import describe_event, describe_result
from referee.results.record import GameRecord
from referee.results.replay import replay_lines, tell
from referee.text import json_line, visible

Echo = Callable[[str], None]


class ResultsWriteError(OSError):
    """A results file (``--log``) that cannot be written."""


@dataclass(frozen=True)
class PlayOptions:
    rules: Rules
    bots: list[str]
    games: int = 1
    seed: int | None = None
    deal: str | None = None
    dealer: int | None = 0
    leader: int | None = None  # the seat that moves first in the first game (None: as the deal says)
    bot_seeds: tuple[int, ...] | None = None  # the first game's seeds for the bots, one per seat
    move_time: float = 1.0
    startup_time: float = 10.0
    time_bank: float | None = None
    log: str | None = None
    as_json: bool = False
    verbose: bool = False
    sandbox: str = "bwrap"
    bots_as_root: bool = False
    stderr: tuple[str, ...] = ()  # seats (index or bot name, or "all") whose stderr is printed
    env: tuple[str, ...] = ()  # --env NAME=VALUE or SEAT:NAME=VALUE
    dirs: tuple[str, ...] = ()  # --dir DIR (the first bot's) or SEAT:DIR
    all_cores: bool = False  # --all-cores: the bots get every core, not one as in a tournament
    human: int | None = None  # --human SEAT: a person plays that seat, the bots the others in turn
    players: int | None = None  # --players (with --human): the table's size; default one more than the bots
    human_clock: HumanClock = field(default_factory=HumanClock)


#: The name of the person's seat in the records and the log.
HUMAN_NAME = "human"


#: Lines of an offender's stderr printed after its forfeit (when its stderr is not printed anyway).
FORFEIT_STDERR_LINES = 10


def run_play(options: PlayOptions, echo: Echo, person: Person | None = None) -> list[GameRecord]:
    """Check the arguments, play the games, report each, and always stop the bots. With ``options.human``,
    ``person`` plays that seat (:class:`HumanSeat`), the bots the others."""
    named = table_commands(options)
    names = [name for name, _ in named]
    if options.human is not None:
        names.insert(options.human, HUMAN_NAME)
    shown = stderr_seats(options.stderr, names)
    players = len(names)
    check_table(options.rules, players)
    isolation = prepare_isolation(options.sandbox, [options.log] if options.log else [],
                                  allow_root=options.bots_as_root)
    for _, command in named:
        preflight(command, isolation)
    deck = _deal_of(options, players)
    seed = options.seed if options.seed is not None else secrets.randbits(63)
    # A person's game deals from a seed domain of its own: the same --seed never deals a bots' game's cards.
    deal_seed = seed if options.human is None else derive_seed(seed, "human")
    clock = TimeControl(move_time=options.move_time, startup_time=options.startup_time,
                        time_bank=options.time_bank)
    limits = ResourceLimits()  # a tournament's defaults ([limits] of sample_bots/tournament.toml)
    clients = [BotClient(name, command, limits=limits, time_control=clock, isolation=isolation)
               for name, command in named]
    seats: list[Seat] = list(clients)
    if options.human is not None:
        if person is None:
            raise ValueError("a human seat needs a person")
        seats.insert(options.human, HumanSeat(HUMAN_NAME, person, options.human_clock))
    log = _open_log(options.log)
    reporter = _Reporter(options, echo, log, seats, shown)
    try:
        with contextlib.ExitStack() as held:
            cores = os.sched_getaffinity(0) if options.all_cores else {held.enter_context(one_core())}
            if not options.as_json:
                human = "" if options.human is None else \
                    f" (a person's game: the deal from derive_seed({seed}, \"human\")), you at seat {options.human}"
                echo(f"{options.rules.variant}, {players} players, {options.rules.deck} cards, "
                     f"{options.games} game(s), seed {seed}{human}")
                echo(f"each bot: {describe_resources(isolation, limits, cores)}")
            series = Series(options.rules, options.games, deal_seed, deck=deck, dealer=options.dealer,
                            leader=options.leader, bot_seeds=options.bot_seeds,
                            deal_key=None if options.human is None else f"{seed}:human:0")
            records = play_series(series, seats, on_events=reporter.on_events if options.verbose else None,
                                  on_game=reporter.on_game)
    finally:
        for client in clients:
            client.stop()
        if log is not None:
            log.close()
    if not options.as_json:
        echo(summary_table(records))
    return records


def table_commands(options: PlayOptions) -> list[tuple[str, BotCommand]]:
    """The bots' names and commands in seat order (the person's seat left out), as ``options`` give them.

    :raises BotArgError: a table that cannot be seated, or a bot argument, ``--env`` or ``--dir`` that is wrong.
    """
    bots = human_table(options)
    return bot_commands(bots, bot_seat_options(options.env, options.human, len(bots) + 1, "--env"),
                        bot_seat_options(options.dirs, options.human, len(bots) + 1, "--dir"))


def _deal_of(options: PlayOptions, players: int) -> list[int] | None:
    """The deck of ``--deal`` (None: dealt from the seed), once the deal's options fit the table."""
    deck = parse_deal(options.deal, options.rules.deck) if options.deal is not None else None
    if deck is not None and options.games != 1:
        raise InvalidDealError("--deal fixes one game's deck; leave out --games")
    for option, seat in (("--dealer", options.dealer), ("--leader", options.leader)):
        if seat is not None and not 0 <= seat < players:
            raise InvalidDealError(f"{option} {seat} is not a seat at this table of {players}")
    if options.bot_seeds is not None and len(options.bot_seeds) != players:
        raise InvalidDealError(f"--bot-seeds gives {len(options.bot_seeds)} seed(s) for a table of {players}: "
                               "one per seat")
    return deck


def human_table(options: PlayOptions) -> list[str]:
    """The bots' arguments in seat order: as given, or with ``--human`` filling the other seats of a table of
    ``--players`` in turn (one bot given plays every other seat).

    :raises BotArgError: a table that cannot be seated so.
    """
    if options.human is None:
        if options.players is not None:
            raise BotArgError("--players is for --human: without it the bots given are the table")
        return list(options.bots)
    for given, why in ((options.verbose, "--verbose shows every hand as the game goes"),
                       (options.as_json, "--json is for programs"), (options.games != 1, "--games plays a series")):
        if given:
            raise BotArgError(f"{why}: not with --human, which plays one game and draws the table for a person")
    players = options.players if options.players is not None else len(options.bots) + 1
    if len(options.bots) > players - 1:
        raise BotArgError(f"{len(options.bots)} bots and a person do not fit a table of {players}")
    if not 0 <= options.human < players:
        raise BotArgError(f"--human {options.human} is not a seat at this table of {players}")
    return [options.bots[i % len(options.bots)] for i in range(players - 1)]


def bot_seat_options(options: Sequence[str], human: int | None, players: int, flag: str) -> list[str]:
    """``SEAT:...`` options (``--env``, ``--dir``) with each table seat number made the bot's place among the bots,
    so that with ``--human`` a seat number means the table's seat, as ``--stderr``'s does.

    :raises BotArgError: a seat number that is the person's, or none of the table's ``players``.
    """
    if human is None:
        return list(options)
    bots_options = []
    for option in options:
        seat, colon, rest = option.partition(":")
        if colon and seat.isdigit():
            if int(seat) == human:
                raise BotArgError(f"{flag} {option!r}: seat {human} is the person's, not a bot's")
            if int(seat) >= players:
                raise BotArgError(f"{flag} {option!r}: no seat {seat} at this table of {players}")
            option = f"{int(seat) - (int(seat) > human)}:{rest}"
        bots_options.append(option)
    return bots_options


def stderr_seats(selected: Sequence[str], names: list[str]) -> set[int]:
    """The seats whose stderr ``--stderr`` asks for: seat indices, bot names, or ``all``."""
    if "all" in selected:
        return set(range(len(names)))
    return {seat_of_bot(names, which) for which in selected}


def prepare_isolation(sandbox: str, protected: list[str], *, allow_root: bool = False) -> Isolation:
    """The bots' isolation for ``--sandbox`` (and ``--bots-as-root``); bwrap is probed here, before any game
    (SandboxUnavailable). The bots are the user's own: the sandbox may show an interpreter's tree they name."""
    isolation = isolation_for(sandbox, protected, allow_root=allow_root, interpreter_trees=True)
    if isolation.level == "bwrap":
        probe_bwrap()
    return isolation


def _open_log(path: str | None) -> IO[bytes] | None:
    if path is None:
        return None
    try:
        return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")
    except OSError as exc:
        raise ResultsWriteError(f"cannot write the log {path!r}: {exc.strerror}") from None


class _Reporter:
    """Prints progress, verbose narration (with the chosen seats' stderr live), JSON records, the chosen seats'
    stderr and an offender's last words after each game, and writes the replay log."""

    def __init__(self, options: PlayOptions, echo: Echo, log: IO[bytes] | None, clients: Sequence[Seat],
                 shown: set[int]) -> None:
        self.labels = [f"{seat}:{visible(c.name)}" for seat, c in enumerate(clients)]  # "0:alice" in --verbose
        self.options = options
        self.echo = echo
        self.log = log
        self.clients = clients
        self.shown = shown
        self.games_done = 0
        self._started: Game | None = None

    def on_events(self, game: Game, events: Sequence[AnyEvent]) -> None:
        names = self.labels
        if self._started is not game:
            self._started = game
            self.echo(f"== deal: dealer {names[game.dealer]}")
            for seat, hand in enumerate(game.hands):
                self.echo(f"   {names[seat]} holds {' '.join(CARD_NAMES[c] for c in card_list(hand))}")
            if (trump := game.view(game.dealer).trump) is not None:
                self.echo(f"   trump card {trump}")
        for seat in sorted(self.shown):  # written while deciding the move these events tell
            client = self.clients[seat]
            for written in (client.take_new_stderr() if isinstance(client, BotClient) else "").splitlines():
                self.echo(f"   {names[seat]} stderr| {visible(written)}")
        for event in events:
            line = describe_event(event, names)
            if line is not None:
                self.echo(line)

    def on_game(self, record: GameRecord) -> None:
        self.games_done += 1
        if self.log is not None:
            write_replay(self.log, record)
        if self.options.as_json:
            self.echo(json_line(msgspec.json.encode(record.to_result_record())))
            return
        names = [visible(name) for name in record.names]
        verdicts = "".join(f"; {visible(v.bot)}: {v.kind} ({visible(v.reason)})" for v in record.verdicts)
        self.echo(f"game {self.games_done}/{self.options.games} ({visible(record.game)}): "
                  f"{describe_result(record.result, names)} [{record.actions} actions]{verdicts}")
        if self.options.human is not None:  # over now: the person may see every hand
            self.echo(f"the whole deal, every hand (deal {visible(record.deal)}: the seed's human domain):")
            self.echo("\n".join(tell(replay_lines(record))))
        if not self.options.verbose:  # verbose printed it live
            for seat in sorted(self.shown):
                self._print_stderr(seat, stderr_text(record.stderr[seat]).splitlines(), "stderr")
        for seat in sorted({v.seat for v in record.verdicts} - self.shown):
            lines = [line for line in stderr_text(record.stderr[seat]).splitlines() if line.strip()]
            self._print_stderr(seat, lines[-FORFEIT_STDERR_LINES:], "last stderr")

    def _print_stderr(self, seat: int, lines: list[str], what: str) -> None:
        if lines:
            self.echo(f"   {what} of {self.labels[seat]}:")
            self.echo("\n".join(f"   {self.labels[seat]} stderr| {visible(line)}" for line in lines))


def write_replay(out: IO[bytes], record: GameRecord) -> None:
    """Append a game's replay (:func:`referee.results.replay.replay_lines`) to ``out``."""
    try:
        out.write(replay_lines(record))
        out.flush()
    except OSError as exc:
        raise ResultsWriteError(f"cannot write the log: {exc.strerror}") from None


def summary_table(records: Sequence[GameRecord]) -> str:
    """Per bot: games, times fool, fool %, verdicts, decision time median and max (ms)."""
    names = records[0].names if records else []
    rows = []
    for seat, name in enumerate(names):
        fools = sum(seat in r.result.fools for r in records)
        verdicts = [v.kind for r in records for v in r.verdicts if v.seat == seat]
        medians = [t.median_ms for r in records if (t := r.times[seat]) is not None]
        maxima = [t.max_ms for r in records if (t := r.times[seat]) is not None]
        rows.append([visible(name), len(records), fools, f"{100 * fools / len(records):.1f}",
                     ", ".join(verdicts) or "-",
                     f"{statistics.median(medians):.2f}" if medians else "-",
                     f"{max(maxima):.2f}" if maxima else "-"])
    return tabulate(rows, headers=["bot", "games", "fool", "fool %", "verdicts", "median ms", "max ms"],
                    colalign=("left", "right", "right", "right", "left", "right", "right"), disable_numparse=True)
