// An "old kernel" for tests on a current one: a seccomp filter that makes
// the syscalls newer than 4.18 that the hook uses fail with ENOSYS, exactly
// what an old kernel answers. statx too: glibc then emulates it with
// fstatat, whose result has no STATX_MNT_ID, as on 4.18 (statx came in
// 4.11, its mount id in 5.8). Loaded in a forked child (a filter can never
// be removed), which reports through its exit code.
#pragma once
#include <seccomp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace ocid::test {

// Loads the filter in the calling process (sets no_new_privs). False on
// failure.
inline bool InstallEnosysFilter() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return false;
  bool ok = true;
  for (int sc :
       {SCMP_SYS(openat2), SCMP_SYS(open_tree), SCMP_SYS(move_mount), SCMP_SYS(mount_setattr),
        SCMP_SYS(fsopen), SCMP_SYS(fsmount), SCMP_SYS(fsconfig), SCMP_SYS(fspick), SCMP_SYS(statx)})
    ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), sc, 0) == 0;
  ok = ok && seccomp_load(ctx) == 0;
  seccomp_release(ctx);
  return ok;
}

// Runs `body` (returning an exit code, 0 for success) in a forked child,
// after `setup` and the ENOSYS filter; returns the child's exit code (100 if
// setup failed, 101 if the filter could not be loaded, 200 if it died).
template <typename Setup, typename F>
int InLegacyKernelChild(Setup setup, F body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!setup()) ::_exit(100);
    if (!InstallEnosysFilter()) ::_exit(101);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

template <typename F>
int InLegacyKernelChild(F body) {
  return InLegacyKernelChild([] { return true; }, body);
}

}  // namespace ocid::test
