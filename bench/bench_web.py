"""Benchmark: the arena's web server (``durak serve``) under 1, 10 and 50 clients while the daemon writes and refits,
next to the bare stack (a minimal Litestar + uvicorn app returning the same bytes) in the same run: the figures of
issue 36.

Run by hand from the project root, one size at a time (each run copies its database: the cache stays as made)::

    flock /tmp/durak-cpu.lock python bench/bench_web.py --games 100000 [--versions 1000] [--clients 1,10,50]
        [--modes back-to-back,paced] [--seconds 20] [--paced-seconds 30] [--think 1.0] [--warmup 10]
        [--stacks arena,bare] [--workers 1] [--rounds 0] [--plain] [--rate 50] [--refit-every 30] [--cpu-requests 20]
        [--mix '/=3,/api/board=2,...'] [--run-dir /tmp/durak-bench/run] [--keep-copy] [--code DIR]
        [--json] [--save FILE] [--py-spy PATH] [--profiles DIR]

It makes or reuses the league database of bench/arena_data.py (``--cache``, default /tmp/durak-bench), copies it
into ``--run-dir`` and migrates the copy to this checkout's schema (as the daemon does when it starts; ``--keep-copy``:
the copy an earlier run left there, with its writer's games), then starts,
over the copy, for the whole run:

- a writer standing in for the daemon: ``--rate`` games/s in complete deal groups through
  :meth:`ArenaStore.issue_group`, :meth:`~ArenaStore.save_slots` and :meth:`~ArenaStore.close_group`, with the
  daemon's replay publisher (:class:`referee.report.publisher.ReplayPublisher`) beside it, as ``durak league run``
  runs it;
- a refitter, as the daemon's refit thread (at the lowest CPU priority, its fit on one BLAS thread): every
  ``--refit-every`` s (or back to back when a refit takes longer) a :class:`referee.league.board.Ledger`'s refit
  and :meth:`ArenaStore.save_board`.

Then, one at a time, each stack of ``--stacks`` on a free port of 127.0.0.1 (bench/web_stack.py):

- ``arena``: ``durak serve DB --host 127.0.0.1 --port P --trusted-proxy 127.0.0.1 --workers N`` (``--code DIR``:
  that checkout's). Before its load, one URL of each route of the mix is asked for once (anonymous); those bytes
  and media types are the bare stack's pages;
- ``bare``: a minimal Litestar app answering every URL of a route with that route's bytes, under uvicorn as
  ``durak serve`` runs it (the same ``uvicorn.Config`` and options, socket and ``--workers``). Its answers are
  checked against the arena's bytes before its load.

``--plain`` runs both on uvicorn's plain stack (``loop="asyncio"``, h11) instead of uvloop and httptools, which
uvicorn picks when installed (``DURAK_BENCH_UVICORN=plain`` for bench/web_stack.py).

Each stack gets ``--warmup`` s of unrecorded load first (10 back-to-back clients; the arena keeps pages as bytes
once built, and starts with none), then a cell per mode and client count: ``back-to-back`` clients send their next
request as soon as an answer came, for ``--seconds``; ``paced`` ones ``--think`` s after it, for
``--paced-seconds`` (bench/web_load.py: one keep-alive connection per client; ``X-Forwarded-For`` addresses
rotated so that no request meets the server's rate limit). Per cell and per route of bench/web_load.py's ``MIX``
(the board, bot pages, replays, the games list unfiltered, by bot, verdict and table size, deep by keyset and by
page number, HTML and JSON):

- ``median``/``p95``/``p99``/``max``: a request's time from sending to the whole answer read, in ms;
- ``req/s``: answers over the cell's wall time; ``not 200``: answers of another status, or none (by status in
  the JSON and below the table);
- ``server CPU ms/req``: the server's processes' CPU time (``/proc/PID/stat`` utime + stime of every process of its
  process group: uvicorn and its workers) over the cell, divided by the cell's answers; ``client CPU ms/req``: this
  process's (the load's threads: they share the 2 cores);
- ``arena/bare`` at 50 back-to-back clients: the ratio of requests/s (target: 0.5 or more); p99 at 50 paced
  clients per route (target: under 100 ms).

``--rounds N``: then, with both servers up and warm, the back-to-back load of the most clients on the arena and on
the bare stack in turn, N times (the stacks taking turns going first), and each round's ratio of requests/s and
their median: the cells of a stack run one after the other, minutes from the other stack's, and this machine's
speed drifts by 15-25% over minutes, so a single cell's ratio is a noisy reading of the target.

Then the CPU per request per route, one client, no load but the writer's and refitter's: bench/web_cpu.py on the
run's copy for the arena's app and for the bare app (``--cpu-requests`` URLs per route; medians, in ms, of the
first request of a URL (its page built) and of the same URL asked again (its kept bytes), the test client's cost
included). Last, the writer's and refitter's figures: games written, the writer's CPU per game (its replay
publisher's included) and slowest group, refits, the refitter's CPU per refit and the database's WAL at its largest
(sampled each second). Every process it started is stopped at the end. bench/web_compare.py puts two runs' saved
figures side by side (a league of 1M games against one of 100k).

``--py-spy PATH`` (py-spy's binary) samples the server (workers too) over the back-to-back cell of the most
clients, folded stacks in ``--profiles`` (default /tmp/durak-bench/profiles): for profiles only, py-spy's own
CPU disturbs the figures.
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
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.arena_data import Params, Templates, add_data_options, database, group_games, size_mib  # noqa: E402
from bench.bench_league import deal_groups  # noqa: E402
from bench.web_load import HOST, MIX, Load, parse_mix, run_load, summary  # noqa: E402
from bench.web_stack import UVICORN_ENV, save_pages  # noqa: E402
from referee.background import as_background  # noqa: E402
from referee.engine.rng import derive_seed  # noqa: E402
from referee.league.board import Ledger, board_rows  # noqa: E402
from referee.results.arena_store import ArenaStore  # noqa: E402
from referee.results.league_store import SUMMARIES_SCHEMA, GroupRow  # noqa: E402

PYTHON = sys.executable
STACK = ROOT / "bench" / "web_stack.py"
MODES = ("back-to-back", "paced")
TICK = os.sysconf("SC_CLK_TCK")


# -- the processes ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def python_env(code: Path, plain: bool = False) -> dict[str, str]:
    """The environment with ``code`` first on the Python path (``plain``: uvicorn's plain stack, for web_stack)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")]))}
    env.pop(UVICORN_ENV, None)
    return {**env, UVICORN_ENV: "plain"} if plain else env


def start(command: list[str], log: Path, code: Path = ROOT, plain: bool = False) -> subprocess.Popen[bytes]:
    """A process of its own process group (its CPU is its group's), its output to ``log``."""
    return subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            cwd=code, env=python_env(code, plain), start_new_session=True)


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


def group_cpu(group: int) -> float:
    """The CPU seconds (user + system) of the live processes of process group ``group`` (/proc/PID/stat)."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[2]) == group:  # fields from the state on: state ppid pgrp ... utime (11) stime (12)
                ticks += int(fields[11]) + int(fields[12])
    return ticks / TICK


def wait_ready(port: int, process: subprocess.Popen[bytes], seconds: float = 120.0) -> None:
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


def get(port: int, url: str) -> tuple[int, str, bytes]:
    """One anonymous GET: status, media type, bytes."""
    connection = http.client.HTTPConnection(HOST, port, timeout=60)
    try:
        connection.request("GET", url, headers={"X-Forwarded-For": "10.1.0.1"})
        response = connection.getresponse()
        return response.status, response.getheader("content-type", ""), response.read()
    finally:
        connection.close()


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
    """Complete deal groups at ``rate`` games/s, stored as the daemon stores them, with the daemon's replay publisher
    beside them (the views of the games it completes made as they become public), until SIGTERM."""
    from referee.report.publisher import ReplayPublisher

    stopping, rng = Stopping(), random.Random(seed)
    publisher = ReplayPublisher(db)
    publisher.start()
    templates = Templates.play(seed, per_size=40)
    with ArenaStore(db) as store:
        league = store.league()
        assert league is not None
        names = [v.name for v in store.versions(league.id) if v.active]
        first = max((g.number for g in store.groups(league.id)), default=-1) + 1
        strength = {name: rng.gauss(0, 1) for name in names}
        print(json.dumps({"ready": True}), flush=True)
        began, cpu, written, slowest = time.monotonic(), time.process_time(), 0, 0.0
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
    publisher.stop()
    cpu = time.process_time() - cpu  # the process's: the writes and the publisher's views (a thread of it)
    print(json.dumps({"games": written, "seconds": round(seconds, 1), "games_per_second": round(written / seconds, 1),
                      "slowest_group_ms": round(slowest * 1000, 1), "views_made": publisher.made,
                      "cpu_s": round(cpu, 1), "cpu_ms_per_game": round(1000 * cpu / max(written, 1), 2)}),
          flush=True)


def run_refitter(db: Path, every: float) -> None:
    """A refit and a new board every ``every`` seconds, as the daemon's refit thread, until SIGTERM; a line of
    figures after each. At the lowest CPU priority, as that thread runs (referee/league/course.py)."""
    as_background()
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


class WalWatch:
    """The largest size of a database's WAL, sampled each second on a thread of its own until :meth:`stop`."""

    def __init__(self, db: Path) -> None:
        self.wal, self.largest = Path(f"{db}-wal"), 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stopping.wait(1.0):
            with contextlib.suppress(OSError):
                self.largest = max(self.largest, self.wal.stat().st_size)

    def stop(self) -> int:
        self._stopping.set()
        self._thread.join()
        return self.largest


# -- the bench -----------------------------------------------------------------------------


@dataclass
class Run:
    """What one run measures, stack by stack: each cell's figures, and the pages the bare stack serves."""

    args: argparse.Namespace
    db: Path
    bots: list[str]
    games: int
    cells: list[dict[str, Any]] = field(default_factory=list)
    warmups: list[dict[str, Any]] = field(default_factory=list)
    pages: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)  # route -> url, media type, bytes
    rounds: list[dict[str, Any]] = field(default_factory=list)  # --rounds: each round's two loads and their ratio


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


def last_line(log: Path) -> dict[str, Any]:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("{")]
    return dict(json.loads(lines[-1])) if lines else {}


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


def fetch_pages(run: Run, port: int) -> None:
    """One URL of each route of the mix, asked of the arena as the load asks: the bare stack's pages.
    :raises SystemExit: an answer other than 200."""
    load, rng = Load(1, 1, 0.0, run.bots, run.args.seed, run.games, mix=run.args.mix), random.Random(run.args.seed)
    for route in run.args.mix:
        url = load.url(route, rng)
        status, kind, body = get(port, url)
        if status != 200:
            raise SystemExit(f"the arena answered {url} with {status}: {body[:200]!r}")
        run.pages[route] = (url, kind, body)


def check_bare(run: Run, port: int) -> None:
    """The bare stack's answers are the arena's bytes and media types. :raises SystemExit: otherwise."""
    for url, kind, body in run.pages.values():
        answer = get(port, url)
        if answer != (200, kind, body):
            raise SystemExit(f"the bare stack's {url} is not the arena's: {answer[0]} {answer[1]} "
                             f"{len(answer[2])} bytes, the arena's {kind} {len(body)} bytes")


def load_cells(run: Run, stack: str, server: subprocess.Popen[bytes], port: int) -> None:
    """The warm-up, then every cell of ``--modes`` x ``--clients`` on the stack at ``port``."""
    args = run.args
    if args.warmup > 0:
        warm = Load(10, 0, args.warmup, run.bots, args.seed + 999, run.games, args.timeout, args.mix)
        wall = run_load(warm, port)
        overall = summary(warm.samples, wall)[-1]
        run.warmups.append({"stack": stack, "seconds": round(wall, 1), "clients": 10,
                            "requests": overall["requests"], "not_200": overall["not_200"]})
    for mode in args.modes:
        for clients in args.clients:
            seconds, think = (args.seconds, 0.0) if mode == "back-to-back" else (args.paced_seconds, args.think)
            load = Load(clients, 0, seconds, run.bots, args.seed + clients, run.games, args.timeout, args.mix, think)
            spy = profiler(run, stack, server, mode, clients, seconds)
            rows, wall, cpu, client = loaded(stack, server, port, load, spy)
            answers = max(1, rows[-1]["requests"])
            run.cells.append({"stack": stack, "mode": mode, "clients": clients, "seconds": round(wall, 1),
                              "server_cpu_ms_per_request": round(cpu * 1000 / answers, 3),
                              "client_cpu_ms_per_request": round(client * 1000 / answers, 3), "routes": rows})


def loaded(stack: str, server: subprocess.Popen[bytes], port: int, load: Load,
           spy: subprocess.Popen[bytes] | None = None) -> tuple[list[dict[str, Any]], float, float, float]:
    """``load`` on the server at ``port`` (``spy``: a profiler sampling it, waited for): its summary by route, its
    wall time, and the server's and this process's (the clients') CPU seconds over it. :raises SystemExit: the
    server exited during the load."""
    cpu, client = group_cpu(server.pid), time.process_time()
    wall = run_load(load, port)
    if spy is not None:
        spy.wait()
    cpu, client = group_cpu(server.pid) - cpu, time.process_time() - client
    if server.poll() is not None:
        raise SystemExit(f"the {stack} server exited with {server.returncode} during its load")
    return summary(load.samples, wall), wall, cpu, client


def alternate(run: Run, stacks: dict[str, tuple[subprocess.Popen[bytes], int]]) -> None:
    """``--rounds``: the back-to-back load of the most clients on each stack in turn, ``--rounds`` times, both
    servers up and warm throughout (the one not loaded is idle); each round's ratio is its two loads' requests/s.
    The stacks take turns going first, so that a drift of the machine's speed over the rounds (minutes: the cells'
    arena and bare halves are further apart) falls on both."""
    args, clients = run.args, max(run.args.clients)
    for number in range(args.rounds):
        order = ("arena", "bare") if number % 2 == 0 else ("bare", "arena")
        done: dict[str, dict[str, float]] = {}
        for stack in order:
            server, port = stacks[stack]
            load = Load(clients, 0, args.seconds, run.bots, args.seed + 7 * number, run.games, args.timeout, args.mix)
            rows, _, cpu, _ = loaded(stack, server, port, load)
            overall = rows[-1]
            done[stack] = {"requests_per_s": overall["requests_per_s"], "not_200": overall["not_200"],
                           "p99_ms": overall["p99_ms"],
                           "server_cpu_ms_per_request": round(cpu * 1000 / max(1, overall["requests"]), 3)}
        run.rounds.append({"round": number + 1, "first": order[0], **{f"{stack}_{key}": value for stack, figures
                                                                       in done.items() for key, value in
                                                                       figures.items()},
                           "ratio": round(done["arena"]["requests_per_s"] / done["bare"]["requests_per_s"], 3)})


def profiler(run: Run, stack: str, server: subprocess.Popen[bytes], mode: str, clients: int, seconds: float,
             ) -> subprocess.Popen[bytes] | None:
    """``--py-spy``: py-spy sampling the server's process (workers too) over a back-to-back cell of the most
    clients, its stacks folded into ``--profiles``/STACK-CLIENTS.folded (py-spy's own CPU shares the cores: a
    profiled run's figures are not the bench's)."""
    args = run.args
    if not args.py_spy or mode != "back-to-back" or clients != max(args.clients):
        return None
    args.profiles.mkdir(parents=True, exist_ok=True)
    out = args.profiles / f"{stack}-{clients}.folded"
    return subprocess.Popen([str(args.py_spy), "record", "--pid", str(server.pid), "--subprocesses", "--threads",
                             "--nonblocking", "--rate", "100", "--duration", str(max(1, int(seconds) - 1)),
                             "--format", "raw", "--output", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def server_command(stack: str, source: Path, port: int, workers: int) -> list[str]:
    return [PYTHON, str(STACK), stack, str(source), "--port", str(port), "--workers", str(workers)]


def route_cpu(run: Run, pages: Path | None) -> list[dict[str, Any]]:
    """bench/web_cpu.py's figures on the run's copy: the arena's app, or (``pages``) the bare app."""
    command = [PYTHON, str(ROOT / "bench" / "web_cpu.py"), str(run.db), "--code", str(run.args.code), "--requests",
               str(run.args.cpu_requests), "--seed", str(run.args.seed), "--json", "--mix",
               ",".join(f"{route}={share:g}" for route, share in run.args.mix.items())]
    done = subprocess.run([*command, *(["--bare", str(pages)] if pages else [])], capture_output=True, cwd=ROOT,
                          env=python_env(run.args.code))
    if done.returncode:
        print(f"web_cpu.py failed ({done.returncode}): {done.stderr.decode(errors='replace')[-2000:]}", file=sys.stderr)
        return []
    return list(json.loads(done.stdout)["routes"])


def bench(args: argparse.Namespace) -> None:
    params = Params(args.versions, args.games, args.history, args.seed)
    cached, made = database(args.cache, params)
    db, copying = args.run_dir / cached.name, 0.0
    if not (args.keep_copy and db.exists()):
        db, copying = working_copy(cached, args.run_dir)
    logs = args.run_dir / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir()
    run = Run(args, db, bot_names(db), league_games(db))
    daemon: list[subprocess.Popen[bytes]] = []
    servers: list[subprocess.Popen[bytes]] = []
    wal = WalWatch(db)
    cpu: dict[str, list[dict[str, Any]]] = {}
    ports: dict[str, int] = {}
    try:
        daemon.append(start([PYTHON, __file__, "--role", "writer", "--db", str(db), "--rate", str(args.rate)],
                            logs / "writer.log"))
        daemon.append(start([PYTHON, __file__, "--role", "refitter", "--db", str(db), "--refit-every",
                             str(args.refit_every)], logs / "refitter.log"))
        wait_writing(logs / "writer.log", daemon[0])
        time.sleep(args.settle)
        pages = args.run_dir / "pages.json"
        for stack in ("arena", "bare"):
            if stack not in args.stacks and not (stack == "arena" and "bare" in args.stacks):
                continue
            port = free_port()
            source = db if stack == "arena" else pages
            servers.append(start(server_command(stack, source, port, args.workers), logs / f"{stack}.log",
                                 args.code if stack == "arena" else ROOT, args.plain))
            wait_ready(port, servers[-1])
            if stack == "arena":
                fetch_pages(run, port)
                save_pages(run.pages, pages)
            else:
                check_bare(run, port)
            if stack in args.stacks:
                load_cells(run, stack, servers[-1], port)
            if args.rounds:
                ports[stack] = port
            else:
                stop(servers[-1])
        if args.rounds:
            alternate(run, {stack: (server, ports[stack]) for stack, server in zip(("arena", "bare"), servers,
                                                                                    strict=True)})
            for server in servers:
                stop(server)
        if args.cpu_requests:
            cpu = {stack: route_cpu(run, None if stack == "arena" else pages) for stack in args.stacks}
        refitter_cpu = group_cpu(daemon[1].pid)
    finally:
        for process in reversed([*daemon, *servers]):
            stop(process)
    report(run, (made, copying), cpu, refitter_cpu, wal.stop(), logs)


def targets(run: Run) -> dict[str, Any]:
    """The issue's targets where this run has their cells: arena/bare requests/s at the most back-to-back clients,
    and the routes whose p99 at the most paced clients is 100 ms or more."""
    def cell(stack: str, mode: str) -> dict[str, Any] | None:
        mine = [c for c in run.cells if c["stack"] == stack and c["mode"] == mode]
        return max(mine, key=lambda c: c["clients"]) if mine else None

    found: dict[str, Any] = {}
    arena, bare = cell("arena", "back-to-back"), cell("bare", "back-to-back")
    if arena and bare and arena["clients"] == bare["clients"]:
        found["back_to_back_clients"] = arena["clients"]
        found["arena_over_bare_requests_per_s"] = round(arena["routes"][-1]["requests_per_s"] /
                                                        bare["routes"][-1]["requests_per_s"], 3)
        found["arena_over_bare_cpu_per_request"] = round(arena["server_cpu_ms_per_request"] /
                                                         bare["server_cpu_ms_per_request"], 1)
    if run.rounds:
        found["rounds"] = [r["ratio"] for r in run.rounds]
        found["rounds_median_arena_over_bare_requests_per_s"] = round(statistics.median(found["rounds"]), 3)
    paced = cell("arena", "paced")
    if paced:
        found["paced_clients"] = paced["clients"]
        found["paced_p99_100ms_or_more"] = {row["route"]: row["p99_ms"] for row in paced["routes"]
                                            if row["p99_ms"] >= 100}
    return found


def report(run: Run, prepared: tuple[float, float], cpu: dict[str, list[dict[str, Any]]], refitter_cpu: float,
           wal: int, logs: Path) -> None:
    """The tables (or ``--json``); ``prepared``: the seconds making the database took (0: cached) and copying and
    migrating it."""
    args, (made, copying) = run.args, prepared
    writer, refits = last_line(logs / "writer.log"), last_line(logs / "refitter.log")
    refitter = {**refits, "cpu_s": round(refitter_cpu, 1),
                "cpu_s_per_refit": round(refitter_cpu / max(1, int(refits.get("refits", 0) or 0)), 2),
                "largest_wal_mib": round(wal / 2**20, 1)}
    stack = ("asyncio + h11" if args.plain else "uvloop + httptools (uvicorn's auto)") + f", --workers {args.workers}"
    pages = {route: {"url": url, "media_type": kind, "bytes": len(body)} for route, (url, kind, body) in
             run.pages.items()}
    figures = json.dumps({"db": str(run.db), "versions": args.versions, "games": run.games, "made_s": round(made, 1),
                          "copy_s": round(copying, 1), "db_mib": round(size_mib(run.db)), "uvicorn": stack,
                          "workers": args.workers, "plain": args.plain, "code": str(args.code), "mix": args.mix,
                          "think_s": args.think, "warmups": run.warmups, "cells": run.cells, "pages": pages,
                          "route_cpu": cpu, "targets": targets(run), "rounds": run.rounds, "writer": writer,
                          "refitter": refitter})
    if args.save:
        args.save.write_text(figures + "\n")
    if args.json:
        print(figures)
        return
    print(f"{run.db.name}: {run.games:,} games, {len(run.bots):,} bots, {size_mib(run.db):,.0f} MiB"
          f"{f', made in {made:.0f} s' if made else ''}, copied and migrated in {copying:.0f} s; "
          f"uvicorn on {stack}; 2 cores shared with the load, unpinned")
    print(f"writer: {writer}\nrefitter: {refitter}")
    print("warm-up (unrecorded): " + "; ".join(f"{w['stack']} {w['seconds']} s, {w['clients']} back-to-back clients, "
                                               f"{w['requests']} requests ({w['not_200']} not 200)"
                                               for w in run.warmups))
    print("\nAll routes, per cell (ms; server CPU: its processes' over the cell, per answer)")
    print(tabulate([{"stack": c["stack"], "mode": c["mode"], "clients": c["clients"], "s": c["seconds"],
                     "requests": c["routes"][-1]["requests"], "not 200": c["routes"][-1]["not_200"],
                     "req/s": c["routes"][-1]["requests_per_s"], "median": c["routes"][-1]["median_ms"],
                     "p95": c["routes"][-1]["p95_ms"], "p99": c["routes"][-1]["p99_ms"],
                     "max": c["routes"][-1]["max_ms"], "server CPU ms/req": c["server_cpu_ms_per_request"],
                     "client CPU ms/req": c["client_cpu_ms_per_request"]} for c in run.cells],
                   headers="keys", tablefmt="github"))
    for name in dict.fromkeys(c["stack"] for c in run.cells):
        mine = [c for c in run.cells if c["stack"] == name]
        print(f"\n{name}, per route: median / p95 / p99 ms (req/s) per cell")
        table = []
        for route in [*args.mix, "all"]:
            line: dict[str, Any] = {"route": route}
            for c in mine:
                row = next((r for r in c["routes"] if r["route"] == route), None)
                line[f"{c['mode']} {c['clients']}"] = (f"{row['median_ms']:g} / {row['p95_ms']:g} / {row['p99_ms']:g} "
                                                       f"({row['requests_per_s']:g})") if row else ""
            table.append(line)
        print(tabulate(table, headers="keys", tablefmt="github"))
    if run.rounds:
        print(f"\n--rounds: {max(args.clients)} back-to-back clients, {args.seconds:g} s a load, the stacks in turn "
              "(req/s, p99 ms, server CPU ms/req)")
        print(tabulate(run.rounds, headers="keys", tablefmt="github"))
    if cpu:
        print(f"\nCPU ms per request per route, one client (bench/web_cpu.py, {args.cpu_requests} URLs per route; "
              "median; test client included, its floor the first line)")
        by_route = {route: {"route": route} for stack_rows in cpu.values() for route in (r["route"] for r in
                                                                                         stack_rows)}
        for name, rows in cpu.items():
            for row in rows:
                by_route[row["route"]][f"{name} built"] = row["built_median_ms"]
                by_route[row["route"]][f"{name} kept"] = row["kept_median_ms"]
        print(tabulate(list(by_route.values()), headers="keys", tablefmt="github"))
    print(f"\ntargets: {targets(run)}")
    print("pages of the bare stack: " + "; ".join(f"{route} {p['bytes']:,} B" for route, p in pages.items()))
    odd = [f"{c['stack']} {c['mode']} {c['clients']} {row['route']} {row['statuses']}" for c in run.cells
           for row in c["routes"][:-1] if row["not_200"]]
    print("answers not 200: " + ("; ".join(odd) if odd else "none"))


def comma_ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def comma_choices(choices: tuple[str, ...]) -> Any:
    def parse(text: str) -> list[str]:
        chosen = [part for part in text.split(",") if part]
        if not chosen or any(part not in choices for part in chosen):
            raise ValueError(f"one or more of {', '.join(choices)}")
        return chosen
    return parse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_options(parser)
    parser.add_argument("--clients", type=comma_ints, default=[1, 10, 50], help="client counts, one cell each")
    parser.add_argument("--modes", type=comma_choices(MODES), default=list(MODES))
    parser.add_argument("--stacks", type=comma_choices(("arena", "bare")), default=["arena", "bare"])
    parser.add_argument("--seconds", type=float, default=20.0, help="a back-to-back cell's load")
    parser.add_argument("--paced-seconds", type=float, default=30.0, help="a paced cell's load")
    parser.add_argument("--think", type=float, default=1.0, help="a paced client's seconds between requests")
    parser.add_argument("--warmup", type=float, default=10.0, help="unrecorded load before a stack's cells")
    parser.add_argument("--mix", type=parse_mix, default=dict(MIX),
                        help="routes and shares, e.g. '/=3,/api/board=2' (default: " +
                             ",".join(f"{route}={share:g}" for route, share in MIX.items()) + ")")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds a client waits for an answer")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds the writer runs before the load")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes, for both stacks")
    parser.add_argument("--rounds", type=int, default=0,
                        help="then the back-to-back load of the most clients on each stack in turn, this many times "
                             "(a median of ratios: single cells drift with the machine)")
    parser.add_argument("--plain", action="store_true", help="uvicorn with the asyncio loop and h11")
    parser.add_argument("--rate", type=float, default=50.0, help="games/s the writer stores")
    parser.add_argument("--refit-every", type=float, default=30.0)
    parser.add_argument("--cpu-requests", type=int, default=20, help="web_cpu.py's URLs per route (0: none)")
    parser.add_argument("--run-dir", type=Path, default=Path("/tmp/durak-bench/run"),
                        help="the run's copy and logs (emptied first)")
    parser.add_argument("--keep-copy", action="store_true",
                        help="serve the run folder's copy of an earlier run (migrated; its writer's games added)")
    parser.add_argument("--py-spy", type=Path, help="py-spy's binary: profile the back-to-back cells of the most "
                                                    "clients (figures disturbed: for profiles only)")
    parser.add_argument("--profiles", type=Path, default=Path("/tmp/durak-bench/profiles"),
                        help="where --py-spy's profiles go")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--save", type=Path, help="the --json figures written to this file too")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose web server runs (default: this one)")
    parser.add_argument("--role", choices=["writer", "refitter"], help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds and set(args.stacks) != {"arena", "bare"}:
        parser.error("--rounds loads both stacks in turn: leave --stacks at arena,bare")
    if args.role == "writer":
        run_writer(args.db, args.rate, args.seed)
    elif args.role == "refitter":
        run_refitter(args.db, args.refit_every)
    else:
        bench(args)


if __name__ == "__main__":
    main()
