"""Escape suite, seccomp: every syscall the filter denies, invoked for real inside tier 1.

One sandbox runs a probe that calls each syscall with ctypes' syscall() and reports the
errno; the tests then read that report, one test per syscall. The arguments are chosen so
that the call would be harmless if it got through, and where the kernel would answer
something other than EPERM (EBADF, EFAULT, EINVAL, success), that answer proves the filter
is what said no.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from sandbox import seccomp
from sandbox.base import Limits, SandboxConfig
from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current

pytestmark = pytest.mark.sandbox

SELF = -2  # replaced by the probe's own pid
# name: (number, args); 0 stands for NULL
DENIED = {
    "ptrace": (101, (0, 0, 0, 0)),  # PTRACE_TRACEME: the kernel allows it
    "process_vm_readv": (310, (SELF, 0, 0, 0, 0, 0)),  # nothing to copy: the kernel returns 0
    "process_vm_writev": (311, (SELF, 0, 0, 0, 0, 0)),
    "keyctl": (250, (0, -1, 0, 0, 0)),  # KEYCTL_GET_KEYRING_ID of the thread keyring
    "add_key": (248, (0, 0, 0, 0, 0)),
    "request_key": (249, (0, 0, 0, 0)),
    "unshare": (272, (0,)),  # no flags: a no-op for the kernel
    "setns": (308, (-1, 0)),
    "mount": (165, (0, 0, 0, 0, 0)),
    "umount2": (166, (0, 0)),
    "pivot_root": (155, (0, 0)),
    "chroot": (161, (0,)),
    "open_tree": (428, (-1, 0, 0)),
    "move_mount": (429, (-1, 0, -1, 0, 0)),
    "fsopen": (430, (0, 0)),
    "fsconfig": (431, (-1, 0, 0, 0, 0)),
    "fsmount": (432, (-1, 0, 0)),
    "fspick": (433, (-1, 0, 0)),
    "mount_setattr": (442, (-1, 0, 0, 0, 0)),
    "open_tree_attr": (467, (-1, 0, 0, 0, 0)),
    "init_module": (175, (0, 0, 0)),
    "finit_module": (313, (-1, 0, 0)),
    "delete_module": (176, (0, 0)),
    "kexec_load": (246, (0, 0, 0, 0)),
    "kexec_file_load": (320, (-1, -1, 0, 0, 0)),
    "bpf": (321, (0x7FFFFFFF, 0, 0)),
    "userfaultfd": (323, (0,)),
    "perf_event_open": (298, (0, 0, -1, -1, 0)),
    "io_uring_setup": (425, (1, 0)),  # NULL params: EFAULT if it got through
    "io_uring_enter": (426, (-1, 0, 0, 0, 0, 0)),
    "io_uring_register": (427, (-1, 0, 0, 0)),
    "open_by_handle_at": (304, (-1, 0, 0)),
    "name_to_handle_at": (303, (-1, 0, 0, 0, 0)),
    "swapon": (167, (0, 0)),
    "swapoff": (168, (0,)),
    "reboot": (169, (0, 0, 0, 0)),  # wrong magic: EINVAL even with the capability
    "acct": (163, (0,)),
    "syslog": (103, (10, 0, 0)),  # SYSLOG_ACTION_SIZE_BUFFER: a read
    "iopl": (172, (0,)),  # level 0: a no-op for the kernel
    "ioperm": (173, (0, 0, 0)),
    "uselib": (134, (0,)),
    "lookup_dcookie": (212, (0, 0, 0)),
    "kcmp": (312, (SELF, SELF, 1, 0, 0)),  # KCMP_VM of itself: the kernel answers 0
    "pidfd_getfd": (438, (-1, 0, 0)),
    "process_madvise": (440, (-1, 0, 0, 0, 0)),
    "memfd_secret": (447, (0,)),
    "quotactl": (179, (0, 0, 0, 0)),
    "quotactl_fd": (443, (-1, 0, 0, 0)),
    "nfsservctl": (180, (0, 0, 0)),
    "vhangup": (153, ()),
    "fanotify_init": (300, (0, 0)),
    "settimeofday": (164, (0, 0)),  # both NULL: a no-op for the kernel
    "clock_settime": (227, (0, 0)),
    "clock_adjtime": (305, (0, 0)),
    "sysfs": (139, (1, 0)),
    "ustat": (136, (0, 0)),
    "_sysctl": (156, (0,)),
}
AF_UNIX, AF_VSOCK, SOCK_STREAM = 1, 40, 1
CLONE_NEWUSER, CLONE_FS, SIGCHLD = 0x10000000, 0x200, 17
ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC = 0x0040000, 0x0400000
# Denied only for some arguments: name -> (number, args, errno the filter answers)
CONDITIONAL = {
    # NEWUSER|FS is EINVAL for the kernel, so EPERM can only come from the filter
    "clone-newuser": (56, (CLONE_NEWUSER | CLONE_FS | SIGCHLD, 0, 0, 0, 0), "EPERM"),
    "clone3": (435, (0, 0), "ENOSYS"),  # flags in memory: libc falls back to clone
    "socket-af-unix": (41, (AF_UNIX, SOCK_STREAM, 0), "EPERM"),
    "socket-af-vsock": (41, (AF_VSOCK, SOCK_STREAM, 0), "EPERM"),
    "personality-addr-no-randomize": (135, (ADDR_NO_RANDOMIZE,), "EPERM"),
    "personality-read-implies-exec": (135, (READ_IMPLIES_EXEC,), "EPERM"),
    "personality-per-linux32": (135, (0x0008,), "EPERM"),
    "personality-query": (135, (0xFFFFFFFF,), "ok"),
    "personality-per-linux": (135, (0,), "ok"),
}

PROBE = """
import ctypes, errno, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
for name, (nr, args) in json.loads(sys.argv[1]).items():
    args = [os.getpid() if a == -2 else a for a in args]
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    out[name] = "ok" if r != -1 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, str]:
    """Each probe's errno name (or "ok"), from one tier-1 run."""
    work = tmp_path_factory.mktemp("seccomp")
    config = SandboxConfig(workdir=work, home=work / "home", limits=Limits(timeout_s=60))
    probes = dict(DENIED)
    probes.update({name: (nr, args) for name, (nr, args, _) in CONDITIONAL.items()})

    async def run() -> str:
        proc = await Tier1Spawner(host=current().sandbox_host).start(config, ["python3", "-c", PROBE, json.dumps(probes)], {})
        out, err = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
        assert await proc.wait() == 0, err.decode(errors="replace")
        return out.decode()

    return json.loads(asyncio.run(run()))


def test_probe_table_covers_every_denied_syscall():
    """Nothing the filter denies goes untested (and nothing is probed that it does not deny)."""
    assert sorted(DENIED) == sorted(seccomp.DENIED_X86_64)
    assert {name: nr for name, (nr, _) in DENIED.items()} == seccomp.DENIED_X86_64


@pytest.mark.parametrize("name", sorted(DENIED))
def test_denied_syscall_fails_with_eperm_inside(answers, name):
    assert answers[name] == "EPERM"


@pytest.mark.parametrize("name", sorted(CONDITIONAL))
def test_argument_filtered_syscall_answers_as_expected_inside(answers, name):
    """clone with CLONE_NEWUSER, clone3, AF_UNIX and AF_VSOCK sockets and personality flags
    are refused; querying the personality and PER_LINUX still work."""
    assert answers[name] == CONDITIONAL[name][2]


async def test_unfiltered_init_cannot_be_written_through_proc_mem(run):
    """bwrap's pid 1 (the reaper) runs without the filter: its memory must not be writable
    from inside, or the agent could run code there and sidestep seccomp."""
    script = ("import os\nfor p in ('/proc/1/mem', '/proc/1/task/1/mem'):\n"
              "    try:\n        os.close(os.open(p, os.O_RDWR)); print('opened', p)\n"
              "    except OSError as exc:\n        print('refused', p, exc.strerror)\n")
    ran = await run(f"python3 -c \"{script}\"")
    assert "opened" not in ran.out
    assert ran.out.count("refused") == 2
