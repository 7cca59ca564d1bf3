"""Benchmark: what isolation costs per bot start and per decision, for each level, in one run.

Run by hand from the project root::

    python bench/bench_isolation.py            # 30 starts and 5,000 round trips per case
    python bench/bench_isolation.py -s 10 -n 2000

Levels: ``none`` (prlimit and setpriv only), ``process`` (the default: TMPDIR, own uid under root, PID
namespace) and ``bwrap`` (skipped, saying why, where ``probe_bwrap`` fails).

1. Start: from ``BotProcess(...)`` to the handshake reply (the protocol's hello), for the sample C bot and the
   sample Python random bot, then the stop (``close()``: EOF, the bot exits, TMPDIR and uid given back).
2. Decision: a round trip of a 300-byte line to a C echo child through ``BotProcess.exchange``; then the
   same wrapped in resume() and pause(), as ``BotClient.ask`` does between turns (pause and resume look into
   the PID namespace for processes that left the bot's process group).
Medians; the C programs are built with gcc in a temporary folder that every uid can read.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_roundtrip import LINE, build_c_echo  # noqa: E402
from protocol.messages import PROTOCOL_VERSION, Hello, encoder  # noqa: E402
from referee.bots import BotCommand, BotError, BotProcess  # noqa: E402
from referee.bots.sandbox.isolation import Isolation, SandboxUnavailable, probe_bwrap  # noqa: E402

HELLO = encoder.encode(Hello(protocol=PROTOCOL_VERSION, referee="bench", time_ms=10_000))


def start_and_stop(command: BotCommand, isolation: Isolation, starts: int) -> tuple[float, float]:
    """Median milliseconds from launch to the handshake reply, and of the stop after it."""
    to_hello, to_stop = [], []
    for _ in range(starts):
        begin = time.perf_counter()
        bot = BotProcess(command, isolation=isolation)
        try:
            reply, _ = bot.exchange(HELLO, 10.0)
            assert b'"hello"' in reply, reply
            to_hello.append(time.perf_counter() - begin)
        finally:
            begin = time.perf_counter()
            bot.close()
            to_stop.append(time.perf_counter() - begin)
    return statistics.median(to_hello) * 1e3, statistics.median(to_stop) * 1e3


def round_trips(command: BotCommand, isolation: Isolation, n: int) -> tuple[float, float]:
    """Median microseconds of a round trip, plain and wrapped in resume() and pause()."""
    plain, paused = [], []
    with BotProcess(command, isolation=isolation) as bot:
        for _ in range(n // 10):
            bot.exchange(LINE, 5.0)
        for _ in range(n):
            begin = time.perf_counter_ns()
            bot.exchange(LINE, 5.0)
            plain.append(time.perf_counter_ns() - begin)
        bot.pause()
        for _ in range(n):
            begin = time.perf_counter_ns()
            bot.resume()
            bot.exchange(LINE, 5.0)
            bot.pause()
            paused.append(time.perf_counter_ns() - begin)
    return statistics.median(plain) / 1e3, statistics.median(paused) / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-s", "--starts", type=int, default=30, help="starts per case")
    parser.add_argument("-n", type=int, default=5_000, help="round trips per case")
    args = parser.parse_args()
    levels = [Isolation("none"), Isolation("process")]
    try:
        probe_bwrap()
        levels.append(Isolation("bwrap"))
    except SandboxUnavailable as exc:
        print(f"bwrap skipped: {exc}")
    with tempfile.TemporaryDirectory(prefix="durak-bench-") as folder:
        Path(folder).chmod(0o755)  # bots under root run as their own uid: they must reach it
        echo = build_c_echo(folder)
        c_bot = Path(folder, "bot")
        subprocess.run(["gcc", "-O2", "-std=c99", "-o", str(c_bot), str(ROOT / "sample_bots" / "c" / "bot.c")],
                       check=True)
        bots = {"C bot": BotCommand([str(c_bot)], cwd=folder),
                "Python bot": BotCommand([sys.executable, "random_bot.py"], cwd=ROOT / "sample_bots" / "python")}
        print(f"medians; {args.starts} starts, {args.n} round trips of {len(LINE)} bytes per case")
        print(f"{'isolation':<10} {'bot':<11} {'start ms':>9} {'stop ms':>8}   {'round trip us':>13} "
              f"{'+ pause/resume us':>17}")
        for isolation in levels:
            for name, command in bots.items():
                try:
                    start, stop = start_and_stop(command, isolation, args.starts)
                    figures = f"{start:9.2f} {stop:8.2f}"
                except BotError as exc:
                    figures = f"n/a ({exc.reason[:90]})"
                print(f"{isolation.level:<10} {name:<11} {figures}")
            if echo is not None:
                plain, paused = round_trips(BotCommand(echo, cwd=folder), isolation, args.n)
                print(f"{isolation.level:<10} {'C echo':<11} {'':>9} {'':>8}   {plain:13.1f} {paused:17.1f}")


if __name__ == "__main__":
    main()
