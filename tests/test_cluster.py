"""Tournaments on a Dask cluster (``durak tournament --cluster``): a ``distributed.LocalCluster`` of two workers.

The same stored games as a local run, nothing lost or stored twice when a worker is killed mid-run, a worker
without a bot's runtime named before any game, no way for a bot on a worker to reach the cluster, and a malformed
address one line at once.
Without Dask installed these tests skip, and fail with CI=true (CI installs the ``cluster`` extra).
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from proctools import start_durak, stop_with
from test_reproducible import sample_config, stored_games

from referee.cli.exitcodes import ExitCode
from referee.results.store import decode_stderr
from referee.tournament.config import load_config
from referee.tournament.executors.dask import ClusterExecutor, ClusterUnavailable  # imports Dask only when one is made
from referee.tournament.runner import RunRequest, RunSummary, run_tournament
from referee.tournament.secret import write_seed_file

if os.environ.get("CI") == "true":
    import distributed
else:
    distributed = pytest.importorskip("distributed")

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=40) as local:
        yield local


def _seeded(tmp_path: Path) -> Path:
    seed_file = tmp_path / "seed"
    write_seed_file(seed_file, 20261201)
    return seed_file


def _count(db: Path) -> tuple[int, int]:
    """Games stored, and distinct (slot, game) pairs among them (none while the database is being made)."""
    with closing(sqlite3.connect(db)) as con:
        try:
            return con.execute("SELECT COUNT(*), COUNT(DISTINCT slot_key || '#' || game_index) FROM games").fetchone()
        except sqlite3.OperationalError:  # no table yet
            return 0, 0


def test_a_cluster_stores_the_games_a_local_run_stores(tmp_path: Path, cluster: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("node") is None:
        pytest.fail("node is needed for the JavaScript sample bot")
    monkeypatch.setattr(ClusterExecutor, "batch_games", 10)  # several batches on each worker
    config, seed_file = sample_config(tmp_path), _seeded(tmp_path)
    local = run_tournament(load_config(config),
                           RunRequest(tmp_path / "local.db", jobs=2, seed_file=seed_file), io.StringIO())
    remote = run_tournament(load_config(config),
                            RunRequest(tmp_path / "cluster.db", seed_file=seed_file,
                                       cluster=cluster.scheduler_address), io.StringIO())
    assert local.played == remote.played == 4 * 6 * 4
    assert stored_games(tmp_path / "local.db") == stored_games(tmp_path / "cluster.db")
    # the run's referee workers are gone from the Dask workers once it is over
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    try:
        deadline = time.monotonic() + 120
        while any(client.run(_referee_workers).values()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(client.run(_referee_workers).values())
    finally:
        client.close()


def _referee_workers() -> list[int]:
    """On a Dask worker: the pids of its referee worker processes."""
    import psutil

    pids = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "referee.tournament.worker" in " ".join(child.cmdline()):
                pids.append(child.pid)
        except psutil.NoSuchProcess:  # it exited between the listing and the read: not a worker any more
            pass
    return pids


def _python_bots(tmp_path: Path, deals: int, extra: str = "") -> Path:
    folder = tmp_path / "py"
    folder.mkdir()
    shutil.copy(SAMPLES / "python" / "random_bot.py", folder)
    config = tmp_path / "t.toml"
    config.write_text(f'name = "cluster"\ndeals = {deals}\n{extra}' + "".join(
        f'[[bots]]\nname = "r{i}"\ncommand = "{{python}} random_bot.py"\ndir = "py"\n' for i in range(3)))
    return config


def test_a_worker_killed_mid_run_loses_nothing_and_stores_nothing_twice(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ClusterExecutor, "batch_games", 8)
    config, seed_file = _python_bots(tmp_path, deals=60), _seeded(tmp_path)  # 3 tables x 60 deals x 2 seatings
    db = tmp_path / "cluster.db"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50) as local:
        outcome: list[RunSummary | BaseException] = []

        def run() -> None:
            try:
                outcome.append(run_tournament(load_config(config),
                                              RunRequest(db, seed_file=seed_file, cluster=local.scheduler_address),
                                              io.StringIO()))
            except BaseException as exc:
                outcome.append(exc)

        thread = threading.Thread(target=run)
        thread.start()
        client = distributed.Client(local.scheduler_address, set_as_default=False)
        try:
            deadline = time.monotonic() + 120
            while (not db.exists() or _count(db)[0] < 40) and thread.is_alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            playing = {address: pids for address, pids in client.run(_referee_workers).items() if pids}
            victim = next(iter(playing))  # a worker with a referee worker, mid-batch
            stored_then, running_then = _count(db)[0], thread.is_alive()
            pid = client.run(os.getpid, workers=[victim])[victim]
            os.kill(pid, signal.SIGKILL)
            thread.join(timeout=300)
        finally:
            client.close()
    assert not thread.is_alive()
    assert isinstance(outcome[0], RunSummary), outcome
    assert running_then and stored_then < 360
    assert _count(db) == (360, 360)
    for orphan in playing[victim]:  # the killed worker's referee worker died with it (parent-death signal)
        assert not _alive(orphan)
    local_db = tmp_path / "local.db"
    run_tournament(load_config(config), RunRequest(local_db, jobs=2, seed_file=seed_file), io.StringIO())
    assert stored_games(db) == stored_games(local_db)


def _alive(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state == "Z":
            return False
        time.sleep(0.1)
    return True


def test_a_worker_without_a_bots_runtime_is_named_before_any_game(open_tmp: Path) -> None:
    """The JavaScript bot's runtime, ``durak-test-js``, is on the coordinator's PATH only: a worker lacks it.
    (At the process level: bwrap shows a bot no program outside its folder and the system's.)"""
    if shutil.which("node") is None:
        pytest.fail("node is needed for the JavaScript sample bot")
    config, db = sample_config(open_tmp), open_tmp / "t.db"
    config.write_text(config.read_text().replace('command = "node bot.js"', 'command = "durak-test-js bot.js"'))
    runtime = open_tmp / "runtime"
    runtime.mkdir()
    (runtime / "durak-test-js").symlink_to(os.path.realpath(shutil.which("node") or "node"))
    env = {**os.environ, "PATH": f"{runtime}{os.pathsep}{os.environ.get('PATH', os.defpath)}"}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50) as local:
        run = subprocess.run([sys.executable, "-m", "referee", "tournament", str(config), "--db", str(db),
                              "--cluster", local.scheduler_address, "--sandbox", "process"], capture_output=True,
                             text=True, timeout=300, env=env)
        worker = next(iter(local.scheduler_info["workers"]))
    assert run.returncode == ExitCode.CLUSTER, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("durak: error:")]
    assert len(errors) == 1 and "Traceback" not in run.stderr
    assert f"Dask worker {worker}: bot 'js': bot program 'durak-test-js' not found" in errors[0]
    assert "runtime" in errors[0]
    assert _count(db) == (0, 0)


PROBE = '''\
import os, runpy, socket, sys
for address in os.environ["PROBE"].split(","):
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        print(f"probe {address}: connected", file=sys.stderr)
    except OSError as exc:
        print(f"probe {address}: {type(exc).__name__}", file=sys.stderr)
sys.stderr.flush()
runpy.run_path("random_bot.py", run_name="__main__")
'''


def test_a_bot_on_a_worker_cannot_reach_the_scheduler_or_a_worker(tmp_path: Path, cluster: Any) -> None:
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    try:
        info = client.scheduler_info()
    finally:
        client.close()
    addresses = [cluster.scheduler_address, *info["workers"], *(w["nanny"] for w in info["workers"].values())]
    targets = [address.removeprefix("tcp://") for address in addresses]
    for target in targets:  # from here (outside any sandbox) every one of them answers
        host, port = target.rsplit(":", 1)
        socket.create_connection((host, int(port)), timeout=5).close()
    folder = tmp_path / "probe"
    folder.mkdir()
    shutil.copy(SAMPLES / "python" / "random_bot.py", folder)
    (folder / "probe.py").write_text(PROBE)
    config = tmp_path / "t.toml"
    config.write_text('name = "probe"\ndeals = 2\n' + "".join(
        f'[[bots]]\nname = "p{i}"\ncommand = "{{python}} probe.py"\ndir = "probe"\nenv = {{ PROBE = '
        f'"{",".join(targets)}" }}\n' for i in range(2)))
    db = tmp_path / "t.db"
    summary = run_tournament(load_config(config), RunRequest(db, cluster=cluster.scheduler_address), io.StringIO())
    assert summary.played == 4
    with closing(sqlite3.connect(db)) as con:
        texts = [chunk.text for (blob,) in con.execute("SELECT stderr FROM games")
                 for seat in decode_stderr(zlib.decompress(blob)) for chunk in seat]
    lines = [line for text in texts for line in text.splitlines() if line.startswith("probe ")]
    tried = {line.split()[1].rstrip(":") for line in lines}
    assert tried == set(targets) and len(lines) % len(targets) == 0  # every bot process tried every address
    assert all(not line.endswith(": connected") for line in lines), lines


def test_ctrl_c_on_a_cluster_keeps_the_finished_games_and_the_same_command_resumes(tmp_path: Path,
                                                                                    cluster: Any) -> None:
    config, db = _python_bots(tmp_path, deals=40), tmp_path / "t.db"  # 3 tables x 40 deals x 2 seatings
    command = [sys.executable, "-m", "referee", "tournament", str(config), "--db", str(db),
               "--cluster", cluster.scheduler_address]
    run = start_durak(command)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (not db.exists() or _count(db)[0] < 20) and run.poll() is None:
        time.sleep(0.01)
    err = stop_with(run, signal.SIGINT)
    assert run.returncode == ExitCode.INTERRUPTED, err
    resume = f"to resume: durak tournament {config} --db {db} --cluster {cluster.scheduler_address}"
    assert "interrupted:" in err and resume in err and "Traceback" not in err
    kept = _count(db)[0]
    assert 20 <= kept < 240
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{240 - kept} games played now, 240/240 stored" in resumed.stdout
    assert "240/240 games 100%" in resumed.stderr  # the progress line, as locally
    assert _count(db) == (240, 240)


def test_a_tls_cluster_plays_with_dasks_tls_settings_and_refuses_plain_tcp(tmp_path: Path) -> None:
    """docs/SCALING.md's route: certificates in Dask's settings (here DASK_* variables) for the coordinator."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test's certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-subj", "/CN=durak-test", "-days", "2"], check=True, capture_output=True)
    pem = {"tls_ca_file": str(cert), "require_encryption": True}
    for role in ("scheduler", "worker", "client"):
        pem |= {f"tls_{role}_cert": str(cert), f"tls_{role}_key": str(key)}
    config = _python_bots(tmp_path, deals=4)
    prefix = "DASK_DISTRIBUTED__COMM__"
    settings = {f"{prefix}TLS__CA_FILE": str(cert), f"{prefix}TLS__CLIENT__CERT": str(cert),
                f"{prefix}TLS__CLIENT__KEY": str(key), f"{prefix}REQUIRE_ENCRYPTION": "true"}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50, protocol="tls://",
                                  security=distributed.Security(**pem)) as local:
        address = local.scheduler_address
        assert address.startswith("tls://")

        secure = subprocess.run([sys.executable, "-m", "referee", "tournament", str(config), "--db",
                                 str(tmp_path / "tls.db"), "--cluster", address], capture_output=True, text=True,
                                timeout=300, env={**os.environ, **settings})
        for cluster, text in ((address.replace("tls://", "tcp://"), "cannot reach the Dask scheduler"),
                              (address, "hold no client certificate")):  # this process has no TLS settings
            with pytest.raises(ClusterUnavailable, match=text):
                run_tournament(load_config(config), RunRequest(tmp_path / "refused.db", cluster=cluster), io.StringIO())
    assert secure.returncode == 0, secure.stderr
    assert "24 games played now, 24/24 stored" in secure.stdout
    assert _count(tmp_path / "refused.db") == (0, 0)


def test_a_worker_whose_checks_stall_is_an_error_not_a_wait_for_ever(tmp_path: Path, cluster: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.tournament.executors import dask as executor

    config = _python_bots(tmp_path, deals=2)
    bots, startup = 3, load_config(config).time_control().startup_time
    monkeypatch.setattr(executor, "_CHECK_SECONDS", -2 * startup * bots)  # no time at all for the checks
    with pytest.raises(ClusterUnavailable, match=r"^Dask worker tcp://\S+ did not finish its checks within 0 s$"):
        run_tournament(load_config(config),
                       RunRequest(tmp_path / "t.db", cluster=cluster.scheduler_address), io.StringIO())
    assert _count(tmp_path / "t.db") == (0, 0)


def test_a_league_plays_on_a_cluster_and_every_worker_checks_a_new_version(open_tmp: Path, cluster: Any) -> None:
    """``durak league run --cluster``: the daemon's groups are played on the cluster's workers, and a version added
    while it runs is checked on every worker (its snapshot at the same path, its start) before it is seated."""
    from tests.clirun import invoke
    from tests.test_league_daemon import config_text, query, until

    (open_tmp / "bots").mkdir(mode=0o755)
    for name in ("random_bot.py", "heuristic_bot.py"):
        shutil.copy(SAMPLES / "python" / name, open_tmp / "bots" / name)
    config, db = open_tmp / "league.toml", open_tmp / "league.db"
    config.write_text(config_text(["random", "heuristic"]))
    daemon = subprocess.Popen([sys.executable, "-m", "referee", "league", "run", str(config), "--db", str(db),
                               "--cluster", cluster.scheduler_address], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        until(lambda: (query(db, "SELECT COUNT(*) FROM games") or [(0,)])[0][0] >= 10, why="games on the cluster")
        added = invoke("league", "add", str(db), "late", "--dir", str(open_tmp / "bots"), "--command",
                       f"{sys.executable} random_bot.py")
        assert added.code == 0 and "done: added late@1" in added.out, added.output
        until(lambda: query(db, "SELECT 1 FROM games WHERE record LIKE '%\"late@1\"%'"), why="the new version plays")
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(60) == 0  # a stop is the league's normal end
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()


@pytest.mark.parametrize(("command", "address", "says"), [
    ("tournament", "nonsense", "missing port number in address 'nonsense'"),
    ("tournament", "foo://x:1", "unknown address scheme 'foo'"),
    ("league", "nonsense", "missing port number in address 'nonsense'"),
])
def test_a_malformed_address_is_one_line_and_exit_code_8_at_once(open_tmp: Path, command: str, address: str,
                                                                 says: str) -> None:
    """A ``distributed.Client`` half-made from a malformed address made the process wait 60 s at exit, then print
    a ``Client.__del__`` traceback: the address is checked before a client is made. A process of its own, since
    the wait and the traceback come at its exit."""
    from tests.test_league_daemon import config_text

    if command == "tournament":
        args = ["tournament", str(_python_bots(open_tmp, deals=2)), "--db", str(open_tmp / "t.db")]
    else:
        (open_tmp / "bots").mkdir(mode=0o755)
        shutil.copy(SAMPLES / "python" / "random_bot.py", open_tmp / "bots")
        (open_tmp / "league.toml").write_text(config_text(["random"]))
        args = ["league", "run", str(open_tmp / "league.toml"), "--db", str(open_tmp / "league.db")]
    started = time.monotonic()
    ran = subprocess.run([sys.executable, "-m", "referee", *args, "--cluster", address], capture_output=True,
                         text=True, timeout=30)  # half the wait it had: a client left behind fails it
    assert ran.returncode == ExitCode.CLUSTER
    lines = ran.stderr.splitlines()  # a league's daemon first says what it resumes
    assert len(lines) == (1 if command == "tournament" else 2) and "Traceback" not in ran.stderr, ran.stderr
    assert lines[-1].startswith(f"durak: error: cannot reach the Dask scheduler at {address}: {says}")
    assert time.monotonic() - started < 15
