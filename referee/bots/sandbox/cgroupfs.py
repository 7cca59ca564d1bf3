"""The cgroup file system as the referee uses it, whatever the hierarchy's version: finding the hierarchies and the
referee's own group in each, reading and writing group files, removing groups and the runs of dead referees."""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import re
import signal
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

LOGGER = logging.getLogger("durak")

#: How long ``remove()`` and ``close()`` wait for a group's processes to die before leaving it to the sweep.
REMOVE_TIMEOUT = 2.0

_RUN_DIR = re.compile(r"durak-(\d+)\.(\d+)(?:\.\d+)?")
_OPEN_RUNS = itertools.count()  # a second run open in the same process gets a suffix to its name


@dataclass(frozen=True)
class Hierarchy:
    """A mounted cgroup hierarchy and the referee's own group in it (a directory)."""

    version: int
    #: v1: the controllers bound to it; v2: empty (its controllers are read from cgroup.controllers).
    controllers: frozenset[str]
    own: str
    #: Where the hierarchy is mounted: a sandbox shows a bot its own groups at the same place, so that runtimes
    #: find their limits where they look (``/proc/self/mountinfo``); "" if unknown (then they are not shown).
    mount: str = ""


# ---------------------------------------------------------------------------------------------- file access


def read_text(path: str) -> str | None:
    """The whole file, or None if it cannot be read (the group is gone, say)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def write_text(path: str, text: str) -> None:
    """Write ``text`` in one write(); raises OSError."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def write_ok(path: str, text: str) -> bool:
    try:
        write_text(path, text)
    except OSError as error:
        LOGGER.debug("cgroups: cannot write %r to %s: %s", text, path, error.strerror)
        return False
    return True


def keyed(text: str | bytes | None, key: str) -> int | None:
    """The number after ``key`` in a file of "key value" lines (cgroup.events, memory.events, cpu.stat)."""
    if text is None:
        return None
    if isinstance(text, str):
        text = text.encode("ascii", "replace")
    found = _key_line(key).search(text)  # a pause reads memory.events: one search, not a split of every line
    return int(found.group(1)) if found else None


@functools.cache
def _key_line(key: str) -> re.Pattern[bytes]:
    return re.compile(rb"(?m)^" + re.escape(key.encode()) + rb" (-?\d+)$")


def members(group: str) -> list[int]:
    """The pids in the group's cgroup.procs (0, a process outside our PID namespace, left out)."""
    text = read_text(os.path.join(group, "cgroup.procs"))
    return sorted({int(word) for word in text.split() if word.isdigit() and word != "0"}) if text else []


def kill_members(group: str) -> int:
    """SIGKILL every process in the group; the number signalled.

    A pid is signalled through a pidfd opened while it was listed and still listed after, so that a pid that
    died and was reused meanwhile by a process outside the group is never hit."""
    pidfds: dict[int, int] = {}
    try:
        for pid in members(group):
            if pid != os.getpid():
                with contextlib.suppress(OSError):
                    pidfds[pid] = os.pidfd_open(pid)
        still = set(members(group)) if pidfds else set()
        for pid, fd in pidfds.items():
            if pid in still:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
        return len(still & pidfds.keys())
    finally:
        for fd in pidfds.values():
            os.close(fd)


def rmdir(path: str) -> bool:
    """Remove one empty group; True if it is gone."""
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


# ---------------------------------------------------------------------------------------------- discovery


def _unescape(field: str) -> str:
    """A mountinfo path field with its octal escapes (\\040 for a space...) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), field)


def _cgroup_mounts(mountinfo: str) -> Iterator[tuple[str, str, str, frozenset[str]]]:
    """(fstype, root, mount point, super options) of every cgroup and cgroup2 mount."""
    for line in mountinfo.splitlines():
        before, sep, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if sep and len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            yield tail[0], _unescape(fields[3]), _unescape(fields[4]), frozenset(tail[2].split(","))


def _inside(path: str, mounts: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The directory of cgroup ``path`` under the first (root, mount point) whose root holds it, and that mount
    point."""
    for root, point in mounts:
        if root == "/" or path == root or path.startswith(root + "/"):
            rest = path[len(root):] if root != "/" else path
            return (point.rstrip("/") + rest if rest.strip("/") else point), point
    return None


def parse_hierarchies(mountinfo: str, proc_cgroup: str) -> list[Hierarchy]:
    """The hierarchies a process belongs to (``/proc/<pid>/cgroup``) that are mounted where it sees them
    (``/proc/<pid>/mountinfo``), with its own group in each; v2 first."""
    mounts = list(_cgroup_mounts(mountinfo))
    found: list[Hierarchy] = []
    for line in proc_cgroup.splitlines():
        number, _, rest = line.partition(":")
        names, _, path = rest.partition(":")
        if not path.startswith("/"):
            continue
        if number == "0" and not names:
            version, wanted = 2, frozenset[str]()
            places = [(root, point) for fstype, root, point, _ in mounts if fstype == "cgroup2"]
        else:
            version, wanted = 1, frozenset(names.split(","))
            places = [(root, point) for fstype, root, point, opts in mounts if fstype == "cgroup" and wanted <= opts]
        inside = _inside(path, places)
        if inside is not None:
            found.append(Hierarchy(version, wanted, *inside))
    return sorted(found, key=lambda hierarchy: hierarchy.version, reverse=True)


def own_hierarchies(proc: str = "/proc/self") -> list[Hierarchy]:
    """:func:`parse_hierarchies` of the process whose /proc directory is ``proc`` (another root for a test's
    fake); empty if its files cannot be read."""
    mountinfo, proc_cgroup = read_text(os.path.join(proc, "mountinfo")), read_text(os.path.join(proc, "cgroup"))
    return parse_hierarchies(mountinfo or "", proc_cgroup or "")


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks after boot): with the pid, names a process."""
    text = read_text(f"/proc/{pid}/stat")
    fields = text.rpartition(")")[2].split() if text else []
    return fields[19] if len(fields) > 19 else None


def run_name() -> str:
    number = next(_OPEN_RUNS)
    name = f"durak-{os.getpid()}.{_start_time(os.getpid()) or 0}"
    return name if number == 0 else f"{name}.{number}"


# ---------------------------------------------------------------------------------------------- removal


def _bottom_up(top: str) -> list[str]:
    """Every group in the tree at ``top``, children before parents."""
    return [path for path, _, _ in os.walk(top, topdown=False)]


def _start_killing(top: str) -> None:
    """SIGKILL every process in a group tree: ``cgroup.kill`` (v2), else signals, and thaw (v1 freezer) so that
    frozen processes act on them."""
    if os.path.exists(os.path.join(top, "cgroup.kill")) and write_ok(os.path.join(top, "cgroup.kill"), "1"):
        return
    for group in _bottom_up(top):
        kill_members(group)
        if os.path.exists(os.path.join(group, "freezer.state")):
            write_ok(os.path.join(group, "freezer.state"), "THAWED")


def remove_groups(top: str, deadline: float) -> bool:
    """Kill the processes of a group tree and remove its groups bottom up; True if it is gone by ``deadline``."""
    _start_killing(top)
    while True:
        busy = False
        for group in _bottom_up(top):
            if kill_members(group) or not rmdir(group):
                busy = True
        if not busy or not os.path.isdir(top):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)


def _stale_runs(own: str) -> list[str]:
    """Run groups in ``own`` left by referees that are dead (their pid is gone, or is another process)."""
    try:
        names = os.listdir(own)
    except OSError:
        return []
    stale = []
    for name in names:
        match = _RUN_DIR.fullmatch(name)
        if match and _start_time(int(match.group(1))) != match.group(2):
            stale.append(os.path.join(own, name))
    return stale


def sweep(hierarchies: Iterable[Hierarchy], timeout: float = REMOVE_TIMEOUT) -> list[str]:
    """Kill the processes of dead referees' run groups and remove those groups; the paths left behind."""
    stale = [path for hierarchy in hierarchies for path in _stale_runs(hierarchy.own)]
    for path in stale:
        LOGGER.info("cgroups: removing %s, left by a referee that is gone", path)
        _start_killing(path)
    deadline = time.monotonic() + timeout
    left = [path for path in stale if not remove_groups(path, deadline)]
    for path in left:
        LOGGER.warning("cgroups: could not remove %s, left by a referee that is gone", path)
    return left
