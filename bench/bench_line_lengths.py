"""Benchmark: the byte length of every line the referee writes to a bot, by variant and message type.

Run by hand from the project root::

    python bench/bench_line_lengths.py                      # 6 players, 52 cards, 100 games per policy
    python bench/bench_line_lengths.py --games 300 --seed 5
    python bench/bench_line_lengths.py --players 2 --deck 36

The real ``BotClient`` and ``play_series`` play in this process against an in-memory stand-in for
``BotProcess`` (no processes, no clock to wait on): the stand-in records every line the client writes
(``hello``, ``game``, ``request``, ``game_over``, ``shutdown``), so the bytes are exactly what a bot would read
(``protocol.messages.encoder``), without the ``\\n``. It answers each request with a policy: ``random`` (a
uniform legal action), ``heuristic`` (``sample_bots/python/heuristic_bot.py``'s ``choose``), or ``mixed``
(heuristic at even seats, random at odd). Each policy plays ``--games`` games of each variant with the default
rules (``max_actions`` 5000), one series per variant and policy, the seed of game i derived from ``--seed``.

Per variant and message type it prints the number of lines, their median, 99th percentile and maximum in
bytes, and where the longest came from: policy, game, seat, and for ``game_over`` whether that seat was out
before the end and how the game ended. The bound the referee can reach is ``referee.games.line_bound``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "sample_bots" / "python")]

import heuristic_bot  # type: ignore[import-not-found]  # noqa: E402  (sample_bots/python, a script)

from protocol.messages import PROTOCOL_VERSION, BotHello, Reply, encoder  # noqa: E402
from protocol.rules import VARIANTS, rules_from_options  # noqa: E402
from referee.bots import session  # noqa: E402
from referee.bots.launcher import BotCommand  # noqa: E402
from referee.bots.limits import TimeControl  # noqa: E402
from referee.bots.session import BotClient  # noqa: E402
from referee.games.line_bound import line_bounds  # noqa: E402
from referee.games.match import Series, play_series  # noqa: E402
from tests.scripted import QuietProcess  # noqa: E402  (the idle half of a stand-in BotProcess)

POLICIES = ("random", "heuristic", "mixed")
TYPES = ("hello", "game", "request", "game_over", "shutdown")


@dataclass(frozen=True)
class Line:
    """One line written to a seat: its type, its length in bytes (no newline), and where it came from."""

    kind: str
    size: int
    policy: str
    game: str  # the game's id, "" for hello and shutdown
    seat: int
    events: int = 0  # request and game_over: how many events the line carries
    out: bool = False  # the seat had gone out by this line (in this game)
    end: str = ""  # game_over: result.end


@dataclass
class Recorder:
    """Every line of one run, by variant."""

    lines: dict[str, list[Line]] = field(default_factory=lambda: defaultdict(list))
    variant: str = ""
    policy: str = ""


RECORDER = Recorder()


class RecordingProcess(QuietProcess):
    """Stands in for ``BotProcess``: records each line written to it and answers requests at once.

    ``command.argv`` is ``["fake", POLICY, SEAT]``; the policy reseeds from each ``game`` line's seed, as the
    sample bots do.
    """

    def __init__(self, command: BotCommand, *_: object, **__: object) -> None:
        self.policy, self.seat = command.argv[1], int(command.argv[2])
        self.rng = random.Random(0)
        self.variant, self.moves = "podkidnoy", 0
        self.reply: bytes | None = None
        self.out = False  # this seat went out in the current game

    def _record(self, data: bytes) -> dict[str, Any]:
        message: dict[str, Any] = msgspec.json.decode(data)
        kind = str(message["type"])
        if kind == "game":
            self.out = False
        events = message.get("events", [])
        self.out = self.out or any(self.seat in event["seats"] for event in events if event["type"] == "out")
        end = message["result"]["end"] if kind == "game_over" else ""
        RECORDER.lines[RECORDER.variant].append(Line(kind, len(data), RECORDER.policy, message.get("game", ""),
                                                     self.seat, len(events), self.out, end))
        return message

    def exchange(self, request: bytes, timeout: float) -> tuple[bytes, float]:
        self._record(request)
        return encoder.encode(BotHello(protocol=PROTOCOL_VERSION, name=self.policy)), 0.0

    def write_line(self, data: bytes, deadline: float) -> None:
        assert b"\n" not in data
        message = self._record(data)
        if message["type"] == "game":
            self.variant, self.moves = message["rules"]["variant"], 0
            self.rng.seed(message["seed"])
        elif message["type"] == "request":
            self.moves += 1
            legal = message["legal"]
            if self.policy == "heuristic":
                action = heuristic_bot.choose(message["view"], legal, self.variant, self.moves, self.rng)
            else:
                action = self.rng.choice(legal)
            self.reply = encoder.encode(Reply(id=message["id"], action=action))

    def read_line(self, deadline: float) -> bytes:
        assert self.reply is not None
        reply, self.reply = self.reply, None
        return reply


def seat_policy(policy: str, seat: int) -> str:
    if policy == "mixed":
        return "heuristic" if seat % 2 == 0 else "random"
    return policy


def play(variant: str, policy: str, players: int, deck: int, games: int, seed: int) -> None:
    RECORDER.variant, RECORDER.policy = variant, policy
    clients = [BotClient(f"{seat_policy(policy, seat)}{seat}",
                         BotCommand(["fake", seat_policy(policy, seat), str(seat)]),
                         time_control=TimeControl(move_time=60.0, pause=False))
               for seat in range(players)]
    try:
        play_series(Series(rules_from_options(variant, {"deck": deck}), games, seed, series_id=f"{policy}-g"), clients)
    finally:
        for client in clients:
            client.stop(grace=0.5)  # the shutdown line of the end of ``durak play``


def percentile(sizes: list[int], q: float) -> int:
    ordered = sorted(sizes)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def where(line: Line) -> str:
    if not line.game:
        return f"{line.policy}, seat {line.seat}"
    text = f"{line.policy} {line.game}, seat {line.seat}"
    if line.kind in ("request", "game_over"):
        text += f", {line.events} events"
    if line.kind == "game_over":
        text += f", {'out' if line.out else 'not out'}, {line.end}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games per variant and policy (default 100)")
    parser.add_argument("--seed", type=int, default=1, help="the series seed (default 1)")
    parser.add_argument("--players", type=int, default=6, help="players at the table (default 6)")
    parser.add_argument("--deck", type=int, choices=(36, 52), default=52, help="deck size (default 52)")
    parser.add_argument("--variant", choices=VARIANTS, action="append", help="only these variants (repeatable)")
    parser.add_argument("--policy", choices=POLICIES, action="append", help="only these policies (repeatable)")
    args = parser.parse_args()
    session.BotProcess = RecordingProcess  # type: ignore[attr-defined,assignment]
    variants, policies = args.variant or list(VARIANTS), args.policy or list(POLICIES)
    start = time.perf_counter()
    for variant in variants:
        for policy in policies:
            play(variant, policy, args.players, args.deck, args.games, args.seed)
    print(f"{args.games} games per variant and policy ({', '.join(policies)}), {args.players} players, "
          f"{args.deck} cards, seed {args.seed}: {time.perf_counter() - start:.0f} s")
    rows = []
    for variant in variants:
        bounds = line_bounds(rules_from_options(variant, {"deck": args.deck}), args.players)
        by_kind: dict[str, list[Line]] = defaultdict(list)
        for line in RECORDER.lines[variant]:
            by_kind[line.kind].append(line)
        for kind in TYPES:
            lines = by_kind.get(kind, [])
            if not lines:
                continue
            sizes = [line.size for line in lines]
            longest = max(lines, key=lambda line: line.size)
            rows.append([variant, kind, len(lines), int(statistics.median(sizes)), percentile(sizes, 0.99),
                         longest.size, getattr(bounds, kind), where(longest)])
        ends = statistics.multimode([line.end for line in by_kind["game_over"]])
        capped = sum(line.end == "action_cap" for line in by_kind["game_over"]) // args.players
        print(f"{variant}: {capped} of {len(by_kind['game_over']) // args.players} games reached the action cap "
              f"(most common end: {', '.join(ends)})")
    print(tabulate(rows, headers=["variant", "type", "lines", "median B", "p99 B", "max B", "bound B",
                                  "longest: where"], intfmt=","))
    print("bound B: referee.games.line_bound for the variant at this table (game_over: to a seat that did not "
          "forfeit)")


if __name__ == "__main__":
    main()
