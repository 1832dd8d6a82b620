// Resolution and creation of paths inside an untrusted rootfs. The threat
// model is in rootfs_path.h; each step below says why it cannot leave the
// rootfs.
#include "rootfs_path.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <deque>

#include "kernel_features.h"
#include "log.h"
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

// A single plain name in dirfd (no "/", ".", ".."), with no symlink
// followed. For one component, openat with O_NOFOLLOW is exactly that, so it
// is the fallback when there is no openat2.
int OpenChildNoSymlinks(int dirfd, const std::string& name, int flags) {
  if (!kernel::Openat2Missing()) {
    int fd = OpenAt2(dirfd, name, flags | O_NOFOLLOW,
                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    if (fd >= 0 || errno != ENOSYS) return fd;
    kernel::NoteOpenat2Missing();
  }
  return ::openat(dirfd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
}

// What the kernel allows before ELOOP (MAXSYMLINKS), counted the same way:
// every symlink followed during one resolution.
constexpr int kMaxSymlinks = 40;
constexpr ino_t kProcRootIno = 1;  // PROC_ROOT_INO

// Whether the symlink `link_fd` (O_PATH, found in directory `parent_fd`) is
// a procfs magic link: one the kernel follows to the object it stands for
// (an open file, a process's root or cwd, a namespace), whatever its text
// says. openat2 refuses those with RESOLVE_NO_MAGICLINKS; here they are told
// apart by place: the symlinks in the procfs root ("self", "thread-self",
// "mounts" -> "self/mounts", "net") are ordinary ones the kernel follows by
// their text, and every magic link lives in a per-process directory. Anything
// that cannot be checked counts as magic.
bool IsMagicLink(int link_fd, int parent_fd) {
  struct statfs fs;
  if (::fstatfs(link_fd, &fs) != 0) return true;
  if (fs.f_type != PROC_SUPER_MAGIC) return false;
  struct statfs pfs;
  struct stat pst, lst;
  if (::fstatfs(parent_fd, &pfs) != 0 || ::fstat(parent_fd, &pst) != 0 ||
      ::fstat(link_fd, &lst) != 0)
    return true;
  bool in_proc_root =
      pfs.f_type == PROC_SUPER_MAGIC && pst.st_ino == kProcRootIno && pst.st_dev == lst.st_dev;
  return !in_proc_root;
}

// Puts the components of `text` (a path or a symlink's target) in front of
// `todo`. A trailing "/" becomes a final "." so that the name before it must
// be a directory and is followed if it is a symlink, as in the kernel.
void PushFront(const std::string& text, std::deque<std::string>* todo) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('/', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (!parts.empty() && text.back() == '/') parts.push_back(".");
  todo->insert(todo->begin(), parts.begin(), parts.end());
}

// The walk behind OpenInRootWalk (rootfs_path.h): an fd, or -1 with errno
// set as openat2 would set it.
int WalkInRoot(int root_fd, const std::string& path, int flags, Symlinks symlinks) {
  if (path.empty()) return errno = ENOENT, -1;
  if (path.size() >= PATH_MAX) return errno = ENAMETOOLONG, -1;
  std::deque<std::string> todo;
  PushFront(path, &todo);
  // The directories walked through below root_fd, innermost last. ".."
  // pops this stack: the kernel's ".." would follow the directory wherever
  // a concurrent rename put it, possibly outside the root.
  std::vector<UniqueFd> stack;
  auto cur = [&] { return stack.empty() ? root_fd : stack.back().get(); };
  int links = 0;
  const bool follow_last = !(flags & O_NOFOLLOW);
  while (!todo.empty()) {
    std::string name = std::move(todo.front());
    todo.pop_front();
    const bool last = todo.empty();
    if (name == ".") continue;
    if (name == "..") {
      if (!stack.empty()) stack.pop_back();  // at root_fd, ".." is root_fd
      continue;
    }
    if (last && !follow_last)  // the caller wants a symlink itself
      return ::openat(cur(), name.c_str(), flags | O_CLOEXEC);
    // O_PATH | O_NOFOLLOW opens anything without side effects (no FIFO
    // wait, no device open) and shows a symlink as itself.
    UniqueFd probe(::openat(cur(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!probe.valid()) return -1;
    struct stat st;
    if (::fstat(probe.get(), &st) != 0) return -1;
    if (S_ISLNK(st.st_mode)) {
      if (symlinks == Symlinks::kRefused) return errno = ELOOP, -1;
      if (++links > kMaxSymlinks) return errno = ELOOP, -1;
      char target[PATH_MAX];
      // For a magic link the kernel checks access first (EACCES for another
      // process's), then refuses it; readlinkat makes the same check.
      ssize_t n = ::readlinkat(probe.get(), "", target, sizeof target);
      if (n < 0) return -1;
      if (IsMagicLink(probe.get(), cur())) return errno = ELOOP, -1;
      if (n == 0) return errno = ENOENT, -1;
      if (static_cast<size_t>(n) == sizeof target) return errno = ENAMETOOLONG, -1;
      std::string text(target, static_cast<size_t>(n));
      // An absolute target starts again at root_fd, never at the real "/".
      if (text[0] == '/') stack.clear();
      PushFront(text, &todo);
      continue;
    }
    if (!last) {
      if (!S_ISDIR(st.st_mode)) return errno = ENOTDIR, -1;
      stack.push_back(std::move(probe));
      continue;
    }
    if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode)) return errno = ENOTDIR, -1;
    if (flags & O_PATH) return probe.release();
    // A real open of the last component, from the directory we hold. If the
    // name became a symlink since the probe, O_NOFOLLOW refuses it and it is
    // resolved again like any symlink (counted, so a flapping name ends).
    int fd = ::openat(cur(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ELOOP) {
      if (symlinks == Symlinks::kRefused || ++links > kMaxSymlinks) return errno = ELOOP, -1;
      todo.push_front(std::move(name));
      continue;
    }
    return fd;
  }
  // The path ends at a directory the walk holds ("/", "a/..", "a/").
  return ::openat(cur(), ".", flags | O_CLOEXEC);
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

bool SplitContainerPath(const std::string& path, std::vector<std::string>* parts, Error* err) {
  parts->clear();
  if (path.empty() || path[0] != '/') return Fail(err, "container path is not absolute", path);
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

bool OpenInRoot(int root_fd, const std::string& path, int flags, UniqueFd* out, Error* err) {
  return OpenInRoot(root_fd, path, flags, Symlinks::kInRoot, out, err);
}

bool OpenInRoot(int root_fd, const std::string& path, int flags, Symlinks symlinks, UniqueFd* out,
                Error* err) {
  // RESOLVE_IN_ROOT: "/" and ".." stop at root_fd, absolute symlinks are
  // resolved relative to it. RESOLVE_NO_MAGICLINKS: /proc/<pid>/fd/N style
  // links, which could jump anywhere, are refused. RESOLVE_NO_SYMLINKS (on
  // request): no symlink is followed at all.
  std::string rel = Relative(path);
  unsigned long long resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  if (symlinks == Symlinks::kRefused) resolve |= RESOLVE_NO_SYMLINKS;
  if (!kernel::Openat2Missing()) {
    int fd = OpenAt2(root_fd, rel, flags, resolve);
    if (fd >= 0) {
      out->reset(fd);
      return true;
    }
    if (errno == EAGAIN) {
      // Every retry raced a rename or mount somewhere on the host (openat2
      // gives up on ".." then). On a busy host an image with relative
      // symlinks would fail at random: the walk, which holds its own fds
      // for "..", resolves the same way without that limit.
      OCID_DEBUG("openat2 kept returning EAGAIN: resolving " + path + " with the userspace walk");
    } else {
      if (errno != ENOSYS) return Fail(err, "cannot resolve inside root", path, errno);
      kernel::NoteOpenat2Missing();
      OCID_DEBUG("the kernel has no openat2: resolving paths with the userspace walk");
    }
  }
  int fd = WalkInRoot(root_fd, rel.empty() ? "." : rel, flags, symlinks);
  if (fd < 0) return Fail(err, "cannot resolve inside root", path, errno);
  out->reset(fd);
  return true;
}

bool OpenInRootWalk(int root_fd, const std::string& path, int flags, UniqueFd* out, Error* err) {
  return OpenInRootWalk(root_fd, path, flags, Symlinks::kInRoot, out, err);
}

bool OpenInRootWalk(int root_fd, const std::string& path, int flags, Symlinks symlinks,
                    UniqueFd* out, Error* err) {
  int fd = WalkInRoot(root_fd, path, flags, symlinks);
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
    if (e.errnum != ENOENT) return Fail(err, "cannot open directory in rootfs", prefix, e.errnum);
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
    int fd = OpenChildNoSymlinks(cur.get(), parts[i], O_PATH | O_DIRECTORY);
    if (fd < 0) return Fail(err, "directory in rootfs changed while being created", prefix, errno);
    cur.reset(fd);
  }
  *out = std::move(cur);
  return true;
}

bool OpenParentCreating(int root_fd, const std::string& path, UniqueFd* parent, std::string* leaf,
                        std::vector<CreatedPath>* created, Error* err) {
  std::vector<std::string> parts;
  if (!SplitContainerPath(path, &parts, err)) return false;
  if (!OpenDirCreating(root_fd, Join(parts, parts.size() - 1), parent, created, err)) return false;
  *leaf = parts.back();
  return true;
}

namespace {

bool StatLeaf(Mountpoint* mp, const std::string& path, Error* err) {
  struct statx sx {};
  if (::statx(mp->fd.get(), "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
              STATX_TYPE | STATX_INO | STATX_MNT_ID, &sx) != 0)
    return Fail(err, "cannot stat mountpoint in rootfs", path, errno);
  mp->mnt_id = sx.stx_mnt_id;
  // Before 5.8 statx has no mount id; the fd's fdinfo has had it since 3.15.
  if (!(sx.stx_mask & STATX_MNT_ID) && !kernel::MountIdFromFdinfo(mp->fd.get(), &mp->mnt_id))
    return Fail(err, "cannot find the mount of mountpoint in rootfs (statx STATX_MNT_ID, fdinfo)",
                path, errno);
  mp->mode = sx.stx_mode;
  mp->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
  mp->ino = sx.stx_ino;
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
      rc = ::openat(parent_fd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0644);
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

bool PrepareMountpoint(int root_fd, const std::string& path, MountpointType type, bool allow_device,
                       UniqueFd* out, std::vector<CreatedPath>* created, Error* err) {
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
