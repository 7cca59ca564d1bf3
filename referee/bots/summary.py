"""One line saying what a bot gets: its sandbox, core and limits, as this machine can give them. ``durak play`` and
``check-bot`` print it, so that a bot is tested knowing the resources a tournament will give it."""

from __future__ import annotations

import os
from collections.abc import Collection

from referee.bots.launcher import cgroup_run
from referee.bots.limits import ResourceLimits
from referee.bots.sandbox import seccomp
from referee.bots.sandbox.isolation import Isolation


def describe_resources(isolation: Isolation, limits: ResourceLimits, cores: Collection[int]) -> str:
    """``sandbox bwrap (a uid of its own, seccomp, no network), core 1, memory 1024 MiB for its process tree,
    ...``: what a bot launched now under ``isolation`` and ``limits``, held to ``cores``, gets here."""
    features = cgroup_run().features if isolation.level != "none" else frozenset[str]()
    return ", ".join([f"sandbox {isolation.level}{_walls(isolation)}", _cores(cores), _memory(limits, features),
                      *_counts(isolation, limits, features), _home(isolation, limits)])


def _walls(isolation: Isolation) -> str:
    if isolation.level == "none":
        return " (no isolation: trusted bots only)"
    uid = "a uid of its own" if os.geteuid() == 0 else "the referee's uid"
    if isolation.level == "process":
        return f" ({uid}, its own PID namespace, the machine's files and network)"
    filtered = ", seccomp" if seccomp.filter_program() is not None else ", no seccomp filter on this architecture"
    return f" ({uid}{filtered}, no network, its own folder and the system read-only)"


def _cores(cores: Collection[int]) -> str:
    listed = ",".join(str(core) for core in sorted(cores))
    return f"core {listed}" if len(cores) == 1 else f"cores {listed}"


def _memory(limits: ResourceLimits, features: frozenset[str]) -> str:
    if limits.memory_mb is None:
        return "no memory limit"
    if "memory" in features:
        return f"memory {limits.memory_mb} MiB for its whole process tree (its control group)"
    return f"memory {limits.memory_mb} MiB per process (RLIMIT_DATA: no memory control group here)"


def _counts(isolation: Isolation, limits: ResourceLimits, features: frozenset[str]) -> list[str]:
    counts = []
    processes = limits.max_processes or (isolation.max_processes if "pids" in features else None)
    if processes is not None:
        counts.append(f"{processes} processes")
    if limits.open_files is not None:
        counts.append(f"{limits.open_files} open files")
    if limits.file_size_mb is not None:
        counts.append(f"files up to {limits.file_size_mb} MiB")
    if limits.cpu_seconds is not None:
        counts.append(f"{limits.cpu_seconds} s of CPU per process")
    return counts


def _home(isolation: Isolation, limits: ResourceLimits) -> str:
    if isolation.level == "bwrap":
        size = f"{limits.file_size_mb} MiB" if limits.file_size_mb is not None else "half the memory"
        return f"HOME=TMPDIR=/tmp (a private tmpfs of {size}, counted in its memory)"
    if isolation.level == "process":
        return "HOME=TMPDIR a private folder on this machine's disk"
    return "no HOME or TMPDIR unless its env sets them"
