#include "mounter.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>

#include "host_proc.h"
#include "kernel_features.h"
#include "log.h"
#include "path_text.h"
#include "syscalls.h"

namespace ocid {
namespace {

// mount(2) and umount2(2) take paths, not fds: each fd is named by its
// magic link, thread-self/fd/N, looked up from the host's procfs made the
// working directory first (setns reset it to the container's root). The
// string "/proc/..." would be looked up in the container's mount tree, which
// another container may own (host_proc.h). With src -1, no source.
int MountFds(int src, int target, unsigned long flags) {
  int proc;
  Error e;
  if (!host_proc::Fd(&proc, &e) || ::fchdir(proc) != 0) return -1;
  std::string from = src >= 0 ? host_proc::ThreadSelfFd(src) : "";
  return ::mount(src >= 0 ? from.c_str() : nullptr, host_proc::ThreadSelfFd(target).c_str(),
                 nullptr, flags, nullptr);
}

// Detaches the mount whose root `fd` holds (the same host procfs lookup).
void DetachFd(int fd) {
  int proc;
  Error e;
  if (host_proc::Fd(&proc, &e) && ::fchdir(proc) == 0)
    ::umount2(host_proc::ThreadSelfFd(fd).c_str(), MNT_DETACH);
}

bool IsDevice(FileType t) { return t == FileType::kCharDevice || t == FileType::kBlockDevice; }

// The file a planned mount must show: same inode, same type, and for a
// device the same device number the cgroup allows.
bool IsPlanned(const struct stat& st, const DetachedMount& m) {
  return st.st_dev == m.dev && st.st_ino == m.ino && FileTypeOf(st.st_mode) == m.type &&
         (!IsDevice(m.type) || st.st_rdev == m.rdev);
}

}  // namespace

bool CloneDetached(int source_fd, const struct stat& st, const std::string& root,
                   const std::string& path, const std::string& what, bool nodev, DetachedMount* out,
                   Error* err) {
  out->what = what;
  out->type = FileTypeOf(st.st_mode);
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  out->rdev = st.st_rdev;
  out->nodev = nodev;
  out->source_root = root;
  out->source_path = path;
  if (!kernel::MountApiMissing()) {
    // A non-recursive clone: exactly the one file or directory, never a
    // mount tree that might sit below a host directory.
    UniqueFd tree(
        sys::open_tree(source_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    if (!tree.valid() && errno != ENOSYS)
      return Fail(err, "cannot clone host source as a mount", what, errno);
    if (tree.valid()) {
      mount_attr attr{};
      attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | (nodev ? MOUNT_ATTR_NODEV : 0);
      // A device node must stay usable even if its host filesystem is nodev.
      attr.attr_clr = nodev ? 0 : MOUNT_ATTR_NODEV;
      // Private: nothing mounted later under it propagates anywhere.
      attr.propagation = MS_PRIVATE;
      if (sys::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr) == 0) {
        out->tree = std::move(tree);
        return true;
      }
      // 5.2 to 5.11 have open_tree but not mount_setattr: the clone is
      // dropped (closing a detached tree unmounts it) and the legacy
      // strategy is used for every mount.
      if (errno != ENOSYS)
        return Fail(err, "cannot make mount read-only/nosuid/private", what, errno);
    }
    kernel::NoteMountApiMissing();
    OCID_DEBUG(
        "the kernel has no new mount API (open_tree, move_mount, mount_setattr): "
        "using the legacy mount API (mount(2) from the container's namespace)");
  }
  // Legacy: attached later from the container's namespace (mounter.h). The
  // host fd pins the inode meanwhile.
  out->host_source.reset(::fcntl(source_fd, F_DUPFD_CLOEXEC, 0));
  if (!out->host_source.valid()) return Fail(err, "cannot keep host source open", what, errno);
  // A relative directory (--state-dir given so) means the hook's working
  // directory here; in the container's namespace the cwd is its root.
  if (root.empty() || root[0] != '/') {
    char cwd[PATH_MAX];
    if (!::getcwd(cwd, sizeof cwd))
      return Fail(err, "cannot get the working directory", root, errno);
    out->source_root = std::string(cwd) + "/" + root;
  }
  return true;
}

bool PrepareSources(const HostRootView& host, const Plan& plan, std::vector<DetachedMount>* out,
                    Error* err) {
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
    if (!CloneDetached(src.get(), st, host.root_path(), m.source, m.source, m.nodev, &d, err))
      return false;
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
    if (it->first == dir || it->first.rfind(dir + "/", 0) == 0)
      it = dirs_.erase(it);
    else
      ++it;
  }
}

bool MountAttacher::Attach(std::vector<DetachedMount>* mounts, Error* err) {
  for (auto& m : *mounts) {
    std::string dir = Dirname(m.target);  // an absolute container path
    std::string leaf = Basename(m.target);
    bool is_dir = m.type == FileType::kDirectory;
    bool device = m.type == FileType::kCharDevice || m.type == FileType::kBlockDevice;
    int parent = Directory(dir, err);
    if (parent < 0) return false;
    Mountpoint mp;
    if (!PrepareMountpointIn(parent, m.target, leaf,
                             is_dir ? MountpointType::kDirectory : MountpointType::kFile, device,
                             &mp, &created_, err))
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
      return Fail(err,
                  "refusing to mount under a mount with shared propagation "
                  "(it would leak to other mount namespaces)",
                  m.target);
    if (!(m.tree.valid() ? AttachNew(&m, parent, leaf, mp, err)
                         : AttachLegacy(&m, parent, leaf, mp, err)))
      return false;
    if (is_dir) Forget(m.target);
  }
  return true;
}

bool MountAttacher::AttachNew(DetachedMount* m, int parent, const std::string& leaf,
                              const Mountpoint& mp, Error* err) {
  // Mount by fd onto the fd of the mountpoint: no path is looked up again.
  if (sys::move_mount(m->tree.get(), "", mp.fd.get(), "",
                      MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    if (errno != ENOSYS) return Fail(err, "cannot mount " + m->what + " on", m->target, errno);
    // open_tree and mount_setattr worked but move_mount is missing (a
    // seccomp filter can do that): the legacy strategy, from here on. The
    // detached clone keeps pinning the host inode until the end.
    kernel::NoteMountApiMissing();
    OCID_DEBUG("move_mount is missing: using the legacy mount API (mount(2))");
    m->host_source = std::move(m->tree);
    return AttachLegacy(m, parent, leaf, mp, err);
  }
  attached_.push_back(m);
  // Verify: a fresh lookup of the name now shows the host file.
  UniqueFd check(::openat(parent, leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!check.valid() || ::fstat(check.get(), &st) != 0 || st.st_dev != m->dev ||
      st.st_ino != m->ino)
    return Fail(err, "mount did not take effect", m->target);
  return true;
}

bool MountAttacher::ReopenSource(const DetachedMount& m, UniqueFd* out, Error* err) {
  // The host root (or state directory) by its host path: a trusted path in
  // a namespace whose tree is the host's copy, where no container process
  // has run yet. Whatever it holds, only the planned inode is accepted.
  auto it = source_roots_.find(m.source_root);
  if (it == source_roots_.end()) {
    UniqueFd root(::open(m.source_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid())
      return Fail(err,
                  "legacy mount API: cannot open the host directory in the container's "
                  "mount namespace",
                  m.source_root, errno);
    it = source_roots_.emplace(m.source_root, std::move(root)).first;
  }
  Error e;
  if (!OpenInRoot(it->second.get(), m.source_path, O_PATH, out, &e))
    return Fail(err,
                "legacy mount API: cannot find host source in the container's mount "
                "namespace",
                m.what, e.errnum);
  struct stat st;
  if (::fstat(out->get(), &st) != 0) return Fail(err, "cannot stat host source", m.what, errno);
  if (!IsPlanned(st, m))
    return Fail(err,
                "legacy mount API: host source in the container's mount namespace is not "
                "the planned file",
                m.what);
  return true;
}

bool MountAttacher::AttachLegacy(DetachedMount* m, int parent, const std::string& leaf,
                                 const Mountpoint& mp, Error* err) {
  UniqueFd src;
  if (!ReopenSource(*m, &src, err)) return false;
  // Both ends by fd: the magic links name exactly the objects we hold.
  // MS_BIND without MS_REC: the one file or directory, no submounts.
  if (MountFds(src.get(), mp.fd.get(), MS_BIND) != 0)
    return Fail(err, "cannot mount " + m->what + " on", m->target, errno);
  // The new mount's root, by a fresh lookup of the name, which must now
  // show the host file. Only through this fd can the mount be changed and
  // detached again (the mountpoint fd stays below it).
  UniqueFd top(::openat(parent, leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!top.valid() || ::fstat(top.get(), &st) != 0 || !IsPlanned(st, *m))
    return Fail(err, "mount did not take effect", m->target);
  m->tree = std::move(top);
  attached_.push_back(m);
  // Private first: a bind of a shared or slave source joins its peer group
  // or master, and nothing may propagate into or out of this mount.
  if (MountFds(-1, m->tree.get(), MS_PRIVATE) != 0)
    return Fail(err, "cannot make mount private", m->target, errno);
  // MS_REMOUNT | MS_BIND sets this mount's flags (the filesystem is not
  // touched) to exactly those given, atime flags excepted: keep noexec.
  struct statvfs vfs;
  if (::fstatvfs(m->tree.get(), &vfs) != 0)
    return Fail(err, "cannot read mount flags", m->target, errno);
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID;
  if (m->nodev) flags |= MS_NODEV;  // a device node must stay usable
  if (vfs.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (MountFds(-1, m->tree.get(), flags) != 0)
    return Fail(err, "cannot make mount read-only/nosuid", m->target, errno);
  return true;
}

void MountAttacher::Rollback() {
  for (auto it = attached_.rbegin(); it != attached_.rend(); ++it) {
    // The tree fd now refers to the attached mount; detach exactly it.
    DetachFd((*it)->tree.get());
  }
  attached_.clear();
  dirs_.clear();
  // Created mountpoints stay (empty files and directories): see rootfs_path.h.
  created_.clear();
}

}  // namespace ocid
