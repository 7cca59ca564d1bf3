"""A started bot as its launcher set it up: pausing, signalling, CPU time and cleanup reach its whole tree.

With control groups (:mod:`referee.bots.sandbox.cgroups`) the kernel freezes, kills and counts the bot's tree as one;
without them, signals go to its process group and, under a PID namespace, to every process inside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from typing import Literal

from referee.bots.errors import BotOutOfMemory, BotTimeout
from referee.bots.sandbox.cgroupfs import members
from referee.bots.sandbox.cgroups import BotCgroup
from referee.bots.sandbox.cleanup import remove_tree
from referee.bots.sandbox.isolation import Isolation
from referee.bots.sandbox.pidns import PidNamespace
from referee.bots.sandbox.uids import UidLease

_CLOCK_TICK = 1.0 / os.sysconf("SC_CLK_TCK")
_STOP_SWEEPS = 16  # rounds of stopping processes that left the group, each catching children forked meanwhile
#: Seconds the kernel may take to report a bot's tree frozen before the bot is judged unpausable.
FREEZE_TIMEOUT = 2.0

Namespace = Literal["none", "unshare", "bwrap"]


@dataclass(frozen=True)
class Confinement:
    """What the launcher set up around a bot, which its pausing, signalling and cleanup must reach."""

    #: The kind of PID namespace the bot got: "none", "unshare" (the bot is its pid 1) or "bwrap"
    #: (bwrap's init is pid 1, the bot its child).
    namespace: Namespace = "none"
    mount_proc: bool = False  # the namespace has its own /proc, where its processes can be listed
    tmpdir: str | None = None  # the bot's TMPDIR on the referee's side (under bwrap /tmp is a private tmpfs)
    lease: UidLease | None = None  # the uid (and gid) the bot runs under, when it is not the referee's
    info_fd: int | None = None  # bwrap's --info-fd: where it tells its init's pid
    cgroup: BotCgroup | None = None  # the bot's control groups: freezing, killing and counting go through them


NO_CONFINEMENT = Confinement()


class LaunchedBot:
    """A started bot: its ``popen`` (the first wrapper, whose pid leads the bot's session and process group)
    and what its isolation set up; ``release()`` it once that process is reaped.

    Under a PID namespace the bot proper is a child of that first process (``unshare``, or bwrap's init).
    """

    def __init__(self, popen: subprocess.Popen[bytes], isolation: Isolation,
                 confinement: Confinement = NO_CONFINEMENT) -> None:
        namespace, lease, cgroup = confinement.namespace, confinement.lease, confinement.cgroup
        self.popen = popen
        self.isolation = isolation
        self.namespace: Namespace = namespace
        self.tmpdir = confinement.tmpdir
        #: The uid (and gid) the bot runs under, when it is not the referee's.
        self.uid = lease.uid if lease is not None else None
        self.cgroup = cgroup
        self._freezes = cgroup is not None and cgroup.can("freeze")
        self._mount_proc = confinement.mount_proc
        self._lease = lease
        self._info_fd, self._info = confinement.info_fd, b""
        self._holder: int | None = popen.pid if namespace == "unshare" else None
        self._view: PidNamespace | None = None
        self._bot_in_namespace: int | None = 1 if namespace == "unshare" else None
        self._stopped: set[int] = set()  # processes that left the group, stopped one by one by the last pause
        self._last_cpu = 0.0
        self._helper = 1 if namespace == "bwrap" else 0  # bwrap's init: in the group for good, not the bot's
        self._released = False
        self._freeze_unconfirmed = False  # paused, and the kernel not yet seen to report the tree frozen
        self._wrappers_aside = namespace != "bwrap"  # True once bwrap's two processes left the frozen group

    @property
    def pid(self) -> int:
        return self.popen.pid

    def pause(self) -> None:
        """Stop every process of the bot. With a freezer this starts the freeze and returns: the kernel stops
        each task within microseconds, and :meth:`resume` checks that it did. Waiting here would cost the
        referee a wait on every decision for what it needs to know only then.

        :raises BotTimeout: the freeze could not be started.
        :raises BotOutOfMemory: a process of the bot was killed for memory since it started.
        """
        if self._freezes:
            assert self.cgroup is not None
            if not self._wrappers_aside:
                self._set_wrappers_aside(self.cgroup)
            if not self.cgroup.start_freeze():
                raise BotTimeout("bot could not be paused: its control group refused the freeze")
            self._freeze_unconfirmed = True
            self.check_memory()
            return
        self.signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused bot run again, every process at once.

        :raises BotTimeout: with a freezer, the tree paused last did not freeze within ``FREEZE_TIMEOUT`` of
            now (it may have run on others' time: it is judged, not waited for).
        """
        if self._freezes:
            assert self.cgroup is not None
            if self._freeze_unconfirmed:
                self._freeze_unconfirmed = False
                if not self.cgroup.wait_frozen(FREEZE_TIMEOUT):
                    raise BotTimeout(f"bot could not be paused: not frozen within {FREEZE_TIMEOUT:g} s")
            self.cgroup.thaw()
            return
        self.signal(signal.SIGCONT)

    def _set_wrappers_aside(self, cgroup: BotCgroup) -> None:
        """Once the bot runs in its group (a process there besides bwrap's two: bwrap's init has forked it), move
        those two out of the group that is frozen, so that each pause and resume stops and wakes one process, not
        three (:meth:`BotCgroup.set_aside`)."""
        init = self._bwrap_child()
        if init is None or cgroup.frozen is None:
            return
        wrappers = {self.popen.pid, init}
        listed = set(members(cgroup.frozen))
        if listed - wrappers:
            self._wrappers_aside = True
            cgroup.set_aside(wrappers & listed)  # listed: still ours, not a reused pid

    def check_memory(self) -> None:
        """:raises BotOutOfMemory: if the kernel killed any process of the bot for memory."""
        if self.cgroup is not None and self.cgroup.can("memory") and (kills := self.cgroup.oom_kills()):
            raise BotOutOfMemory(f"bot exceeded its memory limit ({kills} process{'es' if kills > 1 else ''} "
                                 "killed by the kernel)")

    def signal(self, signum: int) -> None:
        """Signal the bot's process group; under a PID namespace SIGSTOP also stops every process inside that
        left the group (setsid), and SIGCONT resumes those. SIGKILL kills the whole control group when there is
        one (otherwise the namespace dies with the first wrapper).

        SIGTERM goes to the processes inside only, not to the wrappers: a wrapper dying of it would end the bot
        with a signal that the bot itself may have chosen to ignore.
        """
        if signum == signal.SIGTERM and (view := self._namespace()) is not None:
            for pid in view.pids():
                if not (self.namespace == "bwrap" and pid == 1):  # bwrap's init, not the bot
                    view.send(pid, signum)
            return
        if signum == signal.SIGKILL and self.cgroup is not None and self.cgroup.can("kill"):
            self.cgroup.kill()
        if signum == signal.SIGCONT and self._freezes:
            assert self.cgroup is not None
            self.cgroup.thaw()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signum)
        if signum == signal.SIGSTOP:
            self._stop_escapees()
        elif signum == signal.SIGCONT and self._stopped and (view := self._namespace()) is not None:
            for pid in self._stopped:
                view.send(pid, signal.SIGCONT)
            self._stopped.clear()

    def processes(self) -> dict[int, str]:
        """The processes of the bot's PID namespace and their states ("S", "R", "T" for stopped...), by pid
        as the namespace numbers them; empty without a namespace that the referee can see into."""
        view = self._namespace()
        if view is None:
            return {}
        states = {pid: fields[0].decode() for pid in view.pids() if (fields := view.stat(pid))}
        return dict(sorted(states.items()))

    def pid_namespace(self) -> str | None:
        """The bot's PID namespace as its ``/proc/<pid>/ns/pid`` links name it ("pid:[4026532178]"), if seen."""
        view = self._namespace()
        if view is None:
            return None
        try:
            return os.readlink("1/ns/pid", dir_fd=view.fd)
        except OSError:
            return None

    def tree_cpu_ns(self) -> int | None:
        """CPU nanoseconds of the bot's whole tree from its control group (one read of a kept-open file, cheap
        enough for every move), or None where the run has no CPU accounting by group."""
        if self.cgroup is not None and self.cgroup.can("cpu"):
            return self.cgroup.cpu_ns()
        return None

    def cpu_seconds(self) -> float:
        """CPU seconds of the bot: its whole tree's with a control group, else its own threads' while it runs;
        0.0 if it cannot be seen."""
        if self.cgroup is not None and self.cgroup.can("cpu"):
            self._last_cpu = max(self._last_cpu, self.cgroup.cpu_ns() / 1e9)
            return self._last_cpu
        if self.namespace == "none":
            return _cpu_seconds(f"/proc/{self.pid}/stat")
        view = self._namespace()
        bot = self._bot_pid(view) if view is not None else None
        fields = view.stat(bot) if view is not None and bot is not None else None
        if fields:
            self._last_cpu = _cpu_from(fields, children=False)
        return self._last_cpu

    def stopping(self) -> None:
        """Note the bot's CPU time before it is stopped: once it exits, only its wrappers can tell, if at all."""
        if self.namespace != "none" or self.cgroup is not None:
            self.cpu_seconds()

    def final_cpu_seconds(self) -> float:
        """CPU seconds once the first process exited (unreaped): the control group's count, or what the
        wrapper counted of the tree it reaped (unshare does; bwrap's init does not tell), or the last look."""
        if self.cgroup is not None and self.cgroup.can("cpu"):
            return self.cpu_seconds()
        if self.namespace == "none":
            return _cpu_seconds(f"/proc/{self.pid}/stat")
        return max(self._last_cpu, _cpu_seconds(f"/proc/{self.pid}/stat", children=True))

    def exit_code(self, code: int) -> int:
        """The bot's exit code from the first process's: bwrap reports death by signal N as 128 + N."""
        if self.namespace == "bwrap" and 128 < code <= 128 + 64:
            return 128 - code
        return code

    def release(self) -> None:
        """Free what the launch took: the namespace view, control groups, TMPDIR, uid. Never raises; a second
        call does nothing. What cannot be removed is logged and left (stale groups go at the next start)."""
        if self._released:
            return
        self._released = True
        if self._view is not None:
            self._view.close()
        if self._info_fd is not None:
            os.close(self._info_fd)
            self._info_fd = None
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.tmpdir is not None:
            remove_tree(self.tmpdir)
        if self._lease is not None:
            self._lease.release()

    def _stop_escapees(self) -> None:
        view = self._namespace()
        if view is None:
            return
        for _ in range(_STOP_SWEEPS):  # a process stopped on its own may have a fork in flight: sweep again
            escaped = [pid for pid in view.pids() if pid not in self._stopped and pid != self._helper
                       and (fields := view.stat(pid)) and fields[2] != b"0"]
            if not escaped:
                return
            for pid in escaped:
                view.send(pid, signal.SIGSTOP)
            self._stopped.update(escaped)

    def _namespace(self) -> PidNamespace | None:
        """The bot's PID namespace as its /proc shows it, once it is there (None before, or without one)."""
        if self._view is not None or not self._mount_proc or self._released:
            return self._view
        holder = self._holder if self.namespace == "unshare" else self._bwrap_child()
        if holder is None:
            return None
        link = f"/proc/{holder}/ns/" + ("pid_for_children" if self.namespace == "unshare" else "pid")
        self._view = PidNamespace.open(holder, link)
        return self._view

    def _bwrap_child(self) -> int | None:
        """The pid (ours) of bwrap's init, from the JSON bwrap writes to its info fd just after the clone."""
        if self._holder is None and self._info_fd is not None:
            with contextlib.suppress(BlockingIOError):
                while chunk := os.read(self._info_fd, 4096):
                    self._info += chunk
                os.close(self._info_fd)  # end of file: bwrap wrote all it will
                self._info_fd = None
            with contextlib.suppress(ValueError):
                child = json.loads(self._info).get("child-pid")
                self._holder = child if isinstance(child, int) else None
        return self._holder

    def _bot_pid(self, view: PidNamespace) -> int | None:
        if self._bot_in_namespace is None:  # bwrap: the child of its init
            children = [pid for pid in sorted(view.pids()) if (fields := view.stat(pid)) and fields[1] == b"1"]
            self._bot_in_namespace = children[0] if children else None
        return self._bot_in_namespace

    def __repr__(self) -> str:
        return f"<LaunchedBot pid={self.pid} {self.isolation.level} namespace={self.namespace} uid={self.uid}>"


def _cpu_seconds(path: str, children: bool = False) -> float:
    with open(path, "rb") as stat:
        fields = stat.read().rpartition(b")")[2].split()  # the command name before ")" may hold spaces
    return _cpu_from(fields, children)


def _cpu_from(fields: list[bytes], children: bool) -> float:
    ticks = int(fields[11]) + int(fields[12])  # utime and stime, in clock ticks
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime and cstime: the children it waited for
    return ticks * _CLOCK_TICK
