"""A bot's launch planned once, before any fork: its program, interpreter, uid, what its sandbox shows, its env.

Preflight, check-bot and launch all call :func:`plan_launch`; the launcher only renders and starts the plan.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

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
    system_binds,
    with_interpreter,
    within,
)
from referee.bots.sandbox.seccomp import PolicyName
from referee.bots.sandbox.uids import as_user, typical_uid
from referee.bots.words import python_hint

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

    The program, its ``#!`` interpreter and every path the command names are looked up as the bot's uid, in what
    its sandbox shows (:func:`_locate`, :func:`check_shown`), never as root: a path root alone may reach, a link to
    /etc/shadow and a missing path get one answer.

    :raises BotLaunchError: the program or folder is missing, out of reach of the bot's uid or outside its
        sandbox, the sandbox would show the checkout or a protected path, or the env sets a refused variable.
    :raises LauncherError: this machine cannot run bots at all (no util-linux).
    :raises SandboxUnavailable: bwrap asked for and unusable here.
    """
    wrapper_paths()
    if command.env is not None:
        check_bot_env(command.env)
    check_names(command)
    limits = limits or ResourceLimits()
    env = tuple((os.environ if command.env is None else command.env).items())
    uid = typical_uid(isolation.uid) if isolation.level != "none" else None
    runs_as: RunsAs = "referee" if uid is None else "own"
    view: tuple[Bind, ...] = ()
    chdir: str | None = None
    if isolation.level == "bwrap":
        probe_bwrap()
        bot_dir, chdir = _bot_dir(command, isolation)
        found = _locate(command, uid, sandbox_roots(isolation, bot_dir), trees=isolation.interpreter_trees)
        isolation = _sandbox_dir(command, found, isolation, uid, bot_dir, chdir)
        view = sandbox_view(isolation, bot_dir=bot_dir, chdir=chdir, tmp_bytes=mib_bytes(limits.file_size_mb))
    elif isolation.level == "process" and uid is not None:
        found, reachable = _process_level(command, uid, isolation)
        if not reachable:
            runs_as = "root"
    else:  # the referee's own uid: what it finds is what the bot may run
        found = _locate(command, None, None, trees=False)
    cwd = None if command.cwd is None else os.fspath(command.cwd)
    return LaunchPlan(isolation.level, isolation, limits, found.program, tuple(command.argv[1:]), cwd,
                      found.interpreter, runs_as, env, view, chdir)


def _bot_dir(command: BotCommand, isolation: Isolation) -> tuple[str | None, str]:
    """The folder a bwrap bot is shown (None: none), and its working directory inside."""
    if command.cwd is not None:
        folder = os.path.abspath(command.cwd)
        return folder, folder
    # the bot sees where its script or program is, and starts where the referee is (an empty folder)
    return bot_dir_for_sandbox(command.argv, command.argv[0], isolation), os.getcwd()


def _sandbox_dir(command: BotCommand, found: _Found, isolation: Isolation, uid: int | None,
                 bot_dir: str | None, chdir: str) -> Isolation:
    """``isolation`` showing also the tree of the bot's interpreter, where it may (``interpreter_trees``: the
    organizer's own bots).

    :raises BotLaunchError: the folder would show the checkout or a protected path, or the bot's files are
        outside the sandbox or out of reach of ``uid`` (None: the referee's).
    """
    if bot_dir is not None:
        check_exposure([bot_dir], isolation)
    if isolation.interpreter_trees:
        isolation = with_interpreter(isolation, _in_sandbox(found.interpreter or found.path), bot_dir)
    roots = sandbox_roots(isolation, bot_dir)
    check_shown(command, roots, uid)
    _check_reach(command, found, os.geteuid() if uid is None else uid, roots)
    return isolation


def _process_level(command: BotCommand, uid: int, isolation: Isolation) -> tuple[_Found, bool]:
    """The bot's program as ``uid`` finds it on the real file system (the ``process`` level shows it all), and
    whether ``uid`` can run it (:func:`_reachable_or_root`); as root only for trusted bots (``allow_root``).

    :raises BotLaunchError: ``uid`` finds no program, or cannot reach the bot's files, and root is not allowed.
    """
    try:
        found = _locate(command, uid, None, trees=False)
    except BotLaunchError:
        if not isolation.allow_root:
            _reachable_or_root(command, None, uid, isolation)  # the organizer's folder out of reach: says so
            raise
        found = _locate(command, None, None, trees=False)  # trusted bots (--bots-as-root): as root
    return found, _reachable_or_root(command, found, uid, isolation)


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


def check_names(command: BotCommand) -> None:
    """Refuse a missing working directory (the organizer's folder, or the store's) and a program named with ``=``."""
    if command.cwd is not None and not os.path.isdir(command.cwd):
        raise BotLaunchError(f"bot working directory {os.fspath(command.cwd)!r} not found")
    if "=" in command.argv[0]:  # the last exec, env, would take it for a variable
        raise BotLaunchError(f"bot program {command.argv[0]!r} has '=' in its name: rename it")


def resolve_program(command: BotCommand) -> str:
    """The program to execute as the referee's own uid finds it (:func:`_locate`), for a bot run without a sandbox.

    :raises BotLaunchError: none found, or not executable.
    """
    check_names(command)
    return _locate(command, None, None, trees=False).program


@dataclass(frozen=True, slots=True)
class _Found:
    """A bot's program as its uid finds it in what its sandbox shows."""

    #: As executed: absolute, or relative to the bot's working directory (as named).
    program: str
    #: Absolute.
    path: str
    #: Its ``#!`` interpreter, or None for a binary.
    interpreter: str | None


class _Seen(NamedTuple):
    """What a uid finds at a path: a regular file (following links), whether it may run and read it, its head."""

    file: bool = False
    executable: bool = False
    readable: bool = False
    head: bytes = b""


#: The answer for a path a uid cannot find, whatever is there: missing, out of its reach, or not shown.
_NOTHING = _Seen()
#: How much of a program is read for its ``#!`` line (the kernel's own limit is 256).
_HEAD = 256


def _locate(command: BotCommand, uid: int | None, roots: list[str] | None, *, trees: bool) -> _Found:
    """The bot's program and its ``#!`` interpreter as ``uid`` (None: the referee's) finds them in what its
    sandbox shows: ``roots`` (bwrap's binds; None: the real file system), each path looked up from the bind that
    holds it, so that the folders above a bind do not count, as in the sandbox. A path that no bind holds is never
    looked up. With ``trees`` (the organizer's own bots) a path in a ``bin/`` folder outside them is held by that
    folder's parent, which the sandbox will show (:func:`with_interpreter`).

    Entrant-named paths are never looked up as root: a path in a folder only root may enter, a link to
    /etc/shadow and a missing path are all "not found".

    :raises BotLaunchError: no program, a program its uid may not run, or an interpreter its uid cannot find.
    """
    cwd = os.path.abspath(command.cwd if command.cwd is not None else os.getcwd())
    env = os.environ if command.env is None else command.env
    name = command.argv[0]
    if "/" not in name:
        found = _search(name, env, uid, roots, trees)
        if found is None:
            raise BotLaunchError(f"bot program {name!r} not found{python_hint(name)}")
        program, seen = found
    else:
        program = name  # the child resolves it against cwd, as the look-up did
        (seen,) = _look_up(uid, roots, trees, [os.path.join(cwd, name)])
        if not seen.file or (not seen.executable and not seen.readable):
            raise BotLaunchError(f"bot program {name!r} not found{python_hint(name)}")
        if not seen.executable:
            raise BotLaunchError(f"bot program {name!r} is not executable")
    path = os.path.join(cwd, program)
    words = _shebang(seen.head)
    if words is None:
        return _Found(program, path, None)
    interpreter = words[0]
    if os.path.basename(interpreter) == "env":
        names = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        searched = _search(names[0], env, uid, roots, trees) if names else None
        if searched is not None:
            return _Found(program, path, searched[0])
    (there,) = _look_up(uid, roots, trees, [os.path.join(cwd, interpreter)])
    if not there.file or not there.executable:
        raise BotLaunchError(f"bot program {name!r} names the interpreter {interpreter!r} on its #! line, which its "
                             "uid does not find in what its sandbox shows: a bot's interpreter must be one the "
                             "sandbox shows (under /usr, or the referee's own)")
    return _Found(program, path, interpreter)


def _search(name: str, env: Mapping[str, str], uid: int | None, roots: list[str] | None,
            trees: bool) -> tuple[str, _Seen] | None:
    """The first executable file ``name`` on ``env``'s PATH as ``uid`` finds it (see :func:`_locate`), and what
    it found there; None if none."""
    candidates = list(dict.fromkeys(os.path.abspath(os.path.join(folder, name))
                                    for folder in env.get("PATH", os.defpath).split(os.pathsep)))
    for candidate, seen in zip(candidates, _look_up(uid, roots, trees, candidates), strict=True):
        if seen.file and seen.executable:
            return candidate, seen
    return None


def _shebang(head: bytes) -> list[str] | None:
    """The words of a ``#!`` line, or None for a binary."""
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n")[0].decode("utf-8", "replace").split()
    return words or None


def _holder(path: str, roots: list[str] | None, trees: bool) -> str | None:
    """The bind that will show ``path`` (absolute, as written) in the sandbox: the innermost root holding it, or
    with ``trees`` the tree above its ``bin/`` folder; None when nothing will (decided from the words alone)."""
    if roots is None:
        return "/"
    holders = [root for root in roots if within(path, root)]
    if holders:
        return max(holders, key=len)
    folder = os.path.dirname(path)
    return os.path.dirname(folder) if trees and os.path.basename(folder) == "bin" else None


def _in_sandbox(path: str) -> str:
    """``path`` through the links a sandbox makes of the system's (``/bin`` to ``usr/bin``), as in the sandbox."""
    for bind in system_binds():
        if bind.kind == "symlink" and bind.source is not None and within(path, bind.dest):
            target = os.path.join(os.path.dirname(bind.dest), bind.source)
            return os.path.normpath(target + path[len(bind.dest):])
    return path


def _look_up(uid: int | None, roots: list[str] | None, trees: bool, paths: list[str]) -> list[_Seen]:
    """What ``uid`` finds at each path in what its sandbox shows (see :func:`_locate`): each looked up from a
    descriptor of the bind that holds it, opened here, in a child that dropped to ``uid`` (:func:`as_user`)."""
    asked: list[tuple[int | None, str] | None] = []
    folders: dict[str, int | None] = {}
    try:
        for path in (_in_sandbox(os.path.abspath(path)) if roots is not None else os.path.abspath(path)
                     for path in paths):
            holder = _holder(path, roots, trees)
            if holder is None:
                asked.append(None)  # the sandbox will not show it: never looked up
                continue
            if holder not in folders:
                try:  # a bind's own folder, the organizer's (the system, the bot's folder, the referee's interpreter)
                    folders[holder] = os.open(holder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
                except OSError:
                    folders[holder] = None
            fd = folders[holder]
            if fd is not None:
                asked.append((fd, os.path.relpath(path, holder)))
            else:
                asked.append(None)
        found = as_user(uid, _see_all, asked) if any(asked) else []
    finally:
        for fd in folders.values():
            if fd is not None:
                os.close(fd)
    answers = iter(found)
    return [_NOTHING if question is None else next(answers) for question in asked]


def _see_all(asked: list[tuple[int | None, str] | None]) -> list[_Seen]:
    """:func:`_see` for each question asked: run as the bot's uid (:func:`as_user`)."""
    return [_see(*question) for question in asked if question is not None]


def _see(folder: int | None, path: str) -> _Seen:
    """What this process's uid finds at ``path``, relative to the folder ``folder`` (a descriptor)."""
    try:
        info = os.stat(path, dir_fd=folder)
    except (OSError, ValueError):
        return _NOTHING
    if not stat.S_ISREG(info.st_mode):
        return _NOTHING
    executable = os.access(path, os.X_OK, dir_fd=folder)
    readable = os.access(path, os.R_OK, dir_fd=folder)
    head = b""
    if readable:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=folder)
        except OSError:
            return _Seen(True, executable, False)
        try:
            head = os.read(fd, _HEAD) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
        except OSError:
            pass
        finally:
            os.close(fd)
    return _Seen(True, executable, readable, head)


def _reachable_or_root(command: BotCommand, found: _Found | None, uid: int, isolation: Isolation) -> bool:
    """Whether an unprivileged ``uid`` can run the bot under the ``process`` level (which shows the bot the
    real file system). If not (an interpreter under /root, say) the launch is refused, unless
    ``isolation.allow_root`` says these are the user's own trusted bots: then it runs as root, with a warning.
    ``found``: the program as found (None: check the working directory alone).

    :raises BotLaunchError: the uid cannot reach the bot's files and root is not allowed.
    """
    try:
        _check_reach(command, found, uid, None, who="an unprivileged uid")
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


def _check_reach(command: BotCommand, found: _Found | None, uid: int, roots: list[str] | None, who: str = "") -> None:
    """Refuse, in one line, a bot whose files its uid cannot read or (``roots``: bwrap's binds) cannot see; the
    program and interpreter (``found``: as its uid found them, :func:`_locate`; None: the folder alone)."""
    cwd = os.path.abspath(command.cwd if command.cwd is not None else os.getcwd())
    wanted = [("working directory", cwd, os.X_OK)] if command.cwd is not None or roots is None else []
    if found is not None:
        wanted.append(("program", found.path, os.X_OK))
        if found.interpreter is not None:
            wanted += [("program", found.path, os.R_OK | os.X_OK), ("interpreter", found.interpreter, os.X_OK)]
        for word in command.argv[1:]:  # under bwrap, only a word inside what the sandbox shows, looked up as its uid
            path = os.path.join(cwd, word)
            if word.startswith("-") or (roots is not None and not _shown(path, roots)):
                continue
            if as_user(uid, os.path.isfile, path):
                wanted.append(("file", path, os.R_OK))
    for what, path, want in wanted:
        why = inaccessible(path if roots is None else _in_sandbox(path), uid, uid, want, roots)
        if why is None:
            continue
        hint = python_hint(command.argv[0]) if what in ("program", "interpreter") else ""
        if roots is not None and why.endswith("not visible in the sandbox"):  # a Python: {python} is the fix
            fix = hint.removeprefix("; ") or ("move it into the bot's folder (--dir, a config's dir), which the "
                                              "sandbox shows, or use one under /usr")
            raise BotLaunchError(f"bot {what} {path} is outside the sandbox ({why.split(' is ')[0]} is not "
                                 f"shown): {fix}")
        fix = "make it readable by other users" + (', or use the default sandbox "bwrap"' if roots is None else "")
        raise BotLaunchError(f"bot {what} {path} is out of reach of {who or f'the bot uid {uid}'} ({why}): {fix}"
                             f"{hint}")
