"""Helpers for tests that check processes: who is alive, whose child, which group (from /proc)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing import resource_tracker
from pathlib import Path


def stat_fields(pid: int) -> list[bytes] | None:
    """/proc/<pid>/stat from the state on (state, ppid, pgrp, ...), or None once the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def all_pids() -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def gone(pid: int) -> bool:
    """Whether the process is dead: absent, or a zombie (orphans may never be reaped: pid 1 here does not)."""
    fields = stat_fields(pid)
    return fields is None or fields[0] == b"Z"


def children() -> list[int]:
    """This test process's children, zombies included, less multiprocessing's resource tracker: Dask's
    LocalCluster (tests/test_cluster.py) starts it, and it lives as long as this process."""
    me = str(os.getpid()).encode()
    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
    return [pid for pid in all_pids() if (fields := stat_fields(pid)) and fields[1] == me and pid != tracker]


def group_gone(pgid: int) -> bool:
    """Whether every process of the group is dead."""
    return all(gone(pid) for pid in all_pids() if (fields := stat_fields(pid)) and int(fields[2]) == pgid)


def eventually(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Whether the condition holds within the timeout: SIGKILL takes effect asynchronously.

    The default is generous, for a loaded machine; a caller that expects False passes a short timeout.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def start_durak(command: list[str]) -> subprocess.Popen[str]:
    """A referee command in the background, its output piped; with the faulthandler on, so that
    :func:`stop_with` can show where a stop hangs."""
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONFAULTHANDLER": "1"})


def stop_with(run: subprocess.Popen[str], signum: int, timeout: float = 120.0) -> str:
    """Send ``signum`` to a process of :func:`start_durak` and wait for it to exit; its stderr. One still running
    after ``timeout`` gets SIGABRT (its faulthandler prints every thread's stack), and the test fails with it."""
    run.send_signal(signum)
    try:
        return run.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        run.send_signal(signal.SIGABRT)
        stacks = run.communicate(timeout=30)[1]
        raise AssertionError(f"still running {timeout:.0f} s after {signal.Signals(signum).name}:\n{stacks}") from None
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()


def open_fds() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


@contextmanager
def no_leaks(groups: Sequence[int] = (), *, reap_within: float = 5.0) -> Iterator[None]:
    """On leaving: every child of this process reaped within ``reap_within`` seconds (0: already), every
    process group in ``groups`` dead, and exactly the file descriptors open on entering still open."""
    fds = open_fds()
    yield
    assert eventually(lambda: children() == [], reap_within), "a bot was not reaped"
    for pgid in groups:
        assert eventually(lambda pgid=pgid: group_gone(pgid)), f"process group {pgid} survived"
    assert open_fds() == fds, "an fd leaked"
