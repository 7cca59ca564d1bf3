"""The seccomp filter for ``bwrap --seccomp FD``: it closes the covert channels namespaces leave open between
bots (locks and leases on shared read-only files, inotify, page-cache residency...) and the calls that reach
past the sandbox (ptrace, keyrings, mounts, new namespaces). A classic BPF program, built here without libseccomp.
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

# Return values of a seccomp filter (linux/seccomp.h).
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000

# Offsets into struct seccomp_data; an argument's low 32 bits (little-endian) are at the argument's offset.
_NR_OFFSET = 0
_ARCH_OFFSET = 4


def _arg_offset(index: int) -> int:
    return 16 + 8 * index


# Classic BPF opcodes (linux/bpf_common.h): class | size | mode, or class | operation | source.
_BPF_LD, _BPF_JMP, _BPF_RET = 0x00, 0x05, 0x06
_BPF_W, _BPF_ABS, _BPF_K = 0x00, 0x20, 0x00
_LD_W_ABS = _BPF_LD | _BPF_W | _BPF_ABS  # A = 32 bits of seccomp_data at offset k
_JMP_JA = _BPF_JMP | 0x00  # jump k instructions (32 bits)
_JMP_JEQ_K = _BPF_JMP | 0x10 | _BPF_K
_JMP_JGE_K = _BPF_JMP | 0x30 | _BPF_K
_JMP_JSET_K = _BPF_JMP | 0x40 | _BPF_K  # A & k != 0
_RET_K = _BPF_RET | _BPF_K
_MAX_INSTRUCTIONS = 4096  # BPF_MAXINSNS: the kernel refuses a longer program


class SeccompUnavailable(RuntimeError):
    """This machine's architecture has no syscall table here, so no filter can be built."""


@dataclass(frozen=True)
class ArgIn:
    """Fail with ``errno`` when the low 32 bits of argument ``arg`` are one of ``values``."""

    arg: int
    values: frozenset[int]
    errno: int


@dataclass(frozen=True)
class ArgHasBits:
    """Fail with ``errno`` when the low 32 bits of argument ``arg`` have any bit of ``mask`` set."""

    arg: int
    mask: int
    errno: int


ArgRule = ArgIn | ArgHasBits


@dataclass(frozen=True)
class Policy:
    """What the filter does; every call not named here is allowed."""

    #: syscall -> the errno it fails with, whatever its arguments.
    fail: Mapping[str, int]
    #: syscall -> the rule on its arguments; calls that the rule does not match are allowed.
    by_argument: Mapping[str, ArgRule]


F_GETLK, F_SETLK, F_SETLKW = 5, 6, 7
F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY = 1024, 1025, 1026  # F_NOTIFY is dnotify, a channel like inotify

CLONE_NEWTIME = 0x80  # shares its bit with the exit signal in clone(); a signal >= 128 is invalid anyway
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACE_FLAGS = (CLONE_NEWTIME | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER
                   | CLONE_NEWPID | CLONE_NEWNET)

#: File locks and file watches: they work across uids on files every bot can read (with fcntl's lock, lease and
#: dnotify commands, :data:`LOCK_COMMANDS`).
SHARED_FILE_CALLS = ("flock", "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark")
LOCK_COMMANDS = frozenset({F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE,
                           F_NOTIFY})

_DENIED = (
    *SHARED_FILE_CALLS,
    # page-cache residency of shared files
    "mincore", "cachestat",
    # kernel keyrings, tracing and other processes' memory
    "keyctl", "add_key", "request_key", "perf_event_open", "bpf", "userfaultfd",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # namespaces and mounts
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at",
    # the machine's own administration
    "swapon", "swapoff", "reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "acct", "quotactl", "quotactl_fd", "lookup_dcookie",
)

# ENOSYS, not EPERM, where runtimes take "not implemented" as the cue to fall back: io_uring requests
# are not seen by seccomp, and clone3's flags are behind a pointer it cannot read (glibc falls back to clone).
_NOT_IMPLEMENTED = ("io_uring_setup", "io_uring_enter", "io_uring_register", "clone3")

POLICY = Policy(
    fail={**dict.fromkeys(_DENIED, errno.EPERM), **dict.fromkeys(_NOT_IMPLEMENTED, errno.ENOSYS)},
    by_argument={
        "fcntl": ArgIn(1, LOCK_COMMANDS, errno.EPERM),
        "clone": ArgHasBits(0, NAMESPACE_FLAGS, errno.EPERM),  # flags are arg 0 on x86_64 and aarch64
    },
)
#: For the build of an uploaded bot (referee.league.build): the bots' filter less the shared-file channels, which
#: compilers use (``go build`` takes an flock on go.mod) and which have no receiver while every bot is filtered.
BUILD_POLICY = Policy(
    fail={name: value for name, value in POLICY.fail.items() if name not in SHARED_FILE_CALLS},
    by_argument={"clone": POLICY.by_argument["clone"]},
)
#: The policies by name, as a launch plan names its filter.
PolicyName = Literal["bots", "build"]
POLICIES: Mapping[PolicyName, Policy] = {"bots": POLICY, "build": BUILD_POLICY}

SYSCALLS_X86_64: Mapping[str, int] = {
    "fcntl": 72, "flock": 73, "clone": 56, "clone3": 435, "mincore": 27, "cachestat": 451,
    "inotify_init": 253, "inotify_add_watch": 254, "inotify_init1": 294, "fanotify_init": 300, "fanotify_mark": 301,
    "keyctl": 250, "add_key": 248, "request_key": 249, "perf_event_open": 298, "bpf": 321, "userfaultfd": 323,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "pidfd_getfd": 438,
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "swapon": 167, "swapoff": 168, "reboot": 169, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "acct": 163, "quotactl": 179, "quotactl_fd": 443,
    "lookup_dcookie": 212, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
}

# aarch64 uses the generic table (asm-generic/unistd.h): it has no inotify_init.
SYSCALLS_AARCH64: Mapping[str, int] = {
    "fcntl": 25, "flock": 32, "clone": 220, "clone3": 435, "mincore": 232, "cachestat": 451,
    "inotify_init1": 26, "inotify_add_watch": 27, "fanotify_init": 262, "fanotify_mark": 263,
    "keyctl": 219, "add_key": 217, "request_key": 218, "perf_event_open": 241, "bpf": 280, "userfaultfd": 282,
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "pidfd_getfd": 438,
    "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "name_to_handle_at": 264, "open_by_handle_at": 265,
    "swapon": 224, "swapoff": 225, "reboot": 142, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105,
    "finit_module": 273, "delete_module": 106, "acct": 89, "quotactl": 60, "quotactl_fd": 443,
    "lookup_dcookie": 18, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
}


@dataclass(frozen=True)
class Arch:
    audit_arch: int
    syscalls: Mapping[str, int]
    #: x86_64 also accepts x32 calls (nr | 0x40000000): the same calls under other numbers.
    has_x32: bool


ARCHES: Mapping[str, Arch] = {
    "x86_64": Arch(AUDIT_ARCH_X86_64, SYSCALLS_X86_64, has_x32=True),
    "aarch64": Arch(AUDIT_ARCH_AARCH64, SYSCALLS_AARCH64, has_x32=False),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _fail(errno_value: int) -> bytes:
    return _insn(_RET_K, SECCOMP_RET_ERRNO | errno_value)


def _check_arch(arch: Arch) -> list[bytes]:
    """Kill a call made through another ABI (i386 on x86_64, x32): its numbers are not the ones checked below.
    Kill, not an errno, because only code trying to get around this filter makes such calls."""
    program = [
        _insn(_LD_W_ABS, _ARCH_OFFSET),
        _insn(_JMP_JEQ_K, arch.audit_arch, jt=1),
        _insn(_RET_K, SECCOMP_RET_KILL_PROCESS),
        _insn(_LD_W_ABS, _NR_OFFSET),
    ]
    if arch.has_x32:
        program += [_insn(_JMP_JGE_K, X32_SYSCALL_BIT, jf=1), _insn(_RET_K, SECCOMP_RET_KILL_PROCESS)]
    return program


def _arg_block(rule: ArgRule) -> list[bytes]:
    """The check of one call's argument; it ends in a return, whatever the argument."""
    block = [_insn(_LD_W_ABS, _arg_offset(rule.arg))]
    if isinstance(rule, ArgIn):
        for value in sorted(rule.values):
            block += [_insn(_JMP_JEQ_K, value, jf=1), _fail(rule.errno)]
    else:
        block += [_insn(_JMP_JSET_K, rule.mask, jf=1), _fail(rule.errno)]
    return [*block, _insn(_RET_K, SECCOMP_RET_ALLOW)]


def build_program(arch: Arch, policy: Policy = POLICY) -> bytes:
    """The filter: the arch check, then one ``JEQ nr`` per call of the policy followed by its return, or by a
    jump (32-bit offset) to its argument check, which comes after the final allow. Conditional jumps only
    ever skip one instruction, so the 8-bit offsets hold however long the policy grows."""
    program = _check_arch(arch)
    for name, errno_value in policy.fail.items():
        if name in arch.syscalls:  # a call this arch does not have cannot be made
            program += [_insn(_JMP_JEQ_K, arch.syscalls[name], jf=1), _fail(errno_value)]
    jumps: list[tuple[int, list[bytes]]] = []  # (index of the jump, the block it goes to)
    for name, rule in policy.by_argument.items():
        if name in arch.syscalls:
            program.append(_insn(_JMP_JEQ_K, arch.syscalls[name], jf=1))
            jumps.append((len(program), _arg_block(rule)))
            program.append(b"")  # the jump, once the block's place is known
    program.append(_insn(_RET_K, SECCOMP_RET_ALLOW))
    for at, block in jumps:
        program[at] = _insn(_JMP_JA, len(program) - at - 1)
        program += block
    if len(program) > _MAX_INSTRUCTIONS:
        raise ValueError(f"the seccomp program has {len(program)} instructions, over the kernel's {_MAX_INSTRUCTIONS}")
    return b"".join(program)


@functools.cache
def _program_for(machine: str, policy: PolicyName) -> bytes | None:
    arch = ARCHES.get(machine)
    return None if arch is None else build_program(arch, POLICIES[policy])


def filter_program(machine: str | None = None, policy: PolicyName = "bots") -> bytes | None:
    """The filter ``policy`` (:data:`POLICIES`) for ``machine`` (default: this one, as ``platform.machine()`` names
    it), as the array of struct sock_filter that ``bwrap --seccomp`` reads; None when the architecture is not
    supported."""
    return _program_for(platform.machine() if machine is None else machine, policy)


def filter_fd(policy: PolicyName = "bots") -> int:
    """A new fd (close-on-exec: pass it with ``pass_fds``) at offset 0 of a memfd holding the filter, for one
    ``bwrap --seccomp FD``: bwrap reads it to its end, so each launch needs its own.

    :raises SeccompUnavailable: no filter for this machine's architecture.
    """
    program = filter_program(policy=policy)
    if program is None:
        raise SeccompUnavailable(f"no seccomp filter for the {platform.machine()!r} architecture "
                                 f"(supported: {', '.join(ARCHES)})")
    fd = os.memfd_create("durak-seccomp", os.MFD_CLOEXEC)
    try:
        view = memoryview(program)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
