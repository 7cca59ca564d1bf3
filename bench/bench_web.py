"""Benchmark: the arena's web server (``durak serve``) under 50 concurrent clients while the daemon writes.

Run by hand from the project root::

    python bench/bench_web.py [--versions 1000] [--games 1000000] [--clients 50] [--requests 40]
                              [--max-seconds 120] [--timeout 30] [--mix '/=3,/api/board=2,...'] [--rate 50]
                              [--refit-every 30] [--code DIR | --stand-in] [--json]

It makes or reuses the league database of bench/arena_data.py (``--cache``, default /tmp/durak-bench), copies it
for the run (the cache stays as made) and starts three processes over the copy:

- the web server on a free port of 127.0.0.1: ``durak serve DB --host 127.0.0.1 --port P --trusted-proxy
  127.0.0.1`` if the CLI has it, else the web branch's app factory ``referee.web.app.create_app`` under uvicorn;
  ``--code DIR``: that checkout's server (the web branch's before it is merged); ``--stand-in``: a trivial ASGI
  app of this file over the store's board and versions, which proves the tool, not the arena;
- a writer standing in for the daemon: ``--rate`` games/s in complete deal groups through
  :meth:`ArenaStore.issue_group`, :meth:`~ArenaStore.save_slots` and :meth:`~ArenaStore.close_group`;
- a refitter, as the daemon's refit process: every ``--refit-every`` s (or back to back when a refit takes
  longer) :func:`referee.league.board.refit` and :meth:`ArenaStore.save_board`.

Then the load (bench/web_load.py): ``--clients`` threads, each with one keep-alive ``http.client`` connection to
127.0.0.1 only and its own ``X-Forwarded-For`` (the server trusts 127.0.0.1 as a proxy: 50 people, each with
their rate limit, not one address), each making ``--requests`` requests (bounded too by ``--max-seconds``; a
request in flight then still gets ``--timeout``) drawn from the routes of bench/web_load.py's ``MIX``: the board,
bot pages, replays, and the games list unfiltered, by bot, verdict and table size, and deep (by its "older" link's
keyset, and by page number) (``--mix`` sets the shares). The table gives per route the requests, errors (status
>= 400 or no answer; 429 is a rate limit), median, p90, p99, max (ms) and requests/s over the load's wall time.
Every process it started is stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import msgspec
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.arena_data import Params, Templates, add_data_options, database, group_games, size_mib  # noqa: E402
from bench.bench_league import deal_groups  # noqa: E402
from bench.web_load import HOST, MIX, Load, parse_mix, run_load, summary  # noqa: E402
from referee.engine.rng import derive_seed  # noqa: E402
from referee.league.board import Ledger, board_rows  # noqa: E402
from referee.results.arena_store import ArenaStore  # noqa: E402
from referee.results.league_store import SUMMARIES_SCHEMA, GroupRow  # noqa: E402

PYTHON = sys.executable


# -- the processes ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def server_command(db: Path, port: int, stand_in: bool, code: Path, workers: int = 1) -> list[str] | None:
    """How to start the web server of the checkout ``code``: ``durak serve``, else the web branch's app factory
    under uvicorn, else None; ``stand_in``: this file's stand-in."""
    if stand_in:
        return [PYTHON, __file__, "--role", "stand-in", "--db", str(db), "--port", str(port)]
    has_serve = subprocess.run([PYTHON, "-m", "referee", "serve", "--help"], capture_output=True, cwd=code,
                               env=python_env(code))
    if has_serve.returncode == 0:
        return [PYTHON, "-m", "referee", "serve", str(db), "--host", HOST, "--port", str(port), "--trusted-proxy", HOST,
                "--workers", str(workers)]
    if (code / "referee" / "web" / "app.py").is_file():
        return [PYTHON, "-c", FACTORY.format(db=str(db), host=HOST, port=port)]
    return None


#: The web branch's app factory under uvicorn, in a process of its own (its checkout first on the path).
FACTORY = ("import uvicorn; from referee.web.app import create_app; from referee.web.settings import WebSettings; "
           "uvicorn.run(create_app({db!r}, WebSettings(trusted_proxies=frozenset([{host!r}]))), host={host!r}, "
           "port={port}, log_level='warning', access_log=False)")


def python_env(code: Path) -> dict[str, str]:
    """The environment with ``code`` first on the Python path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")]))}


def start(command: list[str], log: Path, code: Path = ROOT) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            cwd=code, env=python_env(code), start_new_session=True)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 10 s (its own process group: the bench started it)."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def wait_ready(port: int, process: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    """Until ``GET /api/board`` answers; :raises SystemExit: the server died or never answered."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the web server exited with {process.returncode} before it answered")
        with contextlib.suppress(OSError, http.client.HTTPException):
            connection = http.client.HTTPConnection(HOST, port, timeout=5)
            connection.request("GET", "/api/board")
            connection.getresponse().read()
            connection.close()
            return
        time.sleep(0.2)
    raise SystemExit(f"the web server did not answer on {HOST}:{port} within {seconds:.0f} s")


# -- the daemon's stand-ins ------------------------------------------------------------------


class Stopping:
    """Set by SIGTERM: a role's loop ends at its next turn."""

    def __init__(self) -> None:
        self.now = False
        signal.signal(signal.SIGTERM, self._set)

    def _set(self, *_: object) -> None:
        self.now = True

    def sleep(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self.now and time.monotonic() < end:
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))


def run_writer(db: Path, rate: float, seed: int) -> None:
    """Complete deal groups at ``rate`` games/s, stored as the daemon stores them, until SIGTERM."""
    stopping, rng = Stopping(), random.Random(seed)
    templates = Templates.play(seed, per_size=40)
    with ArenaStore(db) as store:
        league = store.league()
        assert league is not None
        names = [v.name for v in store.versions(league.id) if v.active]
        first = max((g.number for g in store.groups(league.id)), default=-1) + 1
        strength = {name: rng.gauss(0, 1) for name in names}
        print(json.dumps({"ready": True}), flush=True)
        began, written, slowest = time.monotonic(), 0, 0.0
        for group in deal_groups(rng, names, strength, 10**9, first=first):
            if stopping.now:
                break
            start = time.perf_counter()
            store.issue_group(league.id, GroupRow(number=group.number, deal_seed=derive_seed(group.number, "deal"),
                                                  seats=tuple(group.table), anchor=group.table[0]))
            store.save_slots(league.id, [[game] for game in group_games(templates, rng, group)])
            store.close_group(league.id, group.number, "complete")
            slowest = max(slowest, time.perf_counter() - start)
            written += len(group.table)
            stopping.sleep(began + written / rate - time.monotonic())
    seconds = time.monotonic() - began
    print(json.dumps({"games": written, "seconds": round(seconds, 1), "games_per_second": round(written / seconds, 1),
                      "slowest_group_ms": round(slowest * 1000, 1)}), flush=True)


def run_refitter(db: Path, every: float) -> None:
    """A refit and a new board every ``every`` seconds, as the daemon's refit process, until SIGTERM; a line of
    figures after each."""
    stopping, fits = Stopping(), []
    ledger: Ledger | None = None  # the daemon's: each refit reads the groups completed since the last one
    while not stopping.now:
        began = time.monotonic()
        with ArenaStore(db, create=False) as reader:
            league = reader.league()
            assert league is not None
            ledger = ledger or Ledger(league.id)
            board = ledger.refit(reader)
        with ArenaStore(db) as writer:
            writer.save_board(league.id, board_rows(board, datetime.now(UTC).isoformat(timespec="seconds")))
        fits.append(time.monotonic() - began)
        print(json.dumps({"refits": len(fits), "rated_games": board.n_games,
                          "seconds": [round(s, 2) for s in fits]}), flush=True)
        stopping.sleep(every - fits[-1])


# -- the stand-in server -------------------------------------------------------------------


Send = Callable[[dict[str, object]], object]


def stand_in_app(db: Path) -> Callable[..., object]:
    """A trivial ASGI app over the store: the board (HTML or JSON) and a bot's versions with their rating history.
    Not the web server: it proves the load generator, its figures are not the arena's."""
    store = ArenaStore(db, create=False)
    league = store.league()
    assert league is not None

    def page(path: str) -> tuple[int, str, bytes]:
        if path in ("/", "/api/board"):
            rows = store.board(league.id)
            if path == "/api/board":
                return 200, "application/json", msgspec.json.encode(rows)
            return 200, "text/html", "".join(f"<tr><td>{r.rank}</td><td>{r.version}</td><td>{r.elo:.0f}</td></tr>"
                                             for r in rows).encode()
        for prefix, kind in (("/bots/", "text/html"), ("/api/bots/", "application/json")):
            if path.startswith(prefix):
                name = path.removeprefix(prefix)
                versions = [v.name for v in store.versions(league.id) if v.bot == name]
                if not versions:
                    return 404, "text/plain", b"no such bot"
                body = {"versions": versions, "history": store.rating_history(league.id, versions)}
                return 200, kind, msgspec.json.encode(body)
        return 404, "text/plain", b"not found"

    async def app(scope: dict[str, object], receive: Callable[..., object], send: Send) -> None:
        if scope["type"] != "http":
            return
        status, kind, body = page(str(scope["path"]))
        await send({"type": "http.response.start", "status": status,  # type: ignore[misc]
                    "headers": [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})  # type: ignore[misc]

    return app


def run_stand_in(db: Path, port: int) -> None:
    import uvicorn

    uvicorn.run(stand_in_app(db), host=HOST, port=port, log_level="warning", access_log=False)


# -- the bench -----------------------------------------------------------------------------


def bot_names(db: Path) -> list[str]:
    with ArenaStore(db, create=False) as store:
        league = store.league()
        assert league is not None
        return sorted({v.bot for v in store.versions(league.id)})


def league_games(db: Path) -> int:
    with ArenaStore(db, create=False) as store:
        league = store.league()
        assert league is not None
        return store.count_games(league.id)


def wait_writing(log: Path, writer: subprocess.Popen[bytes], seconds: float = 120.0) -> None:
    """Until the writer has read the league and begins to write; :raises SystemExit: it died or took too long."""
    deadline = time.monotonic() + seconds
    while '"ready"' not in log.read_text(errors="replace"):
        if writer.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the writer did not start (see {log})")
        time.sleep(0.1)


def last_line(log: Path) -> dict[str, object]:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def working_copy(db: Path, folder: Path) -> tuple[Path, float]:
    """A copy of the cached database for one run (the writer adds games, ``durak serve`` started as root gives the
    file and its folder to its web user's group), migrated: the cache stays as made. Returns it and the seconds
    copying and migrating took."""
    start = time.perf_counter()
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    copy = folder / db.name
    shutil.copyfile(db, copy)
    copy.chmod(0o600)
    with ArenaStore(copy) as store:  # migrated to this checkout's schema, as the daemon does when it starts
        league = store.league()
        if league is not None and store.schema_version >= SUMMARIES_SCHEMA:
            store.fill_summaries(league.id)  # the daemon's first step too: the board's groups summed up
    return copy, time.perf_counter() - start


def bench(args: argparse.Namespace) -> None:
    params = Params(args.versions, args.games, args.history, args.seed)
    cached, made = database(args.cache, params)
    db, copying = working_copy(cached, args.cache / "run")
    port = free_port()
    command = server_command(db, port, args.stand_in, args.code, args.workers)
    if command is None:
        raise SystemExit(f"no web server: {args.code} has neither `durak serve` nor referee/web/app.py; merge the web "
                         "branch, give its checkout with --code, or run with --stand-in")
    logs = args.cache / "logs"
    logs.mkdir(exist_ok=True)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        processes.append(start(command, logs / "server.log", ROOT if args.stand_in else args.code))
        wait_ready(port, processes[0])
        processes.append(start([PYTHON, __file__, "--role", "writer", "--db", str(db), "--rate", str(args.rate)],
                               logs / "writer.log"))
        processes.append(start([PYTHON, __file__, "--role", "refitter", "--db", str(db), "--refit-every",
                                str(args.refit_every)], logs / "refitter.log"))
        wait_writing(logs / "writer.log", processes[1])
        time.sleep(args.settle)
        load = Load(args.clients, args.requests, args.max_seconds, bot_names(db), args.seed, league_games(db),
                    args.timeout, args.mix)
        wall = run_load(load, port)
    finally:
        for process in reversed(processes):
            stop(process)
    report(args, db, (made, copying), command, summary(load.samples, wall), wall, logs)


def report(args: argparse.Namespace, db: Path, prepared: tuple[float, float], command: list[str],
           rows: list[dict[str, object]], wall: float, logs: Path) -> None:
    """The table (or ``--json``); ``prepared``: the seconds making the database took (0: cached) and copying it."""
    made, copying = prepared
    writer, refits = last_line(logs / "writer.log"), last_line(logs / "refitter.log")
    server = "stand-in" if args.stand_in else (f"create_app under uvicorn ({args.code})" if command[1] == "-c" else
                                                f"durak serve --workers {args.workers} ({args.code})")
    if args.json:
        print(json.dumps({"db": str(db), "versions": args.versions, "games": args.games, "made_s": round(made, 1),
                          "copy_s": round(copying, 1), "db_mib": round(size_mib(db)), "server": server,
                          "workers": args.workers, "clients": args.clients, "requests_per_client": args.requests,
                          "mix": args.mix, "wall_s": round(wall, 1), "routes": rows, "writer": writer,
                          "refitter": refits}))
        return
    print(f"{db.name} ({size_mib(db):,.0f} MiB{f', made in {made:.0f} s' if made else ''}, copied in {copying:.0f} s); "
          f"server: {server}; "
          f"{args.clients} clients x {args.requests} requests in {wall:.1f} s; unpinned")
    print(f"writer: {writer}; refitter: {refits}")
    print(tabulate([{k: v for k, v in row.items() if k != "statuses"} for row in rows], headers="keys",
                   tablefmt="github"))
    print("statuses: " + "; ".join(f"{row['route']} {row['statuses']}" for row in rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_options(parser)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=40, help="per client")
    parser.add_argument("--max-seconds", type=float, default=120.0, help="the load's hard cap")
    parser.add_argument("--mix", type=parse_mix, default=dict(MIX),
                        help="routes and shares, e.g. '/=3,/api/board=2' (default: " +
                             ",".join(f"{route}={share:g}" for route, share in MIX.items()) + ")")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds a client waits for an answer")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds the writer runs before the load")
    parser.add_argument("--workers", type=int, default=1, help="durak serve --workers (uvicorn processes)")
    parser.add_argument("--rate", type=float, default=50.0, help="games/s the writer stores")
    parser.add_argument("--refit-every", type=float, default=30.0)
    parser.add_argument("--stand-in", action="store_true", help="a trivial ASGI server of this file, not the arena's")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose web server runs (default: this one)")
    parser.add_argument("--role", choices=["writer", "refitter", "stand-in"], help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "writer":
        run_writer(args.db, args.rate, args.seed)
    elif args.role == "refitter":
        run_refitter(args.db, args.refit_every)
    elif args.role == "stand-in":
        run_stand_in(args.db, args.port)
    else:
        bench(args)


if __name__ == "__main__":
    main()
