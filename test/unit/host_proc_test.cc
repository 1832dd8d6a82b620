// The host's procfs fd: a procfs root, opened once, and still the host's
// after whatever the current mount namespace puts at /proc. Each case runs
// in a forked child (the fd is process-wide); the covered /proc needs root.
#include "host_proc.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "kernel_features.h"
#include "unique_fd.h"

namespace ocid {
namespace {

// Runs `body` in a child; its exit code (200 if it died).
template <typename F>
int InChild(F body) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 200;
  return WEXITSTATUS(status);
}

// A private mount namespace whose /proc is a tmpfs holding a fake mountinfo.
bool CoverProc() {
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("none", "/proc", "tmpfs", 0, nullptr) != 0 || ::mkdir("/proc/thread-self", 0755) != 0)
    return false;
  UniqueFd f(::open("/proc/thread-self/mountinfo", O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  return f.valid() && ::write(f.get(), "FAKE\n", 5) == 5;
}

TEST_CASE("host_proc: the procfs root, the same fd every time") {
  int rc = InChild([] {
    int a = -1, b = -1;
    Error err;
    if (!host_proc::Fd(&a, &err) || !host_proc::Fd(&b, &err) || a != b) return 1;
    struct stat st;
    if (::fstat(a, &st) != 0 || st.st_ino != 1) return 2;
    // thread-self/fd/N names the very object fd N holds.
    UniqueFd self(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    struct stat want, got;
    if (::fstat(self.get(), &want) != 0 ||
        ::fstatat(a, host_proc::ThreadSelfFd(self.get()).c_str(), &got, 0) != 0 ||
        want.st_ino != got.st_ino || want.st_dev != got.st_dev)
      return 3;
    return 0;
  });
  CHECK(rc == 0);
  CHECK(host_proc::ThreadSelfFd(7) == "thread-self/fd/7");
  CHECK(host_proc::ThreadSelfFdinfo(12) == "thread-self/fdinfo/12");
}

TEST_CASE("host_proc: opened before /proc is covered, it still shows the kernel's files") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: covering /proc needs root");
    return;
  }
  int rc = InChild([] {
    int proc = -1;
    Error err;
    if (!host_proc::Fd(&proc, &err)) return 1;
    if (!CoverProc()) return 2;
    std::string text;
    if (!ReadFileAt(proc, "thread-self/mountinfo", 16 << 20, &text, &err)) return 3;
    if (text.find("FAKE") != std::string::npos || text.find(" / ") == std::string::npos) return 4;
    // The fdinfo fallback for mount ids goes through it too.
    UniqueFd root(::open("/", O_PATH | O_CLOEXEC));
    uint64_t id = 0;
    struct statx sx {};
    if (!kernel::MountIdFromFdinfo(root.get(), &id) ||
        ::statx(root.get(), "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) != 0 || id != sx.stx_mnt_id)
      return 5;
    return 0;
  });
  CHECK(rc == 0);
}

TEST_CASE("host_proc: a /proc that is no procfs root is refused") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: covering /proc needs root");
    return;
  }
  int rc = InChild([] {
    if (!CoverProc()) return 2;
    // What Fd()'s first call does (this process has opened it already).
    UniqueFd proc;
    Error err;
    if (host_proc::OpenChecked(&proc, &err)) return 1;
    return err.what == "refusing: not the root of a procfs" ? 0 : 3;
  });
  CHECK(rc == 0);
}

}  // namespace
}  // namespace ocid
