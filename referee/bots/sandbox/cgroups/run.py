"""A referee process's control groups: the run's group in each hierarchy it uses, chosen per feature (cgroup v2
where usable, v1 where not), and the bots' groups made inside them."""

from __future__ import annotations

import errno
import logging
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping
from types import TracebackType

from referee.bots.sandbox.cgroupfs import (
    REMOVE_TIMEOUT,
    Hierarchy,
    own_hierarchies,
    remove_groups,
    rmdir,
    run_name,
    sweep,
)
from referee.bots.sandbox.cgroups import v1, v2
from referee.bots.sandbox.cgroups.bot import BotCgroup
from referee.bots.sandbox.cgroups.group import CgroupLimits, ControlGroup

LOGGER = logging.getLogger("durak")

FEATURES = ("freeze", "kill", "memory", "pids", "cpuset", "cpu")
_ABSENT = {
    "freeze": "no cgroup.freeze (cgroup v2, Linux 5.2+) and no cgroup v1 freezer",
    "kill": "no cgroup.kill (cgroup v2, Linux 5.14+) and no cgroup v1 freezer",
    "memory": "no cgroup v1 or v2 memory controller",
    "pids": "no cgroup v1 or v2 pids controller",
    "cpuset": "no cgroup v1 or v2 cpuset controller",
    "cpu": "no cpu.stat (cgroup v2) and no cgroup v1 cpuacct controller",
}
#: The v1 controllers whose groups runtimes read their limits from (the JVM needs all of cpuset, cpu, cpuacct and
#: memory before it believes any, .NET and Node read memory and cpu). A bot gets a group of its own in each that
#: is mounted, limits or not, so that a sandbox can show it its own (:meth:`BotCgroup.shown`) and never a group of
#: the machine's.
RUNTIME_CONTROLLERS = frozenset({"cpuset", "cpu", "cpuacct", "memory", "pids"})
_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS)
_BOT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


class CgroupError(OSError):
    """A bot's control groups could not be set up as asked; the message is one line saying why."""


class CgroupRun:
    """A referee process's groups, ``durak-<pid>.<starttime>`` under its own group in each hierarchy it uses,
    and the bots' groups inside them. ``open()`` it once per process (tournament workers each open their own)."""

    def __init__(self, name: str, places: Mapping[str, ControlGroup], missing: Iterable[str],
                 shown: Iterable[ControlGroup] = ()) -> None:
        self.name = name
        #: The process that opened the run: only it closes it (a forked child inherits the object, not the run).
        self.pid = os.getpid()
        self._places = dict(places)  # feature -> the run's group that serves it
        #: Run groups in v1 hierarchies that serve no feature but that runtimes read (:data:`RUNTIME_CONTROLLERS`).
        self._shown = tuple(shown)
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
        return {feature: group.path for feature, group in self._places.items()}

    @property
    def paths(self) -> tuple[str, ...]:
        """The run's groups, one per hierarchy it uses."""
        return tuple(dict.fromkeys([*(group.path for group in self._places.values()),
                                    *(group.path for group in self._shown)]))

    @classmethod
    def open(cls, hierarchies: Iterable[Hierarchy] | None = None) -> CgroupRun:
        """Find the hierarchies (default: this process's, from /proc/self), remove what dead referees left in
        them, and make this run's groups. Never raises: what cannot be had is in ``missing``."""
        if hierarchies is None:
            hierarchies = own_hierarchies()
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
        places, denied = _v2_places(hierarchies, name, want)
        v1_places, v1_denied = _v1_places(hierarchies, name, want, places.keys())
        places.update(v1_places)
        if not places and (denied or v1_denied) and os.geteuid() != 0:
            missing = ["cgroups: not root and no delegated group"]
        else:
            missing = [f"{feature}: {'; '.join(want[feature]) or _ABSENT[feature]}"
                       for feature in FEATURES if feature not in places]
        shown = _shown_places(hierarchies, name, {group.path for group in places.values()}) if places else []
        for group in [*{group.path: group for group in places.values()}.values(), *shown]:
            LOGGER.debug("cgroups: run group %s (v%d)", group.path, group.version)
        return cls(name, places, missing, shown)

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
        """The bot's group in each of the run's groups (v2 first), each with the limits of the features it
        serves; raises CgroupError."""
        by_run: dict[str, tuple[ControlGroup, list[str]]] = {}
        for feature, run_group in sorted(self._places.items(), key=lambda item: -item[1].version):
            by_run.setdefault(run_group.path, (run_group, []))[1].append(feature)
        for run_group in self._shown:
            by_run[run_group.path] = (run_group, [])
        made: dict[str, ControlGroup] = {}  # run group path -> the bot's group in it
        try:
            for run_group, features in by_run.values():
                made[run_group.path] = group = run_group.child(name)
                group.limit(features, limits)
        except OSError as error:
            for group in reversed(made.values()):
                rmdir(group.path)
            raise CgroupError(f"cgroups: cannot set up {error.filename or name}: {error.strerror}") from error
        served = {feature: made[run_group.path] for feature, run_group in self._places.items()}
        return BotCgroup(name, list(made.values()), served, self._forget)

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


def _v2_places(hierarchies: list[Hierarchy], name: str,
               want: dict[str, list[str]]) -> tuple[dict[str, ControlGroup], int]:
    """The run's v2 group for each feature it serves, and whether making it was denied (0 or 1)."""
    hierarchy = next((hierarchy for hierarchy in hierarchies if hierarchy.version == 2), None)
    if hierarchy is None:
        return {}, 0
    try:
        group, served = v2.run_group(hierarchy, name, want)
    except OSError as error:
        for feature in FEATURES:
            want[feature].append(f"cannot create a group in {hierarchy.own} ({error.strerror})")
        return {}, int(error.errno in _DENIED)
    return {feature: group for feature in served}, 0


def _v1_places(hierarchies: list[Hierarchy], name: str, want: dict[str, list[str]],
               served: Iterable[str]) -> tuple[dict[str, ControlGroup], int]:
    """The run's v1 group for each feature not ``served`` yet whose controller is mounted, and how many of them
    could not be made for want of permission."""
    places: dict[str, ControlGroup] = {}
    by_own: dict[str, ControlGroup] = {}  # a hierarchy's run group serves each of its controllers' features
    denied = 0
    for feature in (feature for feature in FEATURES if feature not in served):
        controller = v1.CONTROLLERS[feature]
        hierarchy = next((h for h in hierarchies if h.version == 1 and controller in h.controllers), None)
        if hierarchy is None:
            continue
        try:
            if hierarchy.own not in by_own:
                by_own[hierarchy.own] = v1.run_group(hierarchy, name)
            places[feature] = by_own[hierarchy.own]
        except OSError as error:
            denied += error.errno in _DENIED
            want[feature].append(f"cannot create a group in {hierarchy.own} ({error.strerror})")
    return places, denied


def _shown_places(hierarchies: list[Hierarchy], name: str, used: set[str]) -> list[ControlGroup]:
    """The run's group in each v1 hierarchy of a :data:`RUNTIME_CONTROLLERS` controller that serves no feature
    (those in ``used`` do already): on a hybrid machine the cpu and cpuacct hierarchies, say. One that cannot be
    made is left out (debug log): it costs a runtime its limits, not the bot its game."""
    shown: list[ControlGroup] = []
    for hierarchy in hierarchies:
        if hierarchy.version != 1 or not hierarchy.controllers & RUNTIME_CONTROLLERS:
            continue
        if any(path.startswith(hierarchy.own.rstrip("/") + "/") for path in used):
            continue
        try:
            shown.append(v1.run_group(hierarchy, name))
        except OSError as error:
            LOGGER.debug("cgroups: no run group in %s for runtimes to read: %s", hierarchy.own, error.strerror)
    return shown
