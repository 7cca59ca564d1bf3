"""Benchmark (an attack, on 127.0.0.1 only): the web server's memory under anonymous uploads of huge bodies.

Run by hand from the project root::

    python bench/bench_body_attack.py [--root PATH] [--clients 8] [--mib 60]

``--root`` is the checkout whose server is measured (default: this one); give another checkout (a ``git worktree``
of an older commit) to measure the server before a change: ``git worktree add /tmp/before COMMIT`` then
``python bench/bench_body_attack.py --root /tmp/before``. A league database is made by that checkout's own
``tests/webdb.py``, its app served by uvicorn in a process of its own on a free port of 127.0.0.1, and ``--clients``
anonymous clients at once each send ``POST /api/uploads?bot=x`` with a body of ``--mib`` MiB (no credential). The
server's resident memory (``VmRSS``, from ``/proc``) is printed before, at its peak (``VmHWM``) and after, with
each client's answer and how long the attack took.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024
BUILD = "import sys; from pathlib import Path; from tests.webdb import build; print(build(Path(sys.argv[1])).path)"
SERVE = ("import uvicorn, sys; uvicorn.run('referee.web.app:app_from_environment', factory=True, host='127.0.0.1', "
         "port=int(sys.argv[1]), log_level='warning')")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def memory_mib(pid: int) -> dict[str, float]:
    """The process's VmRSS and VmHWM (its peak), MiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


def attack(port: int, mib: int, answers: list[str]) -> None:
    """One anonymous client: the headers of a ``mib`` MiB upload, then the body as fast as the server takes it."""
    head = (f"POST /api/uploads?bot=x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/gzip\r\n"
            f"Content-Length: {mib * MIB}\r\n\r\n").encode()
    chunk = b"\0" * MIB
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        try:
            sock.sendall(head)
            for _ in range(mib):
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            answers.append(sock.recv(200).split(b"\r\n", 1)[0].decode() or "closed")
        except (OSError, UnicodeDecodeError) as exc:
            answers.append(f"no answer ({type(exc).__name__})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server is measured")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--mib", type=int, default=60)
    args = parser.parse_args()
    root = args.root.resolve()
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory(prefix="durak-bench-body-") as folder:
        made = subprocess.run([sys.executable, "-c", BUILD, folder], cwd=root, env=env, check=True,
                              capture_output=True, text=True)
        db = made.stdout.strip().splitlines()[-1]
        port = free_port()
        server = subprocess.Popen([sys.executable, "-c", SERVE, str(port)], cwd=root,
                                  env={**env, "DURAK_WEB_DB": db, "DURAK_WEB_SETTINGS": "{}"})
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit(f"the server did not start (exit status {server.poll()})") from None
                    time.sleep(0.1)
            time.sleep(0.5)
            before = memory_mib(server.pid)
            answers: list[str] = []
            began = time.monotonic()
            clients = [threading.Thread(target=attack, args=(port, args.mib, answers)) for _ in range(args.clients)]
            for client in clients:
                client.start()
            for client in clients:
                client.join()
            took = time.monotonic() - began
            time.sleep(1.0)
            after = memory_mib(server.pid)
        finally:
            server.terminate()
            server.wait(10)
    print(f"server of {root}: {args.clients} anonymous uploads of {args.mib} MiB each, in {took:.1f} s")
    print(f"  RSS before {before['VmRSS']:.0f} MiB, peak {after['VmHWM']:.0f} MiB, after {after['VmRSS']:.0f} MiB")
    print(f"  answers: {', '.join(sorted(set(answers)))} ({len(answers)})")


if __name__ == "__main__":
    main()
