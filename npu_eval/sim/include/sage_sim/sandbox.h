// The kernel's side of the sandbox (docs/architecture.md). Before this process started, the
// Python side (npu_eval/sandbox.py) put it in its own session, in new PID and network
// namespaces where the platform allows, under resource limits, as an unprivileged user, with
// a scratch HOME/TMPDIR and an allow-listed environment.
//
// Around the kernel call the harness adds a seccomp filter: a kernel computes on memory it
// was given, so starting programs or processes, networking, tracing or signalling other
// processes, and reconfiguring the system fail with EPERM. Everything the harness needs
// afterwards (open/write of its output files, memory, exit) stays allowed. A filter cannot
// be removed, so it stays for the rest of the run; it only ever denies what nothing after
// the kernel needs either.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "protocol.h"

#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace sage {
namespace sim {

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define SAGE_SECCOMP_SUPPORTED 1
#if defined(__x86_64__)
constexpr unsigned kSeccompArch = AUDIT_ARCH_X86_64;
#else
constexpr unsigned kSeccompArch = AUDIT_ARCH_AARCH64;
#endif

// System calls a kernel has no business making. Each entry exists only where the
// architecture defines it (aarch64 has no fork, vfork or iopl, for instance).
inline const std::vector<long>& seccomp_denied() {
    static const std::vector<long> nrs = {
    // starting programs and processes (threads too: a kernel block is single-threaded)
#ifdef __NR_execve
        __NR_execve,
#endif
#ifdef __NR_execveat
        __NR_execveat,
#endif
#ifdef __NR_fork
        __NR_fork,
#endif
#ifdef __NR_vfork
        __NR_vfork,
#endif
#ifdef __NR_clone
        __NR_clone,
#endif
#ifdef __NR_clone3
        __NR_clone3,
#endif
    // the network (the socket calls are enough to stop it; the rest guard inherited sockets)
#ifdef __NR_socket
        __NR_socket,
#endif
#ifdef __NR_socketpair
        __NR_socketpair,
#endif
#ifdef __NR_connect
        __NR_connect,
#endif
#ifdef __NR_bind
        __NR_bind,
#endif
#ifdef __NR_listen
        __NR_listen,
#endif
#ifdef __NR_accept
        __NR_accept,
#endif
#ifdef __NR_accept4
        __NR_accept4,
#endif
#ifdef __NR_sendto
        __NR_sendto,
#endif
#ifdef __NR_sendmsg
        __NR_sendmsg,
#endif
#ifdef __NR_sendmmsg
        __NR_sendmmsg,
#endif
#ifdef __NR_recvfrom
        __NR_recvfrom,
#endif
#ifdef __NR_recvmsg
        __NR_recvmsg,
#endif
#ifdef __NR_recvmmsg
        __NR_recvmmsg,
#endif
#ifdef __NR_shutdown
        __NR_shutdown,
#endif
#ifdef __NR_setsockopt
        __NR_setsockopt,
#endif
#ifdef __NR_getsockopt
        __NR_getsockopt,
#endif
#ifdef __NR_getsockname
        __NR_getsockname,
#endif
#ifdef __NR_getpeername
        __NR_getpeername,
#endif
    // other processes (kill, tkill and tgkill are limited to this process further down)
#ifdef __NR_ptrace
        __NR_ptrace,
#endif
#ifdef __NR_process_vm_readv
        __NR_process_vm_readv,
#endif
#ifdef __NR_process_vm_writev
        __NR_process_vm_writev,
#endif
#ifdef __NR_pidfd_open
        __NR_pidfd_open,
#endif
#ifdef __NR_pidfd_getfd
        __NR_pidfd_getfd,
#endif
#ifdef __NR_pidfd_send_signal
        __NR_pidfd_send_signal,
#endif
#ifdef __NR_rt_sigqueueinfo
        __NR_rt_sigqueueinfo,
#endif
#ifdef __NR_rt_tgsigqueueinfo
        __NR_rt_tgsigqueueinfo,
#endif
#ifdef __NR_kcmp
        __NR_kcmp,
#endif
    // namespaces and mounts
#ifdef __NR_unshare
        __NR_unshare,
#endif
#ifdef __NR_setns
        __NR_setns,
#endif
#ifdef __NR_mount
        __NR_mount,
#endif
#ifdef __NR_umount2
        __NR_umount2,
#endif
#ifdef __NR_pivot_root
        __NR_pivot_root,
#endif
#ifdef __NR_chroot
        __NR_chroot,
#endif
#ifdef __NR_open_tree
        __NR_open_tree,
#endif
#ifdef __NR_move_mount
        __NR_move_mount,
#endif
#ifdef __NR_fsopen
        __NR_fsopen,
#endif
#ifdef __NR_fsconfig
        __NR_fsconfig,
#endif
#ifdef __NR_fsmount
        __NR_fsmount,
#endif
#ifdef __NR_fspick
        __NR_fspick,
#endif
#ifdef __NR_mount_setattr
        __NR_mount_setattr,
#endif
    // kernel interfaces with a history of exploits, and io_uring, whose requests bypass seccomp
#ifdef __NR_bpf
        __NR_bpf,
#endif
#ifdef __NR_perf_event_open
        __NR_perf_event_open,
#endif
#ifdef __NR_userfaultfd
        __NR_userfaultfd,
#endif
#ifdef __NR_io_uring_setup
        __NR_io_uring_setup,
#endif
#ifdef __NR_io_uring_enter
        __NR_io_uring_enter,
#endif
#ifdef __NR_io_uring_register
        __NR_io_uring_register,
#endif
#ifdef __NR_keyctl
        __NR_keyctl,
#endif
#ifdef __NR_add_key
        __NR_add_key,
#endif
#ifdef __NR_request_key
        __NR_request_key,
#endif
#ifdef __NR_personality
        __NR_personality,
#endif
    // administering the machine
#ifdef __NR_init_module
        __NR_init_module,
#endif
#ifdef __NR_finit_module
        __NR_finit_module,
#endif
#ifdef __NR_delete_module
        __NR_delete_module,
#endif
#ifdef __NR_kexec_load
        __NR_kexec_load,
#endif
#ifdef __NR_kexec_file_load
        __NR_kexec_file_load,
#endif
#ifdef __NR_reboot
        __NR_reboot,
#endif
#ifdef __NR_swapon
        __NR_swapon,
#endif
#ifdef __NR_swapoff
        __NR_swapoff,
#endif
#ifdef __NR_acct
        __NR_acct,
#endif
#ifdef __NR_settimeofday
        __NR_settimeofday,
#endif
#ifdef __NR_clock_settime
        __NR_clock_settime,
#endif
#ifdef __NR_clock_adjtime
        __NR_clock_adjtime,
#endif
#ifdef __NR_adjtimex
        __NR_adjtimex,
#endif
#ifdef __NR_sethostname
        __NR_sethostname,
#endif
#ifdef __NR_setdomainname
        __NR_setdomainname,
#endif
#ifdef __NR_iopl
        __NR_iopl,
#endif
#ifdef __NR_ioperm
        __NR_ioperm,
#endif
#ifdef __NR_quotactl
        __NR_quotactl,
#endif
#ifdef __NR_open_by_handle_at
        __NR_open_by_handle_at,
#endif
#ifdef __NR_fanotify_init
        __NR_fanotify_init,
#endif
#ifdef __NR_syslog
        __NR_syslog,
#endif
#ifdef __NR_vhangup
        __NR_vhangup,
#endif
    };
    return nrs;
}

// The low 32 bits of a system call argument: pid_t is an int, and the kernel ignores the
// upper half of the register for it.
inline unsigned seccomp_arg_lo(int i) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return unsigned(offsetof(seccomp_data, args) + 8 * i + 4);
#else
    return unsigned(offsetof(seccomp_data, args) + 8 * i);
#endif
}

inline std::vector<sock_filter> seccomp_program(unsigned self_pid) {
    const unsigned allow = SECCOMP_RET_ALLOW, deny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    // Another ABI (i386 via int 0x80, x32) numbers its calls differently and would slip past
    // the list; a kernel using one is trying to, so the process ends.
    const unsigned kill = SECCOMP_RET_KILL_PROCESS;
    std::vector<sock_filter> p;
    auto stmt = [&](unsigned short code, unsigned k) { p.push_back(sock_filter{code, 0, 0, k}); };
    auto jump = [&](unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
        p.push_back(sock_filter{code, jt, jf, k});
    };
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
    jump(BPF_JMP | BPF_JEQ | BPF_K, kSeccompArch, 1, 0);
    stmt(BPF_RET | BPF_K, kill);
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
#if defined(__x86_64__)
    jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u /* __X32_SYSCALL_BIT */, 0, 1);
    stmt(BPF_RET | BPF_K, kill);
#endif
    for (long nr : seccomp_denied()) {
        jump(BPF_JMP | BPF_JEQ | BPF_K, unsigned(nr), 0, 1);
        stmt(BPF_RET | BPF_K, deny);
    }
    // Signals only to this process: raise() and abort() keep working, while kill(-1, ...)
    // cannot reach other processes of the sandbox user (other evaluations running beside us).
    const long self_only[] = {
#ifdef __NR_kill
        __NR_kill,
#endif
#ifdef __NR_tkill
        __NR_tkill,
#endif
#ifdef __NR_tgkill
        __NR_tgkill,
#endif
    };
    for (long nr : self_only) {  // each takes the target process as its first argument
        jump(BPF_JMP | BPF_JEQ | BPF_K, unsigned(nr), 0, 4);
        stmt(BPF_LD | BPF_W | BPF_ABS, seccomp_arg_lo(0));
        jump(BPF_JMP | BPF_JEQ | BPF_K, self_pid, 0, 1);
        stmt(BPF_RET | BPF_K, allow);
        stmt(BPF_RET | BPF_K, deny);
    }
    stmt(BPF_RET | BPF_K, allow);
    return p;
}

// Installs the filter on this (single-threaded) process. Returns an empty string on
// success, else why it could not.
inline const char* install_seccomp() {
    std::vector<sock_filter> prog = seccomp_program(unsigned(getpid()));
    sock_fprog fprog{static_cast<unsigned short>(prog.size()), prog.data()};
    // Required to install a filter without CAP_SYS_ADMIN, and right anyway: nothing the
    // kernel could exec may gain privileges.
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::strerror(errno);
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0) return std::strerror(errno);
    return "";
}
#endif

// SAGE_SANDBOX_SECCOMP=0 in the environment (set by sandbox.py only when asked, to measure
// the filter's cost) leaves it out.
inline void sandbox_enter_kernel() {
    const char* want = std::getenv(protocol::kEnvSeccomp);
    if (want && std::strcmp(want, "0") == 0) return;
#if defined(SAGE_SECCOMP_SUPPORTED)
    const char* err = install_seccomp();
    if (*err)
        std::fprintf(stderr, "sage sandbox: the seccomp filter could not be installed (%s); the kernel "
                             "runs without it\n", err);
#else
    std::fprintf(stderr, "sage sandbox: no seccomp filter on this platform; the kernel runs without it\n");
#endif
}

// The filter stays (it cannot be lifted): writing the outputs needs none of what it denies.
inline void sandbox_leave_kernel() {}

}  // namespace sim
}  // namespace sage
