// Executor for the plan's mounts. Two phases, because a mount can only be
// cloned from the mount namespace that owns it:
//   1. PrepareSources (host mount namespace): reopen each planned source
//      inside the host root, check it is still the planned file (dev, ino,
//      type, rdev), clone it as a detached mount (open_tree OPEN_TREE_CLONE)
//      and set read-only, nosuid, nodev (not for devices) and private
//      propagation on the detached mount (mount_setattr).
//   2. Attach (container mount namespace): prepare each mountpoint inside the
//      rootfs by fd (rootfs_path.h) and move_mount the detached tree onto
//      that fd, then verify the target now shows the source's inode.
// Nothing is mounted by path string, and the host namespace gains no mount.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "error.h"
#include "plan.h"
#include "rootfs_path.h"
#include "unique_fd.h"

namespace ocid {

struct DetachedMount {
  UniqueFd tree;            // from open_tree
  std::string target;       // container path
  FileType type = FileType::kRegular;
  uint64_t dev = 0, ino = 0;
  std::string what;         // source path for messages
};

// Clones an already-open source (an O_PATH or regular fd, whose fstat is
// `st`) as a detached mount with the given flags.
bool CloneDetached(int source_fd, const struct stat& st, const std::string& what, bool nodev,
                   DetachedMount* out, Error* err);

bool PrepareSources(const HostRootView& host, const Plan& plan,
                    std::vector<DetachedMount>* out, Error* err);

// Attaches every detached mount below rootfs_fd. On failure, detaches what
// it attached; the empty mountpoints it created stay, as after a success
// (the rootfs may be shared by other containers, see rootfs_path.h).
//
// `shared_mounts` holds the ids of the mounts in the container's namespace
// that have shared propagation: a mount placed under one of them would
// propagate to its peers (possibly the host), so such a target is refused.
class MountAttacher {
 public:
  MountAttacher(int rootfs_fd, std::set<uint64_t> shared_mounts)
      : rootfs_fd_(rootfs_fd), shared_(std::move(shared_mounts)) {}
  bool Attach(std::vector<DetachedMount>* mounts, Error* err);
  void Rollback();

 private:
  // Directory fds by container path: mounts share few parents (/usr/lib64,
  // /usr/bin, /dev), so each is resolved once. A directory mount over a
  // cached path drops it and everything below it.
  int Directory(const std::string& dir, Error* err);
  void Forget(const std::string& dir);

  int rootfs_fd_;
  std::set<uint64_t> shared_;
  std::map<std::string, UniqueFd> dirs_;
  std::vector<DetachedMount*> attached_;  // in the order attached
  std::vector<CreatedPath> created_;
};

}  // namespace ocid
