#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "files.h"
#include "unique_fd.h"

namespace ocid {
namespace {

void SplitPath(const std::string& path, std::string* dir, std::string* base) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    *dir = ".";
    *base = path;
  } else {
    *dir = slash == 0 ? "/" : path.substr(0, slash);
    *base = path.substr(slash + 1);
  }
}

// mkdir -p with mode 0755 for the missing components.
bool MakeDirs(const std::string& dir, Error* err) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return true;
    return Fail(err, "not a directory", dir);
  }
  if (errno != ENOENT) return Fail(err, "cannot stat", dir, errno);
  std::string parent, base;
  SplitPath(dir, &parent, &base);
  if (parent != dir && !MakeDirs(parent, err)) return false;
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Fail(err, "cannot create directory", dir, errno);
  return true;
}

// The file's status at `base` in dirfd, without following a symlink.
// *exists false when there is none; a symlink or non-regular file fails.
bool StatTarget(int dirfd, const std::string& base, const std::string& path,
                struct stat* st, bool* exists, Error* err) {
  *exists = false;
  if (::fstatat(dirfd, base.c_str(), st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    return Fail(err, "cannot stat", path, errno);
  }
  if (S_ISLNK(st->st_mode))
    return Fail(err, "refusing to write through a symbolic link", path);
  if (!S_ISREG(st->st_mode)) return Fail(err, "refusing to replace a non-regular file", path);
  *exists = true;
  return true;
}

}  // namespace

bool ReadFileIfExists(const std::string& path, size_t limit, std::string* out,
                      bool* exists, Error* err) {
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

bool WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode,
                     Error* err) {
  std::string dir, base;
  SplitPath(path, &dir, &base);
  if (base.empty() || base == "." || base == "..") return Fail(err, "not a file name", path);
  if (!MakeDirs(dir, err)) return false;
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dfd.valid()) return Fail(err, "cannot open directory", dir, errno);
  struct stat old;
  bool exists = false;
  if (!StatTarget(dfd.get(), base, path, &old, &exists, err)) return false;

  static unsigned counter = 0;
  std::string tmp = "." + base + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(++counter);
  mode_t want = exists ? (old.st_mode & 07777) : mode;
  UniqueFd fd(::openat(dfd.get(), tmp.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Fail(err, "cannot create", dir + "/" + tmp, errno);
  auto fail = [&](const std::string& what, int e) {
    ::unlinkat(dfd.get(), tmp.c_str(), 0);
    return Fail(err, what, path, e);
  };
  Error werr;
  if (!WriteAllFd(fd.get(), data, path, &werr)) return fail(werr.what, werr.errnum);
  if (exists && ::geteuid() == 0 && ::fchown(fd.get(), old.st_uid, old.st_gid) != 0)
    return fail("cannot chown the temporary file for", errno);
  if (::fchmod(fd.get(), want) != 0) return fail("cannot chmod the temporary file for", errno);
  if (::fsync(fd.get()) != 0) return fail("cannot fsync the temporary file for", errno);
  fd.reset();
  // The target may have become a symlink since it was checked: rename
  // replaces the link itself, never what it points to.
  if (::renameat(dfd.get(), tmp.c_str(), dfd.get(), base.c_str()) != 0)
    return fail("cannot rename the temporary file over", errno);
  ::fsync(dfd.get());
  return true;
}

bool WriteBackup(const std::string& path, const std::string& data, std::string* backup,
                 Error* err) {
  struct stat st;
  mode_t mode = ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0600;
  char stamp[32];
  std::time_t now = std::time(nullptr);
  struct tm tm;
  ::gmtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string name = path + ".bak." + stamp;
  for (int n = 1; n < 100; ++n) {
    UniqueFd fd(::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (fd.valid()) {
      if (::fchmod(fd.get(), mode) != 0) return Fail(err, "cannot set the mode of", name, errno);
      if (!WriteAllFd(fd.get(), data, name, err)) return false;
      if (::fsync(fd.get()) != 0) return Fail(err, "cannot sync", name, errno);
      *backup = name;
      return true;
    }
    if (errno != EEXIST) return Fail(err, "cannot create backup", name, errno);
    name = path + ".bak." + stamp + "-" + std::to_string(n);
  }
  return Fail(err, "cannot find a free backup name", path + ".bak." + stamp);
}

}  // namespace ocid
