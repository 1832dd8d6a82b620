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
//
// Kernels without the new mount API (open_tree, move_mount, mount_setattr;
// all three are needed, the last came in 5.12) take the legacy strategy,
// decided by the first call that returns ENOSYS (kernel_features.h):
//   1. PrepareSources checks each source on the host as above but clones
//      nothing: mount(2) can only bind a source from the caller's own mount
//      namespace. It records where the source is (host root + path) and
//      keeps the host fd open, so the inode cannot be freed and its number
//      reused before the attach.
//   2. Attach, in the container's namespace (before pivot_root, so the
//      host's tree as copied into it is still there): reopen the source
//      under the host root path, resolved inside it like on the host, and
//      refuse it unless it is the planned file (dev, ino, type, rdev); bind
//      it non-recursively with mount(MS_BIND) from thread-self/fd/<src>
//      onto thread-self/fd/<mountpoint>, both in the host's procfs (the
//      working directory, host_proc.h); reopen the name from the
//      parent fd, which must now show the source's inode (that fd is the new
//      mount's root: rollback detaches through it); make the new mount
//      private (MS_PRIVATE), then read-only, nosuid and nodev (not for
//      devices) with MS_REMOUNT | MS_BIND on its fd, keeping noexec if the
//      source had it. A mount whose name was swapped between the bind and
//      the reopen cannot be found again: the attach fails, and that mount
//      stays in the container's namespace, which the runtime destroys with
//      the failed container.
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

// A planned mount between the host phase and the container phase.
struct DetachedMount {
  // New API: the detached clone from open_tree; once attached, the attached
  // mount (rollback detaches through it). Legacy: empty until attached, then
  // the new mount's root.
  UniqueFd tree;
  std::string target;  // container path
  FileType type = FileType::kRegular;
  uint64_t dev = 0, ino = 0, rdev = 0;
  bool nodev = true;
  std::string what;  // source path for messages
  // Legacy: where to reopen the source in the container's namespace (the
  // source is `path` resolved inside directory `root`, both host paths), and
  // the host fd held until then. Recorded on every kernel (two strings): a
  // move_mount that fails with ENOSYS still falls back.
  std::string source_root, source_path;
  UniqueFd host_source;
};

// Prepares an already-open source (an O_PATH or regular fd, whose fstat is
// `st`, found as `path` inside host directory `root`): clones it as a
// detached mount with the given flags, or on a kernel without the new mount
// API records it for the legacy attach.
bool CloneDetached(int source_fd, const struct stat& st, const std::string& root,
                   const std::string& path, const std::string& what, bool nodev, DetachedMount* out,
                   Error* err);

bool PrepareSources(const HostRootView& host, const Plan& plan, std::vector<DetachedMount>* out,
                    Error* err);

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
  // The two ways onto the mountpoint `mp` (name `leaf` in `parent`). Both
  // leave m->tree holding the attached mount and add it to attached_.
  bool AttachNew(DetachedMount* m, int parent, const std::string& leaf, const Mountpoint& mp,
                 Error* err);
  bool AttachLegacy(DetachedMount* m, int parent, const std::string& leaf, const Mountpoint& mp,
                    Error* err);
  // Legacy: the source reopened in the current (container) mount namespace.
  bool ReopenSource(const DetachedMount& m, UniqueFd* out, Error* err);
  // Directory fds by container path: mounts share few parents (/usr/lib64,
  // /usr/bin, /dev), so each is resolved once. A directory mount over a
  // cached path drops it and everything below it.
  int Directory(const std::string& dir, Error* err);
  void Forget(const std::string& dir);

  int rootfs_fd_;
  std::set<uint64_t> shared_;
  std::map<std::string, UniqueFd> dirs_;
  std::map<std::string, UniqueFd> source_roots_;  // legacy: by host path
  std::vector<DetachedMount*> attached_;          // in the order attached
  std::vector<CreatedPath> created_;
};

}  // namespace ocid
