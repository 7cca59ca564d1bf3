#!/usr/bin/env python3
"""Capture a real wire transcript for protocol/PROTOCOL.md: one game between two logging bots.

    python scripts/protocol_transcript.py                       # seat 0's every line, in full
    python scripts/protocol_transcript.py --short --requests 4  # the excerpt PROTOCOL.md quotes

It runs ``python -m referee play`` (the referee installed in this Python) with two copies of this
script in bot mode. Each bot answers the handshake, plays the first legal action of every request,
and logs every line it reads (``<``, referee to bot) and writes (``>``, bot to referee) to a file.
The game is deterministic for a given variant and seed, request ids included.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

BOT_NAME = "logbot"
VIEW_KEYS = ("seat", "phase", "to_move", "hand", "table", "pile")  # what --short keeps of a view


def run_bot(log_path: str) -> None:
    """Bot mode: play the first legal action, log every line both ways; stdlib only."""
    with open(log_path, "w", encoding="utf-8") as log:
        for line in sys.stdin:
            log.write("< " + line)
            message = json.loads(line)
            reply = None
            if message["type"] == "hello":
                reply = {"type": "hello", "protocol": 2, "name": BOT_NAME, "version": "1.0"}
            elif message["type"] == "request":
                reply = {"type": "action", "id": message["id"], "action": message["legal"][0]}
            elif message["type"] == "shutdown":
                break
            if reply is not None:
                text = json.dumps(reply, separators=(",", ":"))
                log.write("> " + text + "\n")
                log.flush()
                print(text, flush=True)


def play(variant: str, seed: int, workdir: Path) -> list[Path]:
    """Play one two-player game between logging bots; returns their log files, by seat."""
    logs = [workdir / f"seat{seat}.log" for seat in range(2)]
    me = shlex.quote(str(Path(__file__).resolve()))
    python = shlex.quote(sys.executable)
    bots = [f"{BOT_NAME}{seat}={python} {me} --bot {shlex.quote(str(log))}" for seat, log in enumerate(logs)]
    # These bots are this script, trusted, and must write their logs where the referee reads them: no sandbox.
    subprocess.run([sys.executable, "-m", "referee", "play", *bots, "--variant", variant, "--seed", str(seed),
                    "--sandbox", "none"], check=True, stdout=subprocess.DEVNULL)
    return logs


def shorten(line: str) -> str:
    """A transcript line with its view and rules cut to a few fields and "..." (for reading, not decoding)."""
    direction, _, text = line.partition(" ")
    message = json.loads(text)
    kept: dict[str, dict[str, object]] = {}
    if isinstance(message.get("view"), dict):
        kept["view"] = {key: message["view"][key] for key in VIEW_KEYS if message["view"].get(key) not in ([], None)}
    if isinstance(message.get("rules"), dict):
        kept["rules"] = {"variant": message["rules"]["variant"]}
    if not kept:
        return line
    for key in kept:
        message[key] = f"@{key}@"  # a placeholder, replaced by the cut object below
    text = json.dumps(message, separators=(",", ":"))
    for key, fields in kept.items():
        text = text.replace(f'"@{key}@"', json.dumps(fields, separators=(",", ":"))[:-1] + ",...}")
    return f"{direction} {text}"


def excerpt(lines: list[str], requests: int | None) -> list[str]:
    """The handshake, game start, the first ``requests`` requests and replies, then the last two lines."""
    if requests is None:
        return lines
    asked = [i for i, line in enumerate(lines) if line.startswith('< {"type":"request"')]
    if len(asked) <= requests:
        return lines
    cut = asked[requests]
    tail = lines[-2:]
    return [*lines[:cut], "...", *tail] if cut < len(lines) - 2 else lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot", metavar="LOG", help="run as the logging bot, writing its log to LOG")
    parser.add_argument("--variant", default="podkidnoy")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--seat", type=int, default=0, choices=(0, 1), help="whose lines to print")
    parser.add_argument("--requests", type=int, help="keep only the first N requests (and the game's end)")
    parser.add_argument("--short", action="store_true", help='cut views and rules to a few fields and "..."')
    args = parser.parse_args()
    if args.bot is not None:
        run_bot(args.bot)
        return
    with tempfile.TemporaryDirectory(prefix="durak-transcript-") as workdir:
        logs = play(args.variant, args.seed, Path(workdir))
        lines = logs[args.seat].read_text(encoding="utf-8").splitlines()
    for line in excerpt(lines, args.requests):
        print(shorten(line) if args.short and line != "..." else line)


if __name__ == "__main__":
    main()
