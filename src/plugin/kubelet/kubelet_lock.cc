#include "kubelet_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

namespace ocid {

KubeletDirLock::Result KubeletDirLock::TryTake(const std::string& kubelet_dir, std::string* holder,
                                               Error* err) {
  if (held()) return Result::kTaken;
  const std::string sub = kubelet_dir + "/" + kLockSubdir;
  const std::string path = PathFor(kubelet_dir);
  auto bad = [&](std::string what, const std::string& where, int errnum) {
    Fail(err, std::move(what), where, errnum);
    return Result::kError;
  };
  UniqueFd dir(::open(kubelet_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return bad("cannot open the kubelet directory", kubelet_dir, errno);
  if (::mkdirat(dir.get(), kLockSubdir, 0700) != 0 && errno != EEXIST)
    return bad("cannot create the lock directory", sub, errno);
  // Never through a symlink, and only a directory no one else can change.
  UniqueFd subfd(::openat(dir.get(), kLockSubdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!subfd.valid()) return bad("cannot open the lock directory", sub, errno);
  struct stat st {};
  if (::fstat(subfd.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
    std::ostringstream mode;
    mode << std::oct << (st.st_mode & 07777);
    return bad("refusing the lock directory (owner " + std::to_string(st.st_uid) + ", mode " +
                   mode.str() + "): it must be this user's and writable by no one else",
               sub, 0);
  }
  UniqueFd fd(::openat(subfd.get(), "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0)
    return bad("cannot open the lock file", path, errno);
  if (!S_ISREG(st.st_mode)) return bad("the lock file is not a regular file", path, 0);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return bad("cannot lock", path, errno);
    char buf[256] = {};
    ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
    std::istringstream in(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0));
    std::string pid, host;
    in >> pid >> host;
    *holder = "pid " + (pid.empty() ? std::string("unknown") : Printable(pid, 32)) +
              (host.empty() ? "" : " on host " + Printable(host, 64));
    return Result::kHeld;
  }
  struct utsname u {};
  std::string who = std::to_string(::getpid()) + " " + (::uname(&u) == 0 ? u.nodename : "?") + "\n";
  if (::ftruncate(fd.get(), 0) != 0 ||
      ::pwrite(fd.get(), who.data(), who.size(), 0) != static_cast<ssize_t>(who.size())) {
    // The lock is what matters; the note only improves the next message.
  }
  fd_ = std::move(fd);
  return Result::kTaken;
}

}  // namespace ocid
