// Paths inside an untrusted container rootfs are file descriptors, never
// strings. Threat model: the image author controls every name and symlink in
// the rootfs, and processes of other containers sharing the same rootfs
// directory may rename things while the hook runs. Therefore:
//   - every lookup is openat2(root_fd, path, RESOLVE_IN_ROOT |
//     RESOLVE_NO_MAGICLINKS): symlinks and ".." are resolved as if root_fd
//     were "/", so nothing can lead outside the rootfs;
//   - missing parents are created with mkdirat from the parent's fd and then
//     reopened with RESOLVE_NO_SYMLINKS relative to that fd, so a swap between
//     create and open is detected rather than followed;
//   - the last component of a mount target is never followed: an existing
//     symlink there is refused, a missing one is created O_CREAT|O_EXCL|
//     O_NOFOLLOW (files) or mkdirat (directories);
//   - callers get an O_PATH fd for the mountpoint and mount onto that fd.
#pragma once
#include <string>
#include <vector>

#include "error.h"
#include "unique_fd.h"

namespace ocid {

enum class MountpointType { kFile, kDirectory };

// What PrepareMountpoint created, so a failed attempt can be rolled back.
struct CreatedPath {
  std::string path;   // absolute, inside the rootfs
  bool is_dir = false;
};

// Splits "/a/b/../c" into normalized components; ".." handled lexically is
// NOT done here (the kernel resolves ".." inside the root). Returns false for
// an empty path or a component that is not a plain name where one is needed.
bool SplitContainerPath(const std::string& path, std::vector<std::string>* parts,
                        Error* err);

// Opens `path` inside root_fd with `flags` (O_PATH, O_RDONLY, ...) resolving
// every symlink inside the root. Retries a bounded number of times on EAGAIN.
bool OpenInRoot(int root_fd, const std::string& path, int flags, UniqueFd* out,
                Error* err);

// Opens the directory that will hold `path`'s last component, creating
// missing directories (mode 0755). Returns the directory fd (O_PATH) and the
// last component's name.
bool OpenParentCreating(int root_fd, const std::string& path, UniqueFd* parent,
                        std::string* leaf, std::vector<CreatedPath>* created,
                        Error* err);

// Makes sure `path` exists inside root_fd as a mountpoint of `type` and
// returns an O_PATH fd to it. Refuses a symlink, or an existing object of
// another type (a directory where a file is needed and the reverse, a FIFO,
// socket or device where a file is needed, unless `allow_device` is set
// for device mounts that may shadow an existing node).
bool PrepareMountpoint(int root_fd, const std::string& path,
                       MountpointType type, bool allow_device, UniqueFd* out,
                       std::vector<CreatedPath>* created, Error* err);

// Removes what PrepareMountpoint created, newest first; only empty
// directories and empty files are removed. Best effort, used on rollback.
void RemoveCreated(int root_fd, const std::vector<CreatedPath>& created);

// "regular file", "FIFO", "symlink"... for messages about st_mode.
const char* FileTypeDescription(unsigned mode);

}  // namespace ocid
