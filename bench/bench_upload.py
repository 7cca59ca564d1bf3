"""Benchmark: from an upload to its version's first rated game, for a Python bot and a C bot that builds.

Run by hand from the project root, as root (the daemon sandboxes bots; ``durak serve`` drops to nobody)::

    python bench/bench_upload.py [--rounds 5] [--json]

A league of the sample random and heuristic bots (2 players, the default clock, bwrap) runs under its daemon
(``--jobs 2``) with ``durak serve`` in front; each round uploads a new Python bot (standard library only) and a new
C bot whose manifest builds it (``cc -O2``) through ``POST /api/uploads`` as an author would, and times, from the
request: the upload accepted (extracted, built and checked, gated: ``GET /api/uploads/ID``), and the version's
first game in a complete deal group (the board's first rated game; read from the database). Prints each figure's
median, min and max over the rounds.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
CONFIG = """\
name = "upload bench"
players = 2
[league]
min_games = 30
[arena]
max_bots_per_author = 100
uploads_per_hour = 100
[[bots]]
name = "house"
command = "{python} random_bot.py"
dir = "house"
author = "house"
[[bots]]
name = "guest"
command = "{python} heuristic_bot.py"
dir = "house"
author = "guests"
"""


def archive(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def python_bot(name: str) -> bytes:
    """sample_bots/upload/python under another name."""
    folder = ROOT / "sample_bots" / "upload" / "python"
    manifest = (folder / "durak-bot.toml").read_text().replace('name = "firstbot"', f'name = "{name}"')
    return archive({"durak-bot.toml": manifest, "bot.py": (folder / "bot.py").read_text()})


def c_bot(name: str) -> bytes:
    """sample_bots/upload/c under another name, with the sample C bot's source."""
    manifest = (ROOT / "sample_bots" / "upload" / "c" / "durak-bot.toml").read_text()
    return archive({"durak-bot.toml": manifest.replace('name = "cbot"', f'name = "{name}"'),
                    "bot.c": (ROOT / "sample_bots" / "c" / "bot.c").read_text()})


def request(url: str, token: str, body: bytes | None = None) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"}
    made = urllib.request.Request(url, data=body, headers=headers, method="POST" if body else "GET")
    with urllib.request.urlopen(made, timeout=30) as answer:
        result: dict[str, object] = json.loads(answer.read())
        return result


def first_rated(db: Path, version: str) -> bool:
    connection = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return connection.execute(
            "SELECT 1 FROM league_seats s JOIN league_groups g ON g.tournament_id = s.tournament_id AND "
            "g.deal_key = s.deal_key WHERE s.version = ? AND g.status = 'complete' LIMIT 1", (version,)).fetchone() \
            is not None
    finally:
        connection.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def one_upload(url: str, token: str, db: Path, name: str, data: bytes) -> tuple[float, float]:
    """Seconds from the upload's request to its acceptance, and to its version's first rated game."""
    start = time.monotonic()
    answer = request(f"{url}/api/uploads?bot={name}", token, data)
    while (state := request(f"{url}{answer['url']}", token))["status"] not in ("accepted", "refused"):
        time.sleep(0.05)
    if state["status"] != "accepted":
        raise SystemExit(f"{name} refused: {state['steps']}")
    accepted = time.monotonic() - start
    while not first_rated(db, f"{name}@1"):
        time.sleep(0.05)
    return accepted, time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="durak-bench-upload-"))
    folder.chmod(0o755)
    (folder / "house").mkdir(mode=0o755)
    for bot in ("random_bot.py", "heuristic_bot.py"):
        shutil.copy(ROOT / "sample_bots" / "python" / bot, folder / "house" / bot)
    (folder / "league.toml").write_text(CONFIG)
    db, durak = folder / "league.db", [sys.executable, "-m", "referee"]
    logs = open(folder / "log", "wb")  # noqa: SIM115 - closed at the end
    processes = [subprocess.Popen([*durak, "league", "run", str(folder / "league.toml"), "--db", str(db), "--jobs",
                                   "2"], stdout=logs, stderr=logs, start_new_session=True)]
    try:
        while not db.exists() or subprocess.run([*durak, "league", "status", str(db)], capture_output=True).returncode:
            time.sleep(0.2)
        token = subprocess.run([*durak, "league", "author", "add", str(db), "bench"], capture_output=True, text=True,
                               check=True).stdout.strip()
        port = free_port()
        processes.append(subprocess.Popen([*durak, "serve", str(db), "--port", str(port)], stdout=logs, stderr=logs,
                                          start_new_session=True))
        url = f"http://127.0.0.1:{port}"
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        figures: dict[str, list[tuple[float, float]]] = {"python": [], "c (builds)": []}
        for n in range(args.rounds):
            figures["python"].append(one_upload(url, token, db, f"py{n}", python_bot(f"py{n}")))
            figures["c (builds)"].append(one_upload(url, token, db, f"c{n}", c_bot(f"c{n}")))
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)
        logs.close()
        shutil.rmtree(folder, ignore_errors=True)
    rows = [[kind, *(f"{f(values):.2f}" for values in zip(*runs, strict=True) for f in (statistics.median, min, max))]
            for kind, runs in figures.items()]
    if args.json:
        print(json.dumps({kind: runs for kind, runs in figures.items()}))
    else:
        print(tabulate(rows, headers=["bot", "accepted median s", "min", "max", "first rated game median s", "min",
                                      "max"]))


if __name__ == "__main__":
    main()
