"""A bot's PID namespace seen from outside: its members, their state, and signals to each of them.

Pausing and stopping reach every process of a bot through it, also those that left its process group.
"""

from __future__ import annotations

import os
import signal

_KEPT_STAT_FILES = 4  # per bot: its first processes' stat files stay open between pauses


class PidNamespace:
    """The processes of a bot's PID namespace, listed through the namespace's own /proc.

    The bot's /proc is reached as ``/proc/<pid>/root/proc`` of a process in the bot's mount namespace, and is
    trusted only once its pid 1 is in the expected PID namespace. Processes are signalled through fds of their
    /proc directories (``pidfd_send_signal``), which cannot hit a recycled pid.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._stat_fds: dict[int, int] = {}  # open stat files of a few processes: a pause reads them each time

    @classmethod
    def open(cls, holder: int, namespace_link: str) -> PidNamespace | None:
        """The namespace whose /proc is mounted in ``holder``'s mount namespace, if it is the one that
        ``namespace_link`` (a ``/proc/<pid>/ns/pid...`` link) names; None if not (yet)."""
        try:
            expected = os.readlink(namespace_link)
            fd = os.open(f"/proc/{holder}/root/proc", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            if os.readlink("1/ns/pid", dir_fd=fd) == expected != os.readlink("/proc/self/ns/pid"):
                return cls(fd)
        except OSError:
            pass
        os.close(fd)
        return None

    def pids(self) -> list[int]:
        """The pids (as the namespace numbers them) of its processes, threads left out."""
        try:
            pids = [int(name) for name in os.listdir(self.fd) if name.isdigit()]
        except OSError:
            return []
        for pid in [pid for pid in self._stat_fds if pid not in pids]:
            os.close(self._stat_fds.pop(pid))
        return pids

    def stat(self, pid: int) -> list[bytes] | None:
        """/proc/<pid>/stat from the state on (state, ppid, pgrp...; pgrp 0 for a group led outside)."""
        for _ in range(2):
            fd = self._stat_fds.get(pid)
            if fd is None:
                try:
                    fd = os.open(f"{pid}/stat", os.O_RDONLY | os.O_CLOEXEC, dir_fd=self.fd)
                except OSError:
                    return None
                if len(self._stat_fds) < _KEPT_STAT_FILES:
                    self._stat_fds[pid] = fd
            try:
                data = os.pread(fd, 4096, 0)
            except OSError:
                data = b""  # that process is gone; another may have its pid now: look again
            if self._stat_fds.get(pid) != fd:
                os.close(fd)
            elif not data:
                os.close(self._stat_fds.pop(pid))
                continue
            return data.rpartition(b")")[2].split() or None
        return None

    def send(self, pid: int, signum: int) -> None:
        """Signal one process of the namespace; a process already gone is no error."""
        try:
            fd = os.open(str(pid), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=self.fd)
        except OSError:
            return
        try:
            signal.pidfd_send_signal(fd, signum)
        except OSError:
            pass
        finally:
            os.close(fd)

    def close(self) -> None:
        for fd in self._stat_fds.values():
            os.close(fd)
        self._stat_fds.clear()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


