/* enosys_exec PROGRAM ARGV0 [ARGS...]: runs PROGRAM (with argv ARGV0
 * ARGS...) as if on an old kernel (RHEL 8's 4.18): a seccomp filter makes
 * every syscall the hook uses from newer kernels fail with ENOSYS, which is
 * exactly what an old kernel answers:
 *   openat2 (5.6); open_tree, move_mount, fsopen, fsconfig, fsmount, fspick
 *   (5.2); mount_setattr (5.12);
 *   statx: glibc then emulates it with fstatat, whose answer has no
 *   STATX_MNT_ID, as on 4.18 (statx 4.11, its mount id 5.8).
 * The filter is inherited across execve and cannot be removed. no_new_privs
 * is set (needed to load a filter without CAP_SYS_ADMIN, and harmless: the
 * hook sets it itself).
 *
 * Used as a hook wrapper by the integration tests (lib.sh make_bundle,
 * OCID_HOOK_WRAPPER): the hooks entry becomes path=enosys_exec,
 * args=[enosys_exec, <oci-decorator>, <the hook's own args>...]. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ENOSYS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ENOSYS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "add this architecture's AUDIT_ARCH_*"
#endif

/* The numbers of the 5.x syscalls are the same on every architecture. */
static const unsigned kEnosys[] = {
    437, /* openat2 */
    428, /* open_tree */
    429, /* move_mount */
    430, /* fsopen */
    431, /* fsconfig */
    432, /* fsmount */
    433, /* fspick */
    442, /* mount_setattr */
    __NR_statx,
};
#define N_ENOSYS (sizeof kEnosys / sizeof kEnosys[0])

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PROGRAM ARGV0 [ARGS...]\n", argv[0]);
    return 2;
  }
  /* arch check; load nr; one JEQ per syscall; ALLOW; ERRNO(ENOSYS). */
  struct sock_filter prog[4 + N_ENOSYS + 2];
  size_t n = 0;
  prog[n++] =
      (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  /* Another architecture's syscall (e.g. i386 on x86_64): allowed, the
   * numbers would not mean the same. */
  prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ENOSYS_AUDIT_ARCH, 1, 0);
  prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  prog[n++] =
      (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  for (size_t i = 0; i < N_ENOSYS; ++i) {
    /* Match: jump over the remaining checks and the ALLOW to the ERRNO. */
    unsigned char to_errno = (unsigned char)(N_ENOSYS - i);
    prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kEnosys[i], to_errno, 0);
  }
  prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  struct sock_fprog fprog = {.len = (unsigned short)n, .filter = prog};

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("enosys_exec: prctl(PR_SET_NO_NEW_PRIVS)");
    return 126;
  }
  if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) {
    perror("enosys_exec: seccomp");
    return 126;
  }
  execve(argv[1], argv + 2, environ);
  fprintf(stderr, "enosys_exec: cannot execute %s: %s\n", argv[1], strerror(errno));
  return 127;
}
