"""An uploaded bot's ``build`` command, run by the league's daemon on untrusted code: in the bots' sandbox with no
network, as a uid of its own, on a copy of its source in a size-capped scratch tmpfs, under wall-time, memory and
process limits. Its output comes back capped through a pipe, its built files as a tar stream through another.

Inside the sandbox a small fixed driver (:data:`DRIVER`) unpacks the source (a tar on its stdin) into ``/build``,
runs the command there with stdout sent to stderr and stdin from ``/dev/null``, kills every other process of its
uid, and writes one status line to its stdout followed, for a build that exited 0, by ``tar -cf - .`` of
``/build``. Only its own exit status, the status line and the kernel's counters (OOM kills, refused forks) decide
the verdict; the build's text is never parsed. The build runs as the driver's uid, so it could forge that line:
it can lie only about its own failure, and the caller re-checks the tar with the upload rules anyway.

Seccomp: the bots' filter less its shared-file rules (``BUILD_POLICY`` in :mod:`referee.bots.sandbox.seccomp`).
The whole filter breaks ``go build``, which takes an flock on go.mod ("RLock /build/go.mod: operation not
permitted"); locks and file watches are a channel between bots running at once, and with every bot filtered a
build has no one to signal. The rest stays: ptrace, mounts, namespaces, keyrings, bpf, io_uring and page-cache
residency are shut to code that a root daemon starts. gcc, make, ``python3 -m compileall`` and a vendored
``go build`` run under it (tests/test_upload_build.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import selectors
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO, Literal

from referee.bots.errors import BotLaunchError, LauncherError
from referee.bots.launched import LaunchedBot
from referee.bots.launcher import start
from referee.bots.limits import ResourceLimits, mib_bytes
from referee.bots.plan import BotCommand, LaunchPlan, plan_launch
from referee.bots.sandbox.cleanup import remove_tree
from referee.bots.sandbox.isolation import Bind, Isolation, SandboxUnavailable, pid_namespace_options, sandbox_view

#: How a build ended; :meth:`BuildOutcome.summary` says each in a line.
BuildVerdict = Literal["ok", "failed", "timeout", "memory", "disk", "processes", "output", "sandbox"]

#: Where the build works inside the bwrap sandbox: a tmpfs of ``BuildLimits.scratch_mb``.
SCRATCH = "/build"
#: The build's whole environment, nothing of the daemon's; the launcher adds TMPDIR and HOME, its private /tmp
#: (so ``go build`` keeps its cache there).
BUILD_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
#: RLIMIT_NOFILE per process of a build: linkers open many objects at once.
OPEN_FILES = 1024
#: A scratch folder with less free than this (or no free inode) after a failed build is full: a write failed
#: with ENOSPC there (tmpfs fills to the last page before it refuses one).
FULL_BELOW = 64 << 10
_STATUS_TAG = "durak-build"  # the first word of the driver's status line
_STATUS_MAX = 512  # bytes of the status line before the tar; more is no status
_CHUNK = 1 << 16

# The driver: sh, run as the build's uid. $1 its work folder (empty: $TMPDIR/build), $2 "sweep" where it may kill
# every other process of its uid (a PID namespace of its own), then the build's argv. The status line: tag, phase
# (extract, build), exit code, then `stat -f` (free blocks, block size, inodes, free inodes) of the work folder and
# of TMPDIR. chmod lets tar read what the build made unreadable (all of it is the build uid's).
DRIVER = f"tag={_STATUS_TAG}\n" + r"""work=${1:-$TMPDIR/build} sweep=$2; shift 2
mkdir -p "$work" && cd "$work" || exit 1
settle() { [ "$sweep" != sweep ] || kill -s KILL -1 2>/dev/null; }
report() {
  printf '%s %s %s %s %s\n' "$tag" "$1" "$2" "$(stat -f -c '%a %S %c %d' .)" "$(stat -f -c '%a %S %c %d' "$TMPDIR")"
}
tar -xf - --no-same-owner 1>&2 || { code=$?; settle; report extract $code; exit 0; }
"$@" </dev/null 1>&2
code=$?
settle
report build $code
[ "$code" -eq 0 ] || exit 0
chmod -R u+rwX . 2>/dev/null
exec tar -cf - .
"""


class BuildRefused(ValueError):
    """A build asked for at a level that cannot hold untrusted code; the message is one line saying why."""


@dataclass(frozen=True, slots=True)
class BuildLimits:
    """What one build may use. Every byte it writes to its scratch folder or its /tmp counts to its memory too."""

    #: Wall time for the whole build, unpacking and packing included; then its whole process tree is killed.
    wall_seconds: float = 120.0
    #: MiB for the build's whole process tree, its tmpfs included (its memory control group).
    memory_mb: int = 1024
    #: MiB of the scratch tmpfs holding the source copy and what the build makes (and of its /tmp, /var/tmp,
    #: /dev/shm, each a tmpfs of this size); also RLIMIT_FSIZE.
    scratch_mb: int = 256
    #: Processes and threads of the build's tree (its pids control group, and RLIMIT_NPROC for its uid). Threads
    #: count: a parallel build (``make -j``, ``go build`` on many cores) may need more.
    max_processes: int = 64
    #: Bytes of stdout and stderr kept; the rest is dropped, with a note saying how much.
    output_bytes: int = 64 << 10
    #: MiB of the built folder's tar; a larger one is the ``output`` verdict.
    tar_mb: int = 64

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            if getattr(self, field.name) <= 0:
                raise ValueError(f"{field.name} must be positive, not {getattr(self, field.name)}")


@dataclass(frozen=True, slots=True)
class BuildOutcome:
    """How one build ended."""

    #: "ok"; "failed" (a non-zero exit, in ``exit_code``; None: its files could not be packed); "timeout";
    #: "memory" (the kernel killed a process at the memory cap); "disk" (its scratch folder or /tmp full);
    #: "processes" (a fork refused at the cap); "output" (the tar over ``tar_mb``); "sandbox" (could not run).
    verdict: BuildVerdict
    #: The build command's exit status (the shell's: 128 + N for a death by signal N), if it ended by itself.
    exit_code: int | None
    #: Wall time from the launch to the verdict.
    seconds: float
    #: stdout and stderr, interleaved as written, capped, decoded with replacement: the build's text, never
    #: interpreted (show it with :func:`referee.text.visible`).
    output: str
    #: The limits it ran under, for :meth:`summary`.
    limits: BuildLimits
    #: "sandbox" only: why, in one line of the referee's (never the build's text).
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"

    def summary(self) -> str:
        """One line for the bot's author: the verdict, the limit it hit, and the time."""
        after = f"after {self.seconds:.1f} s"
        limits = self.limits
        match self.verdict:
            case "ok":
                return f"build ok in {self.seconds:.1f} s"
            case "failed" if self.exit_code is None:
                return f"build failed: its files could not be packed {after}"
            case "failed":
                return f"build failed: exit {self.exit_code} {after}"
            case "timeout":
                return f"build stopped: over its {limits.wall_seconds:g} s limit"
            case "memory":
                return f"build stopped: over its {limits.memory_mb} MiB memory limit {after}"
            case "disk":
                return f"build failed: its {limits.scratch_mb} MiB scratch folder is full {after}"
            case "processes":
                return f"build stopped: over its limit of {limits.max_processes} processes {after}"
            case "output":
                return f"build refused: its files are over the {limits.tar_mb} MiB cap {after}"
            case "sandbox":
                return f"build could not run in its sandbox: {self.reason}"


@dataclass
class _Streams:
    """What the referee read from a running build."""

    output: bytearray = dataclasses.field(default_factory=bytearray)
    dropped: int = 0
    head: bytearray = dataclasses.field(default_factory=bytearray)  # stdout up to the status line's newline
    status: list[str] | None = None
    tar_bytes: int = 0
    over_cap: bool = False
    timed_out: bool = False


def build_bot(source: Path, command: list[str], isolation: Isolation, limits: BuildLimits, *,
              output_tar: Path, trusted: bool = False) -> BuildOutcome:
    """Run ``command`` on a copy of the folder ``source`` in a sandbox (see the module docstring); on "ok" the
    built folder's tar is at ``output_tar`` (made here, exclusively), on any other verdict nothing is.

    ``trusted`` allows the ``process`` and ``none`` levels, for the caller's own code: they have the network,
    the host's file system and no scratch cap (the work folder is a private one under the temp folder), and at
    ``none`` the build runs as the daemon's own user, with no control groups.

    :raises BuildRefused: ``isolation`` has no network namespace and ``trusted`` is not set.
    :raises ValueError: an empty command. :raises OSError: ``source`` unreadable, ``output_tar`` exists.
    """
    check_level(isolation, trusted)
    if not command or not command[0]:
        raise ValueError("a build command needs a program")
    started = time.monotonic()
    with _packed(source) as source_tar:
        tar_fd = os.open(output_tar, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        outcome: BuildOutcome | None = None
        try:
            outcome = _run(command, isolation, limits, source_tar, tar_fd, started)
        finally:
            os.close(tar_fd)
            if outcome is None or not outcome.ok:
                output_tar.unlink(missing_ok=True)
    return outcome


def _run(command: Sequence[str], isolation: Isolation, limits: BuildLimits, source_tar: BinaryIO, tar_fd: int,
         started: float) -> BuildOutcome:
    """Launch the build's sandbox and see it to its verdict; "sandbox" if it cannot be launched."""
    host = tempfile.mkdtemp(prefix="durak-build-")  # an empty folder to start in, and TMPDIR at level none
    try:
        os.chmod(host, 0o755)
        try:
            launched = start(_plan(command, isolation, limits, host))
        except (BotLaunchError, LauncherError, SandboxUnavailable, OSError) as exc:
            return _outcome(_Streams(), "sandbox", None, started, limits, _one_line(exc))
        return _finish(launched, source_tar, tar_fd, limits, started)
    finally:
        remove_tree(host)


def check_level(isolation: Isolation, trusted: bool) -> None:
    """:raises BuildRefused: a level without a network namespace (``process``, ``none``), unless ``trusted``."""
    if isolation.level != "bwrap" and not trusted:
        raise BuildRefused(f'sandbox "{isolation.level}" has no network namespace and no scratch cap: an uploaded '
                           'bot builds only under the default "bwrap" (trusted=True allows it for your own code)')


@contextlib.contextmanager
def _packed(source: Path) -> Iterator[BinaryIO]:
    """``source``'s files as an unnamed temporary tar (owners made 0: the build's uid unpacks them as its own);
    links are kept as links, never followed."""
    with tempfile.TemporaryFile() as file:
        with tarfile.open(fileobj=file, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for entry in sorted(os.listdir(source)):  # not "." itself: its mode and times are the scratch's
                tar.add(source / entry, arcname=entry, filter=_anonymous)
        file.seek(0)
        yield file


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _plan(command: Sequence[str], isolation: Isolation, limits: BuildLimits, host: str) -> LaunchPlan:
    """The launch of the driver running ``command``: the bots' plan, with the scratch tmpfs at /build as the
    working folder instead of a bot folder under bwrap."""
    sh = os.path.realpath(shutil.which("sh", path=BUILD_ENV["PATH"]) or "/bin/sh")  # /bin may be a link
    bwrap = isolation.level == "bwrap"
    work = SCRATCH if bwrap else ""  # the driver's default: $TMPDIR/build
    sweep = bwrap or (isolation.level == "process" and pid_namespace_options() is not None)
    env = {**BUILD_ENV, **({} if isolation.level != "none" else {"TMPDIR": host, "HOME": host})}
    argv = [sh, "-c", DRIVER, "durak-build"]
    resources = ResourceLimits(memory_mb=limits.memory_mb, max_processes=limits.max_processes,
                               file_size_mb=limits.scratch_mb, open_files=OPEN_FILES)
    # The plan is the driver's alone; its work folder and the build's words are its arguments, added after: the
    # launch checks (made by the root daemon) never look up a path the entrant named. The build meets them in its
    # sandbox, as its uid.
    plan = plan_launch(BotCommand(argv, cwd=host, env=env), isolation, resources)
    plan = dataclasses.replace(plan, args=(*plan.args, work, "sweep" if sweep else "no", *command))
    if not bwrap:
        return plan
    view = sandbox_view(plan.isolation, bot_dir=None, chdir="/", tmp_bytes=mib_bytes(limits.scratch_mb))
    cut = next(n for n, bind in enumerate(view) if bind.kind == "remount-ro")
    scratch = Bind("tmpfs", None, SCRATCH, perms="1777", size=mib_bytes(limits.scratch_mb))
    return dataclasses.replace(plan, view=(*view[:cut], scratch, *view[cut:]), chdir=SCRATCH, seccomp="build")


def _finish(launched: LaunchedBot, source_tar: BinaryIO, tar_fd: int, limits: BuildLimits,
            started: float) -> BuildOutcome:
    """Feed the build its source, read what it says until it ends or its deadline, stop its whole tree, judge."""
    streams = _Streams()
    popen = launched.popen
    exit_status: int | None = None
    try:
        _pump(launched, source_tar, tar_fd, limits, streams, started + limits.wall_seconds)
        if not streams.timed_out and not streams.over_cap:
            try:
                exit_status = popen.wait(max(0.0, started + limits.wall_seconds - time.monotonic()))
            except subprocess.TimeoutExpired:
                streams.timed_out = True
    finally:
        _stop(launched)
        oom_kills = launched.cgroup.oom_kills() if launched.cgroup is not None else 0
        forks_refused = launched.cgroup.forks_refused() if launched.cgroup is not None else 0
        launched.release()
    verdict, code, reason = _judge(streams, exit_status, oom_kills, forks_refused)
    return _outcome(streams, verdict, code, started, limits, reason)


def _pump(launched: LaunchedBot, source_tar: BinaryIO, tar_fd: int, limits: BuildLimits, streams: _Streams,
          deadline: float) -> None:
    """One loop over the build's three pipes until it closes them, its deadline, or its tar goes over the cap:
    its source in on stdin, its status line and tar out on stdout, its output on stderr."""
    popen = launched.popen
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    stdin, stdout = popen.stdin, popen.stdout
    os.set_blocking(stdin.fileno(), False)
    pending = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stdin, selectors.EVENT_WRITE)
        selector.register(stdout, selectors.EVENT_READ)
        selector.register(popen.stderr, selectors.EVENT_READ)
        while selector.get_map() and not streams.over_cap:
            left = deadline - time.monotonic()
            if left <= 0:
                streams.timed_out = True
                return
            for key, _ in selector.select(left):
                if key.fileobj is stdin:
                    pending = _feed(stdin, pending or source_tar.read(_CHUNK), selector)
                    continue
                data = os.read(key.fd, _CHUNK)
                if not data:
                    selector.unregister(key.fileobj)
                elif key.fileobj is stdout:
                    _take_stdout(data, streams, tar_fd, mib_bytes(limits.tar_mb) or 0)
                else:
                    _take_output(data, streams, limits.output_bytes)


def _feed(stdin: IO[bytes], chunk: bytes, selector: selectors.BaseSelector) -> bytes:
    """Write what the non-blocking ``stdin`` takes of ``chunk`` and return the rest; at the source's end, or once
    the driver stops reading (a failed unpack), close it."""
    try:
        if chunk:
            return chunk[os.write(stdin.fileno(), chunk):]
    except BlockingIOError:
        return chunk
    except BrokenPipeError:
        pass
    selector.unregister(stdin)
    stdin.close()
    return b""


def _take_stdout(data: bytes, streams: _Streams, tar_fd: int, cap: int) -> None:
    """The driver's stdout: its status line, then (for a build that exited 0) the tar, written up to ``cap``."""
    if streams.status is None:
        streams.head += data
        line, newline, data = bytes(streams.head).partition(b"\n")
        if not newline:
            if len(streams.head) > _STATUS_MAX:
                streams.status = []  # no status line: the verdict says so
            return
        streams.status = line.decode("ascii", "replace").split()
    if not data or streams.status[:3] != [_STATUS_TAG, "build", "0"]:
        return
    streams.tar_bytes += len(data)
    if streams.tar_bytes > cap:
        streams.over_cap = True
        return
    view = memoryview(data)
    while view:
        view = view[os.write(tar_fd, view):]


def _take_output(data: bytes, streams: _Streams, cap: int) -> None:
    kept = data[:max(0, cap - len(streams.output))]
    streams.output += kept
    streams.dropped += len(data) - len(kept)


def _stop(launched: LaunchedBot) -> None:
    """Kill what is left of the build's tree (its control group, else the wrappers' process group, whose bwrap
    takes its PID namespace along), reap its first process and close the pipes."""
    popen = launched.popen
    if launched.cgroup is not None:
        launched.cgroup.kill()
    if popen.poll() is None:  # not reaped: its pid is still its own process group's
        with contextlib.suppress(ProcessLookupError):
            os.killpg(popen.pid, signal.SIGKILL)
    popen.wait()
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            pipe.close()


def _judge(streams: _Streams, exit_status: int | None, oom_kills: int,
           forks_refused: int) -> tuple[BuildVerdict, int | None, str]:
    """The verdict, the build's exit code and (sandbox) why. A limit the kernel enforced comes first, even in a
    build that exited 0 (a step of it was killed or refused: as for bots, any OOM kill is the memory verdict);
    then the clock, then what the driver said."""
    status = streams.status or []
    phase = status[1] if len(status) >= 3 and status[0] == _STATUS_TAG else None
    code = int(status[2]) if phase is not None and status[2].isdigit() else None
    if oom_kills:
        return "memory", code, ""
    if forks_refused:
        return "processes", code, ""
    if not streams.timed_out and phase == "build" and code == 0:
        if streams.over_cap:
            return "output", 0, ""
        return ("ok", 0, "") if exit_status == 0 else ("failed", None, "")  # 0 built, tar could not pack
    if streams.timed_out:
        return "timeout", None, ""
    if phase is None or code is None:
        return "sandbox", None, f"its driver gave no status (exit status {exit_status})"
    if _is_full(status[3:]):
        return "disk", code, ""
    if phase == "extract":
        return "sandbox", None, f"its source could not be unpacked (tar exit status {code})"
    return "failed", code, ""


def _is_full(fields: list[str]) -> bool:
    """Whether a folder the driver measured (``stat -f``: free blocks, block size, inodes, free inodes, for
    each) has less than :data:`FULL_BELOW` free, or no free inode where inodes are counted."""
    numbers = [int(field) for field in fields if field.isdigit()]
    for free, size, inodes, free_inodes in zip(*[iter(numbers)] * 4, strict=False):
        if free * size < FULL_BELOW or (inodes > 0 and free_inodes == 0):
            return True
    return False


def _outcome(streams: _Streams, verdict: BuildVerdict, code: int | None, started: float, limits: BuildLimits,
             reason: str) -> BuildOutcome:
    output = bytes(streams.output).decode("utf-8", "replace")
    if streams.dropped:
        output += f"\n[{streams.dropped} more bytes of output dropped]\n"
    return BuildOutcome(verdict, code, time.monotonic() - started, output, limits, reason)


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
