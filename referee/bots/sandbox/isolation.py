"""How far a bot is kept from the referee, the machine and the other bots: the levels and their parts.

``Isolation.level`` is one of (docs/ISOLATION.md says what each protects against, and what not):

* ``"none"``: the bot runs as the referee's user in the referee's namespaces, under rlimits only. For the
  referee's own helpers (tournament workers) and for comparison in benchmarks.
* ``"process"`` (weaker, an explicit opt-in): a private TMPDIR per bot process; when the referee runs as root, a
  uid and gid of the bot's own (leased per bot from ``UID_BASE``), no supplementary groups, RLIMIT_NPROC;
  ``no_new_privs``; and a PID namespace per bot where the system allows one (root, or a user namespace),
  so that the bot's whole process tree dies with it and with the referee, even children that left its
  session. Files are protected by their permissions only.
* ``"bwrap"`` (the default for bots): the process level inside a bubblewrap sandbox: no network, a read-only
  view of the system (``/usr``, ``/etc``), the referee's interpreter, the ``protocol`` package and the engine
  (``referee/__init__.py`` and ``referee/engine/``, compiled or not, nothing else of ``referee``), the bot's
  own dir, private size-capped tmpfs at ``/tmp``, ``/var/tmp`` and ``/dev/shm``, its own PID, IPC, network
  and UTS namespaces, a seccomp filter; nothing else (not the checkout, the database or replays).

Both bot levels put each bot's tree in control groups of its own (:mod:`referee.bots.sandbox.cgroups`): frozen while
it is not its turn, memory and pids capped for the whole tree, held to its game's core.

Everything here is computed before the fork, once per launch, by :func:`referee.bots.plan.plan_launch` (what
a bwrap sandbox shows is a tuple of typed :class:`Bind` values); the launcher renders that plan into one argv
of util-linux wrappers and, for ``"bwrap"``, bubblewrap. Bot uids are leased in
:mod:`referee.bots.sandbox.uids`; a running bot's PID namespace is watched through :mod:`referee.bots.sandbox.pidns`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from referee.bots.errors import BotLaunchError
from referee.bots.sandbox.uids import NOBODY, drop_to, is_mapped

#: The sandbox levels: the one spelling that the config, the command line and the launcher import.
Level = Literal["none", "process", "bwrap"]
LEVELS: tuple[Level, ...] = get_args(Level)

#: RLIMIT_NPROC for a bot under its own uid whose limits set none: threads count too (a JVM uses ~30).
DEFAULT_MAX_PROCESSES = 256
#: What a sandbox shows of the system: bound read-only (or recreated as the same symlink), if present.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")

_PROBE_TIMEOUT = 10.0
_MIB = 1 << 20
#: The private folders a bwrap bot may write: each a tmpfs of the bot's own, capped, charged to its memory.
PRIVATE_TMPFS = ("/tmp", "/var/tmp", "/dev/shm")
_R, _X = os.R_OK, os.X_OK


class SandboxUnavailable(RuntimeError):
    """The requested sandbox cannot run on this machine; the message is one line saying why."""


def parse_level(text: str) -> Level:
    """``text`` as a sandbox level: the one check of its spelling. ValueError (one line) for anything else."""
    if text not in LEVELS:
        raise ValueError(f"unknown sandbox {text!r}: choose one of {', '.join(LEVELS)}")
    return text


@dataclass(frozen=True, slots=True)
class Isolation:
    """How to isolate a bot; see the module docstring. Immutable and cheap: share one per run."""

    level: Level = "bwrap"
    #: Paths a sandboxed bot must never see, and must not be given as its dir (the results database, replay
    #: folders). The referee's checkout is always kept out (only ``protocol/`` and the engine of it are shown
    #: to bwrap bots).
    protected: tuple[str, ...] = ()
    #: bwrap: bind the bot's dir read-write (default read-only; its TMPDIR is always writable).
    writable_dir: bool = False
    #: bwrap: more paths to show read-only at the same place (an interpreter under /opt, say).
    ro_binds: tuple[str, ...] = ()
    #: Root only: one fixed uid and gid (e.g. 65534) for every bot, instead of one leased per bot.
    uid: int | None = None
    #: RLIMIT_NPROC (and the pids cap of its control group) for a bot whose limits set none.
    max_processes: int = DEFAULT_MAX_PROCESSES
    #: Root, ``process`` level only: run a bot whose files an unprivileged uid cannot reach as root, with a
    #: warning, instead of refusing it. For a user's own trusted bots (``--bots-as-root``).
    allow_root: bool = False
    #: bwrap: also show the tree of a bot's program or ``#!`` interpreter that lies in a ``bin/`` folder the sandbox
    #: would not show (pyenv under /root, :func:`with_interpreter`). For the organizer's own bots (a tournament,
    #: ``durak play``); off by default and for a league, whose commands and files are entrants': there a bot's
    #: interpreter is one the sandbox shows anyway, and no host tree is bound because an entrant's file named it.
    interpreter_trees: bool = False

    def __post_init__(self) -> None:
        parse_level(self.level)
        object.__setattr__(self, "protected", tuple(os.path.abspath(p) for p in self.protected))
        object.__setattr__(self, "ro_binds", tuple(os.path.abspath(p) for p in self.ro_binds))
        if self.uid is not None and not 0 < self.uid < 2**32 - 1:
            raise ValueError(f"uid must be a positive user id, not {self.uid}")
        if self.max_processes <= 0:
            raise ValueError(f"max_processes must be positive, not {self.max_processes}")


#: No isolation: the launcher's behaviour before isolation existed.
PLAIN = Isolation("none")
#: The default for bots.
DEFAULT = Isolation("bwrap")


def isolation_for(sandbox: str, protected: Iterable[str | os.PathLike[str]] = (), *,
                  writable_dir: bool = False, allow_root: bool = False, interpreter_trees: bool = False) -> Isolation:
    """The isolation for a ``sandbox`` config value or ``--sandbox`` option: "none", "process" or "bwrap".

    ``protected``: the database and replay paths of this run; ``interpreter_trees``: the organizer's own bots
    (:attr:`Isolation.interpreter_trees`). Raises ValueError (one line) for another value;
    for "bwrap", call :func:`probe_bwrap` before the first game, for a clean error on machines without it.
    """
    return Isolation(parse_level(sandbox), tuple(os.fspath(p) for p in protected), writable_dir=writable_dir,
                     allow_root=allow_root, interpreter_trees=interpreter_trees)


# --- probes -----------------------------------------------------------------------------------------------

_probe_lock = threading.Lock()
_bwrap_verdict: SandboxUnavailable | None = None
_bwrap_probed = False


def probe_bwrap() -> None:
    """Check once per process that bubblewrap is installed and can start a sandbox here.

    :raises SandboxUnavailable: with a one-line reason (not installed, or unusable here); the verdict is
        cached, success or failure (``probe_bwrap_cache_clear`` forgets it).
    """
    global _bwrap_verdict, _bwrap_probed
    with _probe_lock:
        if not _bwrap_probed:
            _bwrap_verdict = _probe_bwrap()
            _bwrap_probed = True
        if _bwrap_verdict is not None:
            raise _bwrap_verdict


def probe_bwrap_cache_clear() -> None:
    global _bwrap_verdict, _bwrap_probed
    with _probe_lock:
        _bwrap_verdict, _bwrap_probed = None, False


def _probe_bwrap() -> SandboxUnavailable | None:
    bwrap, true = shutil.which("bwrap"), shutil.which("true")
    if bwrap is None:
        return SandboxUnavailable('sandbox "bwrap" unavailable: bwrap is not installed (Debian/Ubuntu package '
                                  'bubblewrap); install it, or opt in to the weaker --sandbox process')
    if not sys.platform.startswith("linux") or true is None or shutil.which("setpriv") is None:
        return SandboxUnavailable('sandbox "bwrap" unavailable: it needs Linux with util-linux setpriv')
    uid = NOBODY if os.geteuid() == 0 and is_mapped(NOBODY, 1) else None
    try:
        view = sandbox_view(Isolation("bwrap"), bot_dir=None, chdir="/tmp", tmp_bytes=_MIB)
        setpriv = shutil.which("setpriv") or "setpriv"
        argv = [bwrap, *bwrap_options(view, "/tmp", info_fd=None), "--", *drop_to(setpriv, uid), true]
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=_PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError, BotLaunchError) as exc:
        return SandboxUnavailable(f'sandbox "bwrap" is unusable here: {_one_line(str(exc))}')
    if done.returncode != 0:
        said = _one_line(done.stderr.decode("utf-8", "replace")) or f"exit code {done.returncode}"
        return SandboxUnavailable(f'sandbox "bwrap" is unusable here: {said}')
    return None


@functools.cache
def bwrap_supports_disable_userns() -> bool:
    """Whether this bwrap has ``--disable-userns`` (0.8 and later)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, timeout=_PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return b"--disable-userns" in done.stdout + done.stderr


@functools.cache
def pid_namespace_options() -> tuple[str, ...] | None:
    """``unshare`` and the options that give a bot its own PID namespace here, probed once; None if none works.

    As root: ``--pid --fork --kill-child --mount-proc``. Otherwise the same inside a new user namespace,
    which maps the referee's uid to itself. Without ``--mount-proc`` (refused in some containers) the
    namespace still dies as one, but pausing cannot reach children that left the bot's process group.
    """
    unshare, true = shutil.which("unshare"), shutil.which("true")
    if unshare is None or true is None or not sys.platform.startswith("linux"):
        return None
    pid = ("--pid", "--fork", "--kill-child")
    users: list[tuple[str, ...]] = [()] if os.geteuid() == 0 else [("--user", "--map-current-user"),
                                                                   ("--user", "--map-root-user")]
    for user in users:
        for options in ((*user, *pid, "--mount-proc"), (*user, *pid)):
            try:
                done = subprocess.run([unshare, *options, "--", true], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      timeout=_PROBE_TIMEOUT, check=False)
            except (OSError, subprocess.SubprocessError):
                return None
            if done.returncode == 0:
                return (unshare, *options)
    return None


# --- files ------------------------------------------------------------------------------------------------


def private_tmpdir(owner: int | None) -> str:
    """A fresh TMPDIR for one bot process: mode 700, owned by ``owner`` (None: the referee's own uid)."""
    path = tempfile.mkdtemp(prefix="durak-bot-")
    if owner is not None:
        try:
            os.chown(path, owner, owner)
        except OSError:
            os.rmdir(path)
            raise
    return path


def inaccessible(path: str, uid: int, gid: int, want: int, roots: Sequence[str] | None = None) -> str | None:
    """Why ``uid``/``gid`` (without supplementary groups) cannot reach ``path`` with the ``want`` bits
    (``os.R_OK | os.X_OK``...), as a phrase naming the first path at fault; None if it can.

    Checks search permission on every folder on the way, for the path as written and for its real path,
    from mode bits (not ACLs). With ``roots`` (a sandbox's binds), only the part below the bind holding the
    path counts (bubblewrap creates the folders above a bind, searchable), and a path outside every bind is
    not visible at all.
    """
    for candidate in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
        top = "/"
        if roots is not None:
            holders = [root for root in roots if within(candidate, root)]
            if not holders:
                return f"{candidate} is not visible in the sandbox"
            top = max(holders, key=len)
        parts = Path(candidate).parts
        for depth in range(len(Path(top).parts), len(parts) + 1):
            here = os.path.join(*parts[:depth])
            bits = want if depth == len(parts) else _X
            if not _may(here, uid, gid, bits):
                info = os.stat(here)
                return f"{here} is mode {stat.S_IMODE(info.st_mode):o}, owner uid {info.st_uid}"
    return None


def _may(path: str, uid: int, gid: int, want: int) -> bool:
    try:
        info = os.stat(path)
    except OSError:
        return True  # missing: the bot will say so itself
    if info.st_uid == uid:
        bits = info.st_mode >> 6
    elif info.st_gid == gid:
        bits = info.st_mode >> 3
    else:
        bits = info.st_mode
    return bits & want == want


def within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both absolute, as written)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _referee_package() -> Path:
    """The ``referee`` package's folder, found from the package itself (not from this module's place in it)."""
    import referee

    return Path(referee.__file__).resolve().parent


def checkout_root() -> str | None:
    """The source checkout the referee runs from (editable install), if it runs from one."""
    root = _referee_package().parent
    return str(root) if (root / "pyproject.toml").is_file() and (root / "referee").is_dir() else None


def check_exposure(sources: Iterable[str], isolation: Isolation) -> None:
    """Refuse to bind anything that holds the checkout, or holds or lies inside a protected path.

    :raises BotLaunchError: one line naming both paths.
    """
    checkout = checkout_root()
    protected = [os.path.realpath(p) for p in isolation.protected]
    for source in sources:
        real = os.path.realpath(source)
        if checkout is not None and within(checkout, real):
            raise BotLaunchError(f"the sandbox would show the referee's checkout {checkout} (it is inside "
                                 f"{source}): give the bot a folder of its own")
        for path in protected:
            if within(path, real) or within(real, path):
                raise BotLaunchError(f"the sandbox would show {path} (via {source}): keep the results database "
                                     "and replays out of bot folders")


# --- bubblewrap -------------------------------------------------------------------------------------------


BindKind = Literal["ro-bind", "bind", "symlink", "tmpfs", "dir", "proc", "dev", "remount-ro"]


@dataclass(frozen=True, slots=True)
class Bind:
    """One step of what a bwrap sandbox shows, applied in order: ``dest`` inside the sandbox, from ``source``
    outside (a bind; a symlink's target); ``perms`` and ``size`` for the folders and tmpfs bwrap makes."""

    kind: BindKind
    source: str | None
    dest: str
    perms: str | None = None
    size: int | None = None

    def options(self) -> list[str]:
        """This step as bwrap's command-line options."""
        perms = ["--perms", self.perms] if self.perms is not None else []
        size = ["--size", str(self.size)] if self.size else []
        if self.source is not None:
            return [*perms, f"--{self.kind}", self.source, self.dest]
        return [*perms, *size, f"--{self.kind}", self.dest]


@functools.cache
def system_binds() -> tuple[Bind, ...]:
    """How a sandbox shows the system read-only: /usr and /etc, and the top-level links into /usr."""
    binds: list[Bind] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            binds.append(Bind("symlink", os.readlink(path), path))
        elif os.path.isdir(path):
            binds.append(Bind("ro-bind", path, path))
    return tuple(binds)


@functools.cache
def interpreter_paths() -> tuple[str, ...]:
    """What a Python bot run with the referee's interpreter needs: its prefixes (the venv and the Python it
    was made from, as written and resolved), the site-packages folders on its path (a user site, PYTHONPATH)
    and the folder of the ``protocol`` package; outermost only, leaving out what the system binds show."""
    import protocol.messages  # its __file__: the package's may be None (setuptools' editable finder)

    candidates = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
                  os.path.dirname(os.path.dirname(sys.executable)), os.path.dirname(protocol.messages.__file__)}
    candidates |= {path for path in sys.path if os.path.basename(path) in ("site-packages", "dist-packages")}
    candidates |= {os.path.realpath(path) for path in candidates}
    candidates |= {os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    shown = [path for path in SYSTEM_DIRS if os.path.isdir(path) and not os.path.islink(path)]
    kept = sorted(path for path in candidates if os.path.isdir(path) and not any(within(path, s) for s in shown))
    return tuple(path for path in kept if not any(other != path and within(path, other) for other in kept))


def engine_paths() -> tuple[str, str]:
    """What a Python bot needs to ``import referee.engine``: the package's ``__init__.py`` (its version only)
    and the engine's folder (pure rules: sources, compiled modules; their shared library is in ``protocol``)."""
    package = _referee_package()
    return str(package / "__init__.py"), str(package / "engine")


def masked_referee() -> str | None:
    """The ``referee`` package's folder when a bound folder shows it whole (a site-packages install): the sandbox
    lays an empty tmpfs over it before showing the engine again, so that the rest of it stays hidden."""
    package = str(_referee_package())
    return package if any(within(package, path) for path in interpreter_paths()) else None


def sandbox_roots(isolation: Isolation, bot_dir: str | None) -> list[str]:
    """Every path bound into a bwrap sandbox (the system, the interpreter, the engine, extras, the bot's dir)."""
    roots = [bind.dest for bind in system_binds() if bind.kind == "ro-bind"]
    roots += [*interpreter_paths(), *engine_paths(), *isolation.ro_binds]  # not /tmp: the bot's /tmp is its own
    return [*roots, bot_dir] if bot_dir is not None else roots


def sandbox_view(isolation: Isolation, *, bot_dir: str | None, chdir: str, tmp_bytes: int | None) -> tuple[Bind, ...]:
    """What a bwrap sandbox shows one bot, in bwrap's order; see docs/ISOLATION.md for the choices.

    /tmp, /var/tmp and /dev/shm are private tmpfs of ``tmp_bytes`` each (None: the kernel's default, half
    the memory); ``bot_dir`` is shown at its own path, read-only unless ``isolation.writable_dir``; ``chdir``
    (the bot's working directory inside) gets an empty stand-in when nothing shown holds it.
    :raises BotLaunchError: a bind would show the checkout or a protected path.
    """
    roots = sandbox_roots(isolation, bot_dir)
    check_exposure(roots, isolation)
    view = [*system_binds(), Bind("proc", None, "/proc"), Bind("dev", None, "/dev")]
    view += [Bind("tmpfs", None, path, perms="1777", size=tmp_bytes) for path in PRIVATE_TMPFS]
    made: set[str] = set()
    for bind in _shown_binds(isolation, bot_dir):
        view += [*_folders_to(bind.dest, made), bind]
        made.add(bind.dest)
    if chdir != "/tmp" and not any(within(chdir, root) for root in roots):
        view += _folders_to(chdir, made, itself=True)  # an empty stand-in for the referee's working directory
    masked = masked_referee()
    view += [Bind("remount-ro", None, "/"), *([Bind("remount-ro", None, masked)] if masked else [])]
    return tuple(view)


def with_cgroups(view: Sequence[Bind], groups: Sequence[tuple[str, str]]) -> tuple[Bind, ...]:
    """``view`` (:func:`sandbox_view`) also showing the bot its own control groups, read-only, each ``(group,
    mount point)`` at its hierarchy's mount point (:meth:`~referee.bots.sandbox.cgroups.BotCgroup.shown`), before
    the view's last steps (the read-only remounts). Known only once the launch has made the groups."""
    cut = next((n for n, bind in enumerate(view) if bind.kind == "remount-ro"), len(view))
    made = {bind.dest for bind in view[:cut] if bind.kind != "symlink"}
    shown: list[Bind] = []
    for group, mount in sorted(groups, key=lambda pair: (len(Path(pair[1]).parts), pair[1])):
        shown += [*_folders_to(mount, made), Bind("ro-bind", group, mount)]
        made.add(mount)
    return (*view[:cut], *shown, *view[cut:])


def _shown_binds(isolation: Isolation, bot_dir: str | None) -> list[Bind]:
    """The binds beyond the system's (interpreter, engine, extras, the bot's dir, the masked ``referee``),
    outermost first, so that each is laid over the folder that holds it."""
    binds = [Bind("ro-bind", path, path) for path in (*interpreter_paths(), *engine_paths(), *isolation.ro_binds)]
    if bot_dir is not None:
        binds.append(Bind("bind" if isolation.writable_dir else "ro-bind", bot_dir, bot_dir))
    masked = masked_referee()
    if masked is not None:  # after the folder that holds it, before the engine's binds inside it (by depth)
        binds.append(Bind("tmpfs", None, masked, perms="0755"))
    return sorted(dict.fromkeys(binds), key=lambda bind: (len(Path(bind.dest).parts), bind.dest))


def _folders_to(path: str, made: set[str], itself: bool = False) -> list[Bind]:
    """The folders down to ``path`` (and it, if ``itself``) that bwrap must create searchable by all (it would
    make them mode 700), leaving out those already ``made`` (updated) or shown by the system binds."""
    system = [bind.dest for bind in system_binds()]
    parts = Path(path).parts
    folders = []
    for depth in range(2, len(parts) + (1 if itself else 0)):
        folder = os.path.join(*parts[:depth])
        if folder not in made and not any(within(folder, shown) for shown in system):
            folders.append(Bind("dir", None, folder, perms="0755"))
            made.add(folder)
    return folders


def bwrap_options(view: Sequence[Bind], chdir: str, *, info_fd: int | None,
                  seccomp_fd: int | None = None) -> list[str]:
    """bwrap's options for one bot (everything before ``--``): its namespaces, an empty environment (the bot's
    is set by the last exec, after the change of uid), ``info_fd`` and ``seccomp_fd``
    (:mod:`referee.bots.sandbox.seccomp`), then ``view`` (:func:`sandbox_view`) and ``chdir``."""
    options = [*_namespace_options(), "--die-with-parent", "--clearenv"]
    if info_fd is not None:
        options += ["--info-fd", str(info_fd)]
    if seccomp_fd is not None:
        options += ["--seccomp", str(seccomp_fd)]
    for bind in view:
        options += bind.options()
    return [*options, "--chdir", chdir]


def _namespace_options() -> list[str]:
    if os.geteuid() == 0:  # no user namespace: the bot's uid would map to root; setpriv drops to its own
        return ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    options = ["--unshare-all", "--unshare-user"]
    return [*options, "--disable-userns"] if bwrap_supports_disable_userns() else options


def with_interpreter(isolation: Isolation, interpreter: str, bot_dir: str | None) -> Isolation:
    """``isolation`` showing also the tree of a bot's interpreter (or binary) that the sandbox would not show:
    for ``/root/.pyenv/versions/3.11.7/bin/python3``, its prefix ``/root/.pyenv/versions/3.11.7`` read-only,
    the folders above it searchable, so that the bot runs as its own uid where only root could enter them.

    Only for the organizer's own bots (``isolation.interpreter_trees``): never a tree an entrant's file named.

    :raises BotLaunchError: that tree would show the checkout or a protected path.
    """
    if not isolation.interpreter_trees:
        return isolation
    roots = sandbox_roots(isolation, bot_dir)
    extra = []
    for path in dict.fromkeys((os.path.abspath(interpreter), os.path.realpath(interpreter))):
        folder = os.path.dirname(path)
        if os.path.isabs(path) and os.path.basename(folder) == "bin" and not any(within(path, r) for r in roots):
            extra.append(os.path.dirname(folder))
    if not extra:
        return isolation
    check_exposure(extra, isolation)
    return dataclasses.replace(isolation, ro_binds=(*isolation.ro_binds, *dict.fromkeys(extra)))


def bot_dir_for_sandbox(argv: Sequence[str], program: str, isolation: Isolation) -> str | None:
    """The folder to show a sandboxed bot that has no dir: where its first file argument is (``python
    bots/x.py`` shows ``bots``, wherever ``python`` is), else where its program is if given with a slash and
    not shown anyway (``./bots/x`` shows ``bots``); None if neither."""
    shown = sandbox_roots(isolation, None)
    words = [word for word in argv[1:] if not word.startswith("-")]
    if "/" in argv[0] and not any(within(os.path.abspath(program), root) for root in shown):
        words.append(program)
    for word in words:
        if os.path.isfile(word):
            return os.path.dirname(os.path.abspath(word))
    return None


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ""
