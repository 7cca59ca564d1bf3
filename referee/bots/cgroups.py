"""Control groups for bots: each bot process tree gets a group in every hierarchy it needs, to be frozen, killed,
capped in memory and pids, pinned to cores and timed; cgroup v2 where usable per feature, v1 where not."""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import re
import select
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType

LOGGER = logging.getLogger("durak")

FEATURES = ("freeze", "kill", "memory", "pids", "cpuset", "cpu")
#: Exit status of ``join_prefix`` when the bot's process could not join one of its groups.
JOIN_FAILED = 125
#: How long ``remove()`` and ``close()`` wait for a group's processes to die before leaving it to the sweep.
REMOVE_TIMEOUT = 2.0

_V2_FILES = {"freeze": "cgroup.freeze", "kill": "cgroup.kill", "cpu": "cpu.stat"}  # core files, no controller
_V2_CONTROLLERS = {"memory": "memory", "pids": "pids", "cpuset": "cpuset"}
# v1 "kill" is SIGKILL to every member of a group frozen by the v1 freezer, so that none can fork meanwhile.
_V1_CONTROLLERS = {"freeze": "freezer", "kill": "freezer", "memory": "memory", "pids": "pids",
                   "cpuset": "cpuset", "cpu": "cpuacct"}
_ABSENT = {
    "freeze": "no cgroup.freeze (cgroup v2, Linux 5.2+) and no cgroup v1 freezer",
    "kill": "no cgroup.kill (cgroup v2, Linux 5.14+) and no cgroup v1 freezer",
    "memory": "no cgroup v1 or v2 memory controller",
    "pids": "no cgroup v1 or v2 pids controller",
    "cpuset": "no cgroup v1 or v2 cpuset controller",
    "cpu": "no cpu.stat (cgroup v2) and no cgroup v1 cpuacct controller",
}
_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS)

# Runs on the bot's side: `echo 0` moves the writing process itself (also from inside a PID namespace); only
# shell builtins run before the exec, so the bot's first instruction already runs in every group.
_JOIN_SCRIPT = (f'for f do case $f in --) break;; esac; echo 0 > "$f" || exit {JOIN_FAILED}; shift; done; '
                'shift; exec "$@"')
_RUN_DIR = re.compile(r"durak-(\d+)\.(\d+)(?:\.\d+)?")
_BOT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_CPU_LIST = re.compile(r"\d+(-\d+)?(,\d+(-\d+)?)*")
_OPEN_RUNS = itertools.count()  # a second run open in the same process gets a suffix to its name
# The wait for a v2 event before poll(), in seconds: 0 is sched_yield() (to a bot that shares our core).
_SHORT_PAUSES = (0.0, 0.0, 0.0, 0.0, 20e-6, 40e-6, 80e-6, 160e-6, 320e-6, 640e-6)
_SPINS = 20  # v1 freezer.state reads before the wait starts to sleep (v1 has no change notification)


class CgroupError(OSError):
    """A bot's control groups could not be set up as asked; the message is one line saying why."""


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


@dataclass(frozen=True)
class Hierarchy:
    """A mounted cgroup hierarchy and the referee's own group in it (a directory)."""

    version: int
    #: v1: the controllers bound to it; v2: empty (its controllers are read from cgroup.controllers).
    controllers: frozenset[str]
    own: str


@dataclass(frozen=True)
class _Place:
    """A run's group in one hierarchy."""

    version: int
    run_dir: str


# ---------------------------------------------------------------------------------------------- file access


def _read(path: str) -> str | None:
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


def _write(path: str, text: str) -> None:
    """Write ``text`` in one write(); raises OSError."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _write_ok(path: str, text: str) -> bool:
    try:
        _write(path, text)
    except OSError as error:
        LOGGER.debug("cgroups: cannot write %r to %s: %s", text, path, error.strerror)
        return False
    return True


def _keyed(text: str | bytes | None, key: str) -> int | None:
    """The number after ``key`` in a file of "key value" lines (cgroup.events, memory.events, cpu.stat)."""
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            with contextlib.suppress(ValueError):
                return int(value)
    return None


def _procs(group: str) -> list[int]:
    """The pids in the group's cgroup.procs (0, a process outside our PID namespace, left out)."""
    text = _read(os.path.join(group, "cgroup.procs"))
    return sorted({int(word) for word in text.split() if word.isdigit() and word != "0"}) if text else []


def _kill_members(group: str) -> int:
    """SIGKILL every process in the group; the number signalled.

    A pid is signalled through a pidfd opened while it was listed and still listed after, so that a pid that
    died and was reused meanwhile by a process outside the group is never hit."""
    pidfds: dict[int, int] = {}
    try:
        for pid in _procs(group):
            if pid != os.getpid():
                with contextlib.suppress(OSError):
                    pidfds[pid] = os.pidfd_open(pid)
        still = set(_procs(group)) if pidfds else set()
        for pid, fd in pidfds.items():
            if pid in still:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
        return len(still & pidfds.keys())
    finally:
        for fd in pidfds.values():
            os.close(fd)


def _rmdir(path: str) -> bool:
    """Remove one empty group; True if it is gone."""
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _wait_event(events: str, key: str, value: int, timeout: float) -> bool:
    """Wait until the v2 ``cgroup.events`` file says ``key value``; False after ``timeout`` or if it is gone.

    First a few reads between sched_yield() and short sleeps: they let a bot that shares the referee's core
    run into the freezer, and the kernel's change notification may lag by up to 10 ms (it sends at most one per
    10 ms per file). Then poll() for it (POLLPRI), which flags every change after our last read of the file."""
    try:
        fd = os.open(events, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        poller = select.poll()
        poller.register(fd, select.POLLPRI)
        deadline = time.monotonic() + timeout
        for pause in itertools.chain(_SHORT_PAUSES, itertools.repeat(None)):
            if _keyed(os.pread(fd, 4096, 0), key) == value:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if pause == 0:
                os.sched_yield()
            elif pause is not None:
                time.sleep(min(pause, left))
            else:
                poller.poll(left * 1000)
        raise AssertionError("unreachable")
    except OSError:
        return False
    finally:
        os.close(fd)


def _wait_v1_frozen(state_file: str, timeout: float) -> bool:
    """Wait until a v1 freezer.state reads FROZEN: a few reads back to back (each read advances the kernel's
    FREEZING to FROZEN), then sleeps growing from 50 µs to 2 ms."""
    deadline = time.monotonic() + timeout
    for attempt in itertools.count():
        state = _read(state_file)
        if state is None:
            return False
        if state.strip() == "FROZEN":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0 if attempt < _SPINS else min(50e-6 * 2 ** (attempt - _SPINS), 2e-3))
    raise AssertionError("unreachable")


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


def _inside(path: str, mounts: Iterable[tuple[str, str]]) -> str | None:
    """The directory of cgroup ``path`` under the first (root, mount point) whose root holds it."""
    for root, point in mounts:
        if root == "/" or path == root or path.startswith(root + "/"):
            rest = path[len(root):] if root != "/" else path
            return point.rstrip("/") + rest if rest.strip("/") else point
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
        own = _inside(path, places)
        if own is not None:
            found.append(Hierarchy(version, wanted, own))
    return sorted(found, key=lambda hierarchy: hierarchy.version, reverse=True)


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks after boot): with the pid, names a process."""
    text = _read(f"/proc/{pid}/stat")
    fields = text.rpartition(")")[2].split() if text else []
    return fields[19] if len(fields) > 19 else None


def _run_name() -> str:
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
    if os.path.exists(os.path.join(top, "cgroup.kill")) and _write_ok(os.path.join(top, "cgroup.kill"), "1"):
        return
    for group in _bottom_up(top):
        _kill_members(group)
        if os.path.exists(os.path.join(group, "freezer.state")):
            _write_ok(os.path.join(group, "freezer.state"), "THAWED")


def _remove_tree(top: str, deadline: float) -> bool:
    """Kill the processes of a group tree and remove its groups bottom up; True if it is gone by ``deadline``."""
    _start_killing(top)
    while True:
        busy = False
        for group in _bottom_up(top):
            if _kill_members(group) or not _rmdir(group):
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
    left = [path for path in stale if not _remove_tree(path, deadline)]
    for path in left:
        LOGGER.warning("cgroups: could not remove %s, left by a referee that is gone", path)
    return left


# ---------------------------------------------------------------------------------------------- setting up


def _words(path: str) -> set[str]:
    return set((_read(path) or "").split())


def _make_v2_place(own: str, name: str, want: dict[str, list[str]]) -> dict[str, _Place]:
    """The run's v2 group for each feature it serves; problems with the others go to ``want``. Raises OSError
    if the group cannot be made."""
    run_dir = os.path.join(own, name)
    with contextlib.suppress(FileExistsError):
        os.mkdir(run_dir, 0o755)
    enabled: set[str] = set()
    offered = _words(os.path.join(own, "cgroup.controllers"))
    for feature, controller in _V2_CONTROLLERS.items():
        if controller not in offered:
            continue
        problem = _enable_v2(own, run_dir, controller)
        if problem is None:
            enabled.add(controller)
        else:
            want[feature].append(problem)
    place = _Place(2, run_dir)
    served = {feature: place for feature, file in _V2_FILES.items() if os.path.exists(os.path.join(run_dir, file))}
    served.update({feature: place for feature, controller in _V2_CONTROLLERS.items() if controller in enabled})
    if "freeze" in served and "kill" not in served:  # Linux 5.2 to 5.13: SIGKILL to each while frozen
        served["kill"] = place
    if not served:
        _rmdir(run_dir)
    return served


def _enable_v2(own: str, run_dir: str, controller: str) -> str | None:
    """Make a v2 controller available to the bots' groups (children of ``run_dir``); None, or why not.

    The referee's own group may delegate a controller only while it holds no process, unless it is the root:
    on most systems the referee sits in a leaf of its own, and then this fails with EBUSY."""
    for parent in (own, run_dir):
        if parent == own and controller in _words(os.path.join(own, "cgroup.subtree_control")):
            continue
        try:
            _write(os.path.join(parent, "cgroup.subtree_control"), f"+{controller}")
        except OSError as error:
            why = ": the group has processes and is not the root" if error.errno == errno.EBUSY else ""
            return f"cannot enable the v2 {controller} controller in {parent} ({error.strerror}{why})"
    return None


def _make_v1_place(hierarchy: Hierarchy, name: str) -> _Place:
    """The run's group in a v1 hierarchy; raises OSError."""
    run_dir = os.path.join(hierarchy.own, name)
    with contextlib.suppress(FileExistsError):
        os.mkdir(run_dir, 0o755)
    if "cpuset" in hierarchy.controllers:
        try:
            for file in ("cpuset.cpus", "cpuset.mems"):  # a v1 cpuset group takes no process until both are set
                _write(os.path.join(run_dir, file), (_read(os.path.join(hierarchy.own, file)) or "").strip())
        except OSError:
            _rmdir(run_dir)
            raise
    return _Place(1, run_dir)


def _apply_limits(place: _Place, group: str, features: Iterable[str], limits: CgroupLimits) -> None:
    """Write a new bot group's limits for the features this place serves; raises OSError."""
    def put(file: str, value: object) -> None:
        _write(os.path.join(group, file), str(value))

    def has(file: str) -> bool:
        return os.path.exists(os.path.join(group, file))

    for feature in features:
        if feature == "memory" and limits.memory_bytes is not None:
            if place.version == 2:
                put("memory.max", limits.memory_bytes)
                if has("memory.swap.max"):
                    put("memory.swap.max", 0)
            else:
                put("memory.oom_control", 0)  # the OOM killer on, not a bot hanging at the limit (it is inherited)
                put("memory.limit_in_bytes", limits.memory_bytes)
                if has("memory.memsw.limit_in_bytes"):  # memory plus swap: no swapping past the limit
                    put("memory.memsw.limit_in_bytes", limits.memory_bytes)
        elif feature == "pids" and limits.pids is not None:
            put("pids.max", limits.pids)
        elif feature == "cpuset" and place.version == 2 and limits.cpus is not None:
            put("cpuset.cpus", limits.cpus)
        elif feature == "cpuset" and place.version == 1:
            put("cpuset.cpus", limits.cpus or (_read(os.path.join(place.run_dir, "cpuset.cpus")) or "").strip())
            put("cpuset.mems", (_read(os.path.join(place.run_dir, "cpuset.mems")) or "").strip())


# ---------------------------------------------------------------------------------------------- the API


class BotCgroup:
    """The groups of one bot process tree, one per hierarchy the run uses. Nothing the bot does (exiting,
    forking a storm) makes a method raise: a group that cannot be read counts as empty."""

    def __init__(self, name: str, groups: Mapping[str, str], served: Mapping[str, tuple[int, str]],
                 forget: Callable[[BotCgroup], None]) -> None:
        self.name = name
        self._groups = dict(groups)  # run dir -> this bot's group in it (v2 first)
        self._at = dict(served)  # feature -> (cgroup version, the group that serves it)
        self._forget = forget
        self._removed = False

    @property
    def features(self) -> frozenset[str]:
        return frozenset(self._at)

    def can(self, feature: str) -> bool:
        """Whether the bot's groups serve ``feature`` (one of ``FEATURES``)."""
        return feature in self._at

    @property
    def paths(self) -> tuple[str, ...]:
        """The bot's group directories, one per hierarchy."""
        return tuple(self._groups.values())

    def join_prefix(self) -> list[str]:
        """An argv prefix that moves its own process into every group of the bot, then execs the rest of the
        argv; it exits with ``JOIN_FAILED`` (125) if a group cannot be joined. Empty without groups."""
        if not self._groups:
            return []
        procs = [os.path.join(group, "cgroup.procs") for group in self._groups.values()]
        return ["/bin/sh", "-c", _JOIN_SCRIPT, "sh", *procs, "--"]

    def freeze(self, timeout: float = 2.0) -> bool:
        """Freeze every process of the bot; True once the kernel reports the group frozen, False if it does
        not within ``timeout`` (or the run has no freezer)."""
        at = self._at.get("freeze")
        if at is None:
            return False
        version, group = at
        if version == 2:
            return (_write_ok(os.path.join(group, "cgroup.freeze"), "1")
                    and _wait_event(os.path.join(group, "cgroup.events"), "frozen", 1, timeout))
        state = os.path.join(group, "freezer.state")
        return _write_ok(state, "FROZEN") and _wait_v1_frozen(state, timeout)

    def thaw(self) -> None:
        """Let every process of the bot run again, all at once."""
        at = self._at.get("freeze")
        if at is not None:
            version, group = at
            if version == 2:
                _write_ok(os.path.join(group, "cgroup.freeze"), "0")
            else:
                _write_ok(os.path.join(group, "freezer.state"), "THAWED")

    def kill(self, timeout: float = REMOVE_TIMEOUT) -> bool:
        """SIGKILL every process of the bot (v2: cgroup.kill; v1: while frozen, so that none forks meanwhile);
        True once none is left, False if some still are after ``timeout``."""
        at = self._at.get("kill")
        if at is not None and at[0] == 2 and _write_ok(os.path.join(at[1], "cgroup.kill"), "1"):
            return _wait_event(os.path.join(at[1], "cgroup.events"), "populated", 0, timeout)
        deadline = time.monotonic() + timeout
        while True:
            self.freeze(timeout=min(0.2, timeout))  # if not frozen in time, the signals still go
            signalled = sum(_kill_members(group) for group in self._groups.values())
            self.thaw()  # a frozen process acts on SIGKILL once thawed
            if not signalled and not self.is_populated():
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)

    def pids(self) -> list[int]:
        """The bot's processes (pids as the referee sees them)."""
        for group in self._groups.values():
            if os.path.isdir(group):
                return _procs(group)
        return []

    def is_populated(self) -> bool:
        """Whether any process of the bot is alive (zombies do not count)."""
        at = self._at.get("kill") or self._at.get("freeze")
        if at is not None and at[0] == 2:
            populated = _keyed(_read(os.path.join(at[1], "cgroup.events")), "populated")
            if populated is not None:
                return populated == 1
        return bool(self.pids())

    def oom_kills(self) -> int:
        """How many of the bot's processes the kernel's OOM killer killed at the memory limit."""
        at = self._at.get("memory")
        if at is None:
            return 0
        version, group = at
        text = _read(os.path.join(group, "memory.events" if version == 2 else "memory.oom_control"))
        return _keyed(text, "oom_kill") or 0

    def cpu_ns(self) -> int:
        """CPU time used by the bot's processes, dead ones included, in nanoseconds; 0 if unknown."""
        at = self._at.get("cpu")
        if at is None:
            return 0
        version, group = at
        if version == 2:
            return (_keyed(_read(os.path.join(group, "cpu.stat")), "usage_usec") or 0) * 1000
        text = _read(os.path.join(group, "cpuacct.usage"))
        return int(text) if text and text.strip().isdigit() else 0

    def remove(self, timeout: float = REMOVE_TIMEOUT) -> bool:
        """Kill the bot's processes, wait for them (at most ``timeout``) and remove its groups; True if all are
        gone. Never raises: what is left is logged and left to the next run's sweep."""
        if self._removed:
            return True
        try:
            deadline = time.monotonic() + timeout
            if not self.kill(timeout):
                LOGGER.warning("cgroups: processes of bot %s outlived SIGKILL for %.1f s", self.name, timeout)
            left = [group for group in self._groups.values() if not _remove_tree(group, deadline)]
        except Exception as error:  # a bug here must not end the game that cleans up
            LOGGER.warning("cgroups: removing the groups of bot %s failed: %r", self.name, error)
            return False
        self._removed = not left
        if left:
            LOGGER.warning("cgroups: could not remove %s; the next run's sweep will", ", ".join(left))
        else:
            self._forget(self)
        return not left


class CgroupRun:
    """A referee process's groups, ``durak-<pid>.<starttime>`` under its own group in each hierarchy it uses,
    and the bots' groups inside them. ``open()`` it once per process (tournament workers each open their own)."""

    def __init__(self, name: str, places: Mapping[str, _Place], missing: Iterable[str]) -> None:
        self.name = name
        #: The process that opened the run: only it closes it (a forked child inherits the object, not the run).
        self.pid = os.getpid()
        self._places = dict(places)  # feature -> the run's group that serves it
        #: The features this run has: of "freeze", "kill", "memory", "pids", "cpuset", "cpu".
        self.features = frozenset(self._places)
        #: One line for each feature it has not ("memory: no cgroup v1 or v2 memory controller").
        self.missing = tuple(missing)
        self._bots: dict[str, BotCgroup] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def where(self) -> dict[str, str]:
        """The run's group (a directory) that serves each feature."""
        return {feature: place.run_dir for feature, place in self._places.items()}

    @property
    def paths(self) -> tuple[str, ...]:
        """The run's groups, one per hierarchy it uses."""
        return tuple(dict.fromkeys(place.run_dir for place in self._places.values()))

    @classmethod
    def open(cls, hierarchies: Iterable[Hierarchy] | None = None) -> CgroupRun:
        """Find the hierarchies (default: this process's, from /proc/self), remove what dead referees left in
        them, and make this run's groups. Never raises: what cannot be had is in ``missing``."""
        if hierarchies is None:
            mountinfo, proc_cgroup = _read("/proc/self/mountinfo"), _read("/proc/self/cgroup")
            hierarchies = parse_hierarchies(mountinfo or "", proc_cgroup or "")
        usable = [hierarchy for hierarchy in hierarchies if os.path.isdir(hierarchy.own)]
        name = _run_name()
        if not usable:
            return cls(name, {}, ["cgroups: no cgroup hierarchy is mounted where the referee can see it"])
        sweep(usable)
        try:
            return cls._build(name, usable)
        except Exception as error:  # an unexpected layout must cost the features, not the referee
            LOGGER.warning("cgroups: setting up %s failed: %r", name, error)
            return cls(name, {}, [f"cgroups: setting up failed: {error!r}"])

    @classmethod
    def _build(cls, name: str, hierarchies: list[Hierarchy]) -> CgroupRun:
        want: dict[str, list[str]] = {feature: [] for feature in FEATURES}
        places: dict[str, _Place] = {}
        denied = 0
        v2 = next((hierarchy for hierarchy in hierarchies if hierarchy.version == 2), None)
        if v2 is not None:
            try:
                places = _make_v2_place(v2.own, name, want)
            except OSError as error:
                denied += error.errno in _DENIED
                for feature in FEATURES:
                    want[feature].append(f"cannot create a group in {v2.own} ({error.strerror})")
        v1_places: dict[str, _Place] = {}
        for feature in FEATURES:
            controller = _V1_CONTROLLERS[feature]
            hierarchy = next((h for h in hierarchies if h.version == 1 and controller in h.controllers), None)
            if feature in places or hierarchy is None:
                continue
            try:
                if hierarchy.own not in v1_places:
                    v1_places[hierarchy.own] = _make_v1_place(hierarchy, name)
                places[feature] = v1_places[hierarchy.own]
            except OSError as error:
                denied += error.errno in _DENIED
                want[feature].append(f"cannot create a group in {hierarchy.own} ({error.strerror})")
        if not places and denied and os.geteuid() != 0:
            missing = ["cgroups: not root and no delegated group"]
        else:
            missing = [f"{feature}: {'; '.join(want[feature]) or _ABSENT[feature]}"
                       for feature in FEATURES if feature not in places]
        for place in {place.run_dir: place for place in places.values()}.values():
            LOGGER.debug("cgroups: run group %s (v%d)", place.run_dir, place.version)
        return cls(name, places, missing)

    def create(self, name: str, limits: CgroupLimits) -> BotCgroup:
        """Make the groups of one bot process tree, with its limits for the features the run has (limits for
        the others are not applied: see ``missing``). Raises ValueError for a bad or taken name and
        CgroupError if the groups cannot be made or a limit not written (nothing is left behind then)."""
        if not _BOT_NAME.fullmatch(name):
            raise ValueError(f"a bot group name is letters, digits, '_', '-' and '.', not {name!r}")
        with self._lock:
            if self._closed:
                raise CgroupError(f"cgroups: run {self.name} is closed")
            if name in self._bots:
                raise ValueError(f"cgroups: run {self.name} has a bot group named {name!r} already")
            self._bots[name] = bot = self._make_bot(name, limits)
        return bot

    def _make_bot(self, name: str, limits: CgroupLimits) -> BotCgroup:
        by_dir: dict[str, tuple[_Place, list[str]]] = {}
        for feature, place in sorted(self._places.items(), key=lambda item: -item[1].version):
            by_dir.setdefault(place.run_dir, (place, []))[1].append(feature)
        groups: dict[str, str] = {}
        try:
            for run_dir, (place, features) in by_dir.items():
                group = groups[run_dir] = os.path.join(run_dir, name)
                os.mkdir(group, 0o755)
                _apply_limits(place, group, features, limits)
        except OSError as error:
            for group in reversed(groups.values()):
                _rmdir(group)
            raise CgroupError(f"cgroups: cannot set up {error.filename or name}: {error.strerror}") from error
        served = {feature: (place.version, groups[place.run_dir]) for feature, place in self._places.items()}
        return BotCgroup(name, groups, served, self._forget)

    def _forget(self, bot: BotCgroup) -> None:
        with self._lock:
            if self._bots.get(bot.name) is bot:
                del self._bots[bot.name]

    def close(self, timeout: float = REMOVE_TIMEOUT) -> None:
        """Kill what is left in the run's groups and remove them. Never raises (failures are logged)."""
        if os.getpid() != self.pid:
            return
        try:
            with self._lock:
                self._closed = True
                bots = list(self._bots.values())
            for bot in bots:
                bot.remove(timeout)
            deadline = time.monotonic() + timeout
            for run_dir in self.paths:
                if not _remove_tree(run_dir, deadline):
                    LOGGER.warning("cgroups: could not remove %s; the next run's sweep will", run_dir)
        except Exception as error:  # closing must not hide the error that ended the run
            LOGGER.warning("cgroups: closing run %s failed: %r", self.name, error)

    def __enter__(self) -> CgroupRun:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
