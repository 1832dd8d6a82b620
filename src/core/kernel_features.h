// Which kernel interfaces the hook can use. Current kernels have them all;
// older ones (RHEL 8 runs 4.18) lack some, and each has a fallback with the
// same guarantees:
//
//   interface                      since  fallback
//   openat2 (RESOLVE_IN_ROOT)      5.6    userspace resolver, OpenInRootWalk
//                                         (rootfs_path.h)
//   open_tree, move_mount (5.2),   5.12   "legacy" mounts: mount(2) MS_BIND
//   mount_setattr (5.12): one             inside the container's mount
//   capability, "new mount API"           namespace, then MS_REMOUNT and
//                                         MS_PRIVATE (mounter.h)
//   statx STATX_MNT_ID             5.8    "mnt_id:" of /proc/thread-self/
//                                         fdinfo/<fd> (3.15), read through
//                                         the host's procfs (host_proc.h)
//
// Detection costs nothing on a current kernel: an interface is assumed to be
// there until a real call returns ENOSYS, and that answer is kept for the
// rest of the process (a syscall does not appear or vanish while the hook
// runs). A seccomp filter returning ENOSYS is treated exactly like an old
// kernel, which is also how the fallbacks are tested on a current one.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace ocid::kernel {

// True once openat2 has returned ENOSYS in this process.
bool Openat2Missing();
void NoteOpenat2Missing();

// True once open_tree, move_mount or mount_setattr has returned ENOSYS.
bool MountApiMissing();
void NoteMountApiMissing();

// The mount id of `fd` (as in mountinfo) from its fdinfo, for kernels whose
// statx does not report STATX_MNT_ID. False with errno set if the fdinfo
// cannot be read or has no "mnt_id:" line.
bool MountIdFromFdinfo(int fd, uint64_t* mnt_id);
// The mount id of `fd`: statx STATX_MNT_ID, or MountIdFromFdinfo where
// statx does not report it. False with errno set.
bool MountId(int fd, uint64_t* mnt_id);
// The value of the "mnt_id:" line of an fdinfo text.
bool ParseFdinfoMountId(std::string_view text, uint64_t* mnt_id);

// Which interfaces this kernel has, from a harmless call to each (not from
// the cache above): what `oci-decorator check` reports.
struct Interfaces {
  bool openat2 = true;
  bool mount_api = true;  // open_tree, move_mount and mount_setattr
  bool statx_mnt_id = true;
};
Interfaces Probe();

// One line for `oci-decorator check`:
// "kernel: openat2 yes, mount API yes, statx mnt_id yes".
std::string Describe(const Interfaces& k);
std::string Describe();

}  // namespace ocid::kernel
