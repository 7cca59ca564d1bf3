"""The one place that turns a bot command into a running child, and so decides how bots are isolated.

A bot runs under a chain of wrappers that each set something up and then exec the next, so that the referee
needs no ``preexec_fn`` (which forces a plain fork, whose cost grows with the referee's memory). Each bot
leads a new session and process group, so one signal reaches all it spawned that stayed in the group.

* ``Isolation("none")``: ``prlimit --data=... -- setpriv --pdeathsig KILL -- <argv>``: util-linux wrappers
  set the rlimits and the parent-death signal.
* ``Isolation("process")`` (the default for bots; :mod:`referee.bots.isolation`): a private TMPDIR, and
  ``prlimit ... -- setpriv --pdeathsig KILL --no-new-privs -- unshare --pid --fork --kill-child
  --mount-proc -- setpriv --reuid U --regid U --clear-groups --pdeathsig KILL -- <argv>`` as root (U leased
  per bot); as another user, ``unshare --user --map-current-user ...`` and no change of uid. Without PID
  namespaces on the machine, the same without ``unshare``.
* ``Isolation("bwrap")``: ``prlimit ... -- setpriv ... -- bwrap <binds> -- setpriv --reuid U ... -- <argv>``.

A PID namespace dies as a whole with its first process, which ``--kill-child`` (bwrap: ``--die-with-parent``)
kills with the wrapper, which the parent-death signal kills with the referee: so a bot's process tree never
outlives the referee, even children that called setsid(). :class:`LaunchedBot` signals such children too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from referee.bots.errors import BotLaunchError, LauncherError
from referee.bots.isolation import (
    PLAIN,
    Isolation,
    bot_dir_for_sandbox,
    bwrap_options,
    check_exposure,
    inaccessible,
    pid_namespace_options,
    private_tmpdir,
    probe_bwrap,
    remove_tree,
    sandbox_roots,
)
from referee.bots.limits import ResourceLimits
from referee.bots.pidns import PidNamespace
from referee.bots.uids import UidLease, drop_to, lease_uid, typical_uid, uid_options

_MIB = 1 << 20
LOGGER = logging.getLogger("durak")
_CLOCK_TICK = 1.0 / os.sysconf("SC_CLK_TCK")
_STOP_SWEEPS = 16  # rounds of stopping processes that left the group, each catching children forked meanwhile


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


Namespace = Literal["none", "unshare", "bwrap"]


class LaunchedBot:
    """A started bot: its ``popen`` (the first wrapper, whose pid leads the bot's session and process group)
    and what its isolation set up; ``release()`` it once that process is reaped.

    Under a PID namespace the bot proper is a child of that first process (``unshare``, or bwrap's init),
    and ``signal``, ``cpu_seconds`` look into the namespace through its own /proc.
    """

    def __init__(self, popen: subprocess.Popen[bytes], isolation: Isolation, *, namespace: Namespace = "none",
                 mount_proc: bool = False, tmpdir: str | None = None, lease: UidLease | None = None,
                 info_fd: int | None = None) -> None:
        self.popen = popen
        self.isolation = isolation
        #: The kind of PID namespace the bot got: "none", "unshare" (the bot is its pid 1) or "bwrap"
        #: (bwrap's init is pid 1, the bot its child).
        self.namespace: Namespace = namespace
        #: The bot's private TMPDIR on the referee's side (under bwrap it is the bot's /tmp).
        self.tmpdir = tmpdir
        #: The uid (and gid) the bot runs under, when it is not the referee's.
        self.uid = lease.uid if lease is not None else None
        self._mount_proc = mount_proc
        self._lease = lease
        self._info_fd, self._info = info_fd, b""
        self._holder: int | None = popen.pid if namespace == "unshare" else None
        self._view: PidNamespace | None = None
        self._bot_in_namespace: int | None = 1 if namespace == "unshare" else None
        self._stopped: set[int] = set()  # processes that left the group, stopped one by one by the last pause
        self._last_cpu = 0.0
        self._helper = 1 if namespace == "bwrap" else 0  # bwrap's init: in the group for good, not the bot's
        self._released = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    def signal(self, signum: int) -> None:
        """Signal the bot's process group; under a PID namespace SIGSTOP also stops every process inside that
        left the group (setsid), and SIGCONT resumes those. SIGKILL needs no more: the namespace dies with
        the first wrapper. Without a namespace view, processes that left the group are out of reach.

        SIGTERM goes to the processes inside only, not to the wrappers: a wrapper dying of it would end the bot
        with a signal that the bot itself may have chosen to ignore.
        """
        if signum == signal.SIGTERM and (view := self._namespace()) is not None:
            for pid in view.pids():
                if not (self.namespace == "bwrap" and pid == 1):  # bwrap's init, not the bot
                    view.send(pid, signum)
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signum)
        if signum == signal.SIGSTOP:
            self._stop_escapees()
        elif signum == signal.SIGCONT and self._stopped and (view := self._namespace()) is not None:
            for pid in self._stopped:
                view.send(pid, signal.SIGCONT)
            self._stopped.clear()

    def processes(self) -> dict[int, str]:
        """The processes of the bot's PID namespace and their states ("S", "R", "T" for stopped...), by pid
        as the namespace numbers them; empty without a namespace that the referee can see into."""
        view = self._namespace()
        if view is None:
            return {}
        states = {pid: fields[0].decode() for pid in view.pids() if (fields := view.stat(pid))}
        return dict(sorted(states.items()))

    def pid_namespace(self) -> str | None:
        """The bot's PID namespace as its ``/proc/<pid>/ns/pid`` links name it ("pid:[4026532178]"), if seen."""
        view = self._namespace()
        if view is None:
            return None
        try:
            return os.readlink("1/ns/pid", dir_fd=view.fd)
        except OSError:
            return None

    def cpu_seconds(self) -> float:
        """User plus system CPU seconds of the bot's own threads while it runs; 0.0 if it cannot be seen."""
        if self.namespace == "none":
            return _cpu_seconds(f"/proc/{self.pid}/stat")
        view = self._namespace()
        bot = self._bot_pid(view) if view is not None else None
        fields = view.stat(bot) if view is not None and bot is not None else None
        if fields:
            self._last_cpu = _cpu_from(fields, children=False)
        return self._last_cpu

    def stopping(self) -> None:
        """Note the bot's CPU time before it is stopped: once it exits, only its wrappers can tell, if at all."""
        if self.namespace != "none":
            self.cpu_seconds()

    def final_cpu_seconds(self) -> float:
        """CPU seconds once the first process exited (unreaped). Under a namespace: what it counted of the
        tree it reaped (unshare does; bwrap's init does not tell), or the last look at the running bot."""
        if self.namespace == "none":
            return _cpu_seconds(f"/proc/{self.pid}/stat")
        return max(self._last_cpu, _cpu_seconds(f"/proc/{self.pid}/stat", children=True))

    def exit_code(self, code: int) -> int:
        """The bot's exit code from the first process's: bwrap reports death by signal N as 128 + N."""
        if self.namespace == "bwrap" and 128 < code <= 128 + 64:
            return 128 - code
        return code

    def release(self) -> None:
        """Free what the launch took: the namespace view, the TMPDIR, the uid. A second call does nothing."""
        if self._released:
            return
        self._released = True
        if self._view is not None:
            self._view.close()
        if self._info_fd is not None:
            os.close(self._info_fd)
            self._info_fd = None
        if self.tmpdir is not None:
            remove_tree(self.tmpdir)
        if self._lease is not None:
            self._lease.release()

    def _stop_escapees(self) -> None:
        view = self._namespace()
        if view is None:
            return
        for _ in range(_STOP_SWEEPS):  # a process stopped on its own may have a fork in flight: sweep again
            escaped = [pid for pid in view.pids() if pid not in self._stopped and pid != self._helper
                       and (fields := view.stat(pid)) and fields[2] != b"0"]
            if not escaped:
                return
            for pid in escaped:
                view.send(pid, signal.SIGSTOP)
            self._stopped.update(escaped)

    def _namespace(self) -> PidNamespace | None:
        """The bot's PID namespace as its /proc shows it, once it is there (None before, or without one)."""
        if self._view is not None or not self._mount_proc or self._released:
            return self._view
        holder = self._holder if self.namespace == "unshare" else self._bwrap_child()
        if holder is None:
            return None
        link = f"/proc/{holder}/ns/" + ("pid_for_children" if self.namespace == "unshare" else "pid")
        self._view = PidNamespace.open(holder, link)
        return self._view

    def _bwrap_child(self) -> int | None:
        """The pid (ours) of bwrap's init, from the JSON bwrap writes to its info fd just after the clone."""
        if self._holder is None and self._info_fd is not None:
            with contextlib.suppress(BlockingIOError):
                while chunk := os.read(self._info_fd, 4096):
                    self._info += chunk
                os.close(self._info_fd)  # end of file: bwrap wrote all it will
                self._info_fd = None
            with contextlib.suppress(ValueError):
                child = json.loads(self._info).get("child-pid")
                self._holder = child if isinstance(child, int) else None
        return self._holder

    def _bot_pid(self, view: PidNamespace) -> int | None:
        if self._bot_in_namespace is None:  # bwrap: the child of its init
            children = [pid for pid in sorted(view.pids()) if (fields := view.stat(pid)) and fields[1] == b"1"]
            self._bot_in_namespace = children[0] if children else None
        return self._bot_in_namespace

    def __repr__(self) -> str:
        return f"<LaunchedBot pid={self.pid} {self.isolation.level} namespace={self.namespace} uid={self.uid}>"


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
        lease = lease_uid(isolation)
        if lease is not None:
            undo.callback(lease.release)
            if limits.max_processes is None:  # RLIMIT_NPROC counts per uid: now it bounds this bot alone
                limits = dataclasses.replace(limits, max_processes=isolation.max_processes)
        uid = lease.uid if lease is not None else None
        env = dict(os.environ if command.env is None else command.env)
        guard = [setpriv, "--pdeathsig", "KILL", "--no-new-privs"]
        head = [prlimit, *_prlimit_options(limits), "--", *guard, "--"]
        if isolation.level == "process":
            if uid is not None and not _reachable_or_warn(command, program, uid):
                lease.release()  # type: ignore[union-attr]
                lease = uid = None
            tmpdir = private_tmpdir(uid)
            undo.callback(remove_tree, tmpdir)
            env["TMPDIR"] = tmpdir
            unshare = pid_namespace_options()
            if unshare is None:  # best effort: no PID namespace here
                argv = [prlimit, *_prlimit_options(limits), "--", *guard, *uid_options(uid), "--", program, *rest]
                launched = LaunchedBot(_start(argv, command.cwd, env), isolation, tmpdir=tmpdir, lease=lease)
            else:
                inner = drop_to(setpriv, uid)
                if "--map-root-user" in unshare:  # old unshare: the bot would be root of its user namespace
                    inner = [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"]
                argv = [*head, *unshare, "--", *inner, program, *rest]
                launched = LaunchedBot(_start(argv, command.cwd, env), isolation, namespace="unshare",
                                       mount_proc="--mount-proc" in unshare, tmpdir=tmpdir, lease=lease)
        else:
            launched = _launch_bwrap(command, program, rest, isolation, head, setpriv, env, lease, undo)
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
    uid = typical_uid(isolation)
    if isolation.level == "process":
        if uid is not None:
            _reachable_or_warn(command, program, uid)
        return
    probe_bwrap()
    if command.cwd is not None:
        bot_dir: str | None = os.path.abspath(command.cwd)
    else:
        bot_dir = bot_dir_for_sandbox(command.argv, program, isolation)
    check_exposure([*sandbox_roots(isolation, None), *([bot_dir] if bot_dir is not None else [])], isolation)
    _check_reach(command, program, os.geteuid() if uid is None else uid, sandbox_roots(isolation, bot_dir))


def _launch_bwrap(command: BotCommand, program: str, rest: list[str], isolation: Isolation, head: list[str],
                  setpriv: str, env: dict[str, str], lease: UidLease | None,
                  undo: contextlib.ExitStack) -> LaunchedBot:
    bwrap = shutil.which("bwrap") or "bwrap"
    bot_dir: str | None
    if command.cwd is not None:
        bot_dir = chdir = os.path.abspath(command.cwd)
    else:  # the bot sees where its program or script is, and starts where the referee is (an empty folder)
        bot_dir, chdir = bot_dir_for_sandbox(command.argv, program, isolation), os.getcwd()
    if bot_dir is not None:
        check_exposure([bot_dir], isolation)
    uid = lease.uid if lease is not None else None
    _check_reach(command, program, os.geteuid() if uid is None else uid, sandbox_roots(isolation, bot_dir))
    tmpdir = private_tmpdir(uid)
    undo.callback(remove_tree, tmpdir)
    env["TMPDIR"] = "/tmp"
    info_read, info_write = os.pipe()
    undo.callback(os.close, info_read)
    try:
        options = bwrap_options(isolation, tmpdir=tmpdir, bot_dir=bot_dir, chdir=chdir, info_fd=info_write)
        argv = [*head, bwrap, *options, "--", *drop_to(setpriv, uid), program, *rest]
        popen = _start(argv, command.cwd, env, pass_fds=(info_write,))
    finally:
        os.close(info_write)
    os.set_blocking(info_read, False)
    return LaunchedBot(popen, isolation, namespace="bwrap", mount_proc=True, tmpdir=tmpdir, lease=lease,
                       info_fd=info_read)


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


def _reachable_or_warn(command: BotCommand, program: str, uid: int) -> bool:
    """Whether an unprivileged ``uid`` can run the bot. If not (an interpreter under /root, say), the bot
    keeps the referee's uid, still in its own PID namespace with a private TMPDIR, and a warning says so
    once: the run goes on, and ``sandbox = "bwrap"`` or readable files restore the separate uid."""
    try:
        _check_reach(command, program, uid, None, who="an unprivileged uid")
    except BotLaunchError as exc:
        if exc.reason not in _warned:
            _warned.add(exc.reason)
            LOGGER.warning("running this bot as root, not as an unprivileged user: %s", exc.reason)
        return False
    return True


_warned: set[str] = set()


def _check_reach(command: BotCommand, program: str, uid: int, roots: list[str] | None, who: str = "") -> None:
    """Refuse, in one line, a bot whose files its uid cannot read or (``roots``: bwrap's binds) cannot see."""
    cwd = os.path.abspath(command.cwd if command.cwd is not None else os.getcwd())
    program_path = os.path.join(cwd, program)
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
        fix = "make it readable by other users" + (', or use sandbox "bwrap"' if roots is None else "")
        raise BotLaunchError(f"bot {what} {path} is out of reach of {who or f'the bot uid {uid}'} ({why}): {fix}")


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


def _cpu_seconds(path: str, children: bool = False) -> float:
    with open(path, "rb") as stat:
        fields = stat.read().rpartition(b")")[2].split()  # the command name before ")" may hold spaces
    return _cpu_from(fields, children)


def _cpu_from(fields: list[bytes], children: bool) -> float:
    ticks = int(fields[11]) + int(fields[12])  # utime and stime, in clock ticks
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime and cstime: the children it waited for
    return ticks * _CLOCK_TICK
