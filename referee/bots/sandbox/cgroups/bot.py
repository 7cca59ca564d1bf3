"""The control groups of one bot process tree: one group per hierarchy the run uses, and for each feature the one
that serves it, whatever its cgroup version (:class:`~.group.ControlGroup`)."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from referee.bots.sandbox.cgroupfs import REMOVE_TIMEOUT, kill_members, members, remove_groups
from referee.bots.sandbox.cgroups.group import ControlGroup

LOGGER = logging.getLogger("durak")

#: Exit status of ``join_prefix`` when the bot's process could not join one of its groups.
JOIN_FAILED = 125

# Runs on the bot's side: `echo 0` moves the writing process itself (also from inside a PID namespace); only
# shell builtins run before the exec, so the bot's first instruction already runs in every group.
_JOIN_SCRIPT = (f'for f do case $f in --) break;; esac; echo 0 > "$f" || exit {JOIN_FAILED}; shift; done; '
                'shift; exec "$@"')


class BotCgroup:
    """The groups of one bot process tree, one per hierarchy the run uses. Nothing the bot does (exiting,
    forking a storm) makes a method raise: a group that cannot be read counts as empty."""

    def __init__(self, name: str, groups: Sequence[ControlGroup], served: Mapping[str, ControlGroup],
                 forget: Callable[[BotCgroup], None]) -> None:
        self.name = name
        self._groups = tuple(groups)  # one per hierarchy (v2 first)
        self._at = dict(served)  # feature -> the group that serves it
        self._forget = forget
        self._removed = False
        self._aside: ControlGroup | None = None  # the group of the wrappers moved out of the frozen one

    @property
    def features(self) -> frozenset[str]:
        return frozenset(self._at)

    def can(self, feature: str) -> bool:
        """Whether the bot's groups serve ``feature`` (one of ``FEATURES``)."""
        return feature in self._at

    @property
    def paths(self) -> tuple[str, ...]:
        """The bot's group directories, one per hierarchy."""
        return tuple(group.path for group in self._groups)

    def shown(self) -> tuple[tuple[str, str], ...]:
        """(the bot's group, its hierarchy's mount point) for each of its groups whose mount is known: what a
        sandbox binds read-only, each group at its mount point, so that a runtime inside (the JVM, .NET, Node)
        reads its own memory cap and cores where it looks. The sandbox's cgroup namespace is rooted at these
        groups (bwrap unshares it once the launcher's first wrapper has joined them), so ``/proc/self/cgroup``
        and ``/proc/self/mountinfo`` inside both say ``/``: the bot sees its own groups, never the machine's."""
        return tuple((group.path, group.mount) for group in self._groups if group.mount)

    @property
    def frozen(self) -> str | None:
        """The group a pause freezes (None without a freezer)."""
        group = self._at.get("freeze")
        return group.path if group is not None else None

    @property
    def aside(self) -> str | None:
        """The group of the bot's wrappers once :meth:`set_aside` moved them out of the frozen one."""
        return self._aside.path if self._aside is not None else None

    def join_prefix(self) -> list[str]:
        """An argv prefix that moves its own process into every group of the bot, then execs the rest of the
        argv; it exits with ``JOIN_FAILED`` (125) if a group cannot be joined. Empty without groups."""
        if not self._groups:
            return []
        return ["/bin/sh", "-c", _JOIN_SCRIPT, "sh", *(group.file("cgroup.procs") for group in self._groups), "--"]

    def freeze(self, timeout: float = 2.0) -> bool:
        """Freeze every process of the bot; True once the kernel reports the group frozen, False if it does
        not within ``timeout`` (or the run has no freezer)."""
        return self.start_freeze() and self.wait_frozen(timeout)

    def start_freeze(self) -> bool:
        """Ask the kernel to freeze every process of the bot, without waiting for it to be done (each task
        stops on its way back to user space, within microseconds); False if the request could not be made."""
        group = self._at.get("freeze")
        return group is not None and group.start_freeze()

    def wait_frozen(self, timeout: float) -> bool:
        """True once the kernel reports the group frozen (at once if it already is), False if it does not
        within ``timeout``."""
        group = self._at.get("freeze")
        return group is not None and group.wait_frozen(timeout)

    def set_aside(self, wrappers: Iterable[int]) -> bool:
        """Move the bot's wrappers (bwrap's monitor and its PID namespace's init, which fork nothing once the bot
        runs) out of the group that is frozen, into a sibling group of their own: a pause then stops, and a resume
        wakes, only the bot's own processes. Call it only once the bot runs in the group: a wrapper moved before
        it forked the bot would take the bot along. The kill and the limits still reach every process of the
        bot, which stays in its groups. False if they could not be moved (then they are frozen with the bot)."""
        frozen = self._at.get("freeze")
        if frozen is None or self._removed:
            return False
        aside = frozen.sibling(os.path.basename(frozen.path) + ".wrappers")
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(aside.path, 0o755)
            self._aside = aside
            for pid in wrappers:
                aside.put("cgroup.procs", pid)
        except OSError as error:
            LOGGER.debug("cgroups: cannot set the wrappers of bot %s aside: %s", self.name, error.strerror)
            return False
        return True

    def thaw(self) -> None:
        """Let every process of the bot run again, all at once."""
        group = self._at.get("freeze")
        if group is not None:
            group.thaw()

    def kill(self, timeout: float = REMOVE_TIMEOUT) -> bool:
        """SIGKILL every process of the bot (v2: cgroup.kill; v1: while frozen, so that none forks meanwhile);
        True once none is left, False if some still are after ``timeout``."""
        group = self._at.get("kill")
        done = group.kill_at_once(timeout) if group is not None else None
        if done is not None:
            return done
        deadline = time.monotonic() + timeout
        while True:
            self.freeze(timeout=min(0.2, timeout))  # if not frozen in time, the signals still go
            signalled = sum(kill_members(group.path) for group in self._groups)
            self.thaw()  # a frozen process acts on SIGKILL once thawed
            if not signalled and not self.is_populated():
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)

    def pids(self) -> list[int]:
        """The bot's processes (pids as the referee sees them)."""
        for group in self._groups:
            if os.path.isdir(group.path):
                return members(group.path)
        return []

    def is_populated(self) -> bool:
        """Whether any process of the bot is alive (zombies do not count)."""
        group = self._at.get("kill") or self._at.get("freeze")
        populated = group.populated() if group is not None else None
        return populated if populated is not None else bool(self.pids())

    def oom_kills(self) -> int:
        """How many of the bot's processes the kernel's OOM killer killed at the memory limit."""
        group = self._at.get("memory")
        return group.oom_kills() if group is not None else 0

    def forks_refused(self) -> int:
        """How many forks of the bot's tree the kernel refused at its pids cap (a fork bomb stopped)."""
        group = self._at.get("pids")
        return group.forks_refused() if group is not None else 0

    def cpu_ns(self) -> int:
        """CPU time used by the bot's processes, dead ones included, in nanoseconds; 0 if unknown."""
        group = self._at.get("cpu")
        return group.cpu_ns() if group is not None else 0

    def remove(self, timeout: float = REMOVE_TIMEOUT) -> bool:
        """Kill the bot's processes, wait for them (at most ``timeout``) and remove its groups; True if all are
        gone. Never raises: what is left is logged and left to the next run's sweep."""
        if self._removed:
            return True
        try:
            deadline = time.monotonic() + timeout
            if not self.kill(timeout):
                LOGGER.warning("cgroups: processes of bot %s outlived SIGKILL for %.1f s", self.name, timeout)
            for group in self._groups:
                group.close()
            groups = [*self._groups, *([self._aside] if self._aside is not None else [])]
            left = [group.path for group in groups if not remove_groups(group.path, deadline)]
        except Exception as error:  # a bug here must not end the game that cleans up
            LOGGER.warning("cgroups: removing the groups of bot %s failed: %r", self.name, error)
            return False
        self._removed = not left
        if left:
            LOGGER.warning("cgroups: could not remove %s; the next run's sweep will", ", ".join(left))
        else:
            self._forget(self)
        return not left
