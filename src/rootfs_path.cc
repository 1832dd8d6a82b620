// Resolution and creation of paths inside an untrusted rootfs. The threat
// model is in rootfs_path.h; each step below says why it cannot leave the
// rootfs.
#include "rootfs_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>

#include "host_view.h"
#include "syscalls.h"

namespace ocid {
namespace {

constexpr int kMaxEagainRetries = 64;

// openat2 relative to `dirfd` with the given resolve flags; EAGAIN (a
// concurrent rename somewhere on the system) is retried a bounded number of
// times, as openat2(2) recommends.
int OpenAt2(int dirfd, const std::string& rel, int flags, unsigned long long resolve) {
  open_how how{};
  how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
  how.resolve = resolve;
  for (int i = 0; i < kMaxEagainRetries; ++i) {
    int fd = sys::openat2(dirfd, rel.empty() ? "." : rel.c_str(), &how);
    if (fd >= 0 || errno != EAGAIN) return fd;
  }
  errno = EAGAIN;
  return -1;
}

std::string Relative(const std::string& path) {
  size_t i = 0;
  while (i < path.size() && path[i] == '/') ++i;
  return path.substr(i);
}

std::string Join(const std::vector<std::string>& parts, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += "/" + parts[i];
  return s.empty() ? "/" : s;
}

}  // namespace

bool SplitContainerPath(const std::string& path, std::vector<std::string>* parts,
                        Error* err) {
  parts->clear();
  if (path.empty() || path[0] != '/')
    return Fail(err, "container path is not absolute", path);
  size_t start = 1;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string comp = path.substr(start, end - start);
    if (comp == "." || comp == ".." || comp.find('\0') != std::string::npos)
      return Fail(err, "container path has a \".\" or \"..\" component", path);
    if (!comp.empty()) parts->push_back(comp);
    start = end + 1;
  }
  if (parts->empty()) return Fail(err, "container path is \"/\"", path);
  return true;
}

bool OpenInRoot(int root_fd, const std::string& path, int flags, UniqueFd* out,
                Error* err) {
  // RESOLVE_IN_ROOT: "/" and ".." stop at root_fd, absolute symlinks are
  // resolved relative to it. RESOLVE_NO_MAGICLINKS: /proc/<pid>/fd/N style
  // links, which could jump anywhere, are refused.
  int fd = OpenAt2(root_fd, Relative(path), flags,
                   RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  if (fd < 0) return Fail(err, "cannot resolve inside root", path, errno);
  out->reset(fd);
  return true;
}

bool OpenDirCreating(int root_fd, const std::string& dir, UniqueFd* out,
                     std::vector<CreatedPath>* created, Error* err) {
  // The common case: it exists. Resolved from the root the way the
  // container will see it: a symlinked component is followed, but only
  // inside the rootfs.
  Error first;
  if (OpenInRoot(root_fd, dir, O_PATH | O_DIRECTORY, out, &first)) return true;
  if (first.errnum != ENOENT)
    return Fail(err, "cannot open directory in rootfs", dir, first.errnum);

  std::vector<std::string> parts;
  if (dir != "/" && !SplitContainerPath(dir, &parts, err)) return false;
  UniqueFd cur;
  if (!OpenInRoot(root_fd, "/", O_PATH | O_DIRECTORY, &cur, err)) return false;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string prefix = Join(parts, i + 1);
    UniqueFd next;
    Error e;
    if (OpenInRoot(root_fd, prefix, O_PATH | O_DIRECTORY, &next, &e)) {
      cur = std::move(next);
      continue;
    }
    if (e.errnum != ENOENT)
      return Fail(err, "cannot open directory in rootfs", prefix, e.errnum);
    // Missing: create it in the directory we hold, then reopen it strictly
    // beneath that directory with no symlink allowed, so a swap between
    // mkdirat and open is refused instead of followed.
    if (::mkdirat(cur.get(), parts[i].c_str(), 0755) == 0) {
      if (created) created->push_back(CreatedPath{prefix, true});
    } else if (errno != EEXIST) {
      return Fail(err, "cannot create directory in rootfs", prefix, errno);
    } else {
      // It exists, yet resolving it gave ENOENT: a symlink whose target is
      // not inside the rootfs (e.g. an absolute link to a host path). We do
      // not create its target: what the image points at is its business.
      struct stat st;
      if (::fstatat(cur.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode))
        return Fail(err,
                    "the image has a symlink here whose target does not exist inside the "
                    "rootfs; refusing to create through it",
                    prefix);
    }
    int fd = OpenAt2(cur.get(), parts[i], O_PATH | O_DIRECTORY | O_NOFOLLOW,
                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    if (fd < 0)
      return Fail(err, "directory in rootfs changed while being created", prefix, errno);
    cur.reset(fd);
  }
  *out = std::move(cur);
  return true;
}

bool OpenParentCreating(int root_fd, const std::string& path, UniqueFd* parent,
                        std::string* leaf, std::vector<CreatedPath>* created,
                        Error* err) {
  std::vector<std::string> parts;
  if (!SplitContainerPath(path, &parts, err)) return false;
  if (!OpenDirCreating(root_fd, Join(parts, parts.size() - 1), parent, created, err))
    return false;
  *leaf = parts.back();
  return true;
}

namespace {

bool StatLeaf(Mountpoint* mp, const std::string& path, Error* err) {
  struct statx sx {};
  if (::statx(mp->fd.get(), "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
              STATX_TYPE | STATX_INO | STATX_MNT_ID, &sx) != 0)
    return Fail(err, "cannot stat mountpoint in rootfs", path, errno);
  if (!(sx.stx_mask & STATX_MNT_ID))
    return Fail(err, "the kernel does not report mount ids (statx STATX_MNT_ID)", path);
  mp->mode = sx.stx_mode;
  mp->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
  mp->ino = sx.stx_ino;
  mp->mnt_id = sx.stx_mnt_id;
  mp->is_symlink = S_ISLNK(sx.stx_mode);
  return true;
}

}  // namespace

bool PrepareMountpointIn(int parent_fd, const std::string& path, const std::string& leaf,
                         MountpointType type, bool allow_device, Mountpoint* out,
                         std::vector<CreatedPath>* created, Error* err) {
  // The last component is a single name opened with O_NOFOLLOW: a symlink
  // there is seen as a symlink, never followed.
  out->fd.reset(::openat(parent_fd, leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!out->fd.valid() && errno == ENOENT) {
    // Several containers may share one rootfs directory and start at once:
    // if another hook creates the name first (EEXIST), take what is there
    // now and check it like any existing entry.
    int rc;
    if (type == MountpointType::kDirectory) {
      rc = ::mkdirat(parent_fd, leaf.c_str(), 0755);
    } else {
      rc = ::openat(parent_fd, leaf.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (rc >= 0) rc = ::close(rc);
    }
    if (rc == 0) {
      if (created) created->push_back(CreatedPath{path, type == MountpointType::kDirectory});
    } else if (errno != EEXIST) {
      return Fail(err, "cannot create mountpoint in rootfs", path, errno);
    }
    out->fd.reset(::openat(parent_fd, leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!out->fd.valid()) return Fail(err, "cannot open mountpoint in rootfs", path, errno);
  if (!StatLeaf(out, path, err)) return false;
  if (out->is_symlink) return true;
  unsigned m = out->mode;
  bool ok = type == MountpointType::kDirectory
                ? S_ISDIR(m)
                : S_ISREG(m) || (allow_device && (S_ISCHR(m) || S_ISBLK(m)));
  if (!ok)
    return Fail(err,
                std::string("refusing to mount: the image has a ") + FileTypeDescription(m) +
                    " where a " + (type == MountpointType::kDirectory ? "directory" : "file") +
                    " is needed",
                path);
  return true;
}

bool PrepareMountpoint(int root_fd, const std::string& path,
                       MountpointType type, bool allow_device, UniqueFd* out,
                       std::vector<CreatedPath>* created, Error* err) {
  UniqueFd parent;
  std::string leaf;
  if (!OpenParentCreating(root_fd, path, &parent, &leaf, created, err)) return false;
  Mountpoint mp;
  if (!PrepareMountpointIn(parent.get(), path, leaf, type, allow_device, &mp, created, err))
    return false;
  if (mp.is_symlink) return Fail(err, "refusing to mount over a symlink in the image", path);
  *out = std::move(mp.fd);
  return true;
}

const char* FileTypeDescription(unsigned mode) {
  if (S_ISREG(mode)) return "regular file";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISLNK(mode)) return "symlink";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISSOCK(mode)) return "socket";
  return "special file";
}


}  // namespace ocid
