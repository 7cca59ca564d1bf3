"""The one place that turns a bot command into a running child, and so decides how bots are isolated.

A bot runs under a chain of wrappers that each set something up and then exec the next, so that the referee
needs no ``preexec_fn`` (which forces a plain fork, whose cost grows with the referee's memory). Each bot
leads a new session and process group.

* ``Isolation("bwrap")`` (the default; :mod:`referee.bots.sandbox.isolation`): ``sh -c <join the bot's control
  groups> -- prlimit ... -- setpriv --pdeathsig KILL --no-new-privs -- bwrap <binds, tmpfs, --seccomp FD>
  -- setpriv --reuid U --regid U --clear-groups --pdeathsig KILL -- env -i -- ... <argv>`` (U leased per bot when root).
* ``Isolation("process")`` (weaker, opt-in): the same control groups and uid, a private TMPDIR on the host and
  ``unshare --pid --fork --kill-child --mount-proc`` instead of bwrap: no private file view, no seccomp.
* ``Isolation("none")``: ``prlimit --data=... -- setpriv --pdeathsig KILL -- <argv>``, for trusted helpers.

Every chain ends in ``env -i -- NAME=VALUE... <argv>``, after the change of uid: the wrappers before it run
with the referee's fixed :data:`~referee.bots.plan.WRAPPER_ENV`, never the bot's (bwrap also ``--clearenv``).
What to run is decided first, by :func:`referee.bots.plan.plan_launch`; this module starts a plan.

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
import os
import shutil
import subprocess
import threading
from collections.abc import Mapping

from referee.bots.errors import LauncherError
from referee.bots.launched import Confinement, LaunchedBot
from referee.bots.limits import ResourceLimits, mib_bytes
from referee.bots.plan import WRAPPER_ENV as WRAPPER_ENV
from referee.bots.plan import BotCommand as BotCommand
from referee.bots.plan import LaunchPlan, plan_launch, warn_once
from referee.bots.plan import resolve_program as resolve_program
from referee.bots.plan import scrubbed_env as scrubbed_env
from referee.bots.plan import wrapper_paths as wrapper_paths
from referee.bots.sandbox import seccomp
from referee.bots.sandbox.cgroups import BotCgroup, CgroupLimits, CgroupRun
from referee.bots.sandbox.cleanup import remove_tree
from referee.bots.sandbox.isolation import (
    PLAIN,
    Isolation,
    bwrap_options,
    pid_namespace_options,
    private_tmpdir,
    with_cgroups,
)
from referee.bots.sandbox.uids import UidLease, drop_to, lease_uid, uid_options


def launch(command: BotCommand, limits: ResourceLimits, isolation: Isolation = PLAIN) -> LaunchedBot:
    """Start the bot with piped stdin, stdout and stderr; BotLaunchError, before any fork, if it cannot be.

    :raises BotLaunchError: the program or folder is missing, or out of reach of the bot's uid or sandbox.
    :raises LauncherError: this machine cannot run bots at all (no util-linux, no uid left).
    :raises SandboxUnavailable: ``isolation`` asks for bwrap and this machine has no usable bwrap.

    The parent-death signal follows the thread that spawned the bot: launch from a thread that outlives it.
    """
    return start(plan_launch(command, isolation, limits))


def preflight(command: BotCommand, isolation: Isolation = PLAIN) -> LaunchPlan:
    """Every check ``launch`` makes before its fork, without starting anything: call it for each bot before
    the first game, so that a bot that cannot start is one clean error rather than forfeits.

    :raises BotLaunchError: program or folder missing, out of reach of the bot's uid, outside the sandbox,
        a sandbox that would show the checkout or a protected path, or a refused variable in its env.
    :raises SandboxUnavailable: bwrap asked for and unusable here.
    """
    return plan_launch(command, isolation)


def start(plan: LaunchPlan) -> LaunchedBot:
    """Start a planned bot: lease its uid, make its control groups and TMPDIR, render its argv, fork.

    :raises LauncherError: no uid or control group left for it.
    """
    prlimit, setpriv = wrapper_paths()
    if plan.level == "none":
        argv = [prlimit, *_prlimit_options(plan.limits), "--", setpriv, "--pdeathsig", "KILL", "--",
                *_last_exec(plan, {})]
        return LaunchedBot(_start(argv, plan.cwd), plan.isolation)
    with contextlib.ExitStack() as undo:
        limits, isolation = plan.limits, plan.isolation
        lease = lease_uid(isolation.uid) if plan.runs_as == "own" else None
        if lease is not None:
            undo.callback(lease.release)
        if plan.runs_as != "referee" and limits.max_processes is None:  # NPROC counts per uid: this bot's alone
            limits = dataclasses.replace(limits, max_processes=isolation.max_processes)
        cgroup = bot_cgroup(limits, isolation)
        if cgroup is not None:
            undo.callback(cgroup.remove)
            if cgroup.can("memory"):  # the whole tree's limit replaces the per-process one
                limits = dataclasses.replace(limits, memory_mb=None)
        head = [*(cgroup.join_prefix() if cgroup is not None else []), prlimit, *_prlimit_options(limits), "--",
                setpriv, "--pdeathsig", "KILL", "--no-new-privs", "--"]
        start_level = _start_process if plan.level == "process" else _start_bwrap
        launched = start_level(plan, head, lease, cgroup, undo)
        undo.pop_all()
        return launched


def _start_process(plan: LaunchPlan, head: list[str], lease: UidLease | None, cgroup: BotCgroup | None,
                   undo: contextlib.ExitStack) -> LaunchedBot:
    _, setpriv = wrapper_paths()
    uid = lease.uid if lease is not None else None
    tmpdir = private_tmpdir(uid)
    undo.callback(remove_tree, tmpdir)
    last = _last_exec(plan, {"TMPDIR": tmpdir})
    unshare = pid_namespace_options()
    if unshare is None:  # best effort: no PID namespace here
        argv = [*head[:-1], *uid_options(uid), "--", *last]
        confinement = Confinement(tmpdir=tmpdir, lease=lease, cgroup=cgroup)
        return LaunchedBot(_start(argv, plan.cwd), plan.isolation, confinement)
    inner = drop_to(setpriv, uid)
    if "--map-root-user" in unshare:  # old unshare: the bot would be root of its user namespace
        inner = [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"]
    argv = [*head, *unshare, "--", *inner, *last]
    return LaunchedBot(_start(argv, plan.cwd), plan.isolation, Confinement(
        namespace="unshare", mount_proc="--mount-proc" in unshare, tmpdir=tmpdir, lease=lease, cgroup=cgroup))


def _start_bwrap(plan: LaunchPlan, head: list[str], lease: UidLease | None, cgroup: BotCgroup | None,
                 undo: contextlib.ExitStack) -> LaunchedBot:
    _, setpriv = wrapper_paths()
    bwrap = shutil.which("bwrap") or "bwrap"
    uid = lease.uid if lease is not None else None
    info_read, info_write = os.pipe()
    undo.callback(os.close, info_read)
    fds = [info_write]
    try:
        seccomp = _seccomp_fd(plan.seccomp)
        if seccomp is not None:
            fds.append(seccomp)
        view = with_cgroups(plan.view, cgroup.shown() if cgroup is not None else ())  # runtimes read their limits
        options = bwrap_options(view, plan.chdir or "/tmp", info_fd=info_write, seccomp_fd=seccomp)
        argv = [*head, bwrap, *options, "--", *drop_to(setpriv, uid), *_last_exec(plan, {"TMPDIR": "/tmp"})]
        popen = _start(argv, plan.cwd, pass_fds=tuple(fds))
    finally:
        for fd in fds:
            os.close(fd)
    os.set_blocking(info_read, False)
    return LaunchedBot(popen, plan.isolation, Confinement(namespace="bwrap", mount_proc=True, lease=lease,
                                                          info_fd=info_read, cgroup=cgroup))


def _last_exec(plan: LaunchPlan, extra: Mapping[str, str]) -> list[str]:
    """The end of every chain, run as the bot's uid: ``env`` clears the wrappers' environment, sets the bot's
    (and ``extra``, the referee's TMPDIR), then execs the bot's program. HOME is that TMPDIR, the bot's private
    writable folder, unless its settings name another: the same in play, check-bot and tournaments."""
    env = dict(plan.env)
    if "TMPDIR" in extra:
        env.setdefault("HOME", extra["TMPDIR"])
    env.update(extra)
    return [_env_program(), "-i", "--", *(f"{name}={value}" for name, value in env.items()), plan.program,
            *plan.args]


@functools.cache
def _env_program() -> str:
    """coreutils' env (under /usr, which every sandbox shows); LauncherError without it."""
    found = shutil.which("env", path=WRAPPER_ENV["PATH"])
    if found is None:
        raise LauncherError("running bots requires coreutils env")
    return found


def _seccomp_fd(policy: seccomp.PolicyName) -> int | None:
    """A fresh fd holding the seccomp filter ``policy`` for one bwrap, or None (said once) where it cannot be
    built."""
    try:
        return seccomp.filter_fd(policy)
    except seccomp.SeccompUnavailable as exc:
        warn_once(f"bots run without a seccomp filter (file locks and inotify stay open between bots): {exc}")
        return None


def bot_cgroup(limits: ResourceLimits, isolation: Isolation) -> BotCgroup | None:
    """Control groups for one bot process tree, capped by ``limits`` and held to the cores the launching
    thread may use (a tournament worker pins itself to its game's core); None without control groups here."""
    run = cgroup_run()
    if not run.features:
        return None
    memory = mib_bytes(limits.memory_mb)
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
                warn_once(f"control groups: {reason}; using the next best (see docs/ISOLATION.md)")
        return _run


def _start(argv: list[str], cwd: str | None, pass_fds: tuple[int, ...] = ()) -> subprocess.Popen[bytes]:
    """Fork the first wrapper with the referee's fixed environment (never the bot's: see :func:`_last_exec`)."""
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=WRAPPER_ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        close_fds=True,
        pass_fds=pass_fds,
        start_new_session=True,
    )


def _prlimit_options(limits: ResourceLimits) -> list[str]:
    """One prlimit option per limit set, as both soft and hard limit."""
    values = {
        "data": mib_bytes(limits.memory_mb),
        "nproc": limits.max_processes,
        "fsize": mib_bytes(limits.file_size_mb),
        "nofile": limits.open_files,
        "cpu": limits.cpu_seconds,
        "core": 0,  # a crashing bot must not litter its directory with core dumps
    }
    return [f"--{name}={value}" for name, value in values.items() if value is not None]

