"""``durak check-bot``: a conformance check for bot authors.

The bot under test shakes hands, then plays a few games of every chosen variant and deck (by default all
four variants, 36 and 52 cards) against the sample random bot, in every seat; the match layer validates
every reply. Any verdict fails the check. The report says what was played.
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from protocol.records import stderr_text
from protocol.rules import VARIANTS, Rules, RulesError, applicable_options, rules_from_options
from referee.bots.cores import one_core
from referee.bots.errors import BotError
from referee.bots.launcher import BotCommand, preflight
from referee.bots.limits import ResourceLimits, TimeControl
from referee.bots.sandbox.isolation import PLAIN, Isolation
from referee.bots.session import BotClient
from referee.bots.summary import describe_resources
from referee.games.match import Series, play_series
from referee.text import visible

SAMPLE_RANDOM_BOT = Path(__file__).resolve().parents[2] / "sample_bots" / "python" / "random_bot.py"


class CheckSetupError(RuntimeError):
    """The check itself cannot run (e.g. the sample opponent is missing)."""


#: A check fails a bot whose replies inside the grace (strikes) are more than this share of its replies: in a
#: tournament three in one game are a timeout, so a bot that strikes now and then loses games there.
STRIKE_SHARE = 0.01
#: The 99th percentile of a bot's move times above this share of the move time gets a warning.
WARN_SHARE = 0.5
#: The subject's limits: a tournament's defaults ([limits] of sample_bots/tournament.toml).
LIMITS = ResourceLimits()
#: Lines of the bot's stderr shown where it failed.
STDERR_LINES = 10


@dataclass
class VariantCheck:
    rules: Rules
    games: int = 0
    verdicts: list[str] = field(default_factory=list)
    move_times: list[float] = field(default_factory=list)
    strikes: list[tuple[str, int]] = field(default_factory=list)  # (game, move) of each reply inside the grace
    stderr_tail: list[str] = field(default_factory=list)  # the last stderr lines of the first game with a verdict


@dataclass
class CheckReport:
    name: str
    version: str
    startup_seconds: float | None
    handshake_error: str | None = None
    players: int = 2
    variants: list[VariantCheck] = field(default_factory=list)
    move_time: float | None = None  # the subject's move time in seconds, once the games begin
    resources: str = ""  # what the bot got: sandbox, core, limits (describe_resources)
    handshake_stderr: list[str] = field(default_factory=list)  # the last stderr lines of a failed handshake

    @property
    def stderr_tail(self) -> list[str]:
        """The end of the bot's stderr where it first failed: its handshake, or its first game with a verdict."""
        return self.handshake_stderr or next((v.stderr_tail for v in self.variants if v.stderr_tail), [])

    @property
    def strike_count(self) -> int:
        return sum(len(v.strikes) for v in self.variants)

    @property
    def replies(self) -> int:
        return sum(len(v.move_times) for v in self.variants)

    @property
    def too_many_strikes(self) -> bool:
        """More strikes than :data:`STRIKE_SHARE` of the replies: a bot that would lose tournament games."""
        return self.strike_count > STRIKE_SHARE * self.replies

    @property
    def passed(self) -> bool:
        return (self.handshake_error is None and not any(v.verdicts for v in self.variants)
                and not self.too_many_strikes)


def rules_to_check(variants: list[str], decks: list[int], options: dict[str, object]) -> list[Rules]:
    """The rule sets a check plays: each variant (default: all) with each deck (default: 36 and 52) and the
    ``options``. Unless variants are named, a variant that some option does not apply to is left out.

    :raises RulesError: an unknown variant or option, a bad value, or options that fit no chosen variant.
    """
    chosen = variants or _variants_taking(options)
    return [rules_from_options(variant, {**options, "deck": deck}) for variant in chosen
            for deck in decks or (36, 52)]


def _variants_taking(options: dict[str, object]) -> list[str]:
    """The variants whose rules take ``options``. An option may list a variant and still not apply there with
    the others (chase takes ``transfer_beaten_pairs`` only with ``allow_transfer``). When no variant takes
    them, the first that lists them all is kept, so that its error says why (a bad value, a missing option)."""
    listed: list[str] = [v for v in VARIANTS if set(options) <= set(applicable_options(v))]
    if not listed:
        raise RulesError(f"no variant takes every option of --set ({', '.join(options)})")
    return [v for v in listed if _takes(v, options)] or listed[:1]


def _takes(variant: str, options: dict[str, object]) -> bool:
    try:
        rules_from_options(variant, options)
    except RulesError:
        return False
    return True


@dataclass(frozen=True)
class CheckPlan:
    """What a check plays: ``games_per_seat`` games in every seat of a table of ``players`` for each of
    ``rules`` (None: :func:`rules_to_check` of everything), against the sample random bot seeded from ``seed``,
    under ``clock`` (the subject's; the opponents get its start-up time), every bot held to one core of its own and
    a tournament's default limits, unless ``all_cores``."""

    rules: list[Rules] | None = None
    players: int = 2
    games_per_seat: int = 1
    seed: int = 1
    clock: TimeControl = field(default_factory=TimeControl)
    all_cores: bool = False


def check_bot(command: BotCommand, plan: CheckPlan = CheckPlan(), isolation: Isolation = PLAIN) -> CheckReport:
    """Run the handshake, then the games of ``plan``; stop at nothing."""
    preflight(command, isolation)
    if not SAMPLE_RANDOM_BOT.is_file():
        raise CheckSetupError(f"the sample opponent {SAMPLE_RANDOM_BOT} is missing")
    with contextlib.ExitStack() as held:
        cores = os.sched_getaffinity(0) if plan.all_cores else {held.enter_context(one_core())}
        report = _check(command, plan, isolation)
        report.resources = describe_resources(isolation, LIMITS, cores)
    return report


def _check(command: BotCommand, plan: CheckPlan, isolation: Isolation) -> CheckReport:
    players, seed, startup_time = plan.players, plan.seed, plan.clock.startup_time
    subject = BotClient("subject", command, limits=LIMITS, time_control=plan.clock, isolation=isolation)
    start = time.monotonic()
    try:
        hello = subject.start()
    except BotError as exc:
        return CheckReport("?", "?", None, handshake_error=f"{exc.verdict}: {exc.reason}",
                           handshake_stderr=_tail(stderr_text(subject.take_stderr())))
    report = CheckReport(hello.name, hello.version, time.monotonic() - start, players=players,
                         move_time=plan.clock.move_time)
    opponents = [BotClient(f"random{i}", BotCommand([sys.executable, str(SAMPLE_RANDOM_BOT), str(seed + i)]),
                           time_control=TimeControl(startup_time=startup_time)) for i in range(players - 1)]
    try:
        for checked in plan.rules or rules_to_check([], [], {}):
            report.variants.append(_check_variant(checked, subject, opponents, plan.games_per_seat, seed))
    finally:
        for client in (subject, *opponents):
            client.stop()
    return report


def _check_variant(rules: Rules, subject: BotClient, opponents: list[BotClient], games_per_seat: int,
                   seed: int) -> VariantCheck:
    check = VariantCheck(rules)
    table_size = len(opponents) + 1
    for seat in range(table_size):
        clients = [*opponents[:seat], subject, *opponents[seat:]]
        series = Series(rules, games_per_seat, seed + seat, series_id=f"{rules.variant}-{rules.deck}-s{seat}-")
        records = play_series(series, clients, on_game=lambda record: _note_times(check, subject, record.game))
        for record in records:
            check.games += 1
            failed = [f"{v.kind}: {v.reason}" for v in record.verdicts if v.seat == seat]
            if failed and not check.verdicts:
                check.stderr_tail = _tail(stderr_text(record.stderr[seat]))
            check.verdicts += failed
    return check


def _tail(text: str) -> list[str]:
    """The last lines of a bot's stderr that say something (:data:`STDERR_LINES` of them)."""
    return [line for line in text.splitlines() if line.strip()][-STDERR_LINES:]


def _note_times(check: VariantCheck, subject: BotClient, game: str) -> None:
    """After each game: the subject's move times and its strikes (the game's moves answered inside the grace)."""
    check.move_times.extend(subject.move_times)
    check.strikes.extend((game, move) for move in subject.strikes)


def format_report(report: CheckReport) -> list[str]:
    """The report for a terminal; the bot's name, version and failures are escaped (:func:`visible`)."""
    checked = [f"checked with {report.resources}"] if report.resources else []
    if report.handshake_error is not None:
        return [f"FAIL handshake: {visible(report.handshake_error)}", *_stderr_lines(report), *checked]
    lines = [f"bot '{visible(report.name)}' version '{visible(report.version)}': handshake in "
             f"{report.startup_seconds or 0:.3f} s", *checked]
    if report.variants:
        per_seat = report.variants[0].games // report.players
        lines.append(f"played: {per_seat} game(s) in each seat of a {report.players}-player table against the "
                     f"sample random bot, for each variant and deck below")
    for check in report.variants:
        times = check.move_times
        timing = (f"move median {statistics.median(times) * 1000:.2f} ms, p99 {_p99(times) * 1000:.2f} ms, max "
                  f"{max(times) * 1000:.2f} ms" if times else "no moves")
        status = "ok  " if not check.verdicts else "FAIL"
        lines.append(f"{status} {check.rules.variant:<11} {check.rules.deck} cards  {check.games} games, {timing}"
                     f"{_changed_options(check.rules)}")
        lines += [f"       {visible(verdict)}" for verdict in check.verdicts]
        lines += [f"       stderr| {visible(line)}" for line in check.stderr_tail]
        lines += [f"       strike: game {visible(game)}, move {move}: replied after the move time, inside the grace"
                  for game, move in check.strikes]
    return lines + _timing_summary(report)


def _stderr_lines(report: CheckReport) -> list[str]:
    return [f"       stderr| {visible(line)}" for line in report.stderr_tail]


def _timing_summary(report: CheckReport) -> list[str]:
    """The move times against the limit over the whole check, a warning past :data:`WARN_SHARE` of it at the
    99th percentile, the strikes against :data:`STRIKE_SHARE` of the replies, and the verdict."""
    times = [t for check in report.variants for t in check.move_times]
    lines = []
    if times and report.move_time is not None:
        limit_ms = report.move_time * 1000
        p99 = _p99(times) * 1000
        lines.append(f"move times: median {statistics.median(times) * 1000:.2f} ms, p99 {p99:.2f} ms, max "
                     f"{max(times) * 1000:.2f} ms of the {limit_ms:.0f} ms move time; "
                     f"{report.strike_count} strike(s) in {report.replies} replies")
        if p99 > WARN_SHARE * limit_ms:
            lines.append(f"warning: the 99th percentile of the move times is {p99 / limit_ms:.0%} of the move time: "
                         "a loaded tournament machine will turn some of these replies into strikes or timeouts")
    if report.too_many_strikes:
        lines.append(f"FAIL: {report.strike_count} strike(s) in {report.replies} replies, more than "
                     f"{STRIKE_SHARE:.0%}: three in one game are a timeout in a tournament")
    elif not report.passed:
        lines.append("FAIL: the bot misbehaved (see above)")
    else:
        lines.append("PASS")
    return lines


def _p99(times: list[float]) -> float:
    """The 99th percentile (nearest rank) of ``times``."""
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


def _changed_options(rules: Rules) -> str:
    """The options that differ from the variant's defaults, as ``" (first_bout_limit=5)"``; "" for none."""
    defaults = msgspec.structs.asdict(Rules(variant=rules.variant, deck=rules.deck))
    changed = [f"{name}={_json(value)}" for name, value in msgspec.structs.asdict(rules).items()
               if value != defaults[name]]
    return f" ({', '.join(changed)})" if changed else ""


def _json(value: object) -> str:
    return msgspec.json.encode(value).decode()
