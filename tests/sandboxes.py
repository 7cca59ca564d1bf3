"""Helpers for tests that start bots under an isolation level: the levels, who may run which Python, and
questions to the probe bot (tests/procbots/probe.py). Their fixtures are in conftest.py."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import pytest
from proctools import all_pids, gone

from referee.bots import BotProcess
from referee.bots.sandbox.isolation import Isolation, SandboxUnavailable, pid_namespace_options, probe_bwrap
from referee.bots.sandbox.uids import LEASE_DIRS, NOBODY

BOTS = Path(__file__).parent / "procbots"
ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = os.geteuid() == 0
PROCESS, BWRAP = Isolation("process"), Isolation("bwrap")
LEASES = LEASE_DIRS[0]


def leases_held_here() -> set[str]:
    """The uid leases this process holds (lock files it has open): the lease folder is the machine's, and
    other processes (another xdist worker, another referee) take and give back leases of their own meanwhile."""
    held = set()
    for fd in os.listdir("/proc/self/fd"):
        with suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(f"{LEASES}/"):
                held.add(os.path.basename(target).removesuffix(" (deleted)"))
    return held


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


def cgroup_features() -> frozenset[str]:
    """The control-group features bots get here (referee.bots.sandbox.cgroups)."""
    from referee.bots.launcher import cgroup_run

    return cgroup_run().features


def require_cgroups(*features: str) -> None:
    """Skip, saying why, where this machine lacks a control-group feature; with CI=true fail instead: CI runs
    as root on machines that have them all, so a missing one is a regression, not an excuse."""
    missing = [feature for feature in features if feature not in cgroup_features()]
    if missing:
        why = f"no control-group {', '.join(missing)} here"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}, and CI requires them")
        pytest.skip(why)


def cgroup_file(process: BotProcess, *names: str) -> str:
    """The first of the files ``names`` found in the bot's control groups (v1 and v2 name them apart)."""
    cgroup = process.launched.cgroup
    assert cgroup is not None, "the bot has no control groups"
    for name in names:
        for folder in cgroup.paths:
            with suppress(FileNotFoundError):
                return Path(folder, name).read_text().strip()
    raise FileNotFoundError(f"none of {names} in {cgroup.paths}")
