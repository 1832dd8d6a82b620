// Raw wrappers for the mount API and openat2, which glibc 2.36 does not wrap.
// Every kernel entry point the hook uses beyond POSIX is here, in one place.
#pragma once
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

namespace ocid::sys {

inline int openat2(int dirfd, const char* path, const open_how* how) {
  return static_cast<int>(::syscall(SYS_openat2, dirfd, path, how, sizeof *how));
}
inline int open_tree(int dirfd, const char* path, unsigned flags) {
  return static_cast<int>(::syscall(SYS_open_tree, dirfd, path, flags));
}
inline int move_mount(int from_dirfd, const char* from_path, int to_dirfd, const char* to_path,
                      unsigned flags) {
  return static_cast<int>(
      ::syscall(SYS_move_mount, from_dirfd, from_path, to_dirfd, to_path, flags));
}
inline int mount_setattr(int dirfd, const char* path, unsigned flags, mount_attr* attr) {
  return static_cast<int>(::syscall(SYS_mount_setattr, dirfd, path, flags, attr, sizeof *attr));
}

}  // namespace ocid::sys
