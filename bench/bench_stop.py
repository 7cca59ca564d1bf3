"""How fast a tournament stops: from Ctrl-C (SIGINT) or SIGTERM to the first line on stderr and to the exit.

    python -m bench.bench_stop [--runs 5] [--signal INT|TERM] [--think 0.5] [--source PATH]

Each run starts ``durak tournament`` on bots that think ``--think`` seconds per move (so games are always in
flight), waits until a few games are stored, sends the signal and times the first ``durak:`` line on stderr
and the exit. ``--source`` runs the referee of another checkout (e.g. an unpacked older commit) through
PYTHONPATH, to compare before and after in one session. Prints each run and the medians.
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

_BOT = '''import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": m["protocol"], "name": "thinker"}), flush=True)
    elif m["type"] == "request":
        time.sleep(THINK)
        print(json.dumps({"type": "action", "id": m["id"], "action": m["legal"][0]}), flush=True)
    elif m["type"] == "shutdown":
        break
'''


def _setup(folder: Path, think: float) -> Path:
    lines = ['name = "stop bench"\ndeals = 50\nplayers = 2\nsandbox = "none"\n[time]\nmove = 5.0\n']
    for name in ("a", "b", "c"):
        bot = folder / name
        bot.mkdir()
        (bot / "bot.py").write_text(_BOT.replace("THINK", repr(think)))
        lines.append(f'[[bots]]\nname = "{name}"\ncommand = "{{python}} bot.py"\ndir = "{name}"\n')
    config = folder / "t.toml"
    config.write_text("\n".join(lines))
    return config


def _games(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def one_run(source: str | None, signum: int, think: float) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = _setup(folder, think)
        db = folder / "t.db"
        env = dict(os.environ)
        if source:
            env["PYTHONPATH"] = source
        run = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(config), "--db", str(db),
                                "--jobs", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                               cwd=folder)  # not this checkout: python -m puts the cwd before PYTHONPATH
        deadline = time.monotonic() + 60
        while _games(db) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(think / 2)  # mid-move
        first: list[float] = []

        def watch() -> None:
            assert run.stderr is not None
            for line in run.stderr:
                if line.startswith(b"durak:") and not first:
                    first.append(time.monotonic())
                    print(f"    {line.decode().strip()[:110]}")

        reader = threading.Thread(target=watch)
        reader.start()
        sent = time.monotonic()
        run.send_signal(signum)
        run.wait()
        ended = time.monotonic()
        reader.join()
        return (first[0] - sent if first else float("nan")), ended - sent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--signal", choices=("INT", "TERM"), default="INT")
    parser.add_argument("--think", type=float, default=0.5)
    parser.add_argument("--source", default=None)
    args = parser.parse_args()
    signum = signal.SIGINT if args.signal == "INT" else signal.SIGTERM
    firsts, exits = [], []
    for index in range(args.runs):
        first, ended = one_run(args.source, signum, args.think)
        firsts.append(first)
        exits.append(ended)
        print(f"run {index + 1}: first line {first:.3f} s, exit {ended:.3f} s")
    print(f"SIG{args.signal} median: first line {statistics.median(firsts):.3f} s, exit "
          f"{statistics.median(exits):.3f} s ({args.runs} runs, think {args.think} s, source "
          f"{args.source or 'this checkout'})")


if __name__ == "__main__":
    main()
