"""The match layer against hostile bots (tests/hostile/bot.py): every failure becomes a forfeit with the
right verdict on the right seat, the referee never hangs, and no process or fd outlives a test."""

from __future__ import annotations

import dataclasses
import re
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from types import FrameType

import msgspec
import proctools
import pytest
from conftest import FaultMatrix
from proctools import all_pids, eventually, gone, stat_fields

from protocol.events import AnyEvent, CardKept, CardsDrawn, event_for_seat
from protocol.messages import GameOver, GameStart, Hello, Request, Shutdown, referee_decoder
from protocol.records import ResultRecord, Verdict, stderr_text
from protocol.rules import Rules
from protocol.views import GameResult
from referee.bots import session
from referee.bots.launcher import BotCommand
from referee.bots.limits import ResourceLimits, TimeControl
from referee.bots.process import BotProcess
from referee.bots.session import BotClient
from referee.engine import SeededRng, new_game
from referee.engine.rng import derive_seed
from referee.games.match import Series, bot_seed_for, play_game, play_series
from referee.results.record import GameRecord

BOT = Path(__file__).parent / "hostile" / "bot.py"
MOVE = 0.5  # a hostile bot's seconds per move: ample for a Python bot on a loaded machine, yet cheap to time out
CLOCK = TimeControl(move_time=MOVE, startup_time=3.0)
SAFE = TimeControl(move_time=3.0, startup_time=5.0)  # for the correct bots, which must never time out
WATCHDOG = 30  # seconds: a test still running by then means the referee hung
SEED = 7


# -- processes and fds (as in test_bot_process.py) ------------------------------------------------




class RefereeHung(Exception):
    pass


@pytest.fixture(autouse=True)
def no_leaks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Bounds the test's wall time, records every bot process group, and checks nothing outlives the test."""
    groups: list[int] = []

    class RecordedProcess(BotProcess):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            groups.append(self.pid)

    def hung(signum: int, frame: FrameType | None) -> None:
        raise RefereeHung(f"the test ran over {WATCHDOG} s: the referee hung")

    monkeypatch.setattr(session, "BotProcess", RecordedProcess)
    with proctools.no_leaks(groups, reap_within=0):
        previous = signal.signal(signal.SIGALRM, hung)
        signal.alarm(WATCHDOG)
        try:
            yield groups
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


# -- bots --------------------------------------------------------------------------------------


def command(behaviour: str, **options: object) -> BotCommand:
    """tests/hostile/bot.py BEHAVIOUR key=value...; -S: Python starts in 7 ms, not 18."""
    return BotCommand([sys.executable, "-S", str(BOT), behaviour, *(f"{k}={v}" for k, v in options.items())])


def shell(behaviour: str, **options: object) -> str:
    """The same bot as a `durak play` argument."""
    return shlex.join(command(behaviour, **options).argv)


MakeClient = Callable[..., BotClient]


@pytest.fixture
def client(no_leaks: list[int]) -> Iterator[MakeClient]:
    """Makes BotClients of tests/hostile/bot.py; stops them all after the test (before the leak checks)."""
    made: list[BotClient] = []

    def make(name: str, behaviour: str, *, clock: TimeControl = SAFE, pause: bool = True,
             limits: ResourceLimits | None = None, **options: object) -> BotClient:
        bot = BotClient(name, command(behaviour, **options), limits=limits,
                        time_control=dataclasses.replace(clock, pause=pause))
        made.append(bot)
        return bot

    yield make
    for bot in made:
        bot.stop()


def received(log: Path) -> list[object]:
    """The messages a bot logged (log=FILE), decoded as the protocol defines them."""
    return [referee_decoder.decode(line) for line in log.read_bytes().splitlines()]


def delivered_events(messages: list[object]) -> list[AnyEvent]:
    return [event for m in messages if isinstance(m, Request | GameOver) for event in m.events]


def play(clients: list[BotClient], seed: int = SEED, rules: Rules | None = None) -> tuple[GameRecord, float]:
    game = new_game(rules or Rules(), len(clients), SeededRng(seed))
    start = time.monotonic()
    record = play_game(game, clients, "t1", deal=f"{seed}:0")
    return record, time.monotonic() - start


def ranks_every_seat(result: GameResult, players: int) -> bool:
    seats = [seat for place in result.order for seat in place]
    return sorted(seats) == list(range(players))


def assert_forfeit(record: GameRecord, seat: int, kind: str, reason: str) -> Verdict:
    """One verdict of ``kind`` against ``seat``, whose reason matches the regex ``reason``; ``seat`` is the fool."""
    assert [(v.seat, v.kind) for v in record.verdicts] == [(seat, kind)], record.verdicts
    verdict = record.verdicts[0]
    assert verdict.bot == record.names[seat]
    assert "\n" not in verdict.reason and len(verdict.reason) < 400
    assert re.search(reason, verdict.reason), verdict.reason
    result = record.result
    assert (result.end, result.fools, result.forfeit_seat, result.verdict) == ("forfeit", [seat], seat, kind)
    assert result.reason == verdict.reason
    assert result.order[-1] == [seat]
    assert ranks_every_seat(result, len(record.names))
    return verdict


# -- one hostile bot against a correct one ----------------------------------------------------

FAULTS = {  # the fault matrix's words for the behaviours of tests/hostile/bot.py
    "crash_at_start": "crash at start", "crash": "crash mid-game", "crash_with_child": "crash leaving a child "
    "holding its pipes", "exit0": "exit 0 early", "segfault": "segfault", "memory_hog": "memory hog (64 MiB limit)",
    "hang": "hang", "late": "answer after the deadline", "sigstop": "SIGSTOP of itself",
    "no_newline": "a reply without its newline", "garbage": "garbage (not JSON)",
    "wrong_shape": "valid JSON of the wrong shape", "wrong_id": "wrong id", "double": "two replies to one request",
    "illegal": "illegal action", "not_held": "a card it does not hold", "huge_line": "a 1 GiB line without newline",
    "close_stdout": "closing stdout", "close_stdin": "closing stdin", "bad_version": "wrong protocol version",
    "unknown_type": "unknown message type", "extra_field": "unknown field", "malformed": "malformed action string",
    "string_id": "an id given as a string", "float_id": "an id given as a float", "missing_field": "a reply "
    "without its id", "empty_line": "an empty line", "banner": "a debug print on stdout", "not_an_object": "a JSON "
    "array, not an object", "hello_again": "a second hello", "chatter": "a late second reply",
}

ANY_REQUEST = r"\d+"
NO_LINE = (r"^bot sent no line before the deadline \(nothing received\); (move \d+|the handshake) had \d+ ms \+ 50 ms "
           r"grace; (its processes used \d+ ms of CPU in those \d+ ms: idle, waiting|its CPU time is unknown here) "
           r"\(is stdout flushed after each line\?\)$")
HOSTILE = [  # id, behaviour, bot options, verdict, reason (a regex)
    ("crash_at_start", "crash_at_start", {}, "crash", r"^bot exited: exit code 3 \(stderr: bot\.py: crash_at_start\)$"),
    ("crash", "crash", {"after": 2}, "crash", r"^bot exited: exit code 3 \(stderr: bot\.py: crashing on purpose\)$"),
    ("crash_with_child", "crash", {"after": 2, "fork": 1}, "crash", r"^bot exited: exit code 3 \(stderr: bot\.py: "),
    ("exit0", "exit0", {"after": 1}, "crash", r"^bot exited: exit code 0$"),
    ("segfault", "segfault", {"after": 1}, "crash", r"^bot exited: killed by signal 11 \(SIGSEGV\)$"),
    ("memory_hog", "memory_hog", {"after": 1}, "crash", r"^bot exited: exit code 1 \(stderr: MemoryError\)$"),
    ("hang", "hang", {"after": 1}, "timeout", NO_LINE),
    ("late", "late", {"after": 1}, "timeout", NO_LINE),
    ("sigstop", "sigstop", {"after": 1}, "timeout", NO_LINE),
    ("no_newline", "no_newline", {"after": 1}, "timeout",
     r"^bot sent no line before the deadline \(\d+ bytes without a newline\); move \d+ had 500 ms \+ 50 ms grace; "
     r"(its processes used \d+ ms of CPU in those \d+ ms: idle, waiting|its CPU time is unknown here) "
     r"\(is stdout flushed after each line\?\)$"),
    ("garbage", "garbage", {"after": 1}, "protocol", r"^invalid message 'this is not JSON': "),
    ("wrong_shape", "wrong_shape", {"after": 1}, "protocol",
     r"^invalid message '.*': Expected `str`, got `int` - at `\$\.action`$"),
    ("string_id", "string_id", {"after": 1}, "protocol",
     r"^invalid message '.*': Expected `int`, got `str` - at `\$\.id`$"),
    ("float_id", "float_id", {"after": 1}, "protocol",
     r"^invalid message '.*': Expected `int`, got `float` - at `\$\.id`$"),
    ("missing_field", "missing_field", {"after": 1}, "protocol",
     r"^invalid message '.*': Object missing required field `id`$"),
    ("empty_line", "empty_line", {"after": 1}, "protocol", r"^invalid message '': "),
    ("banner", "banner", {"after": 1}, "protocol", r"^invalid message 'thinking about .*': JSON is malformed"),
    ("not_an_object", "not_an_object", {"after": 1}, "protocol",
     r"^invalid message '\[\"action\", 1\]': Expected `object`"),
    ("unknown_type", "unknown_type", {"after": 1}, "protocol",
     r"^invalid message '.*resign.*': Invalid value 'resign'"),
    ("extra_field", "extra_field", {"after": 1}, "protocol",
     r"^invalid message '.*': Object contains unknown field `comment`"),
    ("wrong_id", "wrong_id", {"after": 1}, "protocol",
     rf"^replied to request {ANY_REQUEST} while request {ANY_REQUEST} was asked$"),
    ("hello_again", "hello_again", {"after": 1}, "protocol",
     rf"^expected an action reply to request {ANY_REQUEST}, got a hello$"),
    ("double", "double", {"after": 1}, "protocol", r"^sent a line nobody asked for: '\{\"type\": \"action\", "),
    ("chatter", "chatter", {"after": 1}, "protocol",  # found before its next request, or read as that reply
     rf"^(sent a line nobody asked for: |replied to request {ANY_REQUEST} while request {ANY_REQUEST} was asked$)"),
    ("bad_version", "bad_version", {}, "protocol", r"^the bot speaks protocol 99; this referee speaks protocol 2$"),
    ("huge_line", "huge_line", {"after": 1}, "protocol", r"^bot sent a line longer than 65536 bytes$"),
    ("close_stdout", "close_stdout", {"after": 1}, "protocol", r"^bot closed its stdout$"),
    ("close_stdin", "close_stdin", {"after": 1}, "protocol", r"^bot closed its stdin$"),
    ("illegal", "illegal", {"after": 1}, "illegal", r"^illegal action '(take|pass)': the \w+ phase allows only "),
    ("malformed", "malformed", {"after": 1}, "illegal", r"^malformed action: unknown action 'fold' in 'fold now'"),
    ("not_held", "not_held", {"after": 1}, "illegal", r"^illegal action 'attack (\w\w)': seat \d does not hold \1$"),
]


@pytest.mark.parametrize("pause", [True, False], ids=["paused", "running"])
@pytest.mark.parametrize(("case", "behaviour", "options", "kind", "reason"), HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_bot_forfeits_with_its_verdict(client: MakeClient, tmp_path: Path, case: str, behaviour: str,
                                              options: dict[str, object], kind: str, reason: str,
                                              pause: bool, fault_matrix: FaultMatrix) -> None:
    seat = [c[0] for c in HOSTILE].index(case) % 2  # the hostile bot sits at either seat
    hog = behaviour == "memory_hog"  # the limit must stop it, not the clock: allocating 64 MiB is slow under load
    limits, clock = (ResourceLimits(memory_mb=64), SAFE) if hog else (None, CLOCK)
    hostile = client("hostile", behaviour, clock=clock, pause=pause, limits=limits, **options)
    log = tmp_path / "correct.jsonl"
    correct = client("correct", "play", pause=pause, log=log)
    clients = [hostile, correct] if seat == 0 else [correct, hostile]

    record, elapsed = play(clients)

    verdict = assert_forfeit(record, seat, kind, reason)
    assert elapsed < 3.0, f"the game took {elapsed:.2f} s"
    fault_matrix.record(FAULTS.get(case, case), kind, f"forfeit, the bot is the fool and is stopped: "
                        f"\"{verdict.reason[:90]}\"", elapsed)
    assert not hostile.is_running and hostile.starts == 1  # killed at once, never asked again
    if quoted := re.search(r"\(stderr: (.*)\)$", record.verdicts[0].reason):  # a crash quotes its last words
        assert quoted.group(1) in stderr_text(record.stderr[seat])
    if correct.starts:  # the other seat, if it was started, is told the game is over and kept running
        assert correct.is_running
        correct.stop()  # so that it has read (and logged) all it was sent
        *_, game_over, shutdown = received(log)
        assert isinstance(game_over, GameOver) and game_over.result == told_others(record.result)
        assert isinstance(shutdown, Shutdown)


def told_others(result: GameResult) -> GameResult:
    """The result as the seats that did not forfeit are told it: without the offender's reason."""
    return msgspec.structs.replace(result, reason=None)


OFFENDER_GETS_GAME_OVER = True  # PROTOCOL.md 9: after illegal or protocol verdicts, game_over, then shutdown


@pytest.mark.parametrize(("behaviour", "kind"), [("illegal", "illegal"), ("wrong_id", "protocol")])
def test_the_offender_is_shut_down_as_protocol_md_says(client: MakeClient, tmp_path: Path, behaviour: str,
                                                       kind: str) -> None:
    """PROTOCOL.md 9: "The offender gets `shutdown` with `"grace_ms": 0` and is killed, with no `game_over`."

    The offender ignores SIGTERM, so it has the 0.1 s before SIGKILL to log whatever it was sent."""
    log = tmp_path / "hostile.jsonl"
    hostile = client("hostile", behaviour, clock=CLOCK, after=1, log=log, term="ignore")
    record, _ = play([hostile, client("correct", "play")])
    assert_forfeit(record, 0, kind, ".")
    assert not hostile.is_running
    messages = received(log)
    game_overs = [m for m in messages if isinstance(m, GameOver)]
    assert bool(game_overs) == OFFENDER_GETS_GAME_OVER, f"game_over sent to the offender: {bool(game_overs)}"
    assert all(m.result == record.result for m in game_overs)
    assert [m.grace_ms for m in messages if isinstance(m, Shutdown)] in ([], [0])
    assert not isinstance(messages[-1], Request)  # nothing after the fatal request but the end


def test_a_silent_handshake_times_out_at_the_startup_time(client: MakeClient) -> None:
    mute = client("mute", "mute", clock=TimeControl(move_time=MOVE, startup_time=0.5))
    record, elapsed = play([client("correct", "play"), mute])
    assert_forfeit(record, 1, "timeout", NO_LINE)
    assert 0.5 <= elapsed < 1.5


def test_a_seat_never_asked_gets_its_game_line_with_game_over(client: MakeClient, tmp_path: Path) -> None:
    first = new_game(Rules(), 2, SeededRng(SEED)).to_move  # the hostile bot fails its first decision
    assert first is not None
    log = tmp_path / "correct.jsonl"
    clients = [client("correct", "play", log=log)]
    clients.insert(first, client("hostile", "illegal"))
    record, _ = play(clients)
    assert_forfeit(record, first, "illegal", "^illegal action ")
    clients[1 - first].stop()
    messages = received(log)
    assert [type(m).__name__ for m in messages] == ["Hello", "GameStart", "GameOver", "Shutdown"]
    start, over = messages[1], messages[2]
    assert isinstance(start, GameStart) and isinstance(over, GameOver)
    assert (start.game, start.seat, over.game) == ("t1", 1 - first, "t1")
    assert over.events == [event_for_seat(event, 1 - first) for event in record.events]


@pytest.mark.parametrize("behaviour", ["crash_at_start", "bad_version"])
def test_a_game_that_ends_at_the_handshake_is_reported_to_the_seats_running(client: MakeClient, tmp_path: Path,
                                                                            behaviour: str) -> None:
    """PROTOCOL.md 3.5: a bot may then get game_over with no game before it."""
    log = tmp_path / "correct.jsonl"
    correct = client("correct", "play", log=log)
    record, _ = play([correct, client("hostile", behaviour)])
    assert record.result.fools == [1] and record.actions == 0
    correct.stop()
    messages = received(log)
    assert [type(m).__name__ for m in messages if not isinstance(m, GameStart)] == ["Hello", "GameOver", "Shutdown"]
    assert isinstance(messages[-2], GameOver) and messages[-2].result == told_others(record.result)


def test_crlf_line_ends_are_tolerated(client: MakeClient) -> None:
    record, _ = play([client("crlf", "crlf"), client("correct", "play")])
    assert record.verdicts == [] and record.result.end == "fool"


@pytest.mark.parametrize("hostile_seat", [0, 1, 2])
def test_a_forfeit_at_a_table_of_three_ranks_every_seat(client: MakeClient, hostile_seat: int) -> None:
    clients = [client(f"correct{seat}", "play") for seat in range(2)]
    clients.insert(hostile_seat, client("hostile", "illegal", after=4))
    record, _ = play(clients)
    assert_forfeit(record, hostile_seat, "illegal", "^illegal action ")
    others = sorted(seat for place in record.result.order[:-1] for seat in place)
    assert others == sorted({0, 1, 2} - {hostile_seat})


def test_a_crash_at_start_leaves_the_seats_after_it_unstarted(client: MakeClient) -> None:
    hostile, correct = client("hostile", "crash_at_start"), client("correct", "play")
    record, _ = play([hostile, correct])
    assert_forfeit(record, 0, "crash", "exit code 3")
    assert (correct.starts, record.actions, record.times) == (0, 0, [None, None])


def test_missing_bot_program_forfeits_as_a_crash(client: MakeClient) -> None:
    missing = BotClient("missing", BotCommand(["no-such-bot-4d1f"]), time_control=SAFE)
    record, _ = play([client("correct", "play"), missing])
    assert_forfeit(record, 1, "crash", r"^bot program 'no-such-bot-4d1f' not found$")


@pytest.mark.parametrize("pause", [True, False], ids=["paused", "running"])
def test_stderr_is_kept_beside_the_move_it_was_written_during(client: MakeClient, pause: bool) -> None:
    """Each of its requests the bot answers with "saw N" on stderr, N the events it had been sent: the record
    keeps each line as its own chunk, marked with the same N (the events that came before that move)."""
    teller = client("teller", "play", pause=pause, saw=1)
    record, _ = play([client("quiet", "play", pause=pause), teller])
    chunks = record.stderr[1]
    times = record.times[1]
    assert times is not None and len(chunks) == times.moves > 3
    assert [chunk.text for chunk in chunks] == [f"saw {chunk.after}\n" for chunk in chunks]
    assert [chunk.after for chunk in chunks] == sorted({chunk.after for chunk in chunks})
    assert chunks[-1].after < len(record.events) and record.stderr[0] == []


@pytest.mark.parametrize("pause", [True, False], ids=["paused", "running"])
def test_stderr_flood_is_no_failure(client: MakeClient, pause: bool, fault_matrix: FaultMatrix) -> None:
    """8 MiB to stderr during its move and 8 MiB more between turns, then it plays on: no verdict."""
    flooder = client("flooder", "stderr_flood", pause=pause, after=1)
    record, elapsed = play([flooder, client("correct", "play", pause=pause)])
    assert record.verdicts == [] and record.result.end == "fool"
    assert ranks_every_seat(record.result, 2)
    assert elapsed < 5.0
    stderr = stderr_text(record.stderr[0])  # capped: the first 64 KiB, a note, the last 4 KiB
    assert re.search(r"\n\[\.\.\. \d+ bytes dropped \.\.\.\]\n", stderr) and len(stderr) < 70 * 1024
    assert stderr.startswith("thinking...") and record.stderr[1] == []
    fault_matrix.record("stderr flood (16 MiB)", "none", "drained all the time; the game record keeps the first "
                        "64 KiB and the last 4 KiB", elapsed)


def test_a_forked_child_does_not_outlive_its_bot(client: MakeClient, fault_matrix: FaultMatrix) -> None:
    forker = client("forker", "fork")
    record, elapsed = play([client("correct", "play"), forker])
    assert record.verdicts == [] and record.result.end == "fool"
    grandchild = int(re.findall(r"forked (\d+)", stderr_text(record.stderr[1]))[0])
    assert not gone(grandchild)  # it lived through the game
    forker.stop()
    assert eventually(partial(gone, grandchild))
    fault_matrix.record("a forked child left running", "none", "the child is killed with its bot's process group "
                        "when the bot stops", elapsed)


def test_a_correct_game_times_every_move(client: MakeClient) -> None:
    record, elapsed = play([client("a", "play"), client("b", "play")])
    assert record.verdicts == [] and record.result.end == "fool" and ranks_every_seat(record.result, 2)
    times = record.times
    assert all(t is not None and 0 < t.median_ms <= t.max_ms <= 1000 * (SAFE.move_time + SAFE.grace) for t in times)
    assert sum(t.moves for t in times if t is not None) == record.actions
    assert elapsed < 3.0


def group_states(pgids: list[int]) -> list[bytes]:
    """The state letters of every live process in these process groups (bots and what they spawned)."""
    return [fields[0] for pid in all_pids() if (fields := stat_fields(pid)) and int(fields[2]) in pgids
            and fields[0] != b"Z"]


@pytest.mark.parametrize("pause", [True, False], ids=["paused", "running"])
def test_bots_are_paused_whenever_they_are_not_asked(client: MakeClient, no_leaks: list[int], pause: bool) -> None:
    """PROTOCOL.md 8: the whole process group is stopped between turns, so nobody thinks on others' time."""
    clients = [client("forker", "play", pause=pause, fork=1), client("other", "play", pause=pause)]
    game = new_game(Rules(), 2, SeededRng(SEED))
    checks: list[bool] = []

    def all_stopped() -> bool:
        states = group_states(no_leaks)
        return len(states) == 3 and set(states) == {b"T"}

    def between_turns(game: object, events: object) -> None:
        if len(checks) % 8 == 0:  # now nobody is asked
            checks.append(eventually(all_stopped) if pause else b"T" not in group_states(no_leaks))
        else:
            checks.append(True)

    record = play_game(game, clients, "t1", "x", on_events=between_turns)
    assert record.verdicts == [] and len(checks) > 8 and all(checks)
    assert eventually(all_stopped, timeout=5.0 if pause else 0.5) == pause  # after game_over too


# -- what each seat is told -------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["podkidnoy", "fools_fool"])
def test_a_seat_is_told_every_event_once_and_never_anothers_drawn_cards(client: MakeClient, tmp_path: Path,
                                                                        variant: str) -> None:
    logs = [tmp_path / "seat0.jsonl", tmp_path / "seat1.jsonl"]
    clients = [client(f"bot{seat}", "play", log=logs[seat]) for seat in (0, 1)]
    record, _ = play(clients, rules=Rules(variant=variant))
    assert record.verdicts == []
    for bot in clients:
        bot.stop()  # so that it has read (and logged) all it was sent
    for seat, log in enumerate(logs):
        messages = received(log)
        assert isinstance(messages[0], Hello) and isinstance(messages[1], GameStart)
        assert messages[1].seat == seat and messages[1].view.seat == seat
        requests = [m for m in messages if isinstance(m, Request)]
        assert requests and all(r.view.seat == r.view.to_move == seat and r.legal and r.game == "t1"
                                and r.time_ms == int(SAFE.move_time * 1000) for r in requests)
        assert isinstance(messages[-2], GameOver) and messages[-2].result == record.result
        events = delivered_events(messages)
        assert events == [event_for_seat(event, seat) for event in record.events]  # all of them, once, in order
        draws = [e for e in events if isinstance(e, CardsDrawn)]
        keeps = [e for e in events if isinstance(e, CardKept)]
        assert draws or keeps
        for event in draws:
            if event.seat == seat:
                assert event.cards is not None and len(event.cards) == event.count
            else:
                assert event.cards is None, f"seat {seat} was shown the cards seat {event.seat} drew"
        for event in keeps:
            assert (event.card is None) == (event.seat != seat)
        assert any(e.seat != seat for e in [*draws, *keeps])


# -- the time bank ----------------------------------------------------------------------------


def test_an_overrun_within_the_time_bank_is_no_failure_but_shrinks_the_bank(client: MakeClient,
                                                                           tmp_path: Path) -> None:
    clock = TimeControl(move_time=0.3, startup_time=3.0, time_bank=1.0)
    log = tmp_path / "slow.jsonl"
    slow = client("slow", "slow", clock=clock, after=0, delay=0.55, log=log)  # its first move overruns
    record, _ = play([slow, client("correct", "play")])
    assert record.verdicts == [] and record.result.end == "fool"
    time_ms = [m.time_ms for m in received(log) if isinstance(m, Request)]
    assert time_ms[0] == 1300  # the move time and a full bank
    assert 1300 - 700 < time_ms[1] < 1300 - 250  # the overrun (0.25 s and a little) came out of the bank
    assert time_ms[1:] == sorted(time_ms[1:], reverse=True)  # which is not refilled within the game
    slow_move = record.times[0]
    assert slow_move is not None and slow_move.max_ms > 550


def test_an_overrun_beyond_the_time_bank_is_a_timeout(client: MakeClient) -> None:
    clock = TimeControl(move_time=0.3, startup_time=3.0, time_bank=0.2)
    slow = client("slow", "slow", clock=clock, after=0, delay=0.8)
    record, elapsed = play([client("correct", "play"), slow])
    assert_forfeit(record, 1, "timeout", NO_LINE)
    assert elapsed < 3.0


def test_the_time_bank_is_full_again_in_the_next_game(client: MakeClient, tmp_path: Path) -> None:
    clock = TimeControl(move_time=0.3, startup_time=3.0, time_bank=1.0)
    log = tmp_path / "slow.jsonl"
    slow = client("slow", "slow", clock=clock, after=0, delay=0.5, log=log)
    records = play_series(Series(Rules(), 2, SEED), [slow, client("correct", "play")])
    assert [r.verdicts for r in records] == [[], []]
    requests = [m for m in received(log) if isinstance(m, Request)]
    assert requests[0].time_ms == 1300 and requests[1].time_ms < 1300
    assert next(r.time_ms for r in requests if r.game == "g2") == 1300


# -- series -----------------------------------------------------------------------------------


def test_a_bot_that_fails_is_restarted_for_the_next_game_and_the_series_completes(client: MakeClient,
                                                                                 tmp_path: Path) -> None:
    hostile = client("hostile", "crash", after=1, once=tmp_path / "crashed")
    log = tmp_path / "correct.jsonl"
    correct = client("correct", "play", log=log)
    start = time.monotonic()
    records = play_series(Series(Rules(), 3, SEED), [hostile, correct])
    assert time.monotonic() - start < 5.0
    assert [r.game for r in records] == ["g1", "g2", "g3"]
    assert_forfeit(records[0], 0, "crash", "exit code 3")
    assert [r.verdicts for r in records[1:]] == [[], []]
    assert all(r.result.end == "fool" and ranks_every_seat(r.result, 2) for r in records[1:])
    assert (hostile.starts, correct.starts) == (2, 1)
    correct.stop()  # so that it has read (and logged) all it was sent
    messages = received(log)  # the correct bot: one process, one handshake, three games
    assert sum(isinstance(m, Hello) for m in messages) == 1
    assert [m.game for m in messages if isinstance(m, GameStart)] == ["g1", "g2", "g3"]
    assert [m.game for m in messages if isinstance(m, GameOver)] == ["g1", "g2", "g3"]
    ids = [m.id for m in messages if isinstance(m, Request)]
    assert ids == sorted(set(ids))  # unique and increasing for the referee's whole run
    assert [isinstance(m, Shutdown) for m in messages].index(True) == len(messages) - 1  # after the series only


@pytest.mark.parametrize("pause", [True, False], ids=["paused", "running"])
def test_a_bot_that_fails_every_game_is_restarted_every_game(client: MakeClient, pause: bool) -> None:
    hostile = client("hostile", "garbage", pause=pause, after=1)
    correct = client("correct", "play", pause=pause)
    records = play_series(Series(Rules(), 3, SEED), [correct, hostile])
    for record in records:
        assert_forfeit(record, 1, "protocol", "this is not JSON")
    assert (hostile.starts, correct.starts) == (3, 1)


def test_a_bot_that_quits_between_games_forfeits_the_next_and_is_restarted(client: MakeClient,
                                                                         tmp_path: Path) -> None:
    quitter = client("quitter", "quit_after_game", once=tmp_path / "quit")
    correct = client("correct", "play")
    records = play_series(Series(Rules(), 3, SEED), [correct, quitter])
    assert records[0].verdicts == [] and records[2].verdicts == []
    assert_forfeit(records[1], 1, "crash", r"^bot exited: exit code 0$")
    assert (quitter.starts, correct.starts) == (2, 1)


def test_a_line_sent_after_game_over_is_a_protocol_error_in_the_next_game(client: MakeClient,
                                                                          tmp_path: Path) -> None:
    """PROTOCOL.md 2: send nothing but replies, ever; the line is found when the bot is next asked."""
    chatty = client("chatty", "ack_game_over", once=tmp_path / "acked")
    correct = client("correct", "play")
    records = play_series(Series(Rules(), 3, SEED), [chatty, correct])
    assert records[0].verdicts == [] and records[2].verdicts == []
    assert_forfeit(records[1], 0, "protocol",
                   rf"^(sent a line nobody asked for|expected an action reply to request {ANY_REQUEST}, got a hello)")
    assert (chatty.starts, correct.starts) == (2, 1)


def test_a_bot_that_cannot_start_forfeits_every_game_of_its_series(client: MakeClient) -> None:
    hostile, correct = client("hostile", "bad_version"), client("correct", "play")
    records = play_series(Series(Rules(), 3, SEED), [correct, hostile])
    assert [r.result.end for r in records] == ["forfeit"] * 3
    assert all(r.verdicts[0].kind == "protocol" and r.result.fools == [1] for r in records)
    assert (hostile.starts, correct.starts) == (3, 1)


# -- durak play -------------------------------------------------------------------------------


def durak(*args: str) -> tuple[int, str, str]:
    from clirun import invoke  # here, so that the match tests above do not depend on the whole CLI importing

    ran = invoke("play", *args)
    return ran.code, ran.out, ran.err


FAST = ["--seed", str(SEED), "--move-time", "3", "--startup-time", "5"]
FULL_DECK = " ".join(rank + suit for rank in "6789TJQKA" for suit in "CDHS")


def test_durak_play_exits_0_when_a_bot_forfeits_and_prints_the_verdict() -> None:
    code, out, err = durak(f"hostile={shell('crash', after=1)}", f"correct={shell('play')}", *FAST)
    assert code == 0, err
    assert "hostile: crash (bot exited: exit code 3 (stderr: bot.py: crashing on purpose))" in out
    table = out.splitlines()[-4:]
    assert table[0].split()[:5] == ["bot", "games", "fool", "fool", "%"]
    assert table[-2].split()[:5] == ["hostile", "1", "1", "100.0", "crash"]


def test_durak_play_missing_bot_program_exits_4_with_one_line() -> None:
    code, out, err = durak("no-such-bot-4d1f", shell("play"), *FAST)
    assert code == 4
    assert err == "durak: error: bot program 'no-such-bot-4d1f' not found\n"
    assert out == ""


@pytest.mark.parametrize(("args", "message"), [
    (["--variant", "nosuch"], r"unknown variant 'nosuch': expected one of podkidnoy, "),
    (["--set", "no_such_option=1"], r"unknown option 'no_such_option'"),
    (["--set", "first_bout_limit=9"], r"option 'first_bout_limit' must be null or 1-6, not 9"),
    (["--set", "first_bout_limit"], r"--set takes OPTION=VALUE, not 'first_bout_limit'"),
    (["--deal", "6S 6S"], r"bad deal: 6S appears twice"),
    (["--deal", FULL_DECK, "--games", "2"], r"--deal fixes one game's deck"),
    (["--dealer", "5"], r"--dealer 5 is not a seat at this table of 2"),
], ids=["variant", "unknown-option", "bad-value", "no-value", "bad-deal", "deal-with-games", "dealer"])
def test_durak_play_bad_config_exits_3_with_one_line(args: list[str], message: str) -> None:
    code, out, err = durak(shell("play"), shell("play"), *FAST, *args)
    assert code == 3, (out, err)
    assert err.startswith("durak: error: ") and err.count("\n") == 1
    assert re.search(message, err), err


def test_durak_play_json_prints_one_result_record_per_game() -> None:
    code, out, err = durak(f"hostile={shell('crash', after=1)}", f"correct={shell('play')}", *FAST,
                           "--games", "3", "--json")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 3
    records = [msgspec.json.decode(line, type=ResultRecord) for line in lines]
    assert [r.game for r in records] == ["g1", "g2", "g3"]
    for index, record in enumerate(records):
        assert record.players == ["hostile", "correct"]
        assert record.deal == f"{SEED}:{index}"
        assert record.end == "forfeit" and record.fools == ["hostile"]
        assert sorted(name for place in record.order for name in place) == ["correct", "hostile"]
        assert [(v.seat, v.bot, v.kind) for v in record.verdicts] == [(0, "hostile", "crash")]
        assert record.times is not None and len(record.times) == 2


def test_durak_play_log_writes_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    code, _, err = durak(f"a={shell('play')}", f"b={shell('illegal', after=3)}", *FAST, "--games", "2",
                         "--log", str(path))
    assert code == 0, err
    lines = [msgspec.json.decode(line) for line in path.read_bytes().splitlines()]
    headers = [i for i, line in enumerate(lines) if line["type"] == "game"]
    results = [i for i, line in enumerate(lines) if line["type"] == "result"]
    assert headers == [0, results[0] + 1] and results[-1] == len(lines) - 1 and len(results) == 2
    for header, end in zip(headers, results, strict=True):
        head = lines[header]
        assert head["names"] == ["a", "b"] and len(head["deck"]) == 36 and head["rules"]["variant"] == "podkidnoy"
        events = msgspec.json.decode(msgspec.json.encode(lines[header + 1:end]), type=list[AnyEvent])
        assert events  # every event in full: the log shows every drawn card
        assert all(e.cards is not None for e in events if isinstance(e, CardsDrawn))
        result = msgspec.convert(lines[end]["result"], GameResult)
        assert result.end == "forfeit" and result.fools == [1]
        verdicts = msgspec.convert(lines[end]["verdicts"], list[Verdict])
        assert [(v.seat, v.kind) for v in verdicts] == [(1, "illegal")]


def test_each_seat_of_each_game_gets_its_own_seed_and_the_deck_does_not_follow_it(client: MakeClient,
                                                                                   tmp_path: Path) -> None:
    """PROTOCOL.md 4.3: the seeds of a series are bot_seed_for(bot_seed, game, seat), none of them a deal
    seed; another bot seed (another rotation, in a tournament) changes every seed and no deck."""
    logs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    seeds: list[int] = []
    decks: list[list[str]] = []
    for bot_seed in (11, 12):
        for log in logs:
            log.unlink(missing_ok=True)
        clients = [client(f"p{seat}", "play", log=log) for seat, log in enumerate(logs)]
        records = play_series(Series(Rules(), 2, 5, bot_seed=bot_seed), clients)
        for one in clients:
            one.stop()
        decks.append([card for record in records for card in record.deck])
        starts = [[m.seed for m in received(log) if isinstance(m, GameStart)] for log in logs]
        assert starts == [[bot_seed_for(bot_seed, game, seat) for game in range(2)] for seat in range(2)]
        seeds += [seed for per_seat in starts for seed in per_seat]
    assert decks[0] == decks[1]
    assert len(set(seeds)) == 8
    assert not {derive_seed(5, "game", game) for game in range(2)} & set(seeds)
