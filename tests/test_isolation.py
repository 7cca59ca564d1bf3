"""Bot isolation (referee.bots.sandbox.isolation): the default "process" level and the bwrap sandbox, against small
bots (tests/procbots) that look around, fork, leave their session, and outlive what they should not.

Tests skip, saying why (pytest -ra prints it), only where what they test cannot exist: the sandbox's where
``probe_bwrap`` fails, a bot's own uid's where the referee is not root (bots change uid only then), PID
namespaces' where ``unshare`` cannot make one. On the project's machines (root, user namespaces,
bubblewrap) they all run.
"""

from __future__ import annotations

import dataclasses
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
from contextlib import suppress
from pathlib import Path

import pytest
from conftest import FaultMatrix
from proctools import children, eventually, gone
from sandboxes import (
    BWRAP,
    IS_ROOT,
    LEASES,
    LEVELS,
    PROBLEM,
    PROCESS,
    ROOT,
    Start,
    ask,
    cgroup_file,
    members,
    needs_bwrap,
    needs_pidns,
    processes_of,
    require_cgroups,
    root_only,
    soon,
)

import referee
import referee.bots.launcher as launcher
import referee.bots.sandbox.isolation as isolation_module
import referee.bots.session as session
from protocol.rules import Rules
from referee.bots import BotCommand, BotCrashed, BotLaunchError, BotProcess, BotTimeout, ResourceLimits
from referee.bots.launcher import preflight
from referee.bots.plan import plan_launch
from referee.bots.sandbox.isolation import (
    DEFAULT,
    Bind,
    Isolation,
    SandboxUnavailable,
    bwrap_options,
    checkout_root,
    isolation_for,
    probe_bwrap,
    probe_bwrap_cache_clear,
    sandbox_roots,
)
from referee.bots.sandbox.uids import NOBODY, UID_BASE, UID_SLOTS, lease_uid
from referee.bots.session import BotClient
from referee.engine import engine_build
from referee.games.match import Series, play_series
from referee.results.store import Store

pytestmark = pytest.mark.usefixtures("no_leaks")


# --- the default level ------------------------------------------------------------------------------------


def test_the_default_isolation_is_the_bwrap_level() -> None:
    assert DEFAULT == Isolation() == isolation_for("bwrap")
    assert isolation_for("bwrap", ["/x/results.db"]).protected == ("/x/results.db",)
    with pytest.raises(ValueError, match="unknown sandbox 'docker': choose one of none, process, bwrap"):
        isolation_for("docker")


def test_each_bot_process_gets_a_private_tmpdir_it_can_write(bot: Start) -> None:
    with bot(PROCESS, "probe") as first, bot(PROCESS, "probe") as second:
        tmpdir = ask(first, "env", "TMPDIR")
        assert ask(first, "write", f"{tmpdir}/scratch") == "ok"
        host = first.launched.tmpdir
        assert host is not None and host != second.launched.tmpdir and tmpdir == host
        assert "scratch" in os.listdir(host)
        info = os.stat(host)
        assert stat.S_IMODE(info.st_mode) == 0o700
        assert info.st_uid == (first.launched.uid if IS_ROOT else os.geteuid())
        assert ask(second, "read", f"{host}/scratch") == ("EACCES" if IS_ROOT else "ok")
    assert not os.path.exists(host)


@needs_bwrap
def test_under_bwrap_tmp_var_tmp_and_dev_shm_are_private_capped_tmpfs(bot: Start) -> None:
    limits = ResourceLimits(file_size_mb=4)
    with bot(BWRAP, "probe", limits=limits) as first, bot(BWRAP, "probe", limits=limits) as second:
        assert ask(first, "env", "TMPDIR") == "/tmp"
        assert first.launched.tmpdir is None  # nothing of the bot's on the referee's disk: nothing to leave
        for folder in ("/tmp", "/var/tmp", "/dev/shm"):
            assert ask(first, "write", f"{folder}/scratch") == "ok"
            assert ask(second, "read", f"{folder}/scratch") == "ENOENT"  # each sandbox has its own
            assert ask(first, "size", folder) == 4 << 20  # the cap is file_size_mb, for the whole folder


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
    require_cgroups("memory", "pids")
    limits = ResourceLimits(memory_mb=512, file_size_mb=8, open_files=64, cpu_seconds=30)
    with bot(isolation, "show_limits", limits=limits) as p:
        shown = p.read_line(soon()).split()
        # memory is the whole tree's, in its control group: the per-process RLIMIT_DATA is not set then
        assert int(cgroup_file(p, "memory.max", "memory.limit_in_bytes")) == 512 << 20
        assert cgroup_file(p, "pids.max") == "256"
    nproc = b"256" if IS_ROOT else b"%d" % resource.getrlimit(resource.RLIMIT_NPROC)[0]  # own uid: 256 default
    assert shown[:7] == [b"-1", nproc, b"8388608", b"64", b"30", b"0", b"9"]


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
    assert eventually(lambda: all(gone(pid) for pid in inside))
    fault_matrix.record("a busy child left behind after setsid()", "none (the bot's own choice)",
                        "the child dies with the bot's PID namespace when the bot stops", time.monotonic() - start)


@needs_pidns
@pytest.mark.parametrize("isolation", LEVELS)
def test_without_a_freezer_pause_stops_children_that_left_the_group_and_resume_lets_them_run(
        bot: Start, isolation: Isolation, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next best where a machine has no control groups: SIGSTOP to every process of the PID namespace (the
    freezer itself is tested in test_confinement.py)."""
    monkeypatch.setattr(launcher, "bot_cgroup", lambda limits, isolation: None)
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
from referee.bots.sandbox.isolation import Isolation
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
        assert eventually(lambda: all(gone(pid) for pid in tree)), "part of the bot outlived it"
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
def test_files_the_bots_uid_cannot_read_are_refused_unless_root_is_allowed(bots_dir: Path, python: str,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    """An interpreter or bot under a private folder (pyenv under /root, say) cannot run as another uid at the
    process level: the launch is refused in one line; only ``allow_root`` (--bots-as-root, for trusted bots)
    runs it as root, still in its own PID namespace with a private TMPDIR, and a warning says why, once."""
    private = Path(tempfile.mkdtemp(prefix="durak-test-private-"))  # mode 700, root's
    command = BotCommand([python, "-S", "probe.py"], cwd=private)
    try:
        shutil.copy(bots_dir / "probe.py", private)
        with pytest.raises(BotLaunchError) as refused:
            BotProcess(command, isolation=PROCESS)
        assert re.fullmatch(rf"bot working directory {private} is out of reach of an unprivileged uid \({private} is "
                            r"mode 700, owner uid 0\): make it readable by other users, or use the default sandbox "
                            r'"bwrap", which shows the bot its interpreter \(bots never run as root, unless '
                            r"--bots-as-root allows it for trusted bots\)", refused.value.reason), refused.value.reason
        caplog.set_level(logging.WARNING, logger="durak")
        for _ in range(2):
            with BotProcess(command, isolation=Isolation("process", allow_root=True)) as p:
                uid, _, _ = json.loads(p.exchange(b'{"op": "ids"}', 5.0)[0])
                tmpdir = json.loads(p.exchange(b'{"op": "env", "arg": "TMPDIR"}', 5.0)[0])
                assert uid == 0 and tmpdir and tmpdir != tempfile.gettempdir()
        warnings = [r.getMessage() for r in caplog.records if r.name == "durak" and "as root" in r.getMessage()]
        assert len(warnings) == 1, warnings
        assert warnings[0].startswith("running this bot as root, not as an unprivileged user (trusted bots only): "
                                      f"bot working directory {private} is out of reach")
    finally:
        shutil.rmtree(private)
    assert held_leases() == [], "a uid lease was not given back"


def held_leases() -> list[str]:
    """The lease files this process holds open (other referees on the machine lease and free uids meanwhile)."""
    links = []
    for fd in os.listdir("/proc/self/fd"):
        with suppress(OSError):
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
    return [link for link in links if link.startswith(f"{LEASES}/")]


def interpreters_under_root() -> list[str]:
    """Pythons installed where only root may enter (pyenv under /root), as on the project's machines."""
    return sorted(str(path) for path in Path("/root").glob(".pyenv/versions/*/bin/python3") if path.is_file())


@root_only
@needs_bwrap
def test_under_bwrap_an_interpreter_only_root_may_reach_is_shown_to_the_bots_own_uid(bots_dir: Path) -> None:
    """Never root: a bot's interpreter in a tree under a folder only root may enter (pyenv under /root) is bound
    into the sandbox read-only, the folders above it searchable, so the bot runs as its own uid."""
    private = Path(tempfile.mkdtemp(prefix="durak-test-private-"))  # mode 700, root's: like /root
    trees = dataclasses.replace(BWRAP, interpreter_trees=True)  # the organizer's bots (a tournament, durak play)
    try:
        prefix = private / "versions" / "1.0"  # mode 755, like /root/.pyenv/versions/3.11.7
        (prefix / "bin").mkdir(parents=True)
        for folder in (private / "versions", prefix, prefix / "bin"):
            folder.chmod(0o755)
        shell = shutil.copy(shutil.which("sh") or "/bin/sh", prefix / "bin" / "sh")
        with BotProcess(BotCommand([str(shell), "-c", "read line; id -u"], cwd=bots_dir), isolation=trees) as p:
            assert p.exchange(b"uid?", 5.0)[0] == str(p.launched.uid).encode() != b"0"
        script = bots_dir / "uid.sh"  # no dir: the script's folder is shown, not the interpreter's
        script.write_text("read line; id -u\n")
        with BotProcess(BotCommand([str(shell), str(script)]), isolation=trees) as p:
            assert p.exchange(b"uid?", 5.0)[0] == str(p.launched.uid).encode()
        script.unlink()
        for python in interpreters_under_root():  # the real thing, where this machine has it
            with BotProcess(BotCommand([python, "-S", "probe.py"], cwd=bots_dir), isolation=trees) as p:
                assert ask(p, "ids")[0] == p.launched.uid != 0  # type: ignore[index]
    finally:
        shutil.rmtree(private)


@root_only
def test_uid_leases_are_exclusive_and_given_back() -> None:
    first, second = lease_uid(), lease_uid()
    assert first is not None and second is not None and first.uid != second.uid
    first.release()
    first.release()
    second.release()
    fixed = lease_uid(NOBODY)
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
        shown = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "dev", "tmp", "var", "sys"}
        shown |= {Path(path).parts[1] for path in sandbox_roots(BWRAP, str(bots_dir))}
        assert set(top) <= shown
        assert ask(p, "list", "/sys") in (["fs"], "ENOENT")  # only the bot's own control groups, if any
        checkout = checkout_root()
        if checkout is not None:
            assert ask(p, "read", f"{checkout}/pyproject.toml") == "ENOENT"
            assert ask(p, "read", f"{checkout}/referee/cli.py") == "ENOENT"
            shown_there = {"protocol", "referee"}  # and the venv, when it lives in the checkout (as in CI)
            if Path(sys.prefix).is_relative_to(checkout):
                shown_there.add(Path(sys.prefix).relative_to(checkout).parts[0])
            listing = ask(p, "list", checkout)
            assert listing == "ENOENT" or set(listing) == shown_there, listing
            assert ask(p, "list", f"{checkout}/referee") == ["__init__.py", "engine"]


@needs_bwrap
@pytest.mark.parametrize("masked", [False, True], ids=["checkout", "site-packages"])
def test_a_sandboxed_python_bot_imports_the_engine_and_nothing_else_of_the_referee(
        bots_dir: Path, masked: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search bot under bwrap imports ``protocol`` and ``referee.engine`` (the compiled build where it is
    installed) and finds nothing else of ``referee``. ``site-packages``: the referee package's folder as a
    regular install shows it, whole, inside a bound folder; the sandbox lays a tmpfs over it."""
    if masked:
        monkeypatch.setattr(isolation_module, "masked_referee",  # the package, wherever this module sits in it
                            lambda: str(Path(referee.__file__).resolve().parent))
    seen = engine_user_report(bots_dir, BWRAP)
    assert seen["referee"] == ["__init__.py", "engine"] and seen["cli"] is False


def test_a_python_bot_at_the_process_level_imports_the_engine(bots_dir: Path) -> None:
    """The weaker level shows files by their permissions: the engine imports wherever the interpreter runs."""
    try:
        engine_user_report(bots_dir, Isolation("process"))
    except BotLaunchError as exc:
        pytest.skip(f"the referee's interpreter is out of a bot uid's reach here: {exc}")


def engine_user_report(bots_dir: Path, level: Isolation) -> dict[str, object]:
    """What tests/procbots/engine_user.py saw: it must have searched with the build the referee loaded."""
    with BotProcess(BotCommand([sys.executable, "engine_user.py"], cwd=bots_dir), isolation=level) as p:
        seen = dict(json.loads(p.exchange(b"{}", 30.0)[0]))
    assert seen["same_legal"] is True
    assert seen["build"] == engine_build()
    return seen


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
        records = play_series(Series(Rules(), 2, 7), clients)
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
        assert str(caught.value) == ('sandbox "bwrap" unavailable: bwrap is not installed (Debian/Ubuntu package '
                                     "bubblewrap); install it, or opt in to the weaker --sandbox process")
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
    out_of_reach = BotCommand([python, "-c", ""], cwd=tmp_path)
    if IS_ROOT:
        with pytest.raises(BotLaunchError, match="out of reach of an unprivileged uid"):
            preflight(out_of_reach, PROCESS)
    preflight(out_of_reach, Isolation("process", allow_root=True))  # trusted: root, with a warning
    if PROBLEM is None:
        with pytest.raises(BotLaunchError, match=r"would show .*results\.db"):
            preflight(BotCommand([sys.executable, "-c", ""], cwd=tmp_path),
                      isolation_for("bwrap", [tmp_path / "results.db"]))


@needs_bwrap
def test_a_launch_is_planned_once_as_typed_values_that_bwrap_options_only_renders(bots_dir: Path,
                                                                                   python: str) -> None:
    """Preflight and launch make the same frozen plan; the sandbox's view is typed binds, rendered in order."""
    command = BotCommand([python, "-S", "echo.py"], cwd=bots_dir, env={"A": "1"})
    plan = preflight(command, BWRAP)
    assert plan == plan_launch(command, BWRAP, ResourceLimits()) and children() == []
    assert (plan.level, plan.chdir, plan.env, plan.args) == ("bwrap", str(bots_dir), (("A", "1"),),
                                                             ("-S", "echo.py"))
    assert plan.runs_as == ("own" if IS_ROOT else "referee")
    assert Bind("ro-bind", str(bots_dir), str(bots_dir)) in plan.view
    assert Bind("remount-ro", None, "/") in plan.view
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.program = "/bin/sh"  # type: ignore[misc]
    options = bwrap_options(plan.view, str(plan.chdir), info_fd=None)
    assert "--clearenv" in options and options[-2:] == ["--chdir", str(bots_dir)]
    bind_at = options.index(str(bots_dir)) - 1  # the bot's folder, after the folders that lead to it
    assert options[bind_at] == "--ro-bind" and options.index("--remount-ro") > bind_at
