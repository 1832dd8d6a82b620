#include "host_proc.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>
#include <mutex>

#include "unique_fd.h"

namespace ocid::host_proc {
namespace {

constexpr ino_t kProcRootIno = 1;  // PROC_ROOT_INO

}  // namespace

bool OpenChecked(UniqueFd* out, Error* err) {
  UniqueFd fd(::open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Fail(err, "cannot open the host's procfs", "/proc", errno);
  struct statfs fs;
  struct stat st;
  if (::fstatfs(fd.get(), &fs) != 0 || ::fstat(fd.get(), &st) != 0)
    return Fail(err, "cannot stat the host's procfs", "/proc", errno);
  if (fs.f_type != PROC_SUPER_MAGIC || st.st_ino != kProcRootIno)
    return Fail(err, "refusing: not the root of a procfs", "/proc");
  *out = std::move(fd);
  return true;
}

bool Fd(int* fd, Error* err) {
  // Opened once: a second open could happen after setns and see the
  // container's /proc. Locked: the device plugin reads files (files.h)
  // from several threads.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  static UniqueFd proc;
  if (!proc.valid() && !OpenChecked(&proc, err)) return false;
  *fd = proc.get();
  return true;
}

std::string ThreadSelfFd(int fd) { return "thread-self/fd/" + std::to_string(fd); }
std::string ThreadSelfFdinfo(int fd) { return "thread-self/fdinfo/" + std::to_string(fd); }

}  // namespace ocid::host_proc
