"""The confinement both kinds of untrusted code enter before any of it runs: the compiled
kernel harness (npu_eval/sandbox.py, between fork and exec) and host.py/reference.py
(npu_eval/zygote.py, in the forked child before it loads them).

- `enter_mounts`: a private mount namespace where everything is read-only except the run's
  scratch directory; /tmp, /dev/shm and $HOME are the scratch's tmp/ and home/ folders, and
  the few paths the run needs (its binary, its task) are shown again at their own paths.
- `install_seccomp`: a seccomp filter denying the network, other processes' memory, mounts and
  namespaces, kernel modules, bpf and the like (npu_eval/syscall_numbers.py). Starting threads,
  processes and programs stays allowed: Python needs threads and the harness must still be
  exec'd; the harness adds its tighter filter around the kernel call (sage_sim/sandbox.h).
- `drop_privileges`: the unprivileged user (nobody) when we are root.

Each step raises OSError when the platform refuses it; the callers say so once and go on with
what holds. Everything here runs in a forked child, single-threaded: no locks, no logging.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from dataclasses import dataclass, field
from pathlib import Path

from sage_npu.npu_eval import syscall_numbers

UNPRIVILEGED_UID = 65534  # nobody
UNPRIVILEGED_GID = 65534  # nogroup

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MOUNT_FLAG_OPTS = {"ro": _MS_RDONLY, "nosuid": _MS_NOSUID, "nodev": _MS_NODEV, "noexec": _MS_NOEXEC}
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (added after the tables were unified)
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 1

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_ALLOW, _RET_EPERM, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000 | 1, 0x80000000
_ARCHES = {"x86_64": (0xC000003E, syscall_numbers.X86_64), "aarch64": (0xC00000B7, syscall_numbers.AARCH64)}


class _Libc:
    """mount(2), unshare(2), setns(2), prctl(2) and syscall(2); loaded once, before any fork."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
        lib.unshare.argtypes = [ctypes.c_int]
        lib.setns.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        self.lib = lib

    def check(self, rc: int, what: str) -> None:
        if rc != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"{what}: {os.strerror(e)}")

    def mount(self, source: str | None, target: str, fstype: str | None, flags: int) -> None:
        rc = self.lib.mount(source.encode() if source else None, target.encode(),
                            fstype.encode() if fstype else None, flags, None)
        self.check(rc, f"mount {target}")

    def unshare(self, flags: int, what: str) -> None:
        self.check(self.lib.unshare(flags), what)


_libc: _Libc | None = None


def libc() -> _Libc:
    """The loaded C library; call once in the parent so forked children only call into it."""
    global _libc
    if _libc is None:
        _libc = _Libc()
    return _libc


# ---- the mount namespace ----

@dataclass(frozen=True)
class MountPlan:
    """What a confined run sees: read-only everything, writable `writable`, and `covers`
    (a path hidden under a folder of the scratch, e.g. /tmp -> scratch/tmp). `readable` paths
    that a cover hides are shown again, read-only, at their own paths."""

    writable: tuple[Path, ...]
    readable: tuple[Path, ...] = ()
    covers: tuple[tuple[Path, Path], ...] = ()
    fresh_proc: bool = False  # mount a /proc of the run's own PID namespace (it is PID 1 there)


def standard_covers(scratch: Path, home: Path | None) -> tuple[tuple[Path, Path], ...]:
    """/tmp and /dev/shm as scratch/tmp, the real user's home as scratch/home."""
    covers = [(Path("/tmp"), scratch / "tmp"), (Path("/dev/shm"), scratch / "tmp")]
    if home is not None and home != Path("/") and home.is_dir():
        covers.append((home, scratch / "home"))
    return tuple((t, s) for t, s in covers if t.is_dir())


@dataclass
class _Shown:
    target: Path
    fd: int
    writable: bool
    depth: int = field(init=False)

    def __post_init__(self) -> None:
        self.depth = len(self.target.parts)


def enter_mounts(plan: MountPlan) -> None:
    """Enter a private mount namespace laid out by `plan` (root only). Raises OSError."""
    lib = libc()
    cwd = os.getcwd()
    lib.unshare(CLONE_NEWNS, "unshare(CLONE_NEWNS)")
    lib.mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing we mount leaks back out
    # Opened before anything is hidden: a cover's source and a path shown again may lie under
    # a cover (the scratch is usually in /tmp); /proc/self/fd/N still reaches them afterwards.
    shown = [_Shown(t, os.open(s, os.O_PATH | os.O_CLOEXEC), True) for t, s in plan.covers]
    shown += [_Shown(p, os.open(p, os.O_PATH | os.O_CLOEXEC), True) for p in plan.writable]
    shown += [_Shown(p, os.open(p, os.O_PATH | os.O_CLOEXEC), False) for p in plan.readable]
    try:
        _all_read_only(lib)
        for s in sorted(shown, key=lambda s: s.depth):  # parents first: a child lands inside them
            if not s.target.is_dir():
                s.target.mkdir(parents=True)  # hidden by a cover: made again inside it (in the scratch)
            lib.mount(f"/proc/self/fd/{s.fd}", str(s.target), None, _MS_BIND)
            ro = 0 if s.writable else _MS_RDONLY
            lib.mount(None, str(s.target), None, _MS_BIND | _MS_REMOUNT | _MS_NOSUID | _MS_NODEV | ro)
    finally:
        for s in shown:
            os.close(s.fd)
    os.chdir(cwd)  # the working directory still pointed into the old, now read-only, mount
    if plan.fresh_proc:
        # Only this namespace's processes; failing that (a locked /proc), the old one stays.
        try:
            lib.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        except OSError:
            pass


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _all_read_only(lib: _Libc) -> None:
    """Every mount read-only: one mount_setattr(2) (Linux 5.12), else a remount of each."""
    attr = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    rc = lib.lib.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, b"/", _AT_RECURSIVE, ctypes.byref(attr),
                         ctypes.sizeof(attr))
    if rc == 0:
        return
    for target, flags in _mounts():
        try:
            lib.mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | flags)
        except OSError:
            if target == "/":
                raise


def _mounts() -> list[tuple[str, int]]:
    """This namespace's mount points with the flags a remount must keep, from mountinfo."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = line.split()
            target = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
            flags = sum(_MOUNT_FLAG_OPTS.get(o, 0) for o in fields[5].split(","))
            found.append((target, flags))
    return found


# ---- seccomp ----

def seccomp_program() -> bytes | None:
    """The filter as BPF instructions, or None on an architecture without a table."""
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    ins = []

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> None:
        ins.append(struct.pack("HBBI", code, jt, jf, k))

    ld_w_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    op(ld_w_abs, 4)                       # seccomp_data.arch
    op(jeq, audit_arch, 1, 0)
    op(ret, _RET_KILL_PROCESS)            # another ABI numbers its calls differently
    op(ld_w_abs, 0)                       # seccomp_data.nr
    if audit_arch == 0xC000003E:
        op(jge, 0x40000000, 0, 1)         # x32
        op(ret, _RET_KILL_PROCESS)
    for nr in sorted(set(numbers.values())):
        op(jeq, nr, 0, 1)
        op(ret, _RET_EPERM)
    op(ret, _RET_ALLOW)
    return b"".join(ins)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_seccomp(program: bytes) -> None:
    """Install `program` (from seccomp_program, built before the fork) on this process."""
    lib = libc()
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    lib.check(lib.lib.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    lib.check(lib.lib.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0),
              "prctl(PR_SET_SECCOMP)")


def drop_privileges(groups: tuple[int, ...] = ()) -> None:
    """Become nobody when root, a member of `groups` only (the NPU driver's group for a device
    run); a no-op otherwise (the user's own rights are the limit then)."""
    if os.geteuid() == 0:
        os.setgroups(list(groups))
        os.setgid(UNPRIVILEGED_GID)
        os.setuid(UNPRIVILEGED_UID)
