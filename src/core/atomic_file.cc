#include "atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <vector>

#include "dir_trust.h"
#include "files.h"
#include "path_text.h"

namespace ocid {
namespace {

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[PATH_MAX];
  if (!::getcwd(buf, sizeof buf)) return "/" + path;
  return std::string(buf) + "/" + path;
}

// The file's status at `base` in dirfd, without following a symlink.
// *exists false when there is none; a symlink or non-regular file fails.
bool StatTarget(int dirfd, const std::string& base, const std::string& path, struct stat* st,
                bool* exists, Error* err) {
  *exists = false;
  if (::fstatat(dirfd, base.c_str(), st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    return Fail(err, "cannot stat", path, errno);
  }
  if (S_ISLNK(st->st_mode)) return Fail(err, "refusing to write through a symbolic link", path);
  if (!S_ISREG(st->st_mode)) return Fail(err, "refusing to replace a non-regular file", path);
  *exists = true;
  return true;
}

// A fresh file `base` in `dfd` holding `data`, owned by uid:gid with
// `mode`, renamed over the name.
bool ReplaceIn(int dfd, const std::string& dir, const std::string& base, const std::string& path,
               const std::string& data, mode_t mode, uid_t uid, gid_t gid, Error* err) {
  // Atomic: the device plugin writes from two threads at once (the CDI
  // keeper's, and the main loop's health file), so a plain counter would
  // be a data race.
  static std::atomic<unsigned> counter{0};
  std::string tmp =
      "." + base + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(++counter);
  UniqueFd fd(
      ::openat(dfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Fail(err, "cannot create", dir + "/" + tmp, errno);
  auto fail = [&](const std::string& what, int e) {
    ::unlinkat(dfd, tmp.c_str(), 0);
    return Fail(err, what, path, e);
  };
  Error werr;
  if (!WriteAllFd(fd.get(), data, path, &werr)) return fail(werr.what, werr.errnum);
  // Explicitly: a setgid directory would otherwise hand the file its group.
  if (::fchown(fd.get(), uid, gid) != 0) return fail("cannot chown the temporary file for", errno);
  if (::fchmod(fd.get(), mode) != 0) return fail("cannot chmod the temporary file for", errno);
  if (::fsync(fd.get()) != 0) return fail("cannot fsync the temporary file for", errno);
  fd.reset();
  // The target may have become a symlink since it was checked: rename
  // replaces the link itself, never what it points to.
  if (::renameat(dfd, tmp.c_str(), dfd, base.c_str()) != 0)
    return fail("cannot rename the temporary file over", errno);
  ::fsync(dfd);
  return true;
}

// `base` in `dfd` (shown as `path`) replaced with `data`, mode `mode`,
// owned by the effective user; never through a symlink or over a
// non-regular file.
bool WriteIn(int dfd, const std::string& dir, const std::string& base, const std::string& path,
             const std::string& data, mode_t mode, Error* err) {
  struct stat old;
  bool exists = false;
  if (!StatTarget(dfd, base, path, &old, &exists, err)) return false;
  return ReplaceIn(dfd, dir, base, path, data, mode & 07777, ::geteuid(), ::getegid(), err);
}

// A file name of one component: not empty, no '/', not "." or "..".
bool IsOneName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// FileIsCurrent for `path` relative to `dirfd` (a symlink as its last
// component refused).
bool IsCurrentAt(int dirfd, const std::string& path, const std::string& data, mode_t mode) {
  UniqueFd fd;
  struct stat st;
  Error ignored;
  if (!OpenRegularFileAt(dirfd, path, LastSymlink::kRefuse, &fd, &ignored, &st) ||
      (st.st_mode & 07777) != (mode & 07777) || st.st_uid != ::geteuid() ||
      static_cast<size_t>(st.st_size) != data.size())
    return false;
  std::string have;
  return ReadAllFd(fd.get(), data.size() + 1, path, &have, &ignored) && have == data;
}

}  // namespace

bool OpenWriteDir(const std::string& dir, bool create, UniqueFd* out, Error* err) {
  // The walk and the rule `check` applies too (dir_trust.h), from "/".
  UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return Fail(err, "cannot open directory", "/", errno);
  UniqueFd path_fd;
  std::vector<DirStep> steps;
  if (!WalkDir(root.get(), Absolute(dir), create, &path_fd, &steps, err)) return false;
  if (std::string why = UnsafeStepsReason(steps); !why.empty()) return Fail(err, why);
  out->reset(::openat(path_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!out->valid()) {
    int e = errno;
    std::string reached = dir;  // the kDir step names the directory the walk reached
    for (const DirStep& s : steps)
      if (s.kind == DirStep::Kind::kDir) reached = s.path;
    return Fail(err, "cannot open directory", reached, e);
  }
  return true;
}

std::string WriteDirRefusal(const std::string& dir) {
  std::string p = Absolute(dir);
  UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return "";
  for (bool missing = false;; missing = true) {
    UniqueFd fd;
    std::vector<DirStep> steps;
    Error err;
    if (WalkDir(root.get(), p, /*create=*/false, &fd, &steps, &err)) {
      // A directory still to be made below the one reached: that one is
      // judged as an ancestor (sticky is enough).
      if (missing)
        for (DirStep& s : steps)
          if (s.kind == DirStep::Kind::kDir) s.kind = DirStep::Kind::kAncestor;
      return UnsafeStepsReason(steps);
    }
    // Anything but a missing name is not the rule's to say.
    if (err.errnum != ENOENT) return "";
    if (p == "/" || p.empty()) return "";
    p = Dirname(p);
  }
}

bool ReadFileIfExists(const std::string& path, size_t limit, std::string* out, bool* exists,
                      Error* err) {
  out->clear();
  *exists = false;
  // Only a regular file is opened (files.h); a symlink is refused.
  UniqueFd fd;
  Error e;
  if (!OpenRegularFileAt(AT_FDCWD, path, LastSymlink::kRefuse, &fd, &e)) {
    if (e.errnum == ENOENT) return true;
    *err = e;
    return false;
  }
  *exists = true;
  return ReadAllFd(fd.get(), limit, path, out, err);
}

bool WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode, Error* err) {
  std::string dir = Dirname(path), base = Basename(path);
  if (!IsOneName(base)) return Fail(err, "not a file name", path);
  UniqueFd dfd;
  if (!OpenWriteDir(dir, /*create=*/true, &dfd, err)) {
    // The directory's own line ("directory /tmp/cdi is writable by others
    // (owner 0, mode 1777)") after the file it was for.
    bool refused = err->errnum == 0 && err->path.empty();
    err->what = (refused ? "refusing to write " : "cannot write ") + path + ": " + err->what;
    return false;
  }
  return WriteIn(dfd.get(), dir, base, path, data, mode, err);
}

bool WriteFileAtomicAt(int dfd, const std::string& dir, const std::string& name,
                       const std::string& data, mode_t mode, Error* err) {
  const std::string path = (dir == "/" ? "" : dir) + "/" + name;
  if (!IsOneName(name)) return Fail(err, "not a file name", path);
  return WriteIn(dfd, dir, name, path, data, mode, err);
}

bool FileIsCurrent(const std::string& path, const std::string& data, mode_t mode) {
  return IsCurrentAt(AT_FDCWD, path, data, mode);
}

bool FileIsCurrentAt(int dfd, const std::string& name, const std::string& data, mode_t mode) {
  return IsOneName(name) && IsCurrentAt(dfd, name, data, mode);
}

bool ReplaceBundleFile(const std::string& path, const std::string& data, Error* err) {
  std::string dir = Dirname(path), base = Basename(path);
  if (base.empty() || base == "." || base == "..") return Fail(err, "not a file name", path);
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dfd.valid()) return Fail(err, "cannot open directory", dir, errno);
  struct stat old;
  bool exists = false;
  if (!StatTarget(dfd.get(), base, path, &old, &exists, err)) return false;
  if (!exists) return Fail(err, "vanished before it could be replaced", path);
  // Only root can give a file away; anyone else's file is already theirs.
  uid_t uid = ::geteuid() == 0 ? old.st_uid : ::geteuid();
  gid_t gid = ::geteuid() == 0 ? old.st_gid : ::getegid();
  return ReplaceIn(dfd.get(), dir, base, path, data, old.st_mode & 07777, uid, gid, err);
}

bool WriteBackup(const std::string& path, const std::string& data, std::string* backup,
                 Error* err) {
  std::string dir = Dirname(path), base = Basename(path);
  UniqueFd dfd;
  if (!OpenWriteDir(dir, /*create=*/false, &dfd, err)) {
    bool refused = err->errnum == 0 && err->path.empty();
    err->what = (refused ? "refusing to back up " : "cannot back up ") + path + ": " + err->what;
    return false;
  }
  struct stat st;
  mode_t mode = ::fstatat(dfd.get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0
                    ? (st.st_mode & 0644)
                    : 0600;
  char stamp[32];
  std::time_t now = std::time(nullptr);
  struct tm tm;
  ::gmtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string name = base + ".bak." + stamp;
  for (int n = 1; n < 100; ++n) {
    UniqueFd fd(::openat(dfd.get(), name.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    const std::string shown = path.substr(0, path.size() - base.size()) + name;
    if (fd.valid()) {
      if (::fchown(fd.get(), ::geteuid(), ::getegid()) != 0 || ::fchmod(fd.get(), mode) != 0)
        return Fail(err, "cannot set the owner and mode of", shown, errno);
      if (!WriteAllFd(fd.get(), data, shown, err)) return false;
      if (::fsync(fd.get()) != 0) return Fail(err, "cannot sync", shown, errno);
      *backup = shown;
      return true;
    }
    if (errno != EEXIST) return Fail(err, "cannot create backup", shown, errno);
    name = base + ".bak." + stamp + "-" + std::to_string(n);
  }
  return Fail(err, "cannot find a free backup name", path + ".bak." + stamp);
}

}  // namespace ocid
