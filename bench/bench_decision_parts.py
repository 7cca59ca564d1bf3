"""Benchmark: the referee's CPU per decision, part by part (issue 14's profile of the per-decision path).

Run by hand from the project root::

    python bench/bench_decision_parts.py                # 300 games, 20,000 round trips, pinned and unpinned
    python bench/bench_decision_parts.py --games 100 --trips 5000

In-process parts, over ``--games`` 2-player podkidnoy games (default rules: forced passes asked) played by a
seeded random choice among the legal actions, each step timed (``perf_counter_ns``, its own cost taken off:
these steps make no system call, so their wall time is their CPU time) and divided by the decisions: the
legal actions and their texts (``legal``), the seat's view (``view``), the events it has not been sent, as it
may see them (``events``), the request built (``request``) and encoded (``encode``), a reply decoded
(``decode``) and looked up among the legal texts (``validate``), and the action applied (``apply``).

Process parts, on a C echo child (it answers at once, so its time is the kernel's and the referee's): the
referee's user+sys CPU per decision from getrusage for a raw ``os.write``/``os.read`` round trip of a line of
the games' median request size (``pipes``); the same through ``BotProcess`` as the session drives it
(``drain_pending``, the stderr mark, ``write_line``, ``read_line``: ``bot process``); and two bwrap-sandboxed
children in control groups of their own taking turns as in a game, without pausing (``bwrap turns``) and
each resumed before and paused after its turn (``bwrap turns, paused``: thaw, round trip, freeze), whose
difference is what pausing costs per decision (``pause+resume``), which the default sandbox does. Each
process part is measured pinned (``taskset -c 0``: the children on the referee's core, same-core round trips)
and unpinned (any core: cross-core wake-ups), in child processes, medians of 3.

The parts add up to about the referee's CPU per decision that ``bench/bench_referee_cpu.py`` measures whole;
the remainder is bookkeeping (the session's clock, strikes, move times, the game loop).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_roundtrip import build_c_echo  # noqa: E402
from protocol.events import event_for_seat  # noqa: E402
from protocol.messages import Reply, Request, bot_decoder, encoder  # noqa: E402
from protocol.rules import Rules  # noqa: E402
from referee.bots.launcher import BotCommand  # noqa: E402
from referee.bots.process import BotProcess  # noqa: E402
from referee.bots.sandbox.isolation import isolation_for  # noqa: E402
from referee.engine import SeededRng, new_game  # noqa: E402
from referee.engine.rng import derive_seed  # noqa: E402

PARTS = ("legal", "view", "events", "request", "encode", "decode", "validate", "apply")


def engine_parts(games: int) -> tuple[dict[str, float], int]:
    """CPU microseconds per decision of each in-process part; and the median request's size in bytes."""
    spent = dict.fromkeys(PARTS, 0)
    clock = time.perf_counter_ns  # a vDSO read, unlike the CPU clocks' system calls; its own cost is taken off
    overhead = _clock_cost(clock)
    choose = random.Random(7)
    decisions, sizes = 0, []
    for index in range(games):
        game = new_game(Rules(), 2, SeededRng(derive_seed(11, "game", index)))
        delivered = [0, 0]
        while game.result is None:
            seat = game.to_move
            assert seat is not None
            t0 = clock()
            legal = game.legal_actions()
            by_text = {str(action): action for action in legal}
            t1 = clock()
            view = game.view(seat)
            t2 = clock()
            events = [event_for_seat(event, seat) for event in game.events[delivered[seat]:]]
            delivered[seat] = len(game.events)
            t3 = clock()
            request = Request(id=decisions, game="g1", view=view, legal=list(by_text), time_ms=1000, events=events)
            t4 = clock()
            line = encoder.encode(request)
            t5 = clock()
            answer = encoder.encode(Reply(id=decisions, action=choose.choice(request.legal)))
            t6 = clock()
            reply = bot_decoder.decode(answer)
            t7 = clock()
            assert isinstance(reply, Reply)
            action = by_text[reply.action]
            t8 = clock()
            game.apply_unchecked(action)
            t9 = clock()
            for part, (start, end) in zip(PARTS, ((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5), (t6, t7),
                                                  (t7, t8), (t8, t9)), strict=True):
                spent[part] += end - start - overhead
            decisions += 1
            sizes.append(len(line))
    return {part: ns / decisions / 1000 for part, ns in spent.items()}, int(statistics.median(sizes))


def _clock_cost(clock: Callable[[], int], samples: int = 100_000) -> int:
    """Nanoseconds between two consecutive reads of ``clock`` (the median of many)."""
    gaps = []
    for _ in range(samples):
        start = clock()
        gaps.append(clock() - start)
    return int(statistics.median(gaps))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_part(part: str, echo: str, trips: int, size: int) -> float:
    """Referee CPU microseconds per round trip (or pause+resume) of ``part``, in this process."""
    line = b"x" * size
    if part == "pipes":
        with subprocess.Popen([echo], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0) as child:
            assert child.stdin and child.stdout
            to_child, from_child = child.stdin.fileno(), child.stdout.fileno()
            request = line + b"\n"

            def once() -> None:
                os.write(to_child, request)
                reply = os.read(from_child, 65536)
                while not reply.endswith(b"\n"):
                    reply += os.read(from_child, 65536)

            return _per_call(once, trips)
    if part == "bot process":
        with BotProcess(BotCommand([echo], cwd=Path(echo).parent), isolation=isolation_for("none", [])) as bot:
            def once() -> None:
                bot.drain_pending()
                bot.mark_stderr(0, drain=False)
                deadline = time.monotonic() + 5.0
                bot.write_line(line, deadline)
                bot.read_line(deadline)

            return _per_call(once, trips)
    # two bwrap bots taking turns, as in a game: each resumed, asked and paused (or not) in turn
    paused = part == "bwrap turns, paused"
    with (BotProcess(BotCommand([echo], cwd=Path(echo).parent), isolation=isolation_for("bwrap", [])) as first,
          BotProcess(BotCommand([echo], cwd=Path(echo).parent), isolation=isolation_for("bwrap", [])) as second):
        def turns() -> None:
            for bot in (first, second):
                deadline = time.monotonic() + 5.0
                if paused:
                    bot.resume()
                bot.write_line(line, deadline)
                bot.read_line(deadline)
                if paused:
                    bot.pause()

        if paused:
            first.pause()
            second.pause()
        return _per_call(turns, trips // 2) / 2


def _per_call(once: object, trips: int) -> float:
    assert callable(once)
    for _ in range(trips // 10):
        once()
    before = _cpu()
    for _ in range(trips):
        once()
    return (_cpu() - before) / trips * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--trips", type=int, default=20_000)
    parser.add_argument("--part", help=argparse.SUPPRESS)  # PART:ECHO:SIZE, run in a child process
    args = parser.parse_args()
    if args.part:
        part, echo, size = args.part.rsplit(":", 2)
        print(json.dumps(process_part(part, echo, args.trips, int(size))))
        return
    load = os.getloadavg()[0]
    engine, size = engine_parts(args.games)
    print(f"referee {ROOT}, load average {load:.2f}; {args.games} games, then {args.trips} round trips a case "
          f"({size}-byte line: the median request), CPU microseconds per decision")
    for part, us in engine.items():
        print(f"  {part:<14} {us:7.2f}")
    print(f"  {'in-process':<14} {sum(engine.values()):7.2f}  (the sum)")
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)
        argv = build_c_echo(folder)
        if argv is None:
            print("gcc not found: no process parts")
            return
        os.chmod(argv[0], 0o755)
        print(f"  {'':<20} {'pinned':>7} {'unpinned':>9}")
        figures: dict[str, list[float]] = {}
        for part in ("pipes", "bot process", "bwrap turns", "bwrap turns, paused"):
            for prefix in (["taskset", "-c", "0"], []):
                runs = [json.loads(subprocess.run(
                    [*prefix, sys.executable, __file__, "--trips", str(args.trips), "--part",
                     f"{part}:{argv[0]}:{size}"], check=True, capture_output=True, text=True).stdout)
                    for _ in range(3)]
                figures.setdefault(part, []).append(statistics.median(runs))
        figures["pause+resume"] = [paused - plain for paused, plain in
                                   zip(figures["bwrap turns, paused"], figures["bwrap turns"], strict=True)]
        for part, (pinned, unpinned) in figures.items():
            print(f"  {part:<20} {pinned:7.2f} {unpinned:9.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
