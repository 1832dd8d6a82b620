#include "kubelet_volume.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "error.h"
#include "files.h"
#include "kernel_features.h"
#include "mountinfo.h"
#include "unique_fd.h"

namespace ocid {
namespace {

const MountInfoEntry* Find(const std::vector<MountInfoEntry>& all, int id) {
  for (const auto& e : all)
    if (e.id == id) return &e;
  return nullptr;
}

// "/a/b" + "c" = "/a/b/c"; "/" + "c" = "/c".
std::string Join(const std::string& a, const std::string& b) {
  if (b.empty()) return a;
  return (a == "/" ? "" : a) + "/" + b;
}

// One path component the kubelet could have written: not empty, ".", ".."
// and without '/'.
bool OneComponent(std::string_view s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string_view::npos;
}

// `root` is "<r>/pods/<uid>/volumes/kubernetes.io~<kind>/<name>" with kind
// configmap or projected.
bool IsVolumeUnder(const std::string& r, const std::string& root) {
  std::string prefix = Join(r, "pods/");
  if (root.compare(0, prefix.size(), prefix) != 0) return false;
  std::string_view rest(root);
  rest.remove_prefix(prefix.size());
  size_t a = rest.find('/');
  if (a == std::string_view::npos || !OneComponent(rest.substr(0, a))) return false;
  rest.remove_prefix(a + 1);
  for (std::string_view kind :
       {"volumes/kubernetes.io~configmap/", "volumes/kubernetes.io~projected/"})
    if (rest.compare(0, kind.size(), kind) == 0) return OneComponent(rest.substr(kind.size()));
  return false;
}

}  // namespace

std::string KubeletConfigVolumeWhyNot(std::string_view mountinfo, const KubeletVolumeFacts& f) {
  if (f.dir_mnt < 0 || f.dir_mnt == f.dir_parent_mnt)
    return "it is not the root of a mount (the kubelet mounts each volume)";
  if (!f.dir_read_only) return "its mount is not read-only";
  std::vector<MountInfoEntry> all = ParseMountinfo(mountinfo);
  const MountInfoEntry* d = Find(all, f.dir_mnt);
  const MountInfoEntry* k = Find(all, f.kubelet_mnt);
  if (!d || !k) return "its mount or the kubelet directory's is not in /proc/self/mountinfo";
  // --kubelet-dir as its filesystem names it: the root of its mount, and
  // the rest of the path below that mount's mount point.
  const std::string& mp = k->mount_point;
  std::string below;
  if (f.kubelet_path == mp) {
    below = "";
  } else if (mp == "/" && !f.kubelet_path.empty() && f.kubelet_path[0] == '/') {
    below = f.kubelet_path.substr(1);
  } else if (f.kubelet_path.compare(0, mp.size() + 1, mp + "/") == 0) {
    below = f.kubelet_path.substr(mp.size() + 1);
  } else {
    return "the kubelet directory " + f.kubelet_path + " is not below its mount point " + mp;
  }
  std::string kdir = Join(k->root, below);
  size_t slash = kdir.rfind('/');
  if (slash == std::string::npos || kdir.substr(slash) != "/device-plugins")
    return "the kubelet directory is " + kdir +
           " on its filesystem, not <kubelet root>/device-plugins";
  std::string kubelet_root = slash == 0 ? "/" : kdir.substr(0, slash);
  if (d->dev != k->dev)
    return "it is on another filesystem (" + d->dev + ") than the kubelet directory (" + k->dev +
           ")";
  if (!IsVolumeUnder(kubelet_root, d->root))
    return "its mount is of " + d->root + ", not of " + Join(kubelet_root, "pods") +
           "/<pod uid>/volumes/kubernetes.io~configmap/<volume>";
  return "";
}

std::string KubeletConfigVolumeWhyNot(int dirfd, const std::string& kubelet_dir) {
  KubeletVolumeFacts f;
  uint64_t id = 0;
  UniqueFd parent(::openat(dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!kernel::MountId(dirfd, &id)) return std::string("its mount id: ") + std::strerror(errno);
  f.dir_mnt = static_cast<int>(id);
  if (!parent.valid() || !kernel::MountId(parent.get(), &id))
    return std::string("the mount id of its parent: ") + std::strerror(errno);
  f.dir_parent_mnt = static_cast<int>(id);
  struct statvfs vfs {};
  if (::fstatvfs(dirfd, &vfs) != 0) return std::string("fstatvfs: ") + std::strerror(errno);
  f.dir_read_only = (vfs.f_flag & ST_RDONLY) != 0;
  char real[PATH_MAX];
  if (!::realpath(kubelet_dir.c_str(), real))
    return "the kubelet directory " + kubelet_dir + ": " + std::strerror(errno);
  f.kubelet_path = real;
  UniqueFd kfd(::open(real, O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!kfd.valid() || !kernel::MountId(kfd.get(), &id))
    return "the kubelet directory " + f.kubelet_path + ": " + std::strerror(errno);
  f.kubelet_mnt = static_cast<int>(id);
  std::string text;
  Error err;
  if (!ReadFileAt(AT_FDCWD, "/proc/self/mountinfo", 16 * kMaxSmallFileBytes, &text, &err))
    return err.Line();
  return KubeletConfigVolumeWhyNot(text, f);
}

}  // namespace ocid
