// The hook's executor, in the order it works:
//   1. on the host: open the container's process and mount namespace by
//      fd, find who the container's root is, allow the devices in the
//      device cgroup and clone every source as a detached read-only mount;
//      create the preload file in the state directory and clone it too;
//   2. enter the container's mount namespace and check that its rootfs is
//      the very inode the host showed;
//   3. inside: merge the image's own /etc/ld.so.preload (read by fd, never
//      through a symlink or a device) into the preload file; attach each
//      mount onto a mountpoint resolved by fd inside the rootfs, as the
//      container's root;
//   4. any failure takes back what was applied (mounts, device rules, the
//      state directory), so nothing half-applied survives.
#include "plan_executor.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <set>
#include <vector>

#include "container_root.h"
#include "device_cgroup.h"
#include "files.h"
#include "host_proc.h"
#include "kernel_features.h"
#include "log.h"
#include "mounter.h"
#include "mountinfo.h"
#include "preload.h"
#include "rootfs_path.h"
#include "runtime_dir.h"

namespace ocid {
namespace {

constexpr const char* kPreloadTarget = "/etc/ld.so.preload";
constexpr const char* kPreloadFile = "ld.so.preload";

// Whether the image's file (O_PATH `path_fd`, whose fstat is `st`) may be
// shown to the container. The hook reads it as host root, and its words
// end up in a world-readable file inside the container: so it must be the
// image's own, on the rootfs mount itself (not a host file or directory
// that config.json bound at /etc/ld.so.preload or /etc), and readable by
// the container's process on its own.
bool MayShowImageFile(int rootfs_fd, int path_fd, const struct stat& st, const HostCredentials& who,
                      Error* err) {
  uint64_t rootfs_mnt = 0, file_mnt = 0;
  if (!kernel::MountId(rootfs_fd, &rootfs_mnt) || !kernel::MountId(path_fd, &file_mnt))
    return Fail(err, "cannot find the mount of the image's file", kPreloadTarget, errno);
  if (file_mnt != rootfs_mnt)
    return Fail(err,
                "refusing: the image's file is on another mount than the rootfs "
                "(a bind mount from config.json?)",
                kPreloadTarget);
  if (!MayRead(who, st.st_mode, st.st_uid, st.st_gid))
    return Fail(
        err,
        "refusing: the image's file is not readable by the container's user (" +
            (who.uid == HostCredentials::kUnmapped ? std::string("an unmapped uid")
                                                   : "host uid " + std::to_string(who.uid)) +
            ")",
        kPreloadTarget);
  return true;
}

// What the hook asks of the image's file before it is opened (a FileVet,
// files.h): a regular file, in the hook's own words, that
// MayShowImageFile allows.
struct ImageFileRules {
  int rootfs_fd;
  const HostCredentials* who;
};

bool VetImageFile(void* ctx, int where, const struct stat& st, Error* err) {
  const auto* rules = static_cast<const ImageFileRules*>(ctx);
  if (S_ISLNK(st.st_mode))
    return Fail(err, "refusing: the image's file is a symlink", kPreloadTarget);
  if (!S_ISREG(st.st_mode))
    return Fail(err,
                std::string("refusing: the image's file is a ") + FileTypeDescription(st.st_mode) +
                    ", not a regular file",
                kPreloadTarget);
  return MayShowImageFile(rules->rootfs_fd, where, st, *rules->who, err);
}

// The image's /etc/ld.so.preload, read through the rootfs fd. A symlink,
// FIFO or anything but a regular file is refused (the mount would be too),
// and so is a file MayShowImageFile refuses.
bool ReadImagePreload(int rootfs_fd, const HostCredentials& who, std::string* out, Error* err) {
  out->clear();
  UniqueFd etc;
  Error e;
  if (!OpenInRoot(rootfs_fd, "/etc", O_PATH | O_DIRECTORY, &etc, &e)) {
    if (e.errnum == ENOENT) return true;
    *err = e;
    return false;
  }
  // Looked at before it is opened: open(2) on a device node the image
  // planted here would run its driver's open as host root, outside the
  // container's device cgroup (a watchdog arms, a tape rewinds). An O_PATH
  // fd opens nothing; only a regular file is then reopened through it, and
  // through the host's procfs (the container's /proc may be another
  // container's doing): files.h, host_proc.h.
  UniqueFd path_fd(::openat(etc.get(), "ld.so.preload", O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!path_fd.valid()) {
    if (errno == ENOENT) return true;
    return Fail(err, "cannot open the image's file", kPreloadTarget, errno);
  }
  ImageFileRules rules{rootfs_fd, &who};
  const FileVet vet{VetImageFile, &rules};
  UniqueFd fd;
  if (!ReopenRegularFile(path_fd.get(), kPreloadTarget, &fd, err, nullptr, &vet)) return false;
  return ReadAllFd(fd.get(), kMaxPreloadBytes, std::string("the image's ") + kPreloadTarget, out,
                   err);
}

// Ids of the mounts with shared propagation in our current mount namespace,
// from the host's procfs: mountinfo follows the reader's namespace, and the
// container's /proc could hold any text.
bool SharedMounts(int proc_fd, std::set<uint64_t>* out, Error* err) {
  std::string text;
  if (!ReadFileAt(proc_fd, "thread-self/mountinfo", 16 * kMaxSmallFileBytes, &text, err))
    return false;
  for (int id : SharedMountIds(text)) out->insert(static_cast<uint64_t>(id));
  return true;
}

class Executor {
 public:
  Executor(const Options& opts, const Plan& plan, const HostRootView& host)
      : opts_(opts), plan_(plan), host_(host) {}

  bool Run(Error* err) {
    if (!Apply(err)) {
      Rollback();
      return false;
    }
    return true;
  }

 private:
  bool Apply(Error* err) {
    // Every /proc access, before and after setns, goes through this one
    // fd of the host's procfs (host_proc.h).
    if (!host_proc::Fd(&proc_, err)) return false;
    std::string pid_dir = "/proc/" + std::to_string(plan_.pid);
    // The /proc/<pid> directory fd pins the process: everything below is
    // read through it, so a recycled pid cannot redirect us.
    UniqueFd proc(::openat(proc_, std::to_string(plan_.pid).c_str(),
                           O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!proc.valid()) return Fail(err, "the container process is gone", pid_dir, errno);
    UniqueFd mntns(::openat(proc.get(), "ns/mnt", O_RDONLY | O_CLOEXEC));
    if (!mntns.valid())
      return Fail(err, "cannot open the container's mount namespace", pid_dir + "/ns/mnt", errno);
    if (!CheckOwnNamespace(mntns.get(), pid_dir, err)) return false;

    // Who owns what we create inside (container_root.h): known before
    // anything is changed, so an unmapped root is refused cleanly.
    ContainerRoot root;
    if (!FindContainerRoot(proc.get(), pid_dir, &root, err)) return false;

    // Host side first: nothing of the host is reachable by path once we are
    // in the container's namespace.
    if (!plan_.device_rules.empty()) {
      if (!DeviceCgroup::Open(proc.get(), &cgroup_, err)) return false;
      cgroup_used_ = true;
      if (!cgroup_.Allow(plan_.container_device_rules, plan_.device_rules, err)) return false;
    }
    if (!PrepareSources(host_, plan_, &mounts_, err)) return false;
    UniqueFd preload_fd;
    if (!plan_.preload.empty() && !PreparePreload(&preload_fd, err)) return false;
    if (!EnterContainer(mntns.get(), pid_dir, err)) return false;

    if (preload_fd.valid()) {
      std::string image;
      if (!ReadImagePreload(rootfs_.get(), plan_.process, &image, err)) return false;
      if (!WriteAllFd(preload_fd.get(), MergePreload(image, plan_.preload),
                      opts_.state_dir + "/" + plan_.container_id + "/" + kPreloadFile, err))
        return false;
    }
    std::set<uint64_t> shared;
    if (!SharedMounts(proc_, &shared, err)) return false;
    attacher_ = std::make_unique<MountAttacher>(rootfs_.get(), std::move(shared));
    // The mountpoints the attacher creates belong to the container's root,
    // as if it had made them; with a user namespace, host root could not
    // even create them on the container's /dev. Only this thread's
    // filesystem ids change, for this step only; the mounts themselves are
    // made with the hook's own privileges as before.
    AsContainerRoot as_root;
    return as_root.Enter(root, err) && attacher_->Attach(&mounts_, err);
  }

  // A container without a mount namespace of its own would have us mount
  // on the host: refuse. Nor init's, when the hook itself runs in another
  // one (a runtime in a container): a pid naming a host process would have
  // us mount there.
  bool CheckOwnNamespace(int mntns, const std::string& pid_dir, Error* err) {
    struct stat ours, theirs;
    if (::fstatat(proc_, "thread-self/ns/mnt", &ours, 0) != 0 || ::fstat(mntns, &theirs) != 0)
      return Fail(err, "cannot compare mount namespaces", pid_dir + "/ns/mnt", errno);
    if (ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev)
      return Fail(err, "the container shares the host's mount namespace; refusing to mount");
    struct stat init;
    if (::fstatat(proc_, "1/ns/mnt", &init, 0) == 0 && init.st_ino == theirs.st_ino &&
        init.st_dev == theirs.st_dev)
      return Fail(err, "the container shares init's mount namespace; refusing to mount");
    return true;
  }

  // Enters the container's mount namespace and opens its rootfs there. The
  // host namespace is never modified: every mount lands in the container's.
  // Before: our own namespace and working directory, to come back to for
  // the rollback, and the rootfs as the runtime named it on the host. A
  // container joining another's mount namespace gets that one's tree, where
  // the rootfs path can be anything: only the very inode the host showed is
  // accepted.
  bool EnterContainer(int mntns, const std::string& pid_dir, Error* err) {
    struct stat host_rootfs;
    UniqueFd on_host(::open(plan_.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!on_host.valid() || ::fstat(on_host.get(), &host_rootfs) != 0)
      return Fail(err, "cannot open the container rootfs", plan_.rootfs, errno);
    host_ns_.reset(::openat(proc_, "thread-self/ns/mnt", O_RDONLY | O_CLOEXEC));
    host_cwd_.reset(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!host_ns_.valid() || !host_cwd_.valid())
      return Fail(err, "cannot keep our own mount namespace and directory", "", errno);
    if (::setns(mntns, CLONE_NEWNS) != 0)
      return Fail(err, "cannot enter the container's mount namespace", pid_dir + "/ns/mnt", errno);
    in_container_ = true;
    // Owned by the executor, not this function: rollback detaches mounts
    // through the attacher, which works relative to this fd.
    rootfs_.reset(::open(plan_.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct stat st;
    if (!rootfs_.valid() || ::fstat(rootfs_.get(), &st) != 0 || st.st_dev != host_rootfs.st_dev ||
        st.st_ino != host_rootfs.st_ino)
      return Fail(err,
                  "refusing: the rootfs in the container's mount namespace is not the "
                  "bundle's rootfs (joined mount namespace?)",
                  plan_.rootfs);
    return true;
  }

  // The generated preload file lives on the host; it is cloned as a mount
  // now (a mount can only be cloned from its own namespace) and filled in
  // once the image's own file has been read inside the container. Without
  // the new mount API it is reopened by its state-dir path inside the
  // container's namespace instead, and must be this very inode (mounter.h).
  bool PreparePreload(UniqueFd* write_fd, Error* err) {
    UniqueFd dir;
    if (!OpenContainerDir(opts_.state_dir, plan_.container_id, &dir, err)) return false;
    state_dir_used_ = true;
    std::string path = opts_.state_dir + "/" + plan_.container_id + "/" + kPreloadFile;
    // A fresh inode every time: a stale file from an earlier container with
    // the same id may still be mounted somewhere.
    if (::unlinkat(dir.get(), kPreloadFile, 0) != 0 && errno != ENOENT)
      return Fail(err, "cannot replace", path, errno);
    write_fd->reset(::openat(dir.get(), kPreloadFile,
                             O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!write_fd->valid()) return Fail(err, "cannot create", path, errno);
    DetachedMount d;
    struct stat st;
    if (::fstat(write_fd->get(), &st) != 0) return Fail(err, "cannot stat", path, errno);
    if (!CloneDetached(write_fd->get(), st, opts_.state_dir + "/" + plan_.container_id,
                       kPreloadFile, path, true, &d, err))
      return false;
    d.target = kPreloadTarget;
    mounts_.push_back(std::move(d));
    return true;
  }

  void Rollback() {
    if (attacher_) attacher_->Rollback();
    // Back home before the state directory is named by path: in a joined
    // namespace that path is another container's.
    if (in_container_ &&
        (::setns(host_ns_.get(), CLONE_NEWNS) != 0 || ::fchdir(host_cwd_.get()) != 0)) {
      log::Warn(
          "cannot return to our own mount namespace: the state directory of this "
          "container stays");
      state_dir_used_ = false;
    }
    if (cgroup_used_) cgroup_.Undo();
    if (state_dir_used_) {
      Error ignored;
      RemoveContainerDir(opts_.state_dir, plan_.container_id, &ignored);
    }
  }

  const Options& opts_;
  const Plan& plan_;
  const HostRootView& host_;
  int proc_ = -1;  // the host's procfs (host_proc.h), not ours to close
  UniqueFd host_ns_, host_cwd_;
  bool in_container_ = false;
  UniqueFd rootfs_;
  DeviceCgroup cgroup_;
  bool cgroup_used_ = false;
  bool state_dir_used_ = false;
  std::vector<DetachedMount> mounts_;
  std::unique_ptr<MountAttacher> attacher_;
};

}  // namespace

bool ExecutePlan(const Options& opts, const Plan& plan, const HostRootView& host, Error* err) {
  Executor exec(opts, plan, host);
  return exec.Run(err);
}

}  // namespace ocid
