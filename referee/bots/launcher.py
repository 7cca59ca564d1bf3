"""The one place that turns a bot command into a running child, and so decides how bots are isolated.

A bot runs under a chain of wrappers that each set something up and then exec the next, so that the referee
needs no ``preexec_fn`` (which forces a plain fork, whose cost grows with the referee's memory). Each bot
leads a new session and process group.

* ``Isolation("bwrap")`` (the default; :mod:`referee.bots.sandbox.isolation`): ``sh -c <join the bot's control
  groups> -- prlimit ... -- setpriv --pdeathsig KILL --no-new-privs -- bwrap <binds, tmpfs, --seccomp FD>
  -- setpriv --reuid U --regid U --clear-groups --pdeathsig KILL -- <argv>`` (U leased per bot when root).
* ``Isolation("process")`` (weaker, opt-in): the same control groups and uid, a private TMPDIR on the host and
  ``unshare --pid --fork --kill-child --mount-proc`` instead of bwrap: no private file view, no seccomp.
* ``Isolation("none")``: ``prlimit --data=... -- setpriv --pdeathsig KILL -- <argv>``, for trusted helpers.

The first wrapper moves itself into the bot's control groups (:mod:`referee.bots.sandbox.cgroups`) before it execs
anything of the bot's, so the kernel freezes, caps and kills the whole tree as one. A PID namespace dies as a
whole with its first process, which ``--kill-child`` (bwrap: ``--die-with-parent``) kills with the wrapper,
which the parent-death signal kills with the referee.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import itertools
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from referee.bots.errors import BotLaunchError, LauncherError
from referee.bots.launched import LaunchedBot
from referee.bots.limits import ResourceLimits
from referee.bots.sandbox import seccomp
from referee.bots.sandbox.cgroups import BotCgroup, CgroupLimits, CgroupRun
from referee.bots.sandbox.cleanup import remove_tree
from referee.bots.sandbox.isolation import (
    PLAIN,
    Isolation,
    bot_dir_for_sandbox,
    bwrap_options,
    check_exposure,
    inaccessible,
    pid_namespace_options,
    private_tmpdir,
    probe_bwrap,
    sandbox_roots,
    with_interpreter,
)
from referee.bots.sandbox.uids import UidLease, drop_to, lease_uid, typical_uid, uid_options

_MIB = 1 << 20
LOGGER = logging.getLogger("durak")


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


def scrubbed_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every bot starts from: PATH and a UTF-8 locale, nothing of the referee's secrets;
    ``extra`` (a config's ``env``) on top."""
    return {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})}


def launch(command: BotCommand, limits: ResourceLimits, isolation: Isolation = PLAIN) -> LaunchedBot:
    """Start the bot with piped stdin, stdout and stderr; BotLaunchError, before any fork, if it cannot be.

    :raises BotLaunchError: the program or folder is missing, or out of reach of the bot's uid or sandbox.
    :raises LauncherError: this machine cannot run bots at all (no util-linux, no uid left).
    :raises SandboxUnavailable: ``isolation`` asks for bwrap and this machine has no usable bwrap.

    The parent-death signal follows the thread that spawned the bot: launch from a thread that outlives it.
    """
    prlimit, setpriv = wrapper_paths()
    program = resolve_program(command)
    rest = list(command.argv[1:])
    if isolation.level == "none":
        argv = [prlimit, *_prlimit_options(limits), "--", setpriv, "--pdeathsig", "KILL", "--", program, *rest]
        return LaunchedBot(_start(argv, command.cwd, command.env), isolation)
    if isolation.level == "bwrap":
        probe_bwrap()
    with contextlib.ExitStack() as undo:
        lease = lease_uid(isolation.uid)
        if lease is not None:
            undo.callback(lease.release)
            if limits.max_processes is None:  # RLIMIT_NPROC counts per uid: now it bounds this bot alone
                limits = dataclasses.replace(limits, max_processes=isolation.max_processes)
            if isolation.level == "process" and not _reachable_or_root(command, program, lease.uid, isolation):
                lease.release()
                lease = None
        cgroup = bot_cgroup(limits, isolation)
        if cgroup is not None:
            undo.callback(cgroup.remove)
            if cgroup.can("memory"):  # the whole tree's limit replaces the per-process one
                limits = dataclasses.replace(limits, memory_mb=None)
        head = [*(cgroup.join_prefix() if cgroup is not None else []), prlimit, *_prlimit_options(limits), "--",
                setpriv, "--pdeathsig", "KILL", "--no-new-privs", "--"]
        env = dict(os.environ if command.env is None else command.env)
        if isolation.level == "process":
            launched = _launch_process(command, program, rest, isolation, head, env, lease, cgroup, undo)
        else:
            launched = _launch_bwrap(command, program, rest, isolation, head, limits, env, lease, cgroup, undo)
        undo.pop_all()
        return launched


def preflight(command: BotCommand, isolation: Isolation = PLAIN) -> None:
    """Every check ``launch`` makes before its fork, without starting anything: call it for each bot before
    the first game, so that a bot that cannot start is one clean error rather than forfeits.

    :raises BotLaunchError: program or folder missing, out of reach of the bot's uid, outside the sandbox,
        or a sandbox that would show the checkout or a protected path.
    :raises SandboxUnavailable: bwrap asked for and unusable here.
    """
    wrapper_paths()
    program = resolve_program(command)
    if isolation.level == "none":
        return
    uid = typical_uid(isolation.uid)
    if isolation.level == "process":
        if uid is not None:
            _reachable_or_root(command, program, uid, isolation)
        return
    probe_bwrap()
    check_exposure(sandbox_roots(isolation, None), isolation)
    _sandbox_view(command, program, isolation, uid)


def _launch_process(command: BotCommand, program: str, rest: list[str], isolation: Isolation, head: list[str],
                    env: dict[str, str], lease: UidLease | None, cgroup: BotCgroup | None,
                    undo: contextlib.ExitStack) -> LaunchedBot:
    _, setpriv = wrapper_paths()
    uid = lease.uid if lease is not None else None
    tmpdir = private_tmpdir(uid)
    undo.callback(remove_tree, tmpdir)
    env["TMPDIR"] = tmpdir
    unshare = pid_namespace_options()
    if unshare is None:  # best effort: no PID namespace here
        argv = [*head[:-1], *uid_options(uid), "--", program, *rest]
        return LaunchedBot(_start(argv, command.cwd, env), isolation, tmpdir=tmpdir, lease=lease, cgroup=cgroup)
    inner = drop_to(setpriv, uid)
    if "--map-root-user" in unshare:  # old unshare: the bot would be root of its user namespace
        inner = [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"]
    argv = [*head, *unshare, "--", *inner, program, *rest]
    return LaunchedBot(_start(argv, command.cwd, env), isolation, namespace="unshare",
                       mount_proc="--mount-proc" in unshare, tmpdir=tmpdir, lease=lease, cgroup=cgroup)


def _launch_bwrap(command: BotCommand, program: str, rest: list[str], isolation: Isolation, head: list[str],
                  limits: ResourceLimits, env: dict[str, str], lease: UidLease | None, cgroup: BotCgroup | None,
                  undo: contextlib.ExitStack) -> LaunchedBot:
    _, setpriv = wrapper_paths()
    bwrap = shutil.which("bwrap") or "bwrap"
    uid = lease.uid if lease is not None else None
    isolation, bot_dir, chdir = _sandbox_view(command, program, isolation, uid)
    env["TMPDIR"] = "/tmp"
    info_read, info_write = os.pipe()
    undo.callback(os.close, info_read)
    fds = [info_write]
    try:
        seccomp = _seccomp_fd()
        if seccomp is not None:
            fds.append(seccomp)
        options = bwrap_options(isolation, bot_dir=bot_dir, chdir=chdir, info_fd=info_write,
                                tmp_bytes=_bytes(limits.file_size_mb), seccomp_fd=seccomp)
        argv = [*head, bwrap, *options, "--", *drop_to(setpriv, uid), program, *rest]
        popen = _start(argv, command.cwd, env, pass_fds=tuple(fds))
    finally:
        for fd in fds:
            os.close(fd)
    os.set_blocking(info_read, False)
    return LaunchedBot(popen, isolation, namespace="bwrap", mount_proc=True, lease=lease, info_fd=info_read,
                       cgroup=cgroup)


def _sandbox_view(command: BotCommand, program: str, isolation: Isolation,
                  uid: int | None) -> tuple[Isolation, str | None, str]:
    """What a bwrap bot is shown: ``isolation`` with its interpreter's tree, its folder, and its working
    directory inside; checked before any fork.

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
    isolation = with_interpreter(isolation, _interpreter_of(command, program), bot_dir)
    _check_reach(command, program, os.geteuid() if uid is None else uid, sandbox_roots(isolation, bot_dir))
    return isolation, bot_dir, chdir


def _seccomp_fd() -> int | None:
    """A fresh fd holding the seccomp filter for one bwrap, or None (said once) where it cannot be built."""
    try:
        return seccomp.filter_fd()
    except seccomp.SeccompUnavailable as exc:
        _warn_once(f"bots run without a seccomp filter (file locks and inotify stay open between bots): {exc}")
        return None


def bot_cgroup(limits: ResourceLimits, isolation: Isolation) -> BotCgroup | None:
    """Control groups for one bot process tree, capped by ``limits`` and held to the cores the launching
    thread may use (a tournament worker pins itself to its game's core); None without control groups here."""
    run = cgroup_run()
    if not run.features:
        return None
    memory = _bytes(limits.memory_mb)
    pids = limits.max_processes or isolation.max_processes
    cpus = ",".join(str(cpu) for cpu in sorted(os.sched_getaffinity(0)))
    try:
        return run.create(f"bot-{next(_bot_numbers)}", CgroupLimits(memory_bytes=memory, pids=pids, cpus=cpus))
    except OSError as exc:
        raise LauncherError(f"cannot make a control group for a bot: {exc}") from None


_run_lock = threading.Lock()
_run: CgroupRun | None = None
_bot_numbers = itertools.count()


def cgroup_run() -> CgroupRun:
    """This process's control groups for its bots, opened (and stale ones of dead referees removed) on first
    use; each missing feature is said once, in one line, and its next best used."""
    global _run
    with _run_lock:
        if _run is None or _run.pid != os.getpid():  # a forked child makes its own
            _run = CgroupRun.open()
            atexit.register(_run.close)
            for reason in _run.missing:
                _warn_once(f"control groups: {reason}; using the next best (see docs/ISOLATION.md)")
        return _run


def _start(argv: list[str], cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None,
           pass_fds: tuple[int, ...] = ()) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        close_fds=True,
        pass_fds=pass_fds,
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
        _warn_once(f"running this bot as root, not as an unprivileged user (trusted bots only): {exc.reason}")
        return False
    return True


def _warn_once(message: str) -> None:
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
    for word in command.argv[1:]:
        if not word.startswith("-") and os.path.isfile(path := os.path.join(cwd, word)):
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


def _interpreter_of(command: BotCommand, program: str) -> str:
    """The interpreter a script bot runs under, or the program itself (absolute)."""
    path = _program_path(command, program)
    return _interpreter(path, command.env) or path


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
