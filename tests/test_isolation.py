"""Bot isolation (referee.bots.isolation): the default "process" level and the bwrap sandbox, against small
bots (tests/procbots) that look around, fork, leave their session, and outlive what they should not.

Tests skip, saying why (pytest -ra prints it), only where what they test cannot exist: the sandbox's where
``probe_bwrap`` fails, a bot's own uid's where the referee is not root (bots change uid only then), PID
namespaces' where ``unshare`` cannot make one. On the project's machines (root, user namespaces,
bubblewrap) they all run.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import os
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from conftest import FaultMatrix
from proctools import all_pids, children, eventually, gone

import referee.bots.launcher as launcher
import referee.bots.session as session
from protocol.rules import Rules
from referee.bots import BotCommand, BotCrashed, BotLaunchError, BotProcess, BotTimeout, ResourceLimits
from referee.bots.isolation import (
    DEFAULT,
    Isolation,
    SandboxUnavailable,
    checkout_root,
    isolation_for,
    pid_namespace_options,
    probe_bwrap,
    probe_bwrap_cache_clear,
    sandbox_roots,
)
from referee.bots.launcher import preflight
from referee.bots.session import BotClient
from referee.bots.uids import LEASE_DIRS, NOBODY, UID_BASE, UID_SLOTS, lease_uid
from referee.match import play_series
from referee.store import Store

BOTS = Path(__file__).parent / "procbots"
ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = os.geteuid() == 0
PROCESS, BWRAP = Isolation("process"), Isolation("bwrap")
LEASES = LEASE_DIRS[0]


def bwrap_problem() -> str | None:
    try:
        probe_bwrap()
    except SandboxUnavailable as exc:
        return str(exc)
    return None


@functools.cache
def python_for_other_users() -> str | None:
    """An interpreter that a uid owning no file can run (with -S): the bots' uids when the referee is root."""
    if not IS_ROOT:
        return sys.executable
    for candidate in dict.fromkeys([sys.executable, os.path.realpath(sys.executable), "/usr/bin/python3",
                                    "/usr/local/bin/python3"]):
        # Through sh: setpriv itself still holds root's capabilities when it execs, so its exec sees all.
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "sh", "-c",
                'exec "$0" -S -c "import sys; assert sys.version_info[:2] == (3, 11) or True"', candidate]
        if os.path.exists(candidate) and subprocess.run(argv, capture_output=True, check=False).returncode == 0:
            return candidate
    return None


PROBLEM = bwrap_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=f"bwrap probe failed: {PROBLEM}")
needs_pidns = pytest.mark.skipif(pid_namespace_options() is None, reason="unshare cannot make a PID namespace here")
root_only = pytest.mark.skipif(not IS_ROOT, reason="bots change uid only when the referee runs as root")
LEVELS = [pytest.param(PROCESS, id="process"), pytest.param(BWRAP, id="bwrap", marks=needs_bwrap)]

Start = Callable[..., BotProcess]


def soon(seconds: float = 5.0) -> float:
    return time.monotonic() + seconds




def members(namespace: str) -> list[int]:
    """The living processes (our pids) of a PID namespace, named as its /proc/<pid>/ns/pid links name it."""
    found = []
    for pid in all_pids():
        with suppress(OSError):
            if os.readlink(f"/proc/{pid}/ns/pid") == namespace and not gone(pid):
                found.append(pid)
    return found


def processes_of(uid: int) -> list[int]:
    """The living processes whose real uid is ``uid``."""
    found = []
    for pid in all_pids():
        with suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("Uid:") and int(line.split()[1]) == uid and not gone(pid):
                    found.append(pid)
    return found


def ask(bot: BotProcess, op: str, arg: object = None) -> object:
    """One question to the probe bot."""
    return json.loads(bot.exchange(json.dumps({"op": op, "arg": arg}).encode(), 5.0)[0])


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    fds = sorted(os.listdir("/proc/self/fd"))
    yield
    assert eventually(lambda: children() == []), "a bot was not reaped"
    assert sorted(os.listdir("/proc/self/fd")) == fds, "an fd leaked"


@pytest.fixture(scope="module")
def bots_dir() -> Iterator[Path]:
    """A copy of tests/procbots that every uid can read (a checkout may be under a private home)."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-bots-"))
    shutil.copytree(BOTS, folder, dirs_exist_ok=True)
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def python() -> str:
    found = python_for_other_users()
    if found is None:
        pytest.skip("no Python interpreter that other users may run (bots run as another uid under root)")
    return found


@pytest.fixture
def bot(bots_dir: Path, python: str) -> Iterator[Start]:
    """Starts a procbot in ``bots_dir`` under an isolation; afterwards nothing may be left of it."""
    started: list[BotProcess] = []

    def start(isolation: Isolation, name: str, *args: str, limits: ResourceLimits | None = None) -> BotProcess:
        interpreter = sys.executable if isolation.level == "bwrap" else python
        command = BotCommand([interpreter, "-S", f"{name}.py", *args], cwd=bots_dir)
        process = BotProcess(command, limits, isolation=isolation)
        started.append(process)
        return process

    yield start
    for process in started:
        process.close()
        uid, tmpdir = process.launched.uid, process.launched.tmpdir
        if uid is not None:
            assert eventually(lambda uid=uid: processes_of(uid) == []), f"processes of uid {uid} survived"
        assert tmpdir is None or not os.path.exists(tmpdir), "the bot's TMPDIR was left behind"


# --- the default level ------------------------------------------------------------------------------------


def test_the_default_isolation_is_the_process_level() -> None:
    assert DEFAULT == Isolation() == isolation_for("process")
    assert isolation_for("bwrap", ["/x/results.db"]).protected == ("/x/results.db",)
    with pytest.raises(ValueError, match="unknown sandbox 'docker': choose one of none, process, bwrap"):
        isolation_for("docker")


@pytest.mark.parametrize("isolation", LEVELS)
def test_each_bot_process_gets_a_private_tmpdir_it_can_write(bot: Start, isolation: Isolation) -> None:
    with bot(isolation, "probe") as first, bot(isolation, "probe") as second:
        tmpdir = ask(first, "env", "TMPDIR")
        assert ask(first, "write", f"{tmpdir}/scratch") == "ok"
        host = first.launched.tmpdir
        assert host is not None and host != second.launched.tmpdir
        assert "scratch" in os.listdir(host)  # (under bwrap, beside the mount points of binds under /tmp)
        info = os.stat(host)
        assert stat.S_IMODE(info.st_mode) == 0o700
        assert info.st_uid == (first.launched.uid if IS_ROOT else os.geteuid())
        if isolation.level == "process":
            assert tmpdir == host
            assert ask(second, "read", f"{host}/scratch") == ("EACCES" if IS_ROOT else "ok")
        else:
            assert tmpdir == "/tmp"
            assert ask(second, "read", "/tmp/scratch") == "ENOENT"  # each sandbox has a /tmp of its own
    assert not os.path.exists(host)


@root_only
@pytest.mark.parametrize("isolation", LEVELS)
def test_under_root_each_bot_runs_as_a_uid_of_its_own(bot: Start, isolation: Isolation) -> None:
    with bot(isolation, "probe") as first, bot(isolation, "probe") as second:
        uid = first.launched.uid
        assert uid is not None and UID_BASE <= uid < UID_BASE + UID_SLOTS
        assert ask(first, "ids") == [uid, uid, []]
        assert ask(second, "ids")[0] == second.launched.uid != uid  # type: ignore[index]
        assert os.path.exists(f"{LEASES}/{uid}") or not os.path.isdir(LEASES)


@root_only
@pytest.mark.parametrize("isolation", LEVELS)
def test_a_root_only_file_like_the_results_database_is_out_of_reach(bot: Start, bots_dir: Path,
                                                                      isolation: Isolation,
                                                                      fault_matrix: FaultMatrix) -> None:
    database = bots_dir / "results.db"
    try:
        with Store(database), bot(isolation, "probe") as p:  # a live store: its -wal and -shm files exist
            files = sorted(bots_dir.glob("results.db*"))
            assert len(files) == 3 and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
            for file in files:
                assert ask(p, "read", str(file)) == "EACCES"
            fault_matrix.record("read the results database (process level, referee as root)", "none: blocked",
                                "the database is mode 600 and the bot runs as its own unprivileged uid")
            assert ask(p, "read", str(bots_dir / "echo.py")) == "ok"
    finally:
        for file in bots_dir.glob("results.db*"):
            file.unlink()


@pytest.mark.parametrize("isolation", LEVELS)
def test_limits_and_the_parent_death_signal_apply_inside(bot: Start, isolation: Isolation) -> None:
    limits = ResourceLimits(memory_mb=512, file_size_mb=8, open_files=64, cpu_seconds=30)
    with bot(isolation, "show_limits", limits=limits) as p:
        shown = p.read_line(soon()).split()
    nproc = b"256" if IS_ROOT else b"%d" % resource.getrlimit(resource.RLIMIT_NPROC)[0]  # own uid: 256 default
    assert shown[:7] == [b"536870912", nproc, b"8388608", b"64", b"30", b"0", b"9"]


@root_only
@needs_pidns
def test_a_fork_bomb_is_contained_by_its_own_uid_and_killed(bot: Start, fault_matrix: FaultMatrix) -> None:
    start = time.monotonic()
    with bot(PROCESS, "fork_bomb", "10000", limits=ResourceLimits(max_processes=16)) as bomb:
        made = int(bomb.read_line(soon(10.0)))
        assert 0 < made < 16  # the bot itself counts too
        uid = bomb.launched.uid
        assert uid is not None and len(processes_of(uid)) == made + 1
        with bot(PROCESS, "echo") as other:  # another uid: its own count
            assert other.exchange(b"still here", 5.0)[0] == b"still here"
    assert eventually(lambda: processes_of(uid) == [])
    fault_matrix.record("fork bomb", "crash or timeout when it stops answering",
                        f"held at RLIMIT_NPROC by its own uid ({made} processes); other bots unaffected; all killed "
                        "on stop", time.monotonic() - start)


@needs_pidns
@pytest.mark.parametrize("isolation", LEVELS)
def test_close_kills_a_grandchild_that_called_setsid(bot: Start, isolation: Isolation,
                                                    fault_matrix: FaultMatrix) -> None:
    start = time.monotonic()
    with bot(isolation, "fork_and_setsid", "setsid") as p:
        int(p.read_line(soon()))  # the grandchild's pid in the bot's namespace
        namespace = p.launched.pid_namespace()
        assert namespace is not None
        inside = members(namespace)
        assert len(inside) == (2 if isolation.level == "process" else 3)  # bot, grandchild (and bwrap's init)
    assert eventually(lambda: all(gone(pid) for pid in inside), timeout=0.2)
    fault_matrix.record("a busy child left behind after setsid()", "none (the bot's own choice)",
                        "the child dies with the bot's PID namespace when the bot stops", time.monotonic() - start)


@needs_pidns
@pytest.mark.parametrize("isolation", LEVELS)
def test_pause_stops_children_that_left_the_group_and_resume_lets_them_run(bot: Start,
                                                                            isolation: Isolation) -> None:
    with bot(isolation, "fork_and_setsid", "setsid") as p:
        grandchild = int(p.read_line(soon()))
        p.pause()
        assert eventually(lambda: set(p.launched.processes().values()) == {"T"})
        assert grandchild in p.launched.processes()
        p.write_line(b"hello", soon())
        with pytest.raises(BotTimeout):
            p.read_line(time.monotonic() + 0.1)
        p.resume()
        assert eventually(lambda: "T" not in p.launched.processes().values())
        assert p.read_line(soon()) == b"hello"
        p.pause()  # close() must still stop a paused bot and its escaped grandchild


REFEREE = """
import sys, time
from referee.bots import BotCommand, BotProcess
from referee.bots.isolation import Isolation
python, folder, level = sys.argv[1:]
bot = BotProcess(BotCommand([python, "-S", "fork_and_setsid.py", "setsid"], cwd=folder), isolation=Isolation(level))
bot.read_line(time.monotonic() + 10)
print(bot.pid, bot.launched.pid_namespace(), bot.launched.tmpdir, bot.launched.uid, flush=True)
time.sleep(60)
"""


@needs_pidns
@pytest.mark.parametrize("isolation", LEVELS)
def test_the_whole_tree_dies_with_a_referee_killed_by_sigkill(bots_dir: Path, python: str,
                                                              isolation: Isolation) -> None:
    interpreter = sys.executable if isolation.level == "bwrap" else python
    argv = [sys.executable, "-c", REFEREE, interpreter, str(bots_dir), isolation.level]
    with subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True) as referee:
        assert referee.stdout is not None
        wrapper, namespace, tmpdir, uid = referee.stdout.readline().split()
        tree = [int(wrapper), *members(namespace)]
        assert len(tree) >= 3  # the first wrapper, the bot, the grandchild that called setsid()
        referee.send_signal(signal.SIGKILL)
    try:
        assert eventually(lambda: all(gone(pid) for pid in tree), timeout=1.0), "part of the bot outlived it"
    finally:
        for pid in tree:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(tmpdir, ignore_errors=True)  # what a killed referee leaves behind (docs/ISOLATION.md)
        if uid != "None":
            with suppress(FileNotFoundError):
                os.unlink(f"{LEASES}/{uid}")


@pytest.mark.parametrize("isolation", LEVELS)
def test_exits_crashes_and_kills_read_as_without_isolation(bot: Start, isolation: Isolation) -> None:
    with bot(isolation, "crash_midway") as p:
        assert p.exchange(b"1", 5.0)[0] == b"ok"
        assert p.exchange(b"2", 5.0)[0] == b"ok"
        with pytest.raises(BotCrashed, match="exit code 3"):
            p.exchange(b"3", 5.0)
    with bot(isolation, "stubborn") as p:
        assert p.read_line(soon()) == b"ready"
        p.close(grace=0.05)
    assert p.describe_exit() == "killed by signal 9 (SIGKILL)"
    with bot(isolation, "crash_at_start") as p, pytest.raises(BotCrashed, match="ZeroDivisionError"):
        p.exchange(b"hello", 5.0)


@pytest.mark.parametrize("isolation", LEVELS)
def test_cpu_time_is_the_bots_own(bot: Start, isolation: Isolation) -> None:
    with bot(isolation, "spin", "0.2") as p:
        before = p.cpu_time()
        assert p.exchange(b"go", 5.0)[0] == b"done"
        used = p.cpu_time() - before
    assert 0.18 <= used < 0.5
    assert p.cpu_time() >= used


@root_only
def test_files_the_bots_uid_cannot_read_keep_it_root_with_one_warning(bots_dir: Path, python: str,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """An interpreter or bot under a private folder (pyenv under /root, say) cannot run as another uid: the bot
    keeps root, still in its own PID namespace with a private TMPDIR, and a warning says why, once."""
    private = Path(tempfile.mkdtemp(prefix="durak-test-private-"))  # mode 700, root's
    leases = set(os.listdir(LEASES)) if os.path.isdir(LEASES) else set()
    try:
        shutil.copy(bots_dir / "probe.py", private)
        caplog.set_level(logging.WARNING, logger="durak")
        for _ in range(2):
            with BotProcess(BotCommand([python, "-S", "probe.py"], cwd=private), isolation=PROCESS) as p:
                uid, _, _ = json.loads(p.exchange(b'{"op": "ids"}', 5.0)[0])
                tmpdir = json.loads(p.exchange(b'{"op": "env", "arg": "TMPDIR"}', 5.0)[0])
                assert uid == 0 and tmpdir and tmpdir != tempfile.gettempdir()
        warnings = [r.getMessage() for r in caplog.records if r.name == "durak"]
        assert len(warnings) == 1, warnings
        assert re.fullmatch(rf"running this bot as root, not as an unprivileged user: bot working directory {private} "
                            rf"is out of reach of an unprivileged uid \({private} is mode 700, owner uid 0\): make it "
                            'readable by other users, or use sandbox "bwrap"', warnings[0]), warnings[0]
    finally:
        shutil.rmtree(private)
    if os.path.isdir(LEASES):
        assert set(os.listdir(LEASES)) <= leases, "a uid lease was not given back"


@root_only
def test_uid_leases_are_exclusive_and_given_back() -> None:
    first, second = lease_uid(PROCESS), lease_uid(PROCESS)
    assert first is not None and second is not None and first.uid != second.uid
    first.release()
    first.release()
    second.release()
    fixed = lease_uid(Isolation(uid=NOBODY))
    assert fixed is not None and fixed.uid == NOBODY


def test_without_pid_namespaces_the_process_level_is_best_effort(bot: Start,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher, "pid_namespace_options", lambda: None)
    with bot(PROCESS, "probe") as p:
        assert p.launched.namespace == "none"
        assert ask(p, "write", f"{p.launched.tmpdir}/x") == "ok"
        if IS_ROOT:
            assert ask(p, "ids")[0] == p.launched.uid  # type: ignore[index]


# --- the bwrap sandbox ------------------------------------------------------------------------------------


@needs_bwrap
def test_the_sandbox_has_no_network(bot: Start, fault_matrix: FaultMatrix) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with bot(BWRAP, "probe") as p:
            assert ask(p, "connect", port) in {"ECONNREFUSED", "ENETUNREACH"}
            fault_matrix.record("connect to a loopback port (bwrap)", "none: blocked",
                                "no network in the sandbox: the connection fails")
        with bot(PROCESS, "probe") as p:
            assert ask(p, "connect", port) == "ok"  # the process level does not cut the network


@needs_bwrap
def test_the_sandbox_can_write_only_its_tmp_and_a_writable_dir(bot: Start, bots_dir: Path,
                                                               fault_matrix: FaultMatrix) -> None:
    with bot(BWRAP, "probe") as p:
        assert ask(p, "write", "/tmp/x") == "ok"
        assert ask(p, "write", str(bots_dir / "x")) == "EROFS"
        fault_matrix.record("write outside its dir (bwrap)", "none: blocked",
                            "a read-only system and a read-only dir: only its private /tmp is writable")
        for path in ("/x", "/usr/x", "/etc/x", f"{sys.prefix}/x", f"{sys.base_prefix}/x"):
            assert ask(p, "write", path) in {"EROFS", "EACCES", "ENOENT"}, path
        assert ask(p, "cwd") == str(bots_dir)
    with bot(Isolation("bwrap", writable_dir=True), "probe") as p:
        folder = Path(tempfile.mkdtemp(prefix="durak-test-rw-", dir=bots_dir))
        if IS_ROOT:
            assert p.launched.uid is not None
            os.chown(folder, p.launched.uid, p.launched.uid)
        try:
            assert ask(p, "write", str(folder / "x")) == "ok"
        finally:
            shutil.rmtree(folder)


@needs_bwrap
def test_the_sandbox_shows_neither_the_database_nor_the_checkout(bot: Start, bots_dir: Path,
                                                                 tmp_path: Path, fault_matrix: FaultMatrix) -> None:
    database = tmp_path / "results.db"
    database.write_text("scores")
    with bot(Isolation("bwrap", (str(database),)), "probe") as p:
        assert ask(p, "read", str(database)) == "ENOENT"
        fault_matrix.record("read the results database (bwrap)", "none: blocked", "the database is not in the sandbox")
        top = ask(p, "list", "/")
        assert isinstance(top, list)
        shown = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "dev", "tmp"}
        shown |= {Path(path).parts[1] for path in sandbox_roots(BWRAP, str(bots_dir))}
        assert set(top) <= shown
        checkout = checkout_root()
        if checkout is not None:
            assert ask(p, "read", f"{checkout}/pyproject.toml") == "ENOENT"
            assert ask(p, "read", f"{checkout}/referee/cli.py") == "ENOENT"
            shown_there = {"protocol"}  # and the interpreter's venv, when it lives in the checkout (as in CI)
            if Path(sys.prefix).is_relative_to(checkout):
                shown_there.add(Path(sys.prefix).relative_to(checkout).parts[0])
            listing = ask(p, "list", checkout)
            assert listing == "ENOENT" or set(listing) == shown_there, listing


@needs_bwrap
def test_the_sandbox_refuses_a_dir_holding_the_database_or_the_checkout(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("")
    with pytest.raises(BotLaunchError, match=r"would show .*results\.db"):
        BotProcess(BotCommand([sys.executable, "bot.py"], cwd=tmp_path),
                   isolation=isolation_for("bwrap", [tmp_path / "results.db"]))
    checkout = checkout_root()
    if checkout is not None:
        with pytest.raises(BotLaunchError, match="would show the referee's checkout"):
            BotProcess(BotCommand([sys.executable, "-c", ""], cwd=checkout), isolation=BWRAP)


@needs_bwrap
def test_a_sandboxed_bot_without_a_dir_sees_the_folder_of_its_script(bots_dir: Path) -> None:
    command = BotCommand([sys.executable, "-S", str(bots_dir / "probe.py")])
    with BotProcess(command, isolation=BWRAP) as p:
        assert ask(p, "cwd") == os.getcwd()  # an empty stand-in, so that relative paths still work
        assert ask(p, "read", str(bots_dir / "echo.py")) == "ok"


@needs_bwrap
def test_the_python_sample_bot_plays_in_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    options: dict[str, Isolation] = {}
    if "isolation" in inspect.signature(BotClient).parameters:
        options["isolation"] = BWRAP
    else:  # until BotClient takes an isolation, give its BotProcess one
        monkeypatch.setattr(session, "BotProcess", functools.partial(BotProcess, isolation=BWRAP))
    folder = ROOT / "sample_bots" / "python"
    clients = [BotClient(f"random{i}", BotCommand([sys.executable, "random_bot.py", str(i)], cwd=folder), **options)
               for i in range(2)]
    try:
        assert clients[0].start().name == "random"
        records = play_series(Rules(), clients, 2, seed=7)
    finally:
        for client in clients:
            client.stop()
    assert len(records) == 2 and not any(record.verdicts for record in records)


def test_a_missing_bwrap_is_one_line_before_any_bot_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    probe_bwrap_cache_clear()
    try:
        with pytest.raises(SandboxUnavailable) as caught:
            probe_bwrap()
        assert str(caught.value) == ('sandbox "bwrap" unavailable: bwrap is not installed '
                                     "(Debian/Ubuntu package bubblewrap)")
        monkeypatch.undo()
        with pytest.raises(SandboxUnavailable):  # the verdict is cached
            BotProcess(BotCommand([sys.executable, "-c", ""]), isolation=BWRAP)
        assert children() == []
    finally:
        probe_bwrap_cache_clear()


def test_preflight_makes_the_launchers_checks_without_starting_anything(bots_dir: Path, python: str,
                                                                       tmp_path: Path) -> None:
    good = BotCommand([python, "-S", "echo.py"], cwd=bots_dir)
    for isolation in [PROCESS, *([BWRAP] if PROBLEM is None else [])]:
        preflight(good, isolation)
    assert children() == []
    with pytest.raises(BotLaunchError, match="bot program 'no-such-bot' not found"):
        preflight(BotCommand(["no-such-bot"]), PROCESS)
    preflight(BotCommand([python, "-c", ""], cwd=tmp_path), PROCESS)  # out of a uid's reach: root, with a warning
    if PROBLEM is None:
        with pytest.raises(BotLaunchError, match=r"would show .*results\.db"):
            preflight(BotCommand([sys.executable, "-c", ""], cwd=tmp_path),
                      isolation_for("bwrap", [tmp_path / "results.db"]))
