"""Uids for bots when the referee runs as root: one leased per running bot, from a range no file belongs to.

Imports nothing of the sandbox's levels: callers pass ``Isolation.uid`` (a fixed uid, or None) themselves.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from referee.bots.errors import LauncherError

_A = TypeVar("_A")
_T = TypeVar("_T")

#: When the referee runs as root each running bot gets uid and gid ``UID_BASE + n`` (0 <= n < UID_SLOTS),
#: from a range that systemd documents as unused (0x70000000-0x7FFDFFFF): no file on the system belongs to
#: it, so a bot can read only what is world-readable, and bots cannot signal, trace or fill each other.
UID_BASE = 0x7000_0000
UID_SLOTS = 0x1_0000
#: The fallback uid and gid when the range is not mapped (root inside a user namespace).
NOBODY = 65534
#: Where uid leases are kept (a lock file per running bot's uid), first choice first.
LEASE_DIRS = ("/run/durak-referee/uids", os.path.join(tempfile.gettempdir(), "durak-referee-uids"))


class UidLease:
    """A uid (and the gid of the same number) for one bot, held until ``release()``.

    Leases are lock files (``flock``) in a root-only folder: they are exclusive across every referee process
    on the machine and vanish with a killed referee. A fixed uid (``Isolation.uid``) is not leased.
    """

    def __init__(self, uid: int, path: str | None = None, fd: int | None = None) -> None:
        self.uid = self.gid = uid
        self._path, self._fd = path, fd

    def release(self) -> None:
        """Give the uid back; a second call does nothing."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._path or "")  # unlinked while still locked: see lease_uid
            os.close(self._fd)
            self._fd = None

    def __repr__(self) -> str:
        return f"<UidLease {self.uid}>"


def lease_uid(fixed: int | None = None) -> UidLease | None:
    """The uid a bot of a root referee runs under (``fixed``, ``Isolation.uid``, if set); None when not root
    (a bot then keeps the referee's uid).

    :raises LauncherError: no usable lease folder, or every uid of the range in use.
    """
    if os.geteuid() != 0:
        return None
    if fixed is not None:
        return UidLease(fixed)
    if not is_mapped(UID_BASE, UID_SLOTS):
        return UidLease(NOBODY) if is_mapped(NOBODY, 1) else None
    folder = _lease_dir()
    start = int.from_bytes(os.urandom(4), "little") % UID_SLOTS  # spread reuse: a uid may leave files behind
    for step in range(UID_SLOTS):
        uid = UID_BASE + (start + step) % UID_SLOTS
        path = os.path.join(folder, str(uid))
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # A holder unlinks its file before unlocking: a lock won on an unlinked file is no lease.
            if os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                return UidLease(uid, path, fd)
        except (BlockingIOError, FileNotFoundError):
            pass
        os.close(fd)
    raise LauncherError(f"every bot uid from {UID_BASE} to {UID_BASE + UID_SLOTS - 1} is in use")


def typical_uid(fixed: int | None = None) -> int | None:
    """A uid like the one :func:`lease_uid` would give (``fixed``, if set), for checks before any launch; None
    when not root."""
    if os.geteuid() != 0:
        return None
    if fixed is not None:
        return fixed
    if is_mapped(UID_BASE, UID_SLOTS):
        return UID_BASE + UID_SLOTS - 1  # no file belongs to any uid of the range: any one tells for all
    return NOBODY if is_mapped(NOBODY, 1) else None


def _lease_dir() -> str:
    for folder in LEASE_DIRS:
        with contextlib.suppress(OSError):
            os.makedirs(folder, mode=0o700, exist_ok=True)
            info = os.lstat(folder)
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022:
                return folder
    raise LauncherError(f"no folder for bot uid leases: {' and '.join(LEASE_DIRS)} are missing or unsafe")


def is_mapped(first: int, count: int) -> bool:
    """Whether uids and gids first..first+count-1 all exist in this user namespace."""
    for table in ("/proc/self/uid_map", "/proc/self/gid_map"):
        try:
            rows = [tuple(map(int, line.split())) for line in Path(table).read_text().splitlines()]
        except (OSError, ValueError):
            return False
        if not any(inside <= first and first + count <= inside + length for inside, _, length in rows):
            return False
    return True


def drop_to(setpriv: str, uid: int | None) -> list[str]:
    """setpriv running the rest of an argv as ``uid`` (and gid) without groups; nothing for None.

    The parent-death signal is set again after the change of uid, which clears it.
    """
    return [setpriv, *uid_options(uid), "--pdeathsig", "KILL", "--"] if uid is not None else []


def uid_options(uid: int | None) -> list[str]:
    """setpriv's options to run as ``uid`` and the gid of the same number, without supplementary groups."""
    return ["--reuid", str(uid), "--regid", str(uid), "--clear-groups"] if uid is not None else []




def as_user(uid: int | None, function: Callable[[_A], _T], path: _A) -> _T:
    """``function(path)`` (a path, or paths) as ``uid`` (and the gid of the same number, no groups) in a forked
    child, when root and ``uid`` is another user's: what a bot's uid could learn of ``path``, never what root
    could. Otherwise here.

    For a look-up of a path a bot named (``os.path.isfile``...): the child only calls it and sends back its
    (picklable) answer; it raises OSError (one line) if the child could not drop to ``uid`` or gave no answer.
    """
    if uid is None or os.geteuid() != 0 or uid == 0:
        return function(path)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to uid, answer, exit without running anything of the parent's
        code = 1
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.write(write, pickle.dumps(function(path)))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        data = answer.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        raise OSError(f"could not look {path!r} up as uid {uid}")
    found: _T = pickle.loads(data)  # our own child's answer, through our own pipe
    return found
