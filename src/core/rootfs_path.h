// Paths inside an untrusted container rootfs are file descriptors, never
// strings. Threat model: the image author controls every name and symlink in
// the rootfs, and processes of other containers sharing the same rootfs
// directory may rename things while the hook runs. Therefore:
//   - every lookup is openat2(root_fd, path, RESOLVE_IN_ROOT |
//     RESOLVE_NO_MAGICLINKS): symlinks and ".." are resolved as if root_fd
//     were "/", so nothing can lead outside the rootfs (kernels before 5.6:
//     the same semantics from a userspace walk, OpenInRootWalk);
//   - missing parents are created with mkdirat from the parent's fd and then
//     reopened with RESOLVE_NO_SYMLINKS relative to that fd, so a swap between
//     create and open is detected rather than followed;
//   - the last component of a mount target is never followed: an existing
//     symlink there is refused, a missing one is created O_CREAT|O_EXCL|
//     O_NOFOLLOW (files) or mkdirat (directories);
//   - callers get an O_PATH fd for the mountpoint and mount onto that fd.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "error.h"
#include "unique_fd.h"

namespace ocid {

enum class MountpointType { kFile, kDirectory };

// What PrepareMountpoint created (for the debug log). Never removed again:
// a rootfs directory may be shared by several containers, another hook may
// already have mounted onto a mountpoint we created, and unlinking a
// mountpoint detaches the mounts on it in every other mount namespace.
struct CreatedPath {
  std::string path;  // absolute, inside the rootfs
  bool is_dir = false;
};

// Splits "/a/b/../c" into normalized components; ".." handled lexically is
// NOT done here (the kernel resolves ".." inside the root). Returns false for
// an empty path or a component that is not a plain name where one is needed.
bool SplitContainerPath(const std::string& path, std::vector<std::string>* parts, Error* err);

// Opens `path` inside root_fd with `flags` (O_PATH, O_RDONLY, ...) resolving
// every symlink inside the root. Retries a bounded number of times on EAGAIN.
// On a kernel without openat2 (before 5.6) it uses OpenInRootWalk.
bool OpenInRoot(int root_fd, const std::string& path, int flags, UniqueFd* out, Error* err);

// How a resolution treats the symlinks it meets. kInRoot: followed, inside
// the root (the default above). kRefused: none is followed, any symlink on
// the way fails with ELOOP, as openat2's RESOLVE_NO_SYMLINKS (a last
// component opened O_PATH | O_NOFOLLOW is still the link itself). For a
// caller that must know the path names a real directory of the image, not
// another place the image points it at (library_dirs.h).
enum class Symlinks { kInRoot, kRefused };
bool OpenInRoot(int root_fd, const std::string& path, int flags, Symlinks symlinks, UniqueFd* out,
                Error* err);

// The userspace resolver behind OpenInRoot on kernels without openat2, with
// the semantics of openat2(root_fd, path, flags, RESOLVE_IN_ROOT |
// RESOLVE_NO_MAGICLINKS), errno included (err->errnum: ENOENT, ENOTDIR,
// ELOOP...). It walks one component at a time with openat(O_PATH |
// O_NOFOLLOW) from the directory it holds:
//   - ".." pops a stack of the directory fds it walked through, never asks
//     the kernel for "..": at root_fd it stays there, and a directory moved
//     elsewhere meanwhile cannot take the walk with it;
//   - a symlink is read (readlinkat) and its text put in front of the
//     components still to walk; an absolute one restarts at root_fd. More
//     than 40 symlinks (the kernel's MAXSYMLINKS) fail with ELOOP;
//   - a procfs magic link (fd/N, cwd, root, exe, ns/*...), which the kernel
//     would follow to its object rather than its text, fails with ELOOP;
//   - the last component is opened with `flags` | O_NOFOLLOW from its parent
//     fd once it is known not to be a symlink (or followed like the others
//     unless `flags` has O_NOFOLLOW).
// `path` is relative to root_fd; a leading "/" means root_fd too. Public for
// the tests and the fuzzer, which compare it with openat2.
// With Symlinks::kRefused, the first symlink met fails with ELOOP instead.
bool OpenInRootWalk(int root_fd, const std::string& path, int flags, UniqueFd* out, Error* err);
bool OpenInRootWalk(int root_fd, const std::string& path, int flags, Symlinks symlinks,
                    UniqueFd* out, Error* err);

// Opens directory `dir` (absolute, inside root_fd) as an O_PATH fd, creating
// missing components (mode 0755). One openat2 when it already exists.
bool OpenDirCreating(int root_fd, const std::string& dir, UniqueFd* out,
                     std::vector<CreatedPath>* created, Error* err);

// What is at a mountpoint, from one statx of its O_PATH fd.
struct Mountpoint {
  UniqueFd fd;              // O_PATH; the last component is never followed
  bool is_symlink = false;  // the last component is a symlink (fd is the link)
  unsigned mode = 0;
  uint64_t dev = 0, ino = 0;
  uint64_t mnt_id = 0;  // the mount holding it (as in mountinfo)
};

// PrepareMountpoint for callers that already hold the parent directory
// (`leaf` is a single name in parent_fd; `path` is for messages). A symlink
// as the last component is reported through out->is_symlink, not refused:
// the caller decides (PrepareMountpoint refuses it).
bool PrepareMountpointIn(int parent_fd, const std::string& path, const std::string& leaf,
                         MountpointType type, bool allow_device, Mountpoint* out,
                         std::vector<CreatedPath>* created, Error* err);

// Opens the directory that will hold `path`'s last component, creating
// missing directories (mode 0755). Returns the directory fd (O_PATH) and the
// last component's name.
bool OpenParentCreating(int root_fd, const std::string& path, UniqueFd* parent, std::string* leaf,
                        std::vector<CreatedPath>* created, Error* err);

// Makes sure `path` exists inside root_fd as a mountpoint of `type` and
// returns an O_PATH fd to it. Refuses a symlink, or an existing object of
// another type (a directory where a file is needed and the reverse, a FIFO,
// socket or device where a file is needed, unless `allow_device` is set
// for device mounts that may shadow an existing node).
bool PrepareMountpoint(int root_fd, const std::string& path, MountpointType type, bool allow_device,
                       UniqueFd* out, std::vector<CreatedPath>* created, Error* err);

// "regular file", "FIFO", "symlink"... for messages about st_mode.
const char* FileTypeDescription(unsigned mode);

}  // namespace ocid
