"""The longest line the referee can write (``referee.games.line_bound``, PROTOCOL.md 2 "Length") against
the lines it does write.

Games run through the real ``BotClient`` and ``play_game`` against an in-memory stand-in for ``BotProcess``
that keeps every line written to it, so the bytes are the ones a bot would read. With a small
``max_actions`` the games often reach the action cap, where the bound is sharpest.
"""

from __future__ import annotations

import inspect
import random
import re
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.messages import PROTOCOL_VERSION, BotHello, Reply, encoder
from protocol.rules import MAX_PLAYERS, MIN_PLAYERS, VARIANTS, Rules, rules_from_options
from referee.bots import session
from referee.bots.launcher import BotCommand
from referee.bots.limits import TimeControl
from referee.bots.process import BotProcess
from referee.bots.session import BotClient
from referee.engine import SeededRng, new_game
from referee.games.line_bound import (
    BOT_LINE_CAP,
    MAX_REFEREE_LINE,
    LineBounds,
    line_bounds,
    max_referee_line,
    reason_bound,
)
from referee.games.match import play_game
from tests.scripted import QuietProcess

DOC = Path(__file__).resolve().parent.parent / "protocol" / "PROTOCOL.md"
MALFORMED = "\x7f" * (BOT_LINE_CAP - len(encoder.encode(Reply(id=0, action=""))))  # one whole line's worth


class KeepingProcess(QuietProcess):
    """Stands in for ``BotProcess``: keeps every line written to it; answers each request with a random legal
    action (``["fake", SEED]``), except its request number MOVE with ACTION (``["fake", SEED, MOVE, ACTION]``)."""

    def __init__(self, command: BotCommand, *_: object, **__: object) -> None:
        self.rng = random.Random(int(command.argv[1]))
        self.move, self.answer = (int(command.argv[2]), command.argv[3]) if len(command.argv) > 2 else (0, "")
        self.requests = 0
        self.lines: list[bytes] = []
        self.reply = b""
        PROCESSES.append(self)

    def exchange(self, request: bytes, timeout: float) -> tuple[bytes, float]:
        self.lines.append(request)
        return encoder.encode(BotHello(protocol=PROTOCOL_VERSION, name="fake")), 0.0

    def write_line(self, data: bytes, deadline: float) -> None:
        self.lines.append(data)
        message = msgspec.json.decode(data)
        if message["type"] == "request":
            self.requests += 1
            action = self.answer if self.requests == self.move else self.rng.choice(message["legal"])
            self.reply = encoder.encode(Reply(id=message["id"], action=action))

    def read_line(self, deadline: float) -> bytes:
        return self.reply


PROCESSES: list[KeepingProcess] = []


@pytest.fixture(autouse=True)
def keeping_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "BotProcess", KeepingProcess)


def play(rules: Rules, players: int, seed: int, offence: tuple[int, int, str] | None = None) -> list[list[bytes]]:
    """Every line each seat was written in one game, its hello and shutdown included; with ``offence``
    (seat, move, text) that seat answers its request number ``move`` with ``text``."""
    PROCESSES.clear()
    clients = []
    for seat in range(players):
        argv = ["fake", str(seed + seat)]
        if offence is not None and offence[0] == seat:
            argv += [str(offence[1]), offence[2]]
        clients.append(BotClient(f"b{seat}", BotCommand(argv), time_control=TimeControl(move_time=60.0, pause=False)))
    play_game(new_game(rules, players, SeededRng(seed)), clients, "g1", deal=f"{seed}:0")
    for client in clients:
        client.stop()
    assert len(PROCESSES) == players
    return [process.lines for process in PROCESSES]


def kind_of(line: bytes) -> str:
    return str(msgspec.json.decode(line)["type"])


def over_the_bound(lines: list[list[bytes]], bounds: LineBounds) -> list[str]:
    return [f"seat {seat}: {kind_of(line)} of {len(line)} bytes > {bounds.of_type(kind_of(line))}"
            for seat, seat_lines in enumerate(lines) for line in seat_lines
            if len(line) > bounds.of_type(kind_of(line))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(VARIANTS), deck=st.sampled_from([36, 52]),
       players=st.integers(MIN_PLAYERS, MAX_PLAYERS), max_actions=st.integers(1, 300),
       seed=st.integers(0, 2**32),
       offence=st.none() | st.tuples(st.integers(0, MAX_PLAYERS - 1), st.integers(1, 40), st.text(max_size=300)))
def test_random_games_never_write_a_line_over_the_bound(variant: str, deck: int, players: int, max_actions: int,
                                                         seed: int, offence: tuple[int, int, str] | None) -> None:
    """Random play, and now and then a seat that answers one request with any text (a forfeit, mostly)."""
    rules = rules_from_options(variant, {"deck": deck, "max_actions": max_actions})
    lines = play(rules, players, seed, offence)
    assert {kind_of(line) for line in lines[0]} >= {"hello", "game", "game_over", "shutdown"}
    assert over_the_bound(lines, line_bounds(rules, players)) == []


def test_the_longest_line_of_a_big_game_is_a_game_over_to_a_seat_that_went_out() -> None:
    """6 players, 52 cards, the default rules: the longest line is the game_over of a seat that went out (every
    later event waited for it), and no line passes the bound."""
    rules = Rules(variant="chase", deck=52)
    lines = play(rules, 6, 46)
    size, seat, longest = max((len(line), seat, line) for seat, seat_lines in enumerate(lines) for line in seat_lines)
    assert kind_of(longest) == "game_over"
    events = [event for line in lines[seat] for event in msgspec.json.decode(line).get("events", [])]
    assert any(event["type"] == "out" and seat in event["seats"] for event in events)
    assert over_the_bound(lines, line_bounds(rules, 6)) == []
    assert size < MAX_REFEREE_LINE


def test_an_offender_quoting_a_whole_line_back_reaches_the_reason_bound_exactly() -> None:
    """A malformed action as long as a bot's line may be, all DEL characters: its reason, quoting it twice, is
    exactly :func:`reason_bound`, and the offender's game_over stays within its bound."""
    rules = Rules(variant="podkidnoy", deck=36)
    line = encoder.encode(Reply(id=1, action=MALFORMED))
    assert len(line) == BOT_LINE_CAP
    lines = play(rules, 2, 3, offence=(0, 1, MALFORMED))
    offender_game_over = [line for seat_lines in lines for line in seat_lines if kind_of(line) == "game_over"
                          and msgspec.json.decode(line)["result"]["reason"] is not None]
    assert len(offender_game_over) == 1
    reason = msgspec.json.decode(offender_game_over[0])["result"]["reason"]
    assert reason.startswith("malformed action: unknown action '\\x7f")
    assert len(encoder.encode(reason)) == reason_bound()
    assert over_the_bound(lines, line_bounds(rules, 2)) == []


def test_a_quoted_byte_costs_at_most_five_bytes() -> None:
    """``repr`` then the encoder turn any character of a bot's text into at most 5 bytes per byte the bot
    needed to send it (DEL, 1 byte, becomes ``\\\\x7f``): the factor :func:`reason_bound` uses. Every
    character, in about a second."""
    both_quotes = "\"'"  # with both, repr escapes every ' too
    base = len(encoder.encode(repr(both_quotes)))
    worst, worst_code = 0.0, 0
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue  # a lone surrogate is no character a JSON decoder hands back
        char = chr(code)
        cost = len(encoder.encode(repr(both_quotes + char))) - base
        sent = len(encoder.encode(char)) - 2  # its shortest form in a JSON string
        if cost / sent > worst:
            worst, worst_code = cost / sent, code
    assert (worst, worst_code) == (5.0, 0x7F)


def test_the_bound_is_the_constant_and_protocol_md_states_it() -> None:
    assert max_referee_line() == MAX_REFEREE_LINE
    doc = DOC.read_text(encoding="utf-8")
    section = doc[doc.index("## 2. Framing"):doc.index("## 3.")]
    bullet = re.search(r"- \*\*Length\.\*\*(.*?)\n- \*\*", section, re.DOTALL)
    assert bullet is not None
    assert f"{MAX_REFEREE_LINE:,} bytes" in bullet.group(1)


def test_the_bot_line_cap_is_the_bot_processes() -> None:
    assert inspect.signature(BotProcess.__init__).parameters["max_line"].default == BOT_LINE_CAP


def test_the_bound_grows_with_max_actions_and_is_stated_per_type() -> None:
    small, default = (line_bounds(Rules(variant="chase", deck=52, max_actions=m), 6) for m in (10, 5000))
    assert small.game_over < default.game_over
    assert LineBounds.types() == ["hello", "game", "request", "game_over", "game_over_offender", "shutdown"]
    assert default.longest == default.game_over_offender
