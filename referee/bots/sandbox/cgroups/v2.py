"""cgroup v2 (the unified hierarchy): freeze through cgroup.freeze and cgroup.events, kill through cgroup.kill, CPU
time from cpu.stat, and the memory, pids and cpuset controllers where the referee's group may delegate them."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import select
import time
from collections.abc import Iterable

from referee.bots.sandbox.cgroupfs import Hierarchy, keyed, read_text, rmdir, write_ok, write_text
from referee.bots.sandbox.cgroups.group import CgroupLimits, ControlGroup

#: Features served by core files of every v2 group, with no controller to enable.
CORE_FILES = {"freeze": "cgroup.freeze", "kill": "cgroup.kill", "cpu": "cpu.stat"}
#: Features served by a controller that the referee's group must delegate to the bots' groups.
CONTROLLERS = {"memory": "memory", "pids": "pids", "cpuset": "cpuset"}

# The wait for a v2 event before poll(), in seconds: 0 is sched_yield() (to a bot that shares our core).
_SHORT_PAUSES = (0.0, 0.0, 0.0, 0.0, 20e-6, 40e-6, 80e-6, 160e-6, 320e-6, 640e-6)


class V2Group(ControlGroup):
    """A group in the cgroup v2 hierarchy."""

    version = 2

    def limit(self, features: Iterable[str], limits: CgroupLimits) -> None:
        for feature in features:
            if feature == "memory" and limits.memory_bytes is not None:
                self.put("memory.max", limits.memory_bytes)
                if self.has("memory.swap.max"):
                    self.put("memory.swap.max", 0)
            elif feature == "pids" and limits.pids is not None:
                self.put("pids.max", limits.pids)
            elif feature == "cpuset" and limits.cpus is not None:
                self.put("cpuset.cpus", limits.cpus)

    def start_freeze(self) -> bool:
        return self._pwrite("cgroup.freeze", b"1")

    def wait_frozen(self, timeout: float) -> bool:
        events = self._fd("cgroup.events", os.O_RDONLY)
        return events is not None and wait_event_fd(events, "frozen", 1, timeout)

    def thaw(self) -> None:
        self._pwrite("cgroup.freeze", b"0")

    def kill_at_once(self, timeout: float) -> bool | None:
        # cgroup.kill came with Linux 5.14; from 5.2 a v2 group freezes but cannot be killed whole.
        if not write_ok(self.file("cgroup.kill"), "1"):
            return None
        return wait_event(self.file("cgroup.events"), "populated", 0, timeout)

    def populated(self) -> bool | None:
        populated = keyed(read_text(self.file("cgroup.events")), "populated")
        return None if populated is None else populated == 1

    def oom_kills(self) -> int:
        return self._pread_keyed("memory.events", "oom_kill") or 0

    def cpu_ns(self) -> int:
        return (self._pread_keyed("cpu.stat", "usage_usec") or 0) * 1000  # kept open: read at every move


def run_group(hierarchy: Hierarchy, name: str, want: dict[str, list[str]]) -> tuple[V2Group, frozenset[str]]:
    """The run's group ``name`` in the v2 hierarchy, inside the referee's own group there, and the features it
    serves (none: the group is removed again); why a controller could not be had goes to ``want``. Raises
    OSError if the group cannot be made."""
    own = hierarchy.own
    run = V2Group(os.path.join(own, name), mount=hierarchy.mount)
    with contextlib.suppress(FileExistsError):
        os.mkdir(run.path, 0o755)
    served = {feature for feature, file in CORE_FILES.items() if run.has(file)}
    offered = _words(os.path.join(own, "cgroup.controllers"))
    for feature, controller in CONTROLLERS.items():
        if controller not in offered:
            continue
        problem = _enable(own, run.path, controller)
        if problem is None:
            served.add(feature)
        else:
            want[feature].append(problem)
    if "freeze" in served:  # Linux 5.2 to 5.13, no cgroup.kill: SIGKILL to each while frozen
        served.add("kill")
    if not served:
        rmdir(run.path)
    return run, frozenset(served)


def _words(path: str) -> set[str]:
    return set((read_text(path) or "").split())


def _enable(own: str, run_dir: str, controller: str) -> str | None:
    """Make a v2 controller available to the bots' groups (children of ``run_dir``); None, or why not.

    The referee's own group may delegate a controller only while it holds no process, unless it is the root:
    on most systems the referee sits in a leaf of its own, and then this fails with EBUSY."""
    for parent in (own, run_dir):
        if parent == own and controller in _words(os.path.join(own, "cgroup.subtree_control")):
            continue
        try:
            write_text(os.path.join(parent, "cgroup.subtree_control"), f"+{controller}")
        except OSError as error:
            why = ": the group has processes and is not the root" if error.errno == errno.EBUSY else ""
            return f"cannot enable the v2 {controller} controller in {parent} ({error.strerror}{why})"
    return None


def wait_event(events: str, key: str, value: int, timeout: float) -> bool:
    """Wait until the v2 ``cgroup.events`` file says ``key value``; False after ``timeout`` or if it is gone.

    First a few reads between sched_yield() and short sleeps: they let a bot that shares the referee's core
    run into the freezer, and the kernel's change notification may lag by up to 10 ms (it sends at most one per
    10 ms per file). Then poll() for it (POLLPRI), which flags every change after our last read of the file."""
    try:
        fd = os.open(events, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return wait_event_fd(fd, key, value, timeout)
    finally:
        os.close(fd)


def wait_event_fd(fd: int, key: str, value: int, timeout: float) -> bool:
    """:func:`wait_event` on an open ``cgroup.events`` (a bot's, kept open: a pause then opens nothing)."""
    needle = f"\n{key} {value}\n".encode()
    try:
        poller: select.poll | None = None
        deadline = time.monotonic() + timeout
        for pause in itertools.chain(_SHORT_PAUSES, itertools.repeat(None)):
            if needle in b"\n" + os.pread(fd, 4096, 0):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if pause == 0:
                os.sched_yield()
            elif pause is not None:
                time.sleep(min(pause, left))
            else:
                if poller is None:
                    poller = select.poll()
                    poller.register(fd, select.POLLPRI)
                poller.poll(left * 1000)
        raise AssertionError("unreachable")
    except OSError:
        return False
