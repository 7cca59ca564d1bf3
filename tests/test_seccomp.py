"""The seccomp filter of referee/bots/sandbox/seccomp.py: the program itself, run by a small BPF interpreter here for
both architectures, then the real thing under ``bwrap --seccomp`` as an unprivileged uid, as bots run.

The sandboxed tests skip only where bwrap is missing (and fail then if CI=true) or where this machine's
architecture has no filter. Probes run without the filter too, so that each check can fail.
"""

from __future__ import annotations

import errno
import json
import os
import platform
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from protocol.messages import (
    PROTOCOL_VERSION,
    BotHello,
    GameStart,
    Hello,
    Reply,
    Request,
    Shutdown,
    bot_decoder,
    encoder,
)
from protocol.rules import Rules
from referee.bots.sandbox.seccomp import (
    ARCHES,
    AUDIT_ARCH_AARCH64,
    AUDIT_ARCH_X86_64,
    POLICY,
    SECCOMP_RET_ALLOW,
    SECCOMP_RET_ERRNO,
    SECCOMP_RET_KILL_PROCESS,
    Arch,
    ArgHasBits,
    ArgIn,
    Policy,
    SeccompUnavailable,
    build_program,
    filter_fd,
    filter_program,
)
from referee.engine import SeededRng, new_game

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
AUDIT_ARCH_I386 = 0x40000003
EPERM = SECCOMP_RET_ERRNO | errno.EPERM
ENOSYS = SECCOMP_RET_ERRNO | errno.ENOSYS
SIGSYS_EXIT = 128 + 31  # bwrap's init reports a child killed by signal N as exit status 128 + N
TIMEOUT = 30.0
BOT_UIDS = (65534, 65533)  # two bots' uids: nobody, and one with no account at all

# -- the program, interpreted ----------------------------------------------------------------------------------

_LD, _JA, _JEQ, _JGE, _JSET, _RET = 0x20, 0x05, 0x15, 0x35, 0x45, 0x06


def instructions(program: bytes) -> list[tuple[int, int, int, int]]:
    assert len(program) % 8 == 0
    return list(struct.iter_unpack("<HBBI", program))


def run_filter(program: bytes, nr: int, arch: int, args: Sequence[int] = ()) -> int:
    """What the kernel would return for this call: classic BPF over struct seccomp_data (the opcodes the
    module emits; any other fails the test)."""
    data = struct.pack("<IIQ6Q", nr, arch, 0, *args, *[0] * (6 - len(args)))
    code = instructions(program)
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == _LD:
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif op == _RET:
            return k
        elif op == _JA:
            pc += 1 + k
        elif op in (_JEQ, _JGE, _JSET):
            taken = acc == k if op == _JEQ else acc >= k if op == _JGE else bool(acc & k)
            pc += 1 + (jt if taken else jf)
        else:
            raise AssertionError(f"unexpected opcode {op:#x} at {pc}")


@pytest.mark.parametrize("machine", list(ARCHES))
def test_program_is_well_formed(machine: str) -> None:
    """Whole instructions, at most BPF_MAXINSNS, every jump inside the program, a return at the end, and the
    arch checked first: a call of another arch is killed before its number is looked at."""
    program = filter_program(machine)
    assert program is not None
    code = instructions(program)
    assert 0 < len(code) <= 4096
    for pc, (op, jt, jf, k) in enumerate(code):
        assert op in (_LD, _JA, _JEQ, _JGE, _JSET, _RET), f"opcode {op:#x} at {pc}"
        if op == _JA:
            assert pc + 1 + k < len(code)
        elif op in (_JEQ, _JGE, _JSET):
            assert pc + 1 + max(jt, jf) < len(code)
        elif op == _LD:
            assert k % 4 == 0 and k < 64
    assert code[-1][0] == _RET
    assert code[0] == (_LD, 0, 0, 4)  # seccomp_data.arch
    assert code[1] == (_JEQ, 1, 0, ARCHES[machine].audit_arch)
    assert code[2] == (_RET, 0, 0, SECCOMP_RET_KILL_PROCESS)
    assert code[3] == (_LD, 0, 0, 0)  # seccomp_data.nr


def test_unsupported_architecture(monkeypatch: pytest.MonkeyPatch) -> None:
    assert filter_program("riscv64") is None
    assert filter_program("x86_64") is filter_program("x86_64")  # cached
    monkeypatch.setattr(platform, "machine", lambda: "riscv64")
    assert filter_program() is None
    with pytest.raises(SeccompUnavailable, match="riscv64"):
        filter_fd()


def test_every_policy_call_has_a_number() -> None:
    """A name missing from a table would silently not be filtered: only inotify_init is absent from aarch64."""
    names = set(POLICY.fail) | set(POLICY.by_argument)
    assert not set(POLICY.fail) & set(POLICY.by_argument)
    assert names <= set(ARCHES["x86_64"].syscalls)
    assert names - set(ARCHES["aarch64"].syscalls) == {"inotify_init"}


@pytest.mark.parametrize(("machine", "header"), [("x86_64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
                                                 ("aarch64", "/usr/include/asm-generic/unistd.h")])
def test_numbers_match_the_kernel_headers(machine: str, header: str) -> None:
    """The tables against linux-libc-dev, where installed (older headers lack the newest calls: cachestat)."""
    if not os.path.exists(header):
        pytest.skip(f"{header} is not installed")
    text = Path(header).read_text()
    defined = {name: int(nr) for name, nr in re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\b", text)}
    table = ARCHES[machine].syscalls
    compared = {name: nr for name, nr in table.items() if name in defined}
    assert len(compared) >= len(table) - 1
    assert compared == {name: defined[name] for name in compared}


def test_filter_fd_holds_the_program() -> None:
    if filter_program() is None:
        pytest.skip(f"no filter for {platform.machine()}")
    first, second = filter_fd(), filter_fd()
    try:
        assert first != second
        assert os.lseek(first, 0, os.SEEK_CUR) == 0
        with os.fdopen(os.dup(first), "rb") as read:
            assert read.read() == filter_program()
    finally:
        os.close(first)
        os.close(second)


LOCK_COMMANDS = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)
OTHER_FCNTL = (0, 1, 2, 3, 4, 1030, 1031, 1032)  # F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC...
NAMESPACE_FLAGS = (0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x80)
THREAD_FLAGS = 0x3D0F00  # glibc's pthread_create: VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|...
FORK_FLAGS = 0x01200011  # glibc's fork: CHILD_SETTID|CHILD_CLEARTID|SIGCHLD


@pytest.mark.parametrize("machine", list(ARCHES))
def test_policy_as_the_kernel_would_run_it(machine: str) -> None:
    arch = ARCHES[machine]
    program = filter_program(machine)
    assert program is not None
    nr = arch.syscalls

    def verdict(name: str, *args: int) -> int:
        return run_filter(program, nr[name], arch.audit_arch, args)

    for name, errno_value in POLICY.fail.items():
        if name in nr:
            assert verdict(name) == SECCOMP_RET_ERRNO | errno_value, name
    assert verdict("flock") == EPERM and verdict("inotify_init1") == EPERM and verdict("mincore") == EPERM
    assert verdict("clone3") == ENOSYS and verdict("io_uring_setup") == ENOSYS
    for command in LOCK_COMMANDS:
        assert verdict("fcntl", 3, command) == EPERM
        assert verdict("fcntl", 3, 1 << 32 | command) == EPERM  # the kernel reads cmd as 32 bits
    for command in OTHER_FCNTL:
        assert verdict("fcntl", 3, command) == SECCOMP_RET_ALLOW
    for flag in NAMESPACE_FLAGS:
        assert verdict("clone", flag | FORK_FLAGS) == EPERM
    assert verdict("clone", THREAD_FLAGS) == SECCOMP_RET_ALLOW
    assert verdict("clone", FORK_FLAGS, 0, 0, 0x10000000) == SECCOMP_RET_ALLOW  # flags are arg 0 only
    ordinary = {"x86_64": (0, 1, 39, 57, 202, 231), "aarch64": (63, 64, 172, 98, 93, 94)}[machine]
    for number in ordinary:  # read, write, getpid, (v)fork or futex, exit...
        assert run_filter(program, number, arch.audit_arch) == SECCOMP_RET_ALLOW
    for other in {AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64} - {arch.audit_arch}:
        assert run_filter(program, 39, other) == SECCOMP_RET_KILL_PROCESS
    if machine == "x86_64":  # x32: the same calls with bit 30 set
        assert run_filter(program, 0x40000000 | 73, arch.audit_arch) == SECCOMP_RET_KILL_PROCESS
        assert run_filter(program, 0x40000000 | 39, arch.audit_arch) == SECCOMP_RET_KILL_PROCESS


def test_a_long_policy_stays_valid() -> None:
    """Conditional jumps never skip more than one instruction, whatever the length of the lists."""
    syscalls = {f"call{i}": i for i in range(1200)}
    policy = Policy(fail={f"call{i}": 1 + i % 100 for i in range(1000)},
                    by_argument={f"call{i}": ArgIn(i % 6, frozenset(range(i, i + 40)), errno.EACCES)
                                 for i in range(1000, 1020)}
                    | {"call1100": ArgHasBits(2, 0xF0, errno.EINVAL)})
    program = build_program(Arch(AUDIT_ARCH_X86_64, syscalls, has_x32=True), policy)
    code = instructions(program)
    assert all(max(jt, jf) <= 1 for _, jt, jf, _ in code)

    def run(nr: int, *args: int) -> int:
        return run_filter(program, nr, AUDIT_ARCH_X86_64, args)

    assert run(999) == SECCOMP_RET_ERRNO | 100
    assert run(1019, 0, 0, 0, 0, 0, 1058) == SECCOMP_RET_ERRNO | errno.EACCES  # the last rule checks arg 5
    assert run(1019, 0, 0, 0, 0, 0, 1059) == SECCOMP_RET_ALLOW
    assert run(1019, 1058) == SECCOMP_RET_ALLOW
    assert run(1100, 0, 0, 0x10) == SECCOMP_RET_ERRNO | errno.EINVAL
    assert run(1100, 0, 0, 0x01) == SECCOMP_RET_ALLOW
    assert run(1150) == SECCOMP_RET_ALLOW
    too_many = {f"call{i}": i for i in range(2100)}  # two instructions each: over BPF_MAXINSNS
    with pytest.raises(ValueError, match="instructions"):
        build_program(Arch(AUDIT_ARCH_X86_64, too_many, has_x32=True),
                      Policy(fail=dict.fromkeys(too_many, errno.EPERM), by_argument={}))


# -- the filter in a real sandbox ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bwrap() -> str:
    found = shutil.which("bwrap")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("bwrap is not installed, and CI must run the seccomp tests")
        pytest.skip("bwrap is not installed: the filter cannot be tried in a sandbox")
    if filter_program() is None:
        pytest.skip(f"no seccomp filter for {platform.machine()}")
    return found


def drop_to(uid: int) -> list[str]:
    """setpriv to ``uid``, as the launcher does for bots; without root there is no other uid to take."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


@contextmanager
def sandbox(bwrap: str, argv: Sequence[str], *, filtered: bool, uid: int = BOT_UIDS[0]
            ) -> Iterator[tuple[list[str], tuple[int, ...]]]:
    """The command line of ``argv`` in bwrap as ``uid``, and the fds to pass it; ``filtered``: with --seccomp."""
    fds: tuple[int, ...] = (filter_fd(),) if filtered else ()
    try:
        options = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent"]
        if filtered:
            options += ["--seccomp", str(fds[0])]
        yield [bwrap, *options, "--", *drop_to(uid), *argv], fds
    finally:
        for fd in fds:
            os.close(fd)


def run_sandboxed(bwrap: str, argv: Sequence[str], *, filtered: bool, stdin: str = "",
                  env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    with sandbox(bwrap, argv, filtered=filtered) as (command, fds):
        return subprocess.run(command, pass_fds=fds, input=stdin, capture_output=True, text=True, timeout=TIMEOUT,
                              env=None if env is None else {**os.environ, **env}, cwd="/")


# Runs the checks named in argv[1:] in order and prints {check: "ok" or the errno's name} as one JSON line.
# Syscall numbers are written out here, not taken from the module, so that a wrong table entry shows.
PROBE = r"""
import ctypes, errno, fcntl, json, os, platform, resource, struct, subprocess, sys, threading

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
NR = {"x86_64": {"clone": 56, "clone3": 435, "cachestat": 451},
      "aarch64": {"clone": 220, "clone3": 435, "cachestat": 451}}[platform.machine()]
FLOCK = "hh4xqqi4x"  # struct flock: l_type, l_whence, l_start, l_len, l_pid
CLONE_NEWUSER, SIGCHLD = 0x10000000, 17

def c(result):
    if result == -1:
        raise OSError(ctypes.get_errno(), "")
    return result

def shared():
    return os.open("/etc/passwd", os.O_RDONLY)

def lock_query(command):
    return fcntl.fcntl(shared(), command, struct.pack(FLOCK, fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0))

def mincore():
    address = libc.mmap(None, 4096, 1, 1, shared(), 0)  # PROT_READ, MAP_SHARED
    assert address not in (None, 2**64 - 1)
    c(libc.mincore(ctypes.c_void_p(address), ctypes.c_size_t(4096), ctypes.create_string_buffer(1)))

def cachestat():
    span, stat = ctypes.create_string_buffer(16), ctypes.create_string_buffer(40)
    c(libc.syscall(NR["cachestat"], shared(), span, stat, 0))

def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    assert os.waitpid(pid, 0)[1] == 7 << 8

def thread():
    ran = []
    worker = threading.Thread(target=ran.append, args=[1])
    worker.start()
    worker.join()
    assert ran == [1]

def flags():
    fd = shared()
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    assert fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK
    fcntl.fcntl(fd, fcntl.F_SETFD, 0)
    assert fcntl.fcntl(fd, fcntl.F_GETFD) == 0
    assert fcntl.fcntl(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 0), fcntl.F_GETFD) == fcntl.FD_CLOEXEC

def clone_newuser():
    pid = c(libc.syscall(NR["clone"], CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0))
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)

def x32():  # getpid through the x32 ABI; no core dump of the expected kill
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    c(libc.syscall(0x40000000 | 39))

CHECKS = {
    "flock": lambda: fcntl.flock(shared(), fcntl.LOCK_SH | fcntl.LOCK_NB),
    "lockf": lambda: fcntl.lockf(shared(), fcntl.LOCK_SH | fcntl.LOCK_NB),  # F_SETLK
    "getlk": lambda: lock_query(fcntl.F_GETLK),
    "ofd_setlk": lambda: lock_query(fcntl.F_OFD_SETLK),
    "notify": lambda: fcntl.fcntl(os.open("/etc", os.O_RDONLY), fcntl.F_NOTIFY, fcntl.DN_MODIFY),
    "getlease": lambda: fcntl.fcntl(shared(), fcntl.F_GETLEASE),
    "inotify_init1": lambda: c(libc.inotify_init1(0)),
    "mincore": mincore,
    "cachestat": cachestat,
    "clone3": lambda: c(libc.syscall(NR["clone3"], None, 0)),
    "fork": fork,
    "thread": thread,
    "subprocess": lambda: subprocess.run(["true"], check=True),
    "fcntl_flags": flags,
    "unshare_user": lambda: c(libc.unshare(CLONE_NEWUSER)),
    "clone_newuser": clone_newuser,
    "x32": x32,
}
results = {}
for name in sys.argv[1:]:
    try:
        CHECKS[name]()
        results[name] = "ok"
    except OSError as exc:
        results[name] = errno.errorcode[exc.errno]
print(json.dumps(results), flush=True)
"""

CHANNELS = ("flock", "lockf", "getlk", "ofd_setlk", "notify", "getlease", "inotify_init1", "mincore")
WORKING = ("fork", "thread", "subprocess", "fcntl_flags")


def probe(bwrap: str, checks: Sequence[str], *, filtered: bool) -> dict[str, str]:
    run = run_sandboxed(bwrap, [sys.executable, "-S", "-c", PROBE, *checks], filtered=filtered)
    assert run.returncode == 0, f"exit status {run.returncode}: {run.stderr}"
    results: dict[str, str] = json.loads(run.stdout)
    return results


def test_without_the_filter_the_channels_are_open(bwrap: str) -> None:
    """The probes themselves work, so the filtered run below shows the filter, not a broken probe."""
    assert probe(bwrap, [*CHANNELS, "clone3", *WORKING], filtered=False) == {
        **dict.fromkeys(CHANNELS, "ok"), "clone3": "EINVAL", **dict.fromkeys(WORKING, "ok")}


def test_filter_fails_the_channels_and_keeps_the_rest(bwrap: str) -> None:
    checks = [*CHANNELS, "cachestat", "clone3", *WORKING, "clone_newuser", "unshare_user"]
    assert probe(bwrap, checks, filtered=True) == {
        **dict.fromkeys([*CHANNELS, "cachestat"], "EPERM"), "clone3": "ENOSYS", **dict.fromkeys(WORKING, "ok"),
        "clone_newuser": "EPERM", "unshare_user": "EPERM"}


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the x32 ABI exists on x86_64 only")
def test_x32_calls_are_killed(bwrap: str) -> None:
    unfiltered = probe(bwrap, ["x32"], filtered=False)
    assert unfiltered["x32"] in ("ok", "ENOSYS")  # ENOSYS: this kernel runs no x32 code
    run = run_sandboxed(bwrap, [sys.executable, "-S", "-c", PROBE, "x32"], filtered=True)
    assert (run.returncode, run.stdout) == (SIGSYS_EXIT, "")


I386_GETPID = r"""
#include <stdio.h>
#include <sys/resource.h>
int main(void) {
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    long result;
    __asm__ volatile ("int $0x80" : "=a"(result) : "a"(20L) : "memory");  /* getpid, i386 numbering */
    printf("%ld\n", result);
    return 0;
}
"""


@contextmanager
def compiled(source: str | Path, *flags: str) -> Iterator[Path]:
    """A C program built into a folder every uid may read (pytest's tmp_path is root's alone)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed")
    folder = Path(tempfile.mkdtemp(prefix="durak-seccomp-"))
    try:
        folder.chmod(0o755)
        if isinstance(source, str):
            (folder / "main.c").write_text(source)
            source = folder / "main.c"
        build = subprocess.run([gcc, *flags, "-o", str(folder / "prog"), str(source)], capture_output=True,
                               text=True, timeout=60)
        assert build.returncode == 0, build.stderr
        yield folder / "prog"
    finally:
        shutil.rmtree(folder)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="i386 system calls exist on x86_64 only")
def test_i386_calls_are_killed(bwrap: str) -> None:
    with compiled(I386_GETPID, "-O2") as program:
        unfiltered = run_sandboxed(bwrap, [str(program)], filtered=False)
        if unfiltered.returncode != 0:
            pytest.skip(f"this kernel runs no i386 code (int 0x80: exit status {unfiltered.returncode})")
        assert int(unfiltered.stdout) > 0  # a pid
        filtered = run_sandboxed(bwrap, [str(program)], filtered=True)
        assert (filtered.returncode, filtered.stdout) == (SIGSYS_EXIT, "")


# Holds a read lock (F_SETLK) and an flock on /etc/passwd, says how each went, and keeps them until stdin closes.
HOLDER = r"""
import errno, fcntl, json, os, sys
fd, results = os.open("/etc/passwd", os.O_RDONLY), {}
for name, take in [("setlk", lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                   ("flock", lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB))]:
    try:
        take()
        results[name] = "ok"
    except OSError as exc:
        results[name] = errno.errorcode[exc.errno]
print(json.dumps(results), flush=True)
sys.stdin.read()
"""

# Looks for another process's locks on /etc/passwd: F_GETLK for a write lock, and a non-blocking flock.
WATCHER = r"""
import errno, fcntl, json, os, struct
fd, results = os.open("/etc/passwd", os.O_RDONLY), {}
try:
    found = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hh4xqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    results["getlk"] = "locked" if struct.unpack("hh4xqqi4x", found)[0] != fcntl.F_UNLCK else "unlocked"
except OSError as exc:
    results["getlk"] = errno.errorcode[exc.errno]
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    results["flock"] = "ok"
except OSError as exc:
    results["flock"] = errno.errorcode[exc.errno]
print(json.dumps(results))
"""


def read_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
    assert ready, f"no answer within {TIMEOUT} s"
    return process.stdout.readline()


@pytest.mark.parametrize("filtered", [False, True], ids=["open", "filtered"])
def test_two_bots_signal_through_locks_only_without_the_filter(bwrap: str, filtered: bool) -> None:
    """Two sandboxes of two uids share /etc/passwd read-only: the first one's locks are the second one's bits."""
    with sandbox(bwrap, [sys.executable, "-S", "-c", HOLDER], filtered=filtered, uid=BOT_UIDS[0]) as (command, fds):
        holder = subprocess.Popen(command, pass_fds=fds, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  cwd="/")
    try:
        held = json.loads(read_line(holder))
        with sandbox(bwrap, [sys.executable, "-S", "-c", WATCHER], filtered=filtered, uid=BOT_UIDS[1]) as (
                command, fds):
            watcher = subprocess.run(command, pass_fds=fds, capture_output=True, text=True, timeout=TIMEOUT, cwd="/")
        assert watcher.returncode == 0, watcher.stderr
        seen = json.loads(watcher.stdout)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=TIMEOUT)
        assert holder.stdout is not None
        holder.stdout.close()
    if filtered:
        assert (held, seen) == ({"setlk": "EPERM", "flock": "EPERM"}, {"getlk": "EPERM", "flock": "EPERM"})
    else:
        assert (held, seen) == ({"setlk": "ok", "flock": "ok"}, {"getlk": "locked", "flock": "EAGAIN"})
    assert holder.returncode == 0


# -- the sample bots under the filter ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def c_bot() -> Iterator[Path]:
    with compiled(SAMPLES / "c" / "bot.c", "-O2", "-std=c99", "-Wall", "-Wextra") as binary:
        yield binary


def sample_bot_argv(name: str, request: pytest.FixtureRequest) -> list[str]:
    if name == "python":
        return [sys.executable, str(SAMPLES / "python" / "random_bot.py"), "3"]
    if name == "js":
        node = shutil.which("node")
        if node is None:
            pytest.skip("node is not installed")
        return [node, str(SAMPLES / "js" / "bot.js")]
    return [str(request.getfixturevalue("c_bot")), "3"]


@pytest.mark.parametrize("name", ["python", "js", "c"])
def test_sample_bots_run_unchanged_under_the_filter(bwrap: str, name: str, request: pytest.FixtureRequest) -> None:
    """Handshake, the first request of a game, and shutdown: the answers, and exit status 0 with no complaint."""
    game = new_game(Rules(variant="podkidnoy"), 2, SeededRng(5))
    seat = game.to_move
    assert seat is not None
    legal = [str(action) for action in game.legal_actions()]
    messages = [Hello(protocol=PROTOCOL_VERSION, referee="seccomp test", time_ms=10_000),
                GameStart(game="g", seat=seat, players=2, names=["a", "b"], rules=game.rules, dealer=game.dealer,
                          view=game.view(seat), seed=7),
                Request(id=4242, game="g", view=game.view(seat), legal=legal, time_ms=10_000),
                Shutdown(grace_ms=1000)]
    stdin = "".join(encoder.encode(message).decode() + "\n" for message in messages)
    run = run_sandboxed(bwrap, sample_bot_argv(name, request), filtered=True, stdin=stdin,
                        env={"PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    hello, action = (bot_decoder.decode(line) for line in run.stdout.splitlines())
    assert isinstance(hello, BotHello) and hello.protocol == PROTOCOL_VERSION
    assert isinstance(action, Reply) and action.id == 4242 and action.action in legal
    assert run.stderr == ""
