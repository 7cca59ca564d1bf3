"""Benchmark: round trips of a 300-byte line through BotProcess, against raw pipe I/O to the same child.

Run by hand from the project root::

    python bench/bench_roundtrip.py            # 20,000 round trips per case
    python bench/bench_roundtrip.py -n 5000

Each echo child (a Python line loop, and a C getline loop built with gcc in a temporary directory) is
timed twice: through ``BotProcess.exchange`` (launched via prlimit and setpriv, non-blocking fds, epoll),
and with blocking ``os.write``/``os.read`` from a plain ``subprocess.Popen``. The difference is the cost of
the bot process layer. Prints the median, 90th and 99th percentile in microseconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.bots import BotCommand, BotProcess

LINE = b'{"type": "move", "payload": "' + b"x" * 269 + b'"}'
assert len(LINE) == 300

PYTHON_ECHO = "import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line)\n    sys.stdout.flush()\n"
C_ECHO = r"""
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        fwrite(line, 1, (size_t)n, stdout);
        fflush(stdout);
    }
    free(line);
    return 0;
}
"""


def time_round_trips(round_trip: Callable[[], bytes], n: int, line: bytes = LINE) -> list[float]:
    """Microseconds per round trip, after a warm-up; checks every reply."""
    for _ in range(n // 10):
        round_trip()
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        reply = round_trip()
        samples.append((time.perf_counter_ns() - start) / 1000)
        assert reply == line
    return samples


def through_bot_process(argv: list[str], n: int) -> list[float]:
    with BotProcess(BotCommand(argv)) as bot:
        return time_round_trips(lambda: bot.exchange(LINE, 5.0)[0], n)


def through_raw_pipes(argv: list[str], n: int, line: bytes = LINE) -> list[float]:
    request = line + b"\n"
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0) as child:
        assert child.stdin and child.stdout
        to_child, from_child = child.stdin.fileno(), child.stdout.fileno()

        def round_trip() -> bytes:
            os.write(to_child, request)
            reply = os.read(from_child, 65536)
            while not reply.endswith(b"\n"):
                reply += os.read(from_child, 65536)
            return reply[:-1]

        samples = time_round_trips(round_trip, n, line)
        child.stdin.close()
    return samples


def build_c_echo(directory: str) -> list[str] | None:
    if shutil.which("gcc") is None:
        return None
    source, binary = Path(directory, "echo.c"), Path(directory, "echo")
    source.write_text(C_ECHO)
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(source)], check=True)
    return [str(binary)]


def report(name: str, samples: list[float]) -> float:
    median = statistics.median(samples)
    cuts = statistics.quantiles(samples, n=100)
    print(f"{name:<28} {median:8.1f} {cuts[89]:8.1f} {cuts[98]:8.1f}")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20_000, help="round trips per case")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        children = {"Python echo": [sys.executable, "-S", "-c", PYTHON_ECHO]}
        if (c_echo := build_c_echo(directory)) is not None:
            children["C echo"] = c_echo
        else:
            print("gcc not found: skipping the C echo child")
        print(f"{len(LINE)}-byte line, {args.n} round trips, microseconds")
        print(f"{'':<28} {'median':>8} {'p90':>8} {'p99':>8}")
        for child, argv in children.items():
            raw = report(f"{child}, raw pipes", through_raw_pipes(argv, args.n))
            layer = report(f"{child}, BotProcess", through_bot_process(argv, args.n))
            print(f"{'':<28} BotProcess adds {layer - raw:.1f} us per round trip")


if __name__ == "__main__":
    main()
