#include "mounter.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>

#include "syscalls.h"

namespace ocid {

bool CloneDetached(int source_fd, const struct stat& st, const std::string& what, bool nodev,
                   DetachedMount* out, Error* err) {
  // A non-recursive clone: exactly the one file or directory, never a mount
  // tree that might sit below a host directory.
  UniqueFd tree(sys::open_tree(source_fd, "",
                               OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
  if (!tree.valid()) return Fail(err, "cannot clone host source as a mount", what, errno);
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | (nodev ? MOUNT_ATTR_NODEV : 0);
  // A device node must stay usable even if its host filesystem is nodev.
  attr.attr_clr = nodev ? 0 : MOUNT_ATTR_NODEV;
  // Private: nothing mounted later under it propagates anywhere.
  attr.propagation = MS_PRIVATE;
  if (sys::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr) != 0)
    return Fail(err, "cannot make mount read-only/nosuid/private", what, errno);
  out->tree = std::move(tree);
  out->what = what;
  out->type = FileTypeOf(st.st_mode);
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  return true;
}

bool PrepareSources(const HostRootView& host, const Plan& plan,
                    std::vector<DetachedMount>* out, Error* err) {
  for (const auto& m : plan.mounts) {
    UniqueFd src;
    if (!host.OpenSource(m.source, &src, err)) return false;
    struct stat st;
    if (::fstat(src.get(), &st) != 0) return Fail(err, "cannot stat host source", m.source, errno);
    // The file must still be the one the plan was made from: same inode,
    // same type, and for devices the same device number the cgroup allows.
    if (st.st_dev != m.dev || st.st_ino != m.ino || FileTypeOf(st.st_mode) != m.type ||
        ((m.type == FileType::kCharDevice || m.type == FileType::kBlockDevice) &&
         st.st_rdev != m.rdev))
      return Fail(err, "host source changed since it was planned", m.source);
    DetachedMount d;
    if (!CloneDetached(src.get(), st, m.source, m.nodev, &d, err)) return false;
    d.target = m.target;
    out->push_back(std::move(d));
  }
  return true;
}

int MountAttacher::Directory(const std::string& dir, Error* err) {
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) return it->second.get();
  UniqueFd fd;
  if (!OpenDirCreating(rootfs_fd_, dir, &fd, &created_, err)) return -1;
  int raw = fd.get();
  dirs_.emplace(dir, std::move(fd));
  return raw;
}

void MountAttacher::Forget(const std::string& dir) {
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (it->first == dir || it->first.rfind(dir + "/", 0) == 0) it = dirs_.erase(it);
    else ++it;
  }
}

bool MountAttacher::Attach(std::vector<DetachedMount>* mounts, Error* err) {
  for (auto& m : *mounts) {
    size_t slash = m.target.rfind('/');
    std::string dir = slash == 0 ? "/" : m.target.substr(0, slash);
    std::string leaf = m.target.substr(slash + 1);
    bool is_dir = m.type == FileType::kDirectory;
    bool device = m.type == FileType::kCharDevice || m.type == FileType::kBlockDevice;
    int parent = Directory(dir, err);
    if (parent < 0) return false;
    Mountpoint mp;
    if (!PrepareMountpointIn(parent, m.target, leaf,
                             is_dir ? MountpointType::kDirectory : MountpointType::kFile,
                             device, &mp, &created_, err))
      return false;
    // Already visible: an earlier mount of ours shows this very host file
    // here (e.g. a version link inside a mounted directory). Only the
    // identical inode counts, and a link is resolved inside the root.
    if (mp.is_symlink) {
      UniqueFd through;
      Error ignored;
      struct stat st;
      if (OpenInRoot(rootfs_fd_, m.target, O_PATH, &through, &ignored) &&
          ::fstat(through.get(), &st) == 0 && st.st_dev == m.dev && st.st_ino == m.ino)
        continue;
      return Fail(err, "refusing to mount over a symlink in the image", m.target);
    }
    if (mp.dev == m.dev && mp.ino == m.ino) continue;
    if (shared_.count(mp.mnt_id))
      return Fail(err, "refusing to mount under a mount with shared propagation "
                       "(it would leak to other mount namespaces)", m.target);
    // Mount by fd onto the fd of the mountpoint: no path is looked up again.
    if (sys::move_mount(m.tree.get(), "", mp.fd.get(), "",
                        MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
      return Fail(err, "cannot mount " + m.what + " on", m.target, errno);
    attached_.push_back(&m);
    if (is_dir) Forget(m.target);
    // Verify: a fresh lookup of the name now shows the host file.
    UniqueFd check(::openat(parent, leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st;
    if (!check.valid() || ::fstat(check.get(), &st) != 0 || st.st_dev != m.dev ||
        st.st_ino != m.ino)
      return Fail(err, "mount did not take effect", m.target);
  }
  return true;
}

void MountAttacher::Rollback() {
  for (auto it = attached_.rbegin(); it != attached_.rend(); ++it) {
    // The tree fd now refers to the attached mount; detach exactly it.
    std::string p = "/proc/thread-self/fd/" + std::to_string((*it)->tree.get());
    ::umount2(p.c_str(), MNT_DETACH);
  }
  attached_.clear();
  dirs_.clear();
  // Created mountpoints stay (empty files and directories): see rootfs_path.h.
  created_.clear();
}

}  // namespace ocid
