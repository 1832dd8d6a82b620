#include "kernel_features.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "host_proc.h"
#include "syscalls.h"
#include "unique_fd.h"

namespace ocid::kernel {
namespace {

// Relaxed is enough: each flag only ever goes from false to true, and a
// thread that has not seen it yet just makes one more call that fails with
// ENOSYS and sets it again.
std::atomic<bool> openat2_missing{false};
std::atomic<bool> mount_api_missing{false};

// An fdinfo is a few short lines ("pos:", "flags:", "mnt_id:", "ino:"),
// longer only for epoll, inotify and the like, which are never asked about.
constexpr size_t kMaxFdinfoBytes = 4096;

}  // namespace

bool Openat2Missing() { return openat2_missing.load(std::memory_order_relaxed); }
void NoteOpenat2Missing() { openat2_missing.store(true, std::memory_order_relaxed); }
bool MountApiMissing() { return mount_api_missing.load(std::memory_order_relaxed); }
void NoteMountApiMissing() { mount_api_missing.store(true, std::memory_order_relaxed); }

bool ParseFdinfoMountId(std::string_view text, uint64_t* mnt_id) {
  constexpr std::string_view kKey = "mnt_id:";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.substr(0, kKey.size()) != kKey) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty()) return false;
    uint64_t v = 0;
    for (char c : line) {
      if (c < '0' || c > '9') return false;
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
    *mnt_id = v;
    return true;
  }
  return false;
}

bool MountIdFromFdinfo(int fd, uint64_t* mnt_id) {
  // thread-self, not self: the fd table is the calling thread's. Through
  // the host's procfs: this runs inside containers' mount namespaces,
  // whose /proc their owner may have covered (host_proc.h).
  int proc;
  Error e;
  if (!host_proc::Fd(&proc, &e)) {
    errno = e.errnum ? e.errnum : EIO;
    return false;
  }
  UniqueFd info(::openat(proc, host_proc::ThreadSelfFdinfo(fd).c_str(),
                         O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!info.valid()) return false;
  char buf[kMaxFdinfoBytes];
  size_t have = 0;
  while (have < sizeof buf) {
    ssize_t n = ::read(info.get(), buf + have, sizeof buf - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  if (!ParseFdinfoMountId(std::string_view(buf, have), mnt_id)) {
    errno = ENODATA;
    return false;
  }
  return true;
}

bool MountId(int fd, uint64_t* mnt_id) {
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) != 0) return false;
  *mnt_id = sx.stx_mnt_id;
  return (sx.stx_mask & STATX_MNT_ID) || MountIdFromFdinfo(fd, mnt_id);
}

Interfaces Probe() {
  // Each probe is harmless whatever the kernel: an O_PATH open of "/", and
  // mount calls on fd -1 (EBADF, or EPERM without CAP_SYS_ADMIN) or with an
  // empty attribute set (a no-op). Only ENOSYS means "missing".
  Interfaces k;
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  int fd = sys::openat2(AT_FDCWD, "/", &how);
  k.openat2 = fd >= 0 || errno != ENOSYS;
  if (fd >= 0) ::close(fd);

  fd = sys::open_tree(-1, "", AT_EMPTY_PATH | OPEN_TREE_CLOEXEC);
  if (fd >= 0)
    ::close(fd);
  else if (errno == ENOSYS)
    k.mount_api = false;
  if (sys::move_mount(-1, "", -1, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0 &&
      errno == ENOSYS)
    k.mount_api = false;
  mount_attr attr{};
  if (sys::mount_setattr(-1, "", AT_EMPTY_PATH, &attr) != 0 && errno == ENOSYS) k.mount_api = false;

  struct statx sx {};
  k.statx_mnt_id = ::statx(AT_FDCWD, "/", AT_STATX_SYNC_AS_STAT, STATX_MNT_ID, &sx) == 0 &&
                   (sx.stx_mask & STATX_MNT_ID);
  return k;
}

std::string Describe(const Interfaces& k) {
  std::string s = "kernel: openat2 ";
  s += k.openat2 ? "yes" : "no (userspace resolver)";
  s += ", mount API ";
  s += k.mount_api ? "yes" : "no (legacy mount(2))";
  s += ", statx mnt_id ";
  s += k.statx_mnt_id ? "yes" : "no (fdinfo)";
  return s;
}

std::string Describe() { return Describe(Probe()); }

}  // namespace ocid::kernel
