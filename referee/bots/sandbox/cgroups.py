"""Control groups for bots: each bot process tree gets a group in every hierarchy it needs, to be frozen, killed,
capped in memory and pids, pinned to cores and timed; cgroup v2 where usable per feature, v1 where not."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType

from referee.bots.sandbox.cgroupfs import (
    REMOVE_TIMEOUT,
    Hierarchy,
    keyed,
    kill_members,
    members,
    parse_hierarchies,
    read_text,
    remove_groups,
    rmdir,
    run_name,
    sweep,
    wait_event,
    wait_event_fd,
    wait_v1_frozen,
    write_ok,
    write_text,
)

LOGGER = logging.getLogger("durak")

FEATURES = ("freeze", "kill", "memory", "pids", "cpuset", "cpu")
#: Exit status of ``join_prefix`` when the bot's process could not join one of its groups.
JOIN_FAILED = 125

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
_BOT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_CPU_LIST = re.compile(r"\d+(-\d+)?(,\d+(-\d+)?)*")


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
class _Place:
    """A run's group in one hierarchy."""

    version: int
    run_dir: str


# ---------------------------------------------------------------------------------------------- setting up


def _words(path: str) -> set[str]:
    return set((read_text(path) or "").split())


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
        rmdir(run_dir)
    return served


def _enable_v2(own: str, run_dir: str, controller: str) -> str | None:
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


def _make_v1_place(hierarchy: Hierarchy, name: str) -> _Place:
    """The run's group in a v1 hierarchy; raises OSError."""
    run_dir = os.path.join(hierarchy.own, name)
    with contextlib.suppress(FileExistsError):
        os.mkdir(run_dir, 0o755)
    if "cpuset" in hierarchy.controllers:
        try:
            for file in ("cpuset.cpus", "cpuset.mems"):  # a v1 cpuset group takes no process until both are set
                write_text(os.path.join(run_dir, file), (read_text(os.path.join(hierarchy.own, file)) or "").strip())
        except OSError:
            rmdir(run_dir)
            raise
    return _Place(1, run_dir)


def _apply_limits(place: _Place, group: str, features: Iterable[str], limits: CgroupLimits) -> None:
    """Write a new bot group's limits for the features this place serves; raises OSError."""
    def put(file: str, value: object) -> None:
        write_text(os.path.join(group, file), str(value))

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
            put("cpuset.cpus", limits.cpus or (read_text(os.path.join(place.run_dir, "cpuset.cpus")) or "").strip())
            put("cpuset.mems", (read_text(os.path.join(place.run_dir, "cpuset.mems")) or "").strip())


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
        self._files: dict[tuple[str, str], int] = {}  # control files read or written at every pause, kept open
        self._aside: str | None = None  # the group of the wrappers moved out of the frozen one (set_aside)

    def _file(self, group: str, name: str, flags: int) -> int | None:
        """An open fd of the control file ``name`` of ``group`` (opened at first use: a pause opens nothing),
        or None if it cannot be."""
        fd = self._files.get((group, name))
        if fd is None:
            path = os.path.join(group, name)
            try:
                fd = self._files[group, name] = os.open(path, flags | os.O_CLOEXEC)
            except OSError as error:
                LOGGER.debug("cgroups: cannot open %s: %s", path, error.strerror)
                return None
        return fd

    def _write(self, group: str, name: str, data: bytes) -> bool:
        fd = self._file(group, name, os.O_WRONLY)
        try:
            return fd is not None and os.pwrite(fd, data, 0) == len(data)
        except OSError as error:
            LOGGER.debug("cgroups: cannot write %r to %s/%s: %s", data, group, name, error.strerror)
            return False

    def _close_files(self) -> None:
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()

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

    @property
    def frozen(self) -> str | None:
        """The group a pause freezes (None without a freezer)."""
        at = self._at.get("freeze")
        return at[1] if at is not None else None

    @property
    def aside(self) -> str | None:
        """The group of the bot's wrappers once :meth:`set_aside` moved them out of the frozen one."""
        return self._aside

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
        return self.start_freeze() and self.wait_frozen(timeout)

    def start_freeze(self) -> bool:
        """Ask the kernel to freeze every process of the bot, without waiting for it to be done (each task
        stops on its way back to user space, within microseconds); False if the request could not be made."""
        at = self._at.get("freeze")
        if at is None:
            return False
        version, group = at
        if version == 2:
            return self._write(group, "cgroup.freeze", b"1")
        return write_ok(os.path.join(group, "freezer.state"), "FROZEN")

    def wait_frozen(self, timeout: float) -> bool:
        """True once the kernel reports the group frozen (at once if it already is), False if it does not
        within ``timeout``."""
        at = self._at.get("freeze")
        if at is None:
            return False
        version, group = at
        if version == 2:
            events = self._file(group, "cgroup.events", os.O_RDONLY)
            return events is not None and wait_event_fd(events, "frozen", 1, timeout)
        return wait_v1_frozen(os.path.join(group, "freezer.state"), timeout)

    def set_aside(self, wrappers: Iterable[int]) -> bool:
        """Move the bot's wrappers (bwrap's monitor and its PID namespace's init, which fork nothing once the bot
        runs) out of the group that is frozen, into a sibling group of their own: a pause then stops, and a resume
        wakes, only the bot's own processes. Call it only once the bot runs in the group: a wrapper moved before
        it forked the bot would take the bot along. The kill and the limits still reach every process of the
        bot, which stays in its groups. False if they could not be moved (then they are frozen with the bot)."""
        if self.frozen is None or self._removed:
            return False
        aside = self.frozen + ".wrappers"
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(aside, 0o755)
            self._aside = aside
            for pid in wrappers:
                write_text(os.path.join(aside, "cgroup.procs"), str(pid))
        except OSError as error:
            LOGGER.debug("cgroups: cannot set the wrappers of bot %s aside: %s", self.name, error.strerror)
            return False
        return True

    def thaw(self) -> None:
        """Let every process of the bot run again, all at once."""
        at = self._at.get("freeze")
        if at is not None:
            version, group = at
            if version == 2:
                self._write(group, "cgroup.freeze", b"0")
            else:
                write_ok(os.path.join(group, "freezer.state"), "THAWED")

    def kill(self, timeout: float = REMOVE_TIMEOUT) -> bool:
        """SIGKILL every process of the bot (v2: cgroup.kill; v1: while frozen, so that none forks meanwhile);
        True once none is left, False if some still are after ``timeout``."""
        at = self._at.get("kill")
        if at is not None and at[0] == 2 and write_ok(os.path.join(at[1], "cgroup.kill"), "1"):
            return wait_event(os.path.join(at[1], "cgroup.events"), "populated", 0, timeout)
        deadline = time.monotonic() + timeout
        while True:
            self.freeze(timeout=min(0.2, timeout))  # if not frozen in time, the signals still go
            signalled = sum(kill_members(group) for group in self._groups.values())
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
                return members(group)
        return []

    def is_populated(self) -> bool:
        """Whether any process of the bot is alive (zombies do not count)."""
        at = self._at.get("kill") or self._at.get("freeze")
        if at is not None and at[0] == 2:
            populated = keyed(read_text(os.path.join(at[1], "cgroup.events")), "populated")
            if populated is not None:
                return populated == 1
        return bool(self.pids())

    def oom_kills(self) -> int:
        """How many of the bot's processes the kernel's OOM killer killed at the memory limit."""
        at = self._at.get("memory")
        if at is None:
            return 0
        version, group = at
        fd = self._file(group, "memory.events" if version == 2 else "memory.oom_control", os.O_RDONLY)
        if fd is None:
            return 0
        try:
            return keyed(os.pread(fd, 4096, 0), "oom_kill") or 0
        except OSError:
            return 0

    def cpu_ns(self) -> int:
        """CPU time used by the bot's processes, dead ones included, in nanoseconds; 0 if unknown."""
        at = self._at.get("cpu")
        if at is None:
            return 0
        version, group = at
        if version == 2:
            return (keyed(read_text(os.path.join(group, "cpu.stat")), "usage_usec") or 0) * 1000
        text = read_text(os.path.join(group, "cpuacct.usage"))
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
            self._close_files()
            groups = [*self._groups.values(), *([self._aside] if self._aside is not None else [])]
            left = [group for group in groups if not remove_groups(group, deadline)]
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
            mountinfo, proc_cgroup = read_text("/proc/self/mountinfo"), read_text("/proc/self/cgroup")
            hierarchies = parse_hierarchies(mountinfo or "", proc_cgroup or "")
        usable = [hierarchy for hierarchy in hierarchies if os.path.isdir(hierarchy.own)]
        name = run_name()
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
                rmdir(group)
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
                if not remove_groups(run_dir, deadline):
                    LOGGER.warning("cgroups: could not remove %s; the next run's sweep will", run_dir)
        except Exception as error:  # closing must not hide the error that ended the run
            LOGGER.warning("cgroups: closing run %s failed: %r", self.name, error)

    def __enter__(self) -> CgroupRun:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
