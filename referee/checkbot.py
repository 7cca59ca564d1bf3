"""``durak check-bot``: a conformance check for bot authors.

The bot under test shakes hands, then plays a few games of every variant against the sample
random bot, in every seat; the match layer validates every reply. Any verdict fails the check.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from protocol.rules import VARIANTS, Rules
from referee.bots.errors import BotError
from referee.bots.isolation import PLAIN, Isolation
from referee.bots.launcher import BotCommand, preflight
from referee.bots.limits import TimeControl
from referee.bots.session import BotClient
from referee.match import play_series
from referee.text import visible

SAMPLE_RANDOM_BOT = Path(__file__).resolve().parent.parent / "sample_bots" / "python" / "random_bot.py"


class CheckSetupError(RuntimeError):
    """The check itself cannot run (e.g. the sample opponent is missing)."""


@dataclass
class VariantCheck:
    variant: str
    games: int = 0
    verdicts: list[str] = field(default_factory=list)
    move_times: list[float] = field(default_factory=list)


@dataclass
class CheckReport:
    name: str
    version: str
    startup_seconds: float | None
    handshake_error: str | None = None
    variants: list[VariantCheck] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.handshake_error is None and not any(v.verdicts for v in self.variants)


def check_bot(command: BotCommand, *, games_per_seat: int = 1, players: int = 2, move_time: float = 1.0,
              startup_time: float = 10.0, seed: int = 1, isolation: Isolation = PLAIN) -> CheckReport:
    """Run the handshake, then ``games_per_seat`` games per seat of every variant; stop at nothing."""
    preflight(command, isolation)
    if not SAMPLE_RANDOM_BOT.is_file():
        raise CheckSetupError(f"the sample opponent {SAMPLE_RANDOM_BOT} is missing")
    clock = TimeControl(move_time=move_time, startup_time=startup_time)
    subject = BotClient("subject", command, time_control=clock, isolation=isolation)
    start = time.monotonic()
    try:
        hello = subject.start()
    except BotError as exc:
        return CheckReport("?", "?", None, handshake_error=f"{exc.verdict}: {exc.reason}")
    report = CheckReport(hello.name, hello.version, time.monotonic() - start)
    opponents = [BotClient(f"random{i}", BotCommand([sys.executable, str(SAMPLE_RANDOM_BOT), str(seed + i)]),
                           time_control=TimeControl(startup_time=startup_time)) for i in range(players - 1)]
    try:
        for variant in VARIANTS:
            report.variants.append(_check_variant(Rules(variant=variant), subject, opponents, games_per_seat,
                                                  seed))
    finally:
        for client in (subject, *opponents):
            client.stop()
    return report


def _check_variant(rules: Rules, subject: BotClient, opponents: list[BotClient], games_per_seat: int,
                   seed: int) -> VariantCheck:
    check = VariantCheck(rules.variant)
    table_size = len(opponents) + 1
    for seat in range(table_size):
        clients = [*opponents[:seat], subject, *opponents[seat:]]
        records = play_series(rules, clients, games_per_seat, seed + seat, series_id=f"{rules.variant}-s{seat}-",
                              on_game=lambda _record: check.move_times.extend(subject.move_times))
        for record in records:
            check.games += 1
            check.verdicts += [f"{v.kind}: {v.reason}" for v in record.verdicts if v.seat == seat]
    return check


def format_report(report: CheckReport) -> list[str]:
    """The report for a terminal; the bot's name, version and failures are escaped (:func:`visible`)."""
    if report.handshake_error is not None:
        return [f"FAIL handshake: {visible(report.handshake_error)}"]
    lines = [f"bot '{visible(report.name)}' version '{visible(report.version)}': handshake in "
             f"{report.startup_seconds or 0:.3f} s"]
    for check in report.variants:
        times = check.move_times
        timing = (f"move median {statistics.median(times) * 1000:.2f} ms, max {max(times) * 1000:.2f} ms"
                  if times else "no moves")
        status = "ok  " if not check.verdicts else "FAIL"
        lines.append(f"{status} {check.variant:<11} {check.games} games, {timing}")
        lines += [f"       {visible(verdict)}" for verdict in check.verdicts]
    lines.append("PASS" if report.passed else "FAIL: the bot misbehaved (see above)")
    return lines
