"""cgroup v1: one hierarchy per controller (or a few mounted together); freeze through the freezer's
freezer.state, memory, pids and cpuset limits through their controllers, CPU time from cpuacct."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterable

from referee.bots.sandbox.cgroupfs import Hierarchy, read_text, write_ok
from referee.bots.sandbox.cgroups.group import CgroupLimits, ControlGroup

#: The controller that serves each feature. "kill" is SIGKILL to every member of a group frozen by the freezer,
#: so that none can fork meanwhile.
CONTROLLERS = {"freeze": "freezer", "kill": "freezer", "memory": "memory", "pids": "pids", "cpuset": "cpuset",
               "cpu": "cpuacct"}

_SPINS = 20  # freezer.state reads before the wait starts to sleep (v1 has no change notification)


class V1Group(ControlGroup):
    """A group in a cgroup v1 hierarchy with ``controllers`` bound to it."""

    version = 1

    def __init__(self, path: str, controllers: frozenset[str], *, mount: str = "") -> None:
        super().__init__(path, mount=mount)
        self.controllers = controllers

    def _prepare(self, parent: ControlGroup) -> None:
        if "cpuset" in self.controllers:  # a v1 cpuset group takes no process until both are set
            for file in ("cpuset.cpus", "cpuset.mems"):
                self.put(file, (read_text(parent.file(file)) or "").strip())

    def limit(self, features: Iterable[str], limits: CgroupLimits) -> None:
        for feature in features:
            if feature == "memory" and limits.memory_bytes is not None:
                self.put("memory.oom_control", 0)  # the OOM killer on, not a bot hanging at the limit (inherited)
                self.put("memory.limit_in_bytes", limits.memory_bytes)
                if self.has("memory.memsw.limit_in_bytes"):  # memory plus swap: no swapping past the limit
                    self.put("memory.memsw.limit_in_bytes", limits.memory_bytes)
            elif feature == "pids" and limits.pids is not None:
                self.put("pids.max", limits.pids)
            elif feature == "cpuset" and limits.cpus is not None:
                self.put("cpuset.cpus", limits.cpus)

    def start_freeze(self) -> bool:
        return write_ok(self.file("freezer.state"), "FROZEN")

    def wait_frozen(self, timeout: float) -> bool:
        """Wait until freezer.state reads FROZEN: a few reads back to back (each read advances the kernel's
        FREEZING to FROZEN), then sleeps growing from 50 µs to 2 ms."""
        deadline = time.monotonic() + timeout
        for attempt in itertools.count():
            state = read_text(self.file("freezer.state"))
            if state is None:
                return False
            if state.strip() == "FROZEN":
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0 if attempt < _SPINS else min(50e-6 * 2 ** (attempt - _SPINS), 2e-3))
        raise AssertionError("unreachable")

    def thaw(self) -> None:
        write_ok(self.file("freezer.state"), "THAWED")

    def kill_at_once(self, timeout: float) -> bool | None:
        return None  # v1 has no cgroup.kill

    def populated(self) -> bool | None:
        return None  # v1 says so only through a release agent

    def oom_kills(self) -> int:
        return self._pread_keyed("memory.oom_control", "oom_kill") or 0

    def cpu_ns(self) -> int:
        fd = self._fd("cpuacct.usage", os.O_RDONLY)  # kept open: read at every move
        try:
            text = os.pread(fd, 64, 0).strip() if fd is not None else b""
        except OSError:
            return 0
        return int(text) if text.isdigit() else 0


def run_group(hierarchy: Hierarchy, name: str) -> V1Group:
    """The run's group ``name`` in a v1 hierarchy, inside the referee's own group there; raises OSError."""
    return V1Group(hierarchy.own, hierarchy.controllers, mount=hierarchy.mount).child(name, exist_ok=True)
