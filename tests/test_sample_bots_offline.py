"""The sample bots (sample_bots/) play whole games of every variant through real pipes.

A tiny driver here stands in for the referee: it deals with the engine directly, speaks the wire
protocol with the protocol's own Structs (hello, game, request, game_over, shutdown), and checks
every line a bot writes: a hello in reply to hello, then exactly one action per request, naming the
request's id and one of its legal strings, nothing else, and a clean exit on shutdown. Every other
message is written as a newer referee might write it (other key order, spaces, an unknown field).
"""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pytest

from protocol.events import event_for_seat
from protocol.messages import (
    PROTOCOL_VERSION,
    BotHello,
    GameOver,
    GameStart,
    Hello,
    Message,
    Reply,
    Request,
    Shutdown,
    bot_decoder,
    encoder,
)
from protocol.rules import MAX_PLAYERS, MIN_PLAYERS, VARIANTS, Rules
from protocol.views import GameResult
from referee.engine import SeededRng, new_game
from referee.games.match import bot_seed_for

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
REPLY_TIMEOUT = 10.0  # seconds; generous, so that only a hung bot fails (and never hangs the suite)
BOT_NAMES = ("python-random", "python-heuristic", "js", "c")


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sample_bots/c/bot.c compiled as its header says; it must compile without a warning."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed: cannot compile sample_bots/c/bot.c")
    binary = tmp_path_factory.mktemp("c_bot") / "bot"
    command = [gcc, "-O2", "-std=c99", "-Wall", "-Wextra", "-o", str(binary), str(SAMPLES / "c" / "bot.c")]
    build = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert build.returncode == 0 and not build.stderr, build.stderr
    return binary


@pytest.fixture(params=BOT_NAMES)
def bot_argv(request: pytest.FixtureRequest) -> list[str]:
    """The bot's command line."""
    name = request.param
    if name == "python-random":
        return [sys.executable, str(SAMPLES / "python" / "random_bot.py")]
    if name == "python-heuristic":
        return [sys.executable, str(SAMPLES / "python" / "heuristic_bot.py")]
    if name == "js":
        node = shutil.which("node")
        if node is None:
            pytest.skip("node is not installed: cannot run sample_bots/js/bot.js")
        return [node, str(SAMPLES / "js" / "bot.js")]
    binary = request.getfixturevalue("c_bot")
    return [str(binary)]


class Bot:
    """One bot process. A thread reads its stdout, so a silent bot fails a test instead of hanging it."""

    def __init__(self, argv: list[str], stderr: Path) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        with stderr.open("wb") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=ROOT,
                                         env=env)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # end of output

    def send(self, message: Message, loose: bool = False) -> None:
        self.send_line(loosely_encoded(message) if loose else encoder.encode(message))

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def next_line(self) -> bytes | None:
        try:
            return self.lines.get(timeout=REPLY_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"{self.proc.args} did not answer within {REPLY_TIMEOUT} s")

    def receive(self) -> BotHello | Reply:
        line = self.next_line()
        assert line is not None, f"{self.proc.args} closed its stdout (exit code {self.proc.poll()})"
        assert line.endswith(b"\n")
        return bot_decoder.decode(line)

    def shut_down(self) -> None:
        """Shutdown must make the bot exit at once, with status 0 and no further output."""
        self.send(Shutdown(grace_ms=500))
        assert self.proc.wait(timeout=5) == 0, f"exit status {self.proc.returncode} after shutdown"
        assert self.next_line() is None, "the bot wrote something after the last reply"


def loosely_encoded(message: Message) -> bytes:
    """``message`` as the protocol allows it too: keys in reverse order, spaces between tokens, and a
    field this protocol version does not define (bots must ignore unknown fields)."""
    fields = msgspec.to_builtins(message)
    fields["from_the_future"] = {"list": [1, "]}\\\"", None], "flag": True}
    return json.dumps(dict(reversed(fields.items())), separators=(" , ", " : ")).encode()


@contextmanager
def running(argv: list[str], count: int, tmp_path: Path) -> Iterator[list[Bot]]:
    """``count`` copies of a bot (one per seat), handshaken; killed whatever happens."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    bots = [Bot(argv, tmp_path / f"stderr{i}.txt") for i in range(count)]
    try:
        for bot in bots:
            bot.send(Hello(protocol=PROTOCOL_VERSION, referee="test driver", time_ms=10_000))
            hello = bot.receive()
            assert isinstance(hello, BotHello) and hello.protocol == PROTOCOL_VERSION and hello.name
            # A message type from some future protocol version: a bot must ignore it, silently.
            bot.send_line(b'{"type":"from_the_future","data":{"list":[1,"]}\\"",{"x":null}],"ok":true}}')
        yield bots
    finally:
        for bot in bots:
            if bot.proc.poll() is None:
                bot.proc.kill()
                bot.proc.wait()


def play(bots: list[Bot], rules: Rules, seed: int, game_id: str) -> tuple[GameResult, list[str], int]:
    """Play one game, seat i played by ``bots[i]``; the result, the actions in order, and how many requests
    offered ``pass`` alone (asked with ask_forced_passes, RULES.md 5b.2)."""
    game = new_game(rules, len(bots), SeededRng(seed))
    ids = random.Random(seed)  # request ids are not a counter, so an echoed id is checked for real
    started = [False] * len(bots)
    sent = [0] * len(bots)  # how many of game.events each seat has been told

    def catch_up(seat: int) -> list:
        if not started[seat]:
            started[seat] = True
            start = GameStart(game=game_id, seat=seat, players=len(bots), names=[f"seat{i}" for i in range(len(bots))],
                              rules=rules, dealer=game.dealer, view=game.view(seat), seed=bot_seed_for(seed, 0, seat))
            bots[seat].send(start, loose=seat % 2 == 1)
        events = [event_for_seat(event, seat) for event in game.events[sent[seat]:]]
        sent[seat] = len(game.events)
        return events

    actions = []
    forced = 0
    while game.result is None:
        seat = game.to_move
        assert seat is not None
        legal = [str(action) for action in game.legal_actions()]
        request_id = ids.randrange(1, 1 << 31)
        forced += legal == ["pass"]
        bots[seat].send(Request(id=request_id, game=game_id, view=game.view(seat), legal=legal, time_ms=1000,
                                events=catch_up(seat)), loose=len(actions) % 2 == 1)
        reply = bots[seat].receive()
        assert isinstance(reply, Reply), reply
        assert reply.id == request_id, f"the reply names id {reply.id}, the request was {request_id}"
        assert reply.action in legal, f"{reply.action!r} is not one of {legal}"
        game.apply_str(reply.action)
        actions.append(reply.action)
    for seat, bot in enumerate(bots):
        bot.send(GameOver(game=game_id, result=game.result, events=catch_up(seat)), loose=seat % 2 == 0)
    return game.result, actions, forced


@pytest.mark.parametrize("variant", VARIANTS)
def test_bot_plays_every_table_size(bot_argv: list[str], variant: str, tmp_path: Path) -> None:
    """Handshake, one game at each table size 2-6 (the same bot processes stay up), and shutdown. In the bout
    variants the bots also answer requests whose only legal action is pass (protocol 2)."""
    forced = 0
    with running(bot_argv, MAX_PLAYERS, tmp_path) as bots:
        for players in range(MIN_PLAYERS, MAX_PLAYERS + 1):
            result, _, asked = play(bots[:players], Rules(variant=variant), seed=100 + players, game_id=f"g{players}")
            assert result.end in ("fool", "draw")
            forced += asked
        result, _, asked = play(bots[:3], Rules(variant=variant, deck=52), seed=7, game_id="g52")
        assert result.end in ("fool", "draw")
        forced += asked
        for bot in bots:
            bot.shut_down()
    assert (forced > 0) == (variant != "fools_fool"), forced


@pytest.mark.parametrize("script", ["python/random_bot.py", "c"])
def test_random_bot_reseeds_from_each_game(script: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The random bots reseed from the game's seed: the same game plays the same way in a new process and
    again in the same one, after another game; another seed plays it otherwise."""
    program = [str(request.getfixturevalue("c_bot"))] if script == "c" else [sys.executable, str(SAMPLES / script)]
    runs = []
    for attempt in range(2):
        with running(program, 2, tmp_path / str(attempt)) as bots:
            runs.append(play(bots, Rules(variant="perevodnoy"), seed=3, game_id="g")[1])
            other = play(bots, Rules(variant="perevodnoy"), seed=4, game_id="h")[1]
            runs.append(play(bots, Rules(variant="perevodnoy"), seed=3, game_id="i")[1])
    assert runs[0] == runs[1] == runs[2] == runs[3] != other


def test_heuristic_bot_beats_random(tmp_path: Path) -> None:
    """The heuristic bot is the fool far less often than the random bot, seats alternating (2 players)."""
    heuristic = [sys.executable, str(SAMPLES / "python" / "heuristic_bot.py")]
    games, fools = 0, 0
    with running(heuristic, 1, tmp_path / "h") as (smart,), \
            running([sys.executable, str(SAMPLES / "python" / "random_bot.py")], 1, tmp_path / "r") as (rnd,):
        for variant in VARIANTS:
            for game in range(10):
                seats = [smart, rnd] if game % 2 == 0 else [rnd, smart]
                result, *_ = play(seats, Rules(variant=variant), seed=1000 + game, game_id=f"{variant}{game}")
                games += 1
                fools += seats.index(smart) in result.fools
        smart.shut_down()
        rnd.shut_down()
    assert fools <= games // 5, f"the heuristic bot was the fool in {fools} of {games} games"
