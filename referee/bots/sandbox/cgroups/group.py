"""One bot's group in one cgroup hierarchy, as a type per hierarchy version (:mod:`.v1`, :mod:`.v2`) behind the
interface here: a bot's :class:`~.bot.BotCgroup` combines one per feature, so hybrid machines mix the two."""

from __future__ import annotations

import copy
import logging
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Self

from referee.bots.sandbox.cgroupfs import keyed, read_text, rmdir, write_text

LOGGER = logging.getLogger("durak")

_CPU_LIST = re.compile(r"\d+(-\d+)?(,\d+(-\d+)?)*")


@dataclass(frozen=True)
class CgroupLimits:
    """What one bot process tree may use; ``None`` leaves a resource uncapped (cpus: the referee's cores)."""

    memory_bytes: int | None = None
    pids: int | None = None
    #: Cores as the kernel lists them: "1", "0-1", "0,2-3".
    cpus: str | None = None

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "pids"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive or None, not {value}")
        if self.cpus is not None and not _CPU_LIST.fullmatch(self.cpus):
            raise ValueError(f"cpus must be a list of cores such as '1' or '0-1', not {self.cpus!r}")


class ControlGroup(ABC):
    """A group (a directory) in one hierarchy: a run's or a bot's. Its operations serve only the features its
    hierarchy's controllers give; none raises for a group that is gone (reads give nothing, writes False)."""

    #: The cgroup version of the hierarchy: 1 or 2.
    version: ClassVar[int]

    def __init__(self, path: str, *, mount: str = "") -> None:
        self.path = path
        #: Where the group's hierarchy is mounted ("" if unknown): a bwrap sandbox shows a bot its own group there.
        self.mount = mount
        self._files: dict[str, int] = {}  # control files read or written at every pause, kept open

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r})"

    # -------------------------------------------------------------------------------------- shared by both

    def file(self, name: str) -> str:
        """The path of the group's control file ``name``."""
        return os.path.join(self.path, name)

    def has(self, name: str) -> bool:
        return os.path.exists(self.file(name))

    def put(self, name: str, value: object) -> None:
        """Write a control file in one write(); raises OSError."""
        write_text(self.file(name), str(value))

    def _fd(self, name: str, flags: int) -> int | None:
        """An open fd of the control file ``name`` (opened at first use: a pause opens nothing), or None if it
        cannot be."""
        fd = self._files.get(name)
        if fd is None:
            try:
                fd = self._files[name] = os.open(self.file(name), flags | os.O_CLOEXEC)
            except OSError as error:
                LOGGER.debug("cgroups: cannot open %s: %s", self.file(name), error.strerror)
                return None
        return fd

    def _pwrite(self, name: str, data: bytes) -> bool:
        fd = self._fd(name, os.O_WRONLY)
        try:
            return fd is not None and os.pwrite(fd, data, 0) == len(data)
        except OSError as error:
            LOGGER.debug("cgroups: cannot write %r to %s: %s", data, self.file(name), error.strerror)
            return False

    def _pread_keyed(self, name: str, key: str) -> int | None:
        """The number after ``key`` in the kept-open control file ``name``; None if unknown."""
        fd = self._fd(name, os.O_RDONLY)
        if fd is None:
            return None
        try:
            return keyed(os.pread(fd, 4096, 0), key)
        except OSError:
            return None

    def close(self) -> None:
        """Close the control files kept open."""
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()

    def child(self, name: str, *, exist_ok: bool = False) -> Self:
        """Make the group ``name`` inside this one, ready to take a process; raises OSError (nothing is left
        behind then)."""
        path = os.path.join(self.path, name)
        try:
            os.mkdir(path, 0o755)
        except FileExistsError:
            if not exist_ok:
                raise
        group = self.at(path)
        try:
            group._prepare(self)
        except OSError:
            rmdir(path)
            raise
        return group

    def sibling(self, name: str) -> Self:
        """The group ``name`` beside this one, in the same hierarchy (not made: only named)."""
        return self.at(os.path.join(os.path.dirname(self.path), name))

    def at(self, path: str) -> Self:
        """The group at ``path`` in this group's hierarchy (not made: only named)."""
        group = copy.copy(self)
        group.path, group._files = path, {}
        return group

    def _prepare(self, parent: ControlGroup) -> None:  # noqa: B027 - a v2 group needs nothing
        """Whatever a new group needs before it can take a process; raises OSError."""

    def forks_refused(self) -> int:
        """How many forks the pids controller refused at the group's cap: "max" in pids.events, the same in v1 and
        v2 (0 without the file: no pids controller, or the group is gone)."""
        return keyed(read_text(self.file("pids.events")), "max") or 0

    # -------------------------------------------------------------------------------------- per version

    @abstractmethod
    def limit(self, features: Iterable[str], limits: CgroupLimits) -> None:
        """Write a new bot group's ``limits`` for those of ``features`` it serves; raises OSError."""

    @abstractmethod
    def start_freeze(self) -> bool:
        """Ask the kernel to freeze the group; False if the request could not be made."""

    @abstractmethod
    def wait_frozen(self, timeout: float) -> bool:
        """True once the kernel reports the group frozen, False if it does not within ``timeout``."""

    @abstractmethod
    def thaw(self) -> None:
        """Let the group's processes run again."""

    @abstractmethod
    def kill_at_once(self, timeout: float) -> bool | None:
        """SIGKILL every process of the group tree in one step of the kernel's and wait for them: True once none
        is left, False if some still are after ``timeout``; None where this group cannot (the caller then kills
        while frozen)."""

    @abstractmethod
    def populated(self) -> bool | None:
        """Whether a process is alive in the group tree, if this group says so cheaply; None if it does not."""

    @abstractmethod
    def oom_kills(self) -> int:
        """How many processes the OOM killer killed in the group at its memory limit."""

    @abstractmethod
    def cpu_ns(self) -> int:
        """CPU time of the group's processes, dead ones included, in nanoseconds; 0 if unknown."""
