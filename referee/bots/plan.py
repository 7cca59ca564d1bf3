"""A bot's launch planned once, before any fork: its program, interpreter, uid, what its sandbox shows, its env.

Preflight, check-bot and launch all call :func:`plan_launch`; the launcher only renders and starts the plan.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from referee.bots.errors import BotLaunchError, LauncherError
from referee.bots.limits import ResourceLimits, mib_bytes
from referee.bots.sandbox.isolation import (
    PRIVATE_TMPFS,
    Bind,
    Isolation,
    Level,
    bot_dir_for_sandbox,
    check_exposure,
    inaccessible,
    probe_bwrap,
    sandbox_roots,
    sandbox_view,
    with_interpreter,
    within,
)
from referee.bots.sandbox.seccomp import PolicyName
from referee.bots.sandbox.uids import as_user, typical_uid

LOGGER = logging.getLogger("durak")

#: The environment of the wrappers that run as root before the bot (the cgroup-joining sh, prlimit, setpriv,
#: bwrap): fixed, so that nothing a bot's settings say reaches them.
WRAPPER_ENV: Mapping[str, str] = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
#: Variables a bot's settings may not set, each read by the dynamic loader, glibc or a shell before the bot's
#: own code runs (glibc's list of variables it drops for setuid programs, sysdeps/generic/unsecvars.h, less
#: TMPDIR, which the referee sets; and the shells' startup files and exported functions). The bot's env never
#: reaches a root process; refusing these too keeps one mistake from making it code run as root.
REFUSED_ENV = frozenset({"GLIBC_TUNABLES", "GCONV_PATH", "GETCONF_DIR", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
                         "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR",
                         "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4"})
#: Prefixes of refused variables: the loader's (``LD_PRELOAD``, ``LD_AUDIT``...), malloc's (glibc tunables,
#: ``MALLOC_TRACE`` writes a file) and bash's exported functions.
REFUSED_ENV_PREFIXES = ("LD_", "MALLOC_", "BASH_FUNC_")

#: Options whose value is a ``:``-joined list of paths that a runtime loads code from (the JVM's class path).
CLASS_PATH_OPTIONS = ("-cp", "-classpath", "--class-path")
#: Variables of a bot's env that list paths a runtime loads code from, ``:``-joined.
PATH_LIST_VARIABLES = ("CLASSPATH", "PYTHONPATH", "NODE_PATH")
#: What a bwrap sandbox makes of its own at these places: a path there names the sandbox's, never the host's.
_MADE_BY_SANDBOX = ("/proc", "/dev")

#: Who a planned bot runs as: the referee's own uid (not root, or level none), a uid of its own leased at
#: launch (root), or root (``process`` level, files out of an unprivileged uid's reach, ``allow_root``).
RunsAs = Literal["referee", "own", "root"]


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


@dataclass(frozen=True, slots=True)
class LaunchPlan:
    """Everything a launch decides before its fork; only the uid lease, control groups, TMPDIR and fds are
    left to the launch itself. Frozen: preflight and launch make the same plan from the same inputs."""

    level: Level
    #: The isolation the bot runs under (bwrap: showing also its interpreter's tree, if needed).
    isolation: Isolation
    limits: ResourceLimits
    #: The program as executed: absolute, or relative to ``cwd`` (as the check found it).
    program: str
    args: tuple[str, ...]
    cwd: str | None
    #: A script's ``#!`` interpreter (absolute), or None for a binary.
    interpreter: str | None
    runs_as: RunsAs
    #: The bot's whole environment, set by the last exec after the change of uid (never the wrappers').
    env: tuple[tuple[str, str], ...]
    #: bwrap only: what the sandbox shows, in order, and the bot's working directory inside.
    view: tuple[Bind, ...] = ()
    chdir: str | None = None
    #: bwrap only: the seccomp filter (:data:`~referee.bots.sandbox.seccomp.POLICIES`): the bots', or a build's.
    seccomp: PolicyName = "bots"


def env_refusal(name: str, value: str = "") -> str | None:
    """Why a bot's settings may not set the variable ``name`` to ``value`` (one line naming it), or None."""
    if not name or "=" in name or "\0" in name or "\0" in value:
        return f"bad environment variable {name!r}"
    if name in REFUSED_ENV or name.startswith(REFUSED_ENV_PREFIXES):
        return (f"environment variable {name!r} is refused in a bot's settings: the loader or a shell reads it "
                "before the bot runs (docs/ISOLATION.md)")
    return None


def check_bot_env(env: Mapping[str, str]) -> None:
    """:raises BotLaunchError: a variable of ``env`` (a bot's settings) is refused (:func:`env_refusal`)."""
    for name, value in env.items():
        if (why := env_refusal(name, value)) is not None:
            raise BotLaunchError(why)


def scrubbed_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every bot starts from: PATH and a UTF-8 locale, nothing of the referee's secrets;
    ``extra`` (a config's ``env``) on top.

    :raises BotLaunchError: ``extra`` sets a refused variable (:func:`env_refusal`).
    """
    check_bot_env(extra or {})
    return {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})}


def plan_launch(command: BotCommand, isolation: Isolation, limits: ResourceLimits | None = None) -> LaunchPlan:
    """Every decision and check of a launch, without starting anything.

    :raises BotLaunchError: the program or folder is missing, out of reach of the bot's uid or outside its
        sandbox, the sandbox would show the checkout or a protected path, or the env sets a refused variable.
    :raises LauncherError: this machine cannot run bots at all (no util-linux).
    :raises SandboxUnavailable: bwrap asked for and unusable here.
    """
    wrapper_paths()
    if command.env is not None:
        check_bot_env(command.env)
    program = resolve_program(command)
    limits = limits or ResourceLimits()
    path = _program_path(command, program)
    interpreter = _interpreter(path, command.env)
    env = tuple((os.environ if command.env is None else command.env).items())
    uid = typical_uid(isolation.uid) if isolation.level != "none" else None
    runs_as: RunsAs = "referee" if uid is None else "own"
    view: tuple[Bind, ...] = ()
    chdir: str | None = None
    if isolation.level == "process" and uid is not None and not _reachable_or_root(command, program, uid, isolation):
        runs_as = "root"
    elif isolation.level == "bwrap":
        probe_bwrap()
        isolation, bot_dir, chdir = _sandbox_dir(command, program, interpreter or path, isolation, uid)
        view = sandbox_view(isolation, bot_dir=bot_dir, chdir=chdir, tmp_bytes=mib_bytes(limits.file_size_mb))
    cwd = None if command.cwd is None else os.fspath(command.cwd)
    return LaunchPlan(isolation.level, isolation, limits, program, tuple(command.argv[1:]), cwd, interpreter,
                      runs_as, env, view, chdir)


def _sandbox_dir(command: BotCommand, program: str, interpreter: str, isolation: Isolation,
                 uid: int | None) -> tuple[Isolation, str | None, str]:
    """What a bwrap bot is shown: ``isolation`` with its interpreter's tree, its folder, and its working
    directory inside.

    :raises BotLaunchError: the folder would show the checkout or a protected path, or the bot's files are
        outside the sandbox or out of reach of ``uid`` (None: the referee's).
    """
    bot_dir: str | None
    if command.cwd is not None:
        bot_dir = chdir = os.path.abspath(command.cwd)
    else:  # the bot sees where its script or program is, and starts where the referee is (an empty folder)
        bot_dir, chdir = bot_dir_for_sandbox(command.argv, program, isolation), os.getcwd()
    if bot_dir is not None:
        check_exposure([bot_dir], isolation)
    isolation = with_interpreter(isolation, interpreter, bot_dir)
    roots = sandbox_roots(isolation, bot_dir)
    check_shown(command, roots, uid)
    _check_reach(command, program, os.geteuid() if uid is None else uid, roots)
    return isolation, bot_dir, chdir


def named_paths(command: BotCommand) -> list[tuple[str, str]]:
    """(what, path) for every path a bot's command and env name, as the bot would resolve them: each command word
    (the value of a ``--option=value`` word), each part of a class path option's value (:data:`CLASS_PATH_OPTIONS`)
    and of the :data:`PATH_LIST_VARIABLES` in its env; relative ones against its working directory."""
    cwd = os.path.abspath(command.cwd if command.cwd is not None else os.getcwd())
    named: list[tuple[str, str]] = []
    words = list(command.argv[1:])
    for before, word in zip(["", *words], words, strict=False):
        option, equals, value = word.partition("=")
        if before in CLASS_PATH_OPTIONS or (equals and option in CLASS_PATH_OPTIONS):
            named += [("class path part", part) for part in (value if equals else word).split(":")]
        elif equals and option.startswith("-"):
            named.append(("command word", value))
        elif not word.startswith("-"):
            named.append(("command word", word))
    env = command.env or {}
    named += [(f"{name} part", part) for name in PATH_LIST_VARIABLES for part in env.get(name, "").split(":")]
    return [(what, os.path.join(cwd, path)) for what, path in named if path]


def check_shown(command: BotCommand, roots: list[str], uid: int | None = None) -> None:
    """Refuse, before launch, a bot whose command or env names a path that its sandbox will not show (``roots``:
    what it binds), so that a class folder outside the bot's folder is one line naming the path rather than a
    ``ClassNotFoundException`` at the handshake. Whether a path outside exists is looked up as ``uid`` (the bot's;
    None: the referee's) in a child that dropped root (:func:`as_user`), never as root: a link to /etc/shadow or a
    file in a folder only root may enter answers as a missing path does.

    :raises BotLaunchError: naming the first such path.
    """
    outside = [(what, path) for what, path in named_paths(command)
               if not _shown(path, roots, tmpfs=False) and os.path.abspath(path) not in PRIVATE_TMPFS]
    found = as_user(uid, _existing, [path for _, path in outside]) if outside else []
    for what, path in (named for named, there in zip(outside, found, strict=True) if there):
        private = next((tmp for tmp in PRIVATE_TMPFS if within(os.path.abspath(path), tmp)), None)
        if private is not None:  # the bot's own tmpfs is empty: a host file there is lost to it
            why = f"its {private} is a private, empty tmpfs"
        else:
            why = "it shows the bot only its own folder, the system and its interpreter"
        raise BotLaunchError(f"bot {what} {path} is hidden by the sandbox ({why}): put it in the bot's folder and "
                             "name that folder (durak play and check-bot: --dir DIR; a tournament: the bot's dir)")


def _existing(paths: list[str]) -> list[bool]:
    """Whether each path exists (a link counts, wherever it leads): run as the bot's uid (:func:`as_user`)."""
    return [os.path.lexists(path) for path in paths]


def _shown(path: str, roots: list[str], *, tmpfs: bool = True) -> bool:
    """Whether ``path``, as written, is inside a bound root or is what the sandbox makes itself (``/dev/stderr``
    is the sandbox's, wherever the referee's own stderr leads; ``/tmp/x``, unless not ``tmpfs``, in the bot's own).

    Decided from the words alone: the daemon (root) never looks a path up for this, so the answer is the same
    whether the path exists, is a link, or sits in a folder only root may enter; inside the sandbox, a link that
    leads out of what it shows leads nowhere."""
    written = os.path.abspath(path)
    return any(within(written, place) for place in (*_MADE_BY_SANDBOX, *(PRIVATE_TMPFS if tmpfs else ()), *roots))


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
    if "=" in name:  # the last exec, env, would take it for a variable
        raise BotLaunchError(f"bot program {name!r} has '=' in its name: rename it")
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


def _reachable_or_root(command: BotCommand, program: str, uid: int, isolation: Isolation) -> bool:
    """Whether an unprivileged ``uid`` can run the bot under the ``process`` level (which shows the bot the
    real file system). If not (an interpreter under /root, say) the launch is refused, unless
    ``isolation.allow_root`` says these are the user's own trusted bots: then it runs as root, with a warning.

    :raises BotLaunchError: the uid cannot reach the bot's files and root is not allowed.
    """
    try:
        _check_reach(command, program, uid, None, who="an unprivileged uid")
    except BotLaunchError as exc:
        if not isolation.allow_root:
            raise BotLaunchError(f"{exc.reason}, which shows the bot its interpreter (bots never run as root, "
                                 "unless --bots-as-root allows it for trusted bots)") from None
        warn_once(f"running this bot as root, not as an unprivileged user (trusted bots only): {exc.reason}")
        return False
    return True


def warn_once(message: str) -> None:
    """Log ``message`` as a warning the first time this process says it."""
    if message not in _warned:
        _warned.add(message)
        LOGGER.warning("%s", message)


_warned: set[str] = set()


def _check_reach(command: BotCommand, program: str, uid: int, roots: list[str] | None, who: str = "") -> None:
    """Refuse, in one line, a bot whose files its uid cannot read or (``roots``: bwrap's binds) cannot see."""
    cwd = os.path.abspath(command.cwd if command.cwd is not None else os.getcwd())
    program_path = _program_path(command, program)
    wanted = [("working directory", cwd, os.X_OK)] if command.cwd is not None or roots is None else []
    wanted.append(("program", program_path, os.X_OK))
    interpreter = _interpreter(program_path, command.env)
    if interpreter is not None:
        wanted += [("program", program_path, os.R_OK | os.X_OK), ("interpreter", interpreter, os.X_OK)]
    for word in command.argv[1:]:  # under bwrap, only a word inside what the sandbox shows, looked up as its uid
        path = os.path.join(cwd, word)
        if word.startswith("-") or (roots is not None and not _shown(path, roots)):
            continue
        if as_user(uid, os.path.isfile, path):
            wanted.append(("file", path, os.R_OK))
    for what, path, want in wanted:
        why = inaccessible(path, uid, uid, want, roots)
        if why is None:
            continue
        if roots is not None and why.endswith("not visible in the sandbox"):
            raise BotLaunchError(f"bot {what} {path} is outside the sandbox ({why.split(' is ')[0]} is not "
                                 "shown): move it into the bot's folder or add it to the sandbox's binds")
        fix = "make it readable by other users" + (', or use the default sandbox "bwrap"' if roots is None else "")
        raise BotLaunchError(f"bot {what} {path} is out of reach of {who or f'the bot uid {uid}'} ({why}): {fix}")


def _program_path(command: BotCommand, program: str) -> str:
    """The program's absolute path, relative to the bot's working directory."""
    return os.path.join(os.path.abspath(command.cwd if command.cwd is not None else os.getcwd()), program)


def _interpreter(path: str, env: Mapping[str, str] | None) -> str | None:
    """The interpreter a ``#!`` script names (through ``/usr/bin/env``), or None for a binary."""
    try:
        with open(path, "rb") as script:
            head = script.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n")[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        names = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        search = (os.environ if env is None else env).get("PATH", os.defpath)
        return (shutil.which(names[0], path=search) if names else None) or words[0]
    return words[0]

