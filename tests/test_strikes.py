"""Grace strikes (PROTOCOL.md 8): a reply after the time allowed for its move, but inside the grace, is a
strike; the third in one game is a ``timeout`` verdict; strikes start afresh with every game.

The deterministic tests drive the real ``BotClient`` and ``play_game`` against an in-process fake process
on an injected clock: each reply "takes" exactly the seconds its script says, so nothing depends on the
machine's speed. One test runs a real bot process with wide margins (0.2 s replies against a 0.05 s move
time and a 0.5 s grace).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from proctools import children, eventually

from protocol.messages import PROTOCOL_VERSION, BotHello, GameStart, Reply, Request, encoder, referee_decoder
from protocol.rules import Rules
from referee.bots import session
from referee.bots.errors import BotTimeout
from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.limits import TimeControl
from referee.bots.sandbox.isolation import DEFAULT
from referee.bots.session import BotClient
from referee.engine import SeededRng, new_game
from referee.games.match import Series, play_game, play_series
from referee.results.record import GameRecord
from tests.sandboxes import cgroup_features
from tests.scripted import QuietProcess

SEED = 7


class FakeClock:
    """The referee's monotonic clock, moved only by the fake bots' replies."""

    def __init__(self) -> None:
        self.time = 1000.0

    def __call__(self) -> float:
        return self.time


CLOCK = FakeClock()


class FakeProcess(QuietProcess):
    """Stands in for ``BotProcess``: answers the handshake, and each request with its first legal action
    after the seconds its command names, one per move of each game (``["fake", "1.02", "0.5"]``: 1.02 s for
    a game's first move, 0.5 s for every later one), computing all along (its tree's CPU time grows as the
    clock), or asleep for a word written ``z1.06``. A reply that would come after the deadline is a
    ``BotTimeout``, as from a real process."""

    def __init__(self, command: BotCommand, *_: object, **__: object) -> None:
        self.delays = [float(word.lstrip("z")) for word in command.argv[1:]] or [0.0]
        self.asleep = [word.startswith("z") for word in command.argv[1:]] or [False]
        self.moves = 0
        self.cpu_ns = 0
        self.request: Request | None = None

    def tree_cpu_ns(self) -> int:
        return self.cpu_ns

    def exchange(self, request: bytes, timeout: float) -> tuple[bytes, float]:
        return encoder.encode(BotHello(protocol=PROTOCOL_VERSION, name="fake")), 0.0

    def write_line(self, data: bytes, deadline: float) -> None:
        message = referee_decoder.decode(data)
        if isinstance(message, GameStart):
            self.moves = 0
        elif isinstance(message, Request):
            self.request = message

    def read_line(self, deadline: float) -> bytes:
        assert self.request is not None
        move = min(self.moves, len(self.delays) - 1)
        delay = self.delays[move]
        self.moves += 1
        spent = min(delay, deadline - CLOCK.time)  # judged at the deadline: it computed (or slept) until then
        CLOCK.time += spent
        self.cpu_ns += 0 if self.asleep[move] else round(spent * 1e9)
        if spent < delay:
            raise BotTimeout("bot sent no line before the deadline")
        return encoder.encode(Reply(id=self.request.id, action=self.request.legal[0]))



@pytest.fixture
def fake_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "BotProcess", FakeProcess)


def fake(name: str, *delays: float | str, clock: TimeControl | None = None) -> BotClient:
    command = BotCommand(["fake", *map(str, delays)])
    return BotClient(name, command, time_control=clock or TimeControl(move_time=1.0, grace=0.05), now=CLOCK)


def play(clients: list[BotClient], seed: int = SEED) -> GameRecord:
    return play_game(new_game(Rules(), len(clients), SeededRng(seed)), clients, "s1", deal=f"{seed}:0")


def the_verdict(record: GameRecord, seat: int) -> str:
    assert [(v.seat, v.kind) for v in record.verdicts] == [(seat, "timeout")], record.verdicts
    assert (record.result.end, record.result.fools) == ("forfeit", [seat])
    return record.verdicts[0].reason


@pytest.mark.usefixtures("fake_processes")
def test_a_reply_inside_the_grace_on_every_move_is_judged_at_the_third() -> None:
    """1.02 s against 1 s plus 0.05 s grace, every move: strikes at moves 1, 2, 3, and the third is a timeout."""
    record = play([fake("late", 1.02), fake("prompt", 0.01)])
    reason = the_verdict(record, 0)
    assert reason == "third reply inside the grace (strikes at moves 1, 2, 3; move 3 took 1020 ms of 1000 ms allowed)"
    assert record.strikes == [3, 0]
    times = record.times[0]
    assert times is not None and times.moves == 3
    assert record.to_result_record().strikes == [3, 0]


@pytest.mark.usefixtures("fake_processes")
def test_strikes_count_the_late_moves_only() -> None:
    """Late at moves 2, 5 and 9 only: the verdict comes at move 9 and names all three."""
    delays = [0.5, 1.01, 0.5, 0.5, 1.04, 0.5, 0.5, 0.5, 1.03, 0.5]
    record = play([fake("prompt", 0.01), fake("sometimes", *delays)])
    assert the_verdict(record, 1) == ("third reply inside the grace (strikes at moves 2, 5, 9; move 9 took "
                                      "1030 ms of 1000 ms allowed)")
    assert record.strikes == [0, 3]


@pytest.mark.usefixtures("fake_processes")
def test_two_strikes_a_game_are_no_verdict_and_strikes_start_afresh_each_game() -> None:
    """A series of 2 games on one process, late at moves 1 and 2 of each game: no verdict, 2 strikes each."""
    late = fake("late", 1.01, 1.01, 0.3)
    records = play_series(Series(Rules(), 2, SEED), [late, fake("prompt", 0.0)])
    assert [r.verdicts for r in records] == [[], []]
    assert [r.strikes for r in records] == [[2, 0], [2, 0]]
    assert late.starts == 1 and late.strikes == [1, 2]


@pytest.mark.usefixtures("fake_processes")
def test_time_drawn_from_the_bank_is_no_strike_but_beyond_it_is() -> None:
    """The time allowed is the move time plus what is left of the bank: 1.3 s of 1.5 s is no strike (the
    bank keeps 0.2 s); then 1.22 s of 1.2 s is one, and so are 1.02 s and 1.03 s of 1.0 s."""
    banked = TimeControl(move_time=1.0, grace=0.05, time_bank=0.5)
    record = play([fake("banked", 1.3, 1.22, 1.02, 1.03, clock=banked), fake("prompt", 0.0)])
    assert the_verdict(record, 0) == ("third reply inside the grace (strikes at moves 2, 3, 4; move 4 took "
                                      "1030 ms of 1000 ms allowed)")


@pytest.mark.usefixtures("fake_processes")
def test_the_strike_limit_is_part_of_the_time_control() -> None:
    """``TimeControl.strikes``: with 1, the first reply inside the grace is the verdict."""
    strict = TimeControl(move_time=1.0, grace=0.05, strikes=1)
    record = play([fake("prompt", 0.0), fake("late", 0.2, 1.04, clock=strict)])
    assert the_verdict(record, 1) == ("first reply inside the grace (strikes at moves 2; move 2 took "
                                      "1040 ms of 1000 ms allowed)")
    with pytest.raises(ValueError, match="strikes"):
        TimeControl(strikes=0)


@pytest.mark.usefixtures("fake_processes")
def test_a_reply_after_the_grace_is_still_a_plain_timeout() -> None:
    record = play([fake("hung", 1.06), fake("prompt", 0.0)])
    assert the_verdict(record, 0) == ("bot sent no line before the deadline; move 1 had 1000 ms + 50 ms grace; its "
                                      "processes used 1050 ms of CPU in those 1050 ms: busy, still computing at "
                                      "the deadline")
    assert record.strikes == [0, 0]


@pytest.mark.usefixtures("fake_processes")
def test_a_timeout_says_whether_the_bot_was_computing_or_waiting() -> None:
    """The CPU time of the bot's tree over the missed move tells a JIT compiling from an unflushed reply."""
    waiting = play([fake("asleep", "z1.06"), fake("prompt", 0.0)])
    assert the_verdict(waiting, 0) == ("bot sent no line before the deadline; move 1 had 1000 ms + 50 ms grace; its "
                                       "processes used 0 ms of CPU in those 1050 ms: idle, waiting (is stdout "
                                       "flushed after each line?)")


# -- a real process --------------------------------------------------------------------------------------

SLUGGISH = """\
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        reply = {"type": "hello", "protocol": message["protocol"], "name": "sluggish"}
    elif message["type"] == "request":
        time.sleep(0.2)
        reply = {"type": "action", "id": message["id"], "action": message["legal"][0]}
    elif message["type"] == "shutdown":
        break
    else:
        continue
    print(json.dumps(reply), flush=True)
"""


@pytest.fixture
def sluggish(tmp_path: Path) -> Iterator[BotCommand]:
    path = tmp_path / "sluggish.py"
    path.write_text(SLUGGISH, encoding="utf-8")
    yield BotCommand([sys.executable, "-S", str(path)])
    assert eventually(lambda: children() == []), "a bot was not reaped"


def against_a_correct_bot(subject: BotClient) -> GameRecord:
    """One game of ``subject`` in seat 0 against a prompt, correct bot in seat 1; both stopped after."""
    correct = BotClient("correct", BotCommand([sys.executable, "-S", str(Path(__file__).parent / "hostile" / "bot.py"),
                                               "play"]), time_control=TimeControl(move_time=3.0, startup_time=5.0))
    try:
        return play([subject, correct])
    finally:
        subject.stop()
        correct.stop()


def test_a_real_bot_replying_inside_the_grace_is_judged_at_its_third_move(sluggish: BotCommand) -> None:
    """A bot that sleeps 0.2 s per move, against a 0.05 s move time and a 0.5 s grace (margins of 0.15 s
    and 0.3 s): strikes at its moves 1, 2 and 3, and a timeout at the third."""
    slow = BotClient("sluggish", sluggish, time_control=TimeControl(move_time=0.05, grace=0.5, startup_time=5.0))
    record = against_a_correct_bot(slow)
    reason = the_verdict(record, 0)
    assert msgspec.json.decode(msgspec.json.encode(record.to_result_record()))["strikes"] == [3, 0]
    assert reason.startswith("third reply inside the grace (strikes at moves 1, 2, 3; move 3 took "), reason
    assert reason.endswith(" ms of 50 ms allowed)"), reason
    times = record.times[0]
    assert times is not None and times.moves == 3 and 200 <= times.median_ms < 550


BUSY_OR_IDLE = """\
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": message["protocol"], "name": "stuck"}), flush=True)
    elif message["type"] == "request":
        if sys.argv[1] == "busy":
            while True:
                pass
        time.sleep(60)
"""


@pytest.mark.parametrize(("how", "said"), [("busy", r"busy, still computing at the deadline|partly idle.*"),
                                           ("idle", r"idle, waiting \(is stdout flushed after each line\?\)")])
def test_a_real_timeout_says_how_much_cpu_the_bots_tree_used(how: str, said: str, open_tmp: Path) -> None:
    """The control group's CPU time over the missed move: a spinning bot is busy, a sleeping one idle (a loaded
    machine may give the spinner less than half a core: then it is at least partly busy)."""
    if "cpu" not in cgroup_features():
        pytest.skip("no CPU accounting by control group here")
    (open_tmp / "stuck.py").write_text(BUSY_OR_IDLE)
    stuck = BotClient("stuck", BotCommand([sys.executable, "-S", "stuck.py", how], cwd=open_tmp, env=scrubbed_env()),
                      time_control=TimeControl(move_time=0.3, startup_time=5.0), isolation=DEFAULT)
    record = against_a_correct_bot(stuck)
    used = re.search(r"its processes used (\d+) ms of CPU in those (\d+) ms: (.*)$", the_verdict(record, 0))
    assert used is not None and re.fullmatch(said, used.group(3)), the_verdict(record, 0)
    cpu, wall = int(used.group(1)), int(used.group(2))
    assert 340 <= wall < 1000
    assert cpu >= 0.25 * wall if how == "busy" else cpu <= 0.1 * wall
