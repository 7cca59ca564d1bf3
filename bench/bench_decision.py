"""Benchmark: the referee's cost per decision against the physical limit, and games/s with real bots.

Run by hand from the project root::

    python bench/bench_decision.py            # 200 games per case
    python bench/bench_decision.py -g 50

1. Per decision: full 2-player podkidnoy games between two copies of the sample C bot (which answers at
   once), through the whole referee (engine, view, encoding, pipes, decoding, validation), with pausing off
   and on; wall time of the games divided by the decisions taken.
2. The physical limit: a raw ``os.write``/``os.read`` round trip of a line of the same size (the median
   request of those games) to a C echo child.
3. Games/s of full games between the Python sample bots: 2 players (heuristic vs random) and 4 players.
All cases run in one process, one after another, on one machine: compare them with each other.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_roundtrip import build_c_echo, through_raw_pipes  # noqa: E402
from protocol.messages import encoder  # noqa: E402
from protocol.rules import Rules  # noqa: E402
from referee.bots.launcher import BotCommand  # noqa: E402
from referee.bots.limits import TimeControl  # noqa: E402
from referee.bots.session import BotClient  # noqa: E402
from referee.games.match import Series, play_series  # noqa: E402


def compile_c_bot(folder: Path) -> Path:
    binary = folder / "bot"
    subprocess.run(["gcc", "-O2", "-std=c99", "-o", str(binary), str(ROOT / "sample_bots" / "c" / "bot.c")],
                   check=True)
    return binary


def per_decision(clients: Sequence[BotClient], games: int, players: int) -> tuple[float, int, float]:
    """Seconds per decision and games/s over ``games`` games; returns (per decision, decisions, games/s)."""
    start = time.perf_counter()
    records = play_series(Series(Rules(), games, 11), clients)
    wall = time.perf_counter() - start
    decisions = sum(r.actions for r in records)
    assert not any(r.verdicts for r in records), [r.verdicts for r in records]
    return wall / decisions, decisions, games / wall


def request_size(clients: Sequence[BotClient]) -> int:
    """The median size of the requests of one game (captured by encoding them again)."""
    sizes: list[int] = []
    original = encoder.encode

    class Measuring:
        @staticmethod
        def encode(message: object) -> bytes:
            data = original(message)
            if type(message).__name__ == "Request":
                sizes.append(len(data) + 1)
            return data

    import referee.bots.session as session

    session.encoder = Measuring  # type: ignore[assignment]
    try:
        play_series(Series(Rules(), 5, 3), clients)
    finally:
        session.encoder = encoder  # type: ignore[assignment]
    return int(statistics.median(sizes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-g", "--games", type=int, default=200)
    games = parser.parse_args().games
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        c_bot = compile_c_bot(folder)
        echo = build_c_echo(tmp)
        assert echo is not None, "gcc is needed"
        results = []
        for pause in (False, True):
            clients = [BotClient(f"c{i}", BotCommand([str(c_bot), str(i)]), time_control=TimeControl(pause=pause))
                       for i in range(2)]
            try:
                if not pause:
                    size = request_size(clients)
                seconds, decisions, rate = per_decision(clients, games, 2)
            finally:
                for client in clients:
                    client.stop()
            results.append((pause, seconds, decisions, rate))
        line = b'{"x":"' + b"y" * (size - 9) + b'"}'
        raw = statistics.median(through_raw_pipes(echo, 20000, line)) / 1e6
        print(f"median request {size} bytes; raw C echo round trip of that line: {raw * 1e6:.1f} us")
        for pause, seconds, decisions, rate in results:
            print(f"referee, C bots, pause {'on ' if pause else 'off'}: {seconds * 1e6:.1f} us per decision "
                  f"({decisions} decisions, {rate:,.0f} games/s) = {seconds / raw:.2f}x the raw round trip")
    python = sys.executable
    bots = ROOT / "sample_bots" / "python"
    for players in (2, 4):
        commands = [[python, str(bots / "heuristic_bot.py")]] + [
            [python, str(bots / "random_bot.py"), str(i)] for i in range(players - 1)]
        clients = [BotClient(f"p{i}", BotCommand(c)) for i, c in enumerate(commands)]
        try:
            for client in clients:
                client.start()
            seconds, decisions, rate = per_decision(clients, games, players)
        finally:
            for client in clients:
                client.stop()
        print(f"Python sample bots, {players} players: {rate:,.1f} games/s ({decisions / games:.0f} decisions "
              f"per game, {seconds * 1e6:.0f} us per decision)")


if __name__ == "__main__":
    main()
