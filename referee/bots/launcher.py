"""The one place that turns a bot command into a running child, and so decides how bots are isolated.

A bot runs as ``prlimit --data=... -- setpriv --pdeathsig KILL -- <argv>``: util-linux wrappers set the
rlimits and the parent-death signal after the fork, so the referee needs no ``preexec_fn`` (which forces
a plain fork, whose cost grows with the referee's memory). Each bot leads a new session and process group,
so one signal reaches all it spawned. Stronger isolation (another uid, namespaces, bubblewrap) goes here.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from referee.bots.errors import BotLaunchError, LauncherError
from referee.bots.limits import ResourceLimits

_MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class BotCommand:
    """How to start a bot: program and arguments, working directory, environment."""

    #: A program without a slash is looked up on the bot's PATH; one with a slash is relative to cwd.
    argv: Sequence[str]
    #: The bot's working directory; None for the referee's.
    cwd: str | os.PathLike[str] | None = None
    #: The bot's whole environment; None inherits the referee's.
    env: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "argv", tuple(self.argv))
        if not self.argv or not self.argv[0]:
            raise ValueError("a bot command needs a program")


def launch(command: BotCommand, limits: ResourceLimits) -> subprocess.Popen[bytes]:
    """Start the bot with piped stdin, stdout and stderr; BotLaunchError, before any fork, if it cannot be.

    The parent-death signal follows the thread that spawned the bot: launch from a thread that outlives it.
    """
    prlimit, setpriv = wrapper_paths()
    program = resolve_program(command)
    argv = [prlimit, *_prlimit_options(limits), "--", setpriv, "--pdeathsig", "KILL", "--", program]
    return subprocess.Popen(
        [*argv, *command.argv[1:]],
        cwd=command.cwd,
        env=command.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        close_fds=True,
        start_new_session=True,
    )


@functools.cache
def wrapper_paths() -> tuple[str, str]:
    """The paths of prlimit and setpriv, looked up once; LauncherError on machines without them."""
    prlimit, setpriv = shutil.which("prlimit"), shutil.which("setpriv")
    if not sys.platform.startswith("linux") or prlimit is None or setpriv is None:
        raise LauncherError("running bots requires Linux with util-linux prlimit and setpriv")
    return prlimit, setpriv


def resolve_program(command: BotCommand) -> str:
    """The program to execute, checked here so that a typo is one clean error rather than a crash."""
    if command.cwd is not None and not os.path.isdir(command.cwd):
        raise BotLaunchError(f"bot working directory {os.fspath(command.cwd)!r} not found")
    name = command.argv[0]
    if "/" not in name:
        env = os.environ if command.env is None else command.env
        found = shutil.which(name, path=env.get("PATH", os.defpath))
        if found is None:
            raise BotLaunchError(f"bot program {name!r} not found")
        return os.path.abspath(found)
    path = os.path.join(command.cwd or "", name)
    if not os.path.isfile(path):
        raise BotLaunchError(f"bot program {name!r} not found")
    if not os.access(path, os.X_OK):
        raise BotLaunchError(f"bot program {name!r} is not executable")
    return name  # the child resolves it against cwd, as the check above did


def _prlimit_options(limits: ResourceLimits) -> list[str]:
    """One prlimit option per limit set, as both soft and hard limit."""
    values = {
        "data": _bytes(limits.memory_mb),
        "nproc": limits.max_processes,
        "fsize": _bytes(limits.file_size_mb),
        "nofile": limits.open_files,
        "cpu": limits.cpu_seconds,
        "core": 0,  # a crashing bot must not litter its directory with core dumps
    }
    return [f"--{name}={value}" for name, value in values.items() if value is not None]


def _bytes(mib: int | None) -> int | None:
    return None if mib is None else mib * _MIB
