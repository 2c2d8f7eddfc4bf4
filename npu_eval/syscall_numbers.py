"""System call numbers of the pre-exec seccomp filter (npu_eval/confine.py), per architecture.

Generated from the kernel headers (x86_64's <asm/unistd_64.h>, aarch64's <asm-generic/unistd.h>)
for the names in sage_sim/sandbox.h's `seccomp_denied()` that nothing before the kernel call
needs: starting processes and programs stays allowed here (Python starts threads, the harness is
exec'd), and the harness's own, tighter filter denies it around the kernel call.
tests/test_confinement.py checks that every name here is in sandbox.h.
"""

from __future__ import annotations

X86_64: dict[str, int] = {
    "accept": 43, "accept4": 288, "acct": 163, "add_key": 248, "adjtimex": 159, "bind": 49, "bpf": 321,
    "chroot": 161, "clock_adjtime": 305, "clock_settime": 227, "connect": 42, "delete_module": 176,
    "fanotify_init": 300, "finit_module": 313, "fsconfig": 431, "fsmount": 432, "fsopen": 430, "fspick": 433,
    "getpeername": 52, "getsockname": 51, "getsockopt": 55, "init_module": 175, "io_uring_enter": 426,
    "io_uring_register": 427, "io_uring_setup": 425, "ioperm": 173, "iopl": 172, "kcmp": 312,
    "kexec_file_load": 320, "kexec_load": 246, "keyctl": 250, "listen": 50, "mount": 165,
    "mount_setattr": 442, "move_mount": 429, "open_by_handle_at": 304, "open_tree": 428,
    "perf_event_open": 298, "personality": 135, "pidfd_getfd": 438, "pidfd_open": 434,
    "pidfd_send_signal": 424, "pivot_root": 155, "process_vm_readv": 310, "process_vm_writev": 311,
    "ptrace": 101, "quotactl": 179, "reboot": 169, "recvfrom": 45, "recvmmsg": 299, "recvmsg": 47,
    "request_key": 249, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297, "sendmmsg": 307, "sendmsg": 46,
    "sendto": 44, "setdomainname": 171, "sethostname": 170, "setns": 308, "setsockopt": 54,
    "settimeofday": 164, "shutdown": 48, "socket": 41, "socketpair": 53, "swapoff": 168, "swapon": 167,
    "syslog": 103, "umount2": 166, "unshare": 272, "userfaultfd": 323, "vhangup": 153,
}

AARCH64: dict[str, int] = {
    "accept": 202, "accept4": 242, "acct": 89, "add_key": 217, "adjtimex": 171, "bind": 200, "bpf": 280,
    "chroot": 51, "clock_adjtime": 266, "clock_settime": 112, "connect": 203, "delete_module": 106,
    "fanotify_init": 262, "finit_module": 273, "fsconfig": 431, "fsmount": 432, "fsopen": 430, "fspick": 433,
    "getpeername": 205, "getsockname": 204, "getsockopt": 209, "init_module": 105, "io_uring_enter": 426,
    "io_uring_register": 427, "io_uring_setup": 425, "kcmp": 272, "kexec_file_load": 294, "kexec_load": 104,
    "keyctl": 219, "listen": 201, "mount": 40, "mount_setattr": 442, "move_mount": 429,
    "open_by_handle_at": 265, "open_tree": 428, "perf_event_open": 241, "personality": 92,
    "pidfd_getfd": 438, "pidfd_open": 434, "pidfd_send_signal": 424, "pivot_root": 41,
    "process_vm_readv": 270, "process_vm_writev": 271, "ptrace": 117, "quotactl": 60, "reboot": 142,
    "recvfrom": 207, "recvmmsg": 243, "recvmsg": 212, "request_key": 218, "rt_sigqueueinfo": 138,
    "rt_tgsigqueueinfo": 240, "sendmmsg": 269, "sendmsg": 211, "sendto": 206, "setdomainname": 162,
    "sethostname": 161, "setns": 268, "setsockopt": 208, "settimeofday": 170, "shutdown": 210, "socket": 198,
    "socketpair": 199, "swapoff": 225, "swapon": 224, "syslog": 116, "umount2": 39, "unshare": 97,
    "userfaultfd": 282, "vhangup": 58,
}
