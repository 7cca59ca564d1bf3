"""Control groups for bots (referee.bots.sandbox.cgroups) against the real kernel: each behaviour once with the
groups the referee would choose here and once with cgroup v1 alone. A test whose feature this machine lacks skips,
saying why; with CI=true it fails instead (CI runs as root on a machine that has them all)."""

from __future__ import annotations

import itertools
import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from proctools import eventually, gone, stat_fields

from referee.bots.sandbox.cgroups import (
    JOIN_FAILED,
    BotCgroup,
    CgroupLimits,
    CgroupRun,
    Hierarchy,
    parse_hierarchies,
)

_MIB = 1 << 20
_names = itertools.count()

# A tree that keeps spinning and forking: the parent and two children each fork a short-lived spinner every 10 ms.
_STORM = r"""
import os, time
def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
def storm():
    while True:
        if os.fork() == 0:
            spin(0.02)
            os._exit(0)
        spin(0.01)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
for _ in range(2):
    if os.fork() == 0:
        storm()
print("ready", flush=True)
storm()
"""

# A spinner, and a child that left the session (setsid) with a sleeping grandchild of its own.
_ESCAPEES = r"""
import os, time
if os.fork() == 0:
    while True:
        pass
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    while True:
        pass
print("ready", flush=True)
time.sleep(600)
"""

_OOM = r"""
import os
pid = os.fork()
if pid == 0:
    data = b"x" * (128 << 20)
    os._exit(0)
print("child", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
data = b"y" * (8 << 20)
print("parent alive", flush=True)
"""

_FORK_UNTIL_REFUSED = r"""
import os, time
count = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        count += 1
except BlockingIOError:
    pass
print(count, flush=True)
"""

_WIDEN_AFFINITY = r"""
import os, sys, time
os.sched_setaffinity(0, {0, 1})
print(sorted(os.sched_getaffinity(0)), flush=True)
seen = set()
end = time.monotonic() + 0.5
while time.monotonic() < end:
    seen.add(int(open("/proc/self/stat").read().rpartition(")")[2].split()[36]))
print(sorted(seen), flush=True)
sys.stdin.read()
"""


def _hierarchies(kind: str) -> list[Hierarchy]:
    found = parse_hierarchies(Path("/proc/self/mountinfo").read_text(), Path("/proc/self/cgroup").read_text())
    return [hierarchy for hierarchy in found if kind == "auto" or hierarchy.version == 1]


@pytest.fixture(scope="module", params=["auto", "v1"])
def run(request: pytest.FixtureRequest) -> Iterator[CgroupRun]:
    run = CgroupRun.open(_hierarchies(request.param))
    yield run
    run.close()
    assert not [path for path in run.paths if os.path.exists(path)]


def need(run: CgroupRun, *features: str) -> None:
    """Skip (or, with CI=true, fail) unless the run has every one of ``features``."""
    absent = [feature for feature in features if feature not in run.features]
    if absent:
        why = "; ".join(line for line in run.missing if line.split(":")[0] in (*absent, "cgroups")) or str(absent)
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}, and CI requires it")
        pytest.skip(why)


Start = Callable[..., tuple[BotCgroup, "subprocess.Popen[str]"]]


@pytest.fixture
def start(run: CgroupRun) -> Iterator[Start]:
    """Start a Python script in a new bot group; every bot is removed (and checked gone) after the test."""
    started: list[tuple[BotCgroup, subprocess.Popen[str]]] = []

    def start(script: str, limits: CgroupLimits | None = None) -> tuple[BotCgroup, subprocess.Popen[str]]:
        bot = run.create(f"test-{next(_names)}", limits or CgroupLimits(memory_bytes=256 * _MIB, pids=64))
        proc = subprocess.Popen([*bot.join_prefix(), sys.executable, "-c", script], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, start_new_session=True)
        started.append((bot, proc))
        return bot, proc

    yield start
    for bot, proc in started:
        assert bot.remove()
        assert not [path for path in bot.paths if os.path.exists(path)]
        assert proc.wait(timeout=5) is not None
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def _line(proc: subprocess.Popen[str], timeout: float = 10.0) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the bot said nothing"
    return proc.stdout.readline().strip()


def _ticks(pid: int) -> int | None:
    fields = stat_fields(pid)
    return int(fields[11]) + int(fields[12]) if fields else None


# -------------------------------------------------------------------------------------------- joining


def test_join_prefix_puts_the_process_in_every_group_before_it_runs(run: CgroupRun) -> None:
    need(run, "freeze")
    bot = run.create(f"test-{next(_names)}", CgroupLimits(memory_bytes=64 * _MIB, pids=8, cpus="0"))
    try:
        seen = subprocess.run([*bot.join_prefix(), "cat", "/proc/self/cgroup"], capture_output=True, text=True,
                              check=True).stdout
        owns = {hierarchy.own for hierarchy in parse_hierarchies(Path("/proc/self/mountinfo").read_text(), seen)}
        assert len(bot.paths) == len(run.paths) >= 1
        assert set(bot.paths) <= owns
    finally:
        assert bot.remove()


def test_join_prefix_exits_125_without_running_the_command_if_a_group_cannot_be_joined(
        run: CgroupRun, tmp_path: Path) -> None:
    need(run, "freeze")
    bot = run.create(f"test-{next(_names)}", CgroupLimits())
    try:
        prefix = bot.join_prefix()
        broken = [*prefix[:-1], str(tmp_path / "gone" / "cgroup.procs"), "--"]
        marker = tmp_path / "ran"
        done = subprocess.run([*broken, "touch", str(marker)], capture_output=True)
        assert done.returncode == JOIN_FAILED
        assert not marker.exists()
        ok = subprocess.run([*prefix, "sh", "-c", 'printf "%s|" "$@"', "sh", "--", "a b", ""], capture_output=True,
                            text=True)
        assert ok.stdout == "--|a b||"  # the argv after the prefix arrives untouched, its own "--" included
    finally:
        assert bot.remove()


# -------------------------------------------------------------------------------------------- freeze, kill


def test_freeze_stops_a_forking_tree_and_thaw_lets_it_run(run: CgroupRun, start: Start) -> None:
    need(run, "freeze", "cpu")
    bot, proc = start(_STORM)
    assert _line(proc) == "ready"
    assert eventually(lambda: len(bot.pids()) >= 3)
    assert bot.freeze()
    pids = bot.pids()
    ticks = {pid: _ticks(pid) for pid in pids}
    before = bot.cpu_ns()
    assert eventually(lambda: False, timeout=0.3) is False  # 0.3 s frozen
    assert bot.cpu_ns() == before > 0
    assert bot.pids() == pids  # nobody forked
    for pid in pids:
        fields = stat_fields(pid)
        assert fields is not None and fields[0] in (b"S", b"D"), (pid, fields)
        assert _ticks(pid) == ticks[pid]
    bot.thaw()
    assert eventually(lambda: bot.cpu_ns() > before + 100_000_000)


def test_freeze_returns_true_for_a_group_that_emptied(run: CgroupRun, start: Start) -> None:
    need(run, "freeze")
    bot, proc = start("pass")
    assert proc.wait(timeout=10) == 0
    assert bot.freeze()
    bot.thaw()


def test_kill_ends_every_process_at_once_even_one_that_left_the_session(run: CgroupRun, start: Start) -> None:
    need(run, "kill")
    bot, proc = start(_ESCAPEES)
    assert _line(proc) == "ready"
    assert eventually(lambda: len(bot.pids()) == 4)
    pids = bot.pids()
    sessions = {int(fields[3]) for pid in pids if (fields := stat_fields(pid))}
    assert len(sessions) == 2  # one of them called setsid()
    assert bot.kill()
    assert all(gone(pid) for pid in pids)
    assert bot.pids() == [] and not bot.is_populated()
    assert proc.wait(timeout=5) == -signal.SIGKILL


def test_kill_ends_a_fork_storm(run: CgroupRun, start: Start) -> None:
    need(run, "kill")
    bot, proc = start(_STORM)
    assert _line(proc) == "ready"
    assert eventually(lambda: len(bot.pids()) >= 3)
    assert bot.kill()
    assert bot.pids() == [] and not bot.is_populated()
    assert proc.wait(timeout=5) == -signal.SIGKILL


# -------------------------------------------------------------------------------------------- limits


def test_a_child_past_the_memory_limit_is_oom_killed_and_its_parent_lives_on(run: CgroupRun, start: Start) -> None:
    need(run, "memory")
    bot, proc = start(_OOM, CgroupLimits(memory_bytes=64 * _MIB, pids=16))
    assert _line(proc) == f"child -{signal.SIGKILL}"  # the OOM killer picks the biggest process: the child
    assert _line(proc) == "parent alive"
    assert proc.wait(timeout=10) == 0
    assert bot.oom_kills() >= 1


def test_fork_fails_beyond_the_pids_limit(run: CgroupRun, start: Start) -> None:
    need(run, "pids")
    bot, proc = start(_FORK_UNTIL_REFUSED, CgroupLimits(pids=8))
    assert _line(proc) == "7"  # 8 pids: the script and 7 children
    assert proc.wait(timeout=10) == 0
    assert len(bot.pids()) == 7


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores")
def test_cpuset_holds_the_tree_to_its_core_whatever_affinity_it_asks(run: CgroupRun, start: Start) -> None:
    need(run, "cpuset")
    _, proc = start(_WIDEN_AFFINITY, CgroupLimits(cpus="0"))
    assert _line(proc) == "[0]"  # sched_setaffinity({0, 1}) succeeded, but the kernel kept core 0 only
    status = Path(f"/proc/{proc.pid}/status").read_text()
    assert "Cpus_allowed_list:\t0\n" in status
    assert _line(proc) == "[0]"  # the cores it ran on while spinning for 0.5 s
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0


# -------------------------------------------------------------------------------------------- removal


def test_remove_kills_the_tree_leaves_no_directory_and_the_methods_stay_harmless(
        run: CgroupRun, start: Start) -> None:
    need(run, "kill")
    bot, proc = start("import time; time.sleep(600)")
    assert eventually(lambda: bot.is_populated(), timeout=5)
    assert bot.remove()
    assert proc.wait(timeout=5) == -signal.SIGKILL
    assert not [path for path in bot.paths if os.path.exists(path)]
    assert bot.remove()
    assert (bot.freeze(0.1), bot.pids(), bot.cpu_ns(), bot.oom_kills(), bot.is_populated()) == (False, [], 0, 0, False)
    bot.thaw()
    assert bot.kill(0.1)


def _fake_run_group(run_dir: str, name: str) -> str:
    """A run group ``name`` beside ``run_dir``, with a bot group in it that can take a process."""
    parent = os.path.dirname(run_dir)
    group = os.path.join(parent, name, "bot")
    os.makedirs(group)
    if not os.path.exists(os.path.join(parent, "cgroup.controllers")):  # v1: cpuset groups need cpus and mems
        for file in ("cpuset.cpus", "cpuset.mems"):
            if os.path.exists(os.path.join(parent, file)):
                value = Path(parent, file).read_text().strip()
                Path(parent, name, file).write_text(value)
                Path(group, file).write_text(value)
    return group


def test_open_kills_and_removes_groups_of_dead_referees_and_only_those(run: CgroupRun) -> None:
    need(run, "kill")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = {f"durak-{dead.pid}.12345", f"durak-{os.getpid()}.1"}  # a dead pid, and a live pid of another start
    sleepers: list[subprocess.Popen[bytes]] = []
    try:
        for name in stale:
            sleeper = subprocess.Popen(["sleep", "600"])
            sleepers.append(sleeper)
            for run_dir in run.paths:
                Path(_fake_run_group(run_dir, name), "cgroup.procs").write_text(str(sleeper.pid))
        CgroupRun.open(_hierarchies("auto")).close()
        assert [sleeper.wait(timeout=5) for sleeper in sleepers] == [-signal.SIGKILL] * len(stale)
        for run_dir in run.paths:
            assert os.path.isdir(run_dir)  # the live referee's (this process's) run is kept
            assert not [name for name in stale if os.path.exists(os.path.join(os.path.dirname(run_dir), name))]
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()
        for run_dir in run.paths:
            for name in stale:
                for group in ("bot", ""):
                    path = os.path.join(os.path.dirname(run_dir), name, group).rstrip("/")
                    if os.path.isdir(path):
                        os.rmdir(path)


# -------------------------------------------------------------------------------------------- without groups


def test_a_run_without_hierarchies_has_no_features_and_bots_that_do_nothing() -> None:
    run = CgroupRun.open([])
    assert run.features == frozenset() and run.paths == ()
    assert run.missing == ("cgroups: no cgroup hierarchy is mounted where the referee can see it",)
    bot = run.create("bot", CgroupLimits(memory_bytes=_MIB))
    assert bot.join_prefix() == [] and not bot.can("freeze")
    assert (bot.freeze(), bot.kill(), bot.cpu_ns(), bot.oom_kills(), bot.pids()) == (False, True, 0, 0, [])
    assert bot.remove()
    run.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become an unprivileged user")
def test_an_unprivileged_referee_without_delegation_gets_no_features_and_one_reason() -> None:
    code = ("from referee.bots.sandbox.cgroups import CgroupRun; r = CgroupRun.open(); "
            "print(sorted(r.features), r.missing)")
    done = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", sys.executable, "-c",
                           code], capture_output=True, text=True, cwd=Path(__file__).parents[1], timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] ('cgroups: not root and no delegated group',)"


def test_names_and_limits_are_checked() -> None:
    with pytest.raises(ValueError):
        CgroupLimits(memory_bytes=0)
    with pytest.raises(ValueError):
        CgroupLimits(cpus="0;1")
    assert CgroupLimits(cpus="0,2-3").cpus == "0,2-3"
    run = CgroupRun.open([])
    for name in ("", "..", "a/b", ".hidden"):
        with pytest.raises(ValueError):
            run.create(name, CgroupLimits())
    run.create("taken", CgroupLimits())
    with pytest.raises(ValueError):
        run.create("taken", CgroupLimits())
    run.close()


# -------------------------------------------------------------------------------------------- discovery


_HYBRID_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""


def test_hierarchies_are_found_from_mountinfo_and_proc_cgroup() -> None:
    found = parse_hierarchies(_HYBRID_MOUNTS, "4:memory:/process_api/ab\n2:cpu,cpuacct:/\n1:name=systemd:/\n0::/\n")
    assert found == [
        Hierarchy(2, frozenset(), "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified"),
        Hierarchy(1, frozenset({"memory"}), "/sys/fs/cgroup/memory/process_api/ab", "/sys/fs/cgroup/memory"),
        Hierarchy(1, frozenset({"cpu", "cpuacct"}), "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu,cpuacct"),
        Hierarchy(1, frozenset({"name=systemd"}), "/sys/fs/cgroup/systemd", "/sys/fs/cgroup/systemd"),
    ]


def test_a_v2_mount_of_a_subtree_with_an_escaped_path_is_followed_and_outside_it_nothing() -> None:
    mounts = "30 23 0:26 /docker/c1 /run/my\\040cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n"
    assert parse_hierarchies(mounts, "0::/docker/c1/bots\n") == [
        Hierarchy(2, frozenset(), "/run/my cgroup/bots", "/run/my cgroup")]
    assert parse_hierarchies(mounts, "0::/docker/c1\n") == [
        Hierarchy(2, frozenset(), "/run/my cgroup", "/run/my cgroup")]
    assert parse_hierarchies(mounts, "0::/docker/c10/x\n") == []
    assert parse_hierarchies("", "0::/\n") == []
