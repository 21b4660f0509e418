"""A classic-BPF seccomp filter for tier 1, loaded by `bwrap --seccomp FD`.

Refused with EPERM: reaching into other processes (ptrace, process_vm_*, kcmp,
pidfd_getfd, process_madvise), kernel keyrings, new namespaces (unshare, setns,
clone/clone3 with CLONE_NEWUSER), mounts, module and kexec loading, bpf, userfaultfd,
perf, io_uring (it can open sockets without socket()), memory hidden from the kernel
(memfd_secret), clocks, quotas, fanotify, personality flags other than PER_LINUX and
the query (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC weaken exploit mitigations), and
socket(AF_UNIX) unless the job needs it. Foreign architectures and the x32 ABI are
killed outright, so the numbers below cannot be sidestepped.
"""
from __future__ import annotations

import os
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
AF_UNIX = 1
AF_VSOCK = 40
CLONE_NEWUSER = 0x10000000
EPERM = 1
ENOSYS = 38

# x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl)
DENIED_X86_64 = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "keyctl": 250, "add_key": 248, "request_key": 249,
    "unshare": 272, "setns": 308,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442,
    "init_module": 175, "finit_module": 313, "delete_module": 176,
    "kexec_load": 246, "kexec_file_load": 320,
    "bpf": 321, "userfaultfd": 323, "perf_event_open": 298,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_by_handle_at": 304, "name_to_handle_at": 303,
    "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163, "syslog": 103,
    "iopl": 172, "ioperm": 173, "uselib": 134, "lookup_dcookie": 212,
    "kcmp": 312, "pidfd_getfd": 438, "process_madvise": 440, "memfd_secret": 447,
    "open_tree_attr": 467, "quotactl": 179, "quotactl_fd": 443, "nfsservctl": 180,
    "vhangup": 153, "fanotify_init": 300, "settimeofday": 164, "clock_settime": 227,
    "clock_adjtime": 305, "sysfs": 139, "ustat": 136, "_sysctl": 156,
}
NR_SOCKET = 41
NR_CLONE = 56
NR_CLONE3 = 435
NR_PERSONALITY = 135
PERSONALITY_ALLOWED = (0, 0xFFFFFFFF)  # PER_LINUX, and the query (the argument is an unsigned int)

# BPF opcodes (linux/filter.h, linux/seccomp.h)
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
OFF_NR, OFF_ARCH, OFF_ARG0 = 0, 4, 16


class UnsupportedArch(RuntimeError):
    pass


def _insn(code: int, k: int = 0, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _errno(value: int) -> bytes:
    return _insn(RET_K, RET_ERRNO | value)


def program(allow_unix_sockets: bool = False) -> bytes:
    """The filter as bytes of `struct sock_filter[]`, ready for `bwrap --seccomp`."""
    if platform.machine() != "x86_64":
        raise UnsupportedArch(f"no seccomp filter for {platform.machine()} (only x86_64)")
    out = [
        _insn(LD_W_ABS, OFF_ARCH),
        _insn(JEQ_K, AUDIT_ARCH_X86_64, jt=1, jf=0),
        _insn(RET_K, RET_KILL_PROCESS),
        _insn(LD_W_ABS, OFF_NR),
        _insn(JGE_K, X32_SYSCALL_BIT, jt=0, jf=1),
        _insn(RET_K, RET_KILL_PROCESS),
    ]
    for nr in sorted(DENIED_X86_64.values()):
        out += [_insn(JEQ_K, nr, jt=0, jf=1), _errno(EPERM)]
    # clone3 passes flags in memory BPF cannot read: ENOSYS makes libc fall back to clone.
    out += [_insn(JEQ_K, NR_CLONE3, jt=0, jf=1), _errno(ENOSYS)]
    out += [_insn(JEQ_K, NR_CLONE, jt=0, jf=3), _insn(LD_W_ABS, OFF_ARG0),
            _insn(JSET_K, CLONE_NEWUSER, jt=0, jf=1), _errno(EPERM)]
    out += _personality_rules()
    out += _socket_rules(allow_unix_sockets)
    out.append(_insn(RET_K, RET_ALLOW))
    return b"".join(out)


def _personality_rules() -> list[bytes]:
    skip = len(PERSONALITY_ALLOWED) + 2
    rules = [_insn(LD_W_ABS, OFF_NR), _insn(JEQ_K, NR_PERSONALITY, jt=0, jf=skip),
             _insn(LD_W_ABS, OFF_ARG0)]
    for index, value in enumerate(PERSONALITY_ALLOWED):
        rules.append(_insn(JEQ_K, value, jt=len(PERSONALITY_ALLOWED) - index, jf=0))
    return rules + [_errno(EPERM)]


def _socket_rules(allow_unix_sockets: bool) -> list[bytes]:
    families = [AF_VSOCK] + ([] if allow_unix_sockets else [AF_UNIX])
    rules = [_insn(LD_W_ABS, OFF_NR), _insn(JEQ_K, NR_SOCKET, jt=0, jf=1 + 2 * len(families)),
             _insn(LD_W_ABS, OFF_ARG0)]
    for family in families:
        rules += [_insn(JEQ_K, family, jt=0, jf=1), _errno(EPERM)]
    return rules


def program_fd(allow_unix_sockets: bool = False) -> int:
    """A sealed-in-memory file holding the filter, positioned at 0 (for pass_fds)."""
    fd = os.memfd_create("bot-seccomp", 0)
    os.write(fd, program(allow_unix_sockets))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
