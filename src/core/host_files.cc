#include "host_files.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "files.h"
#include "rootfs_path.h"

namespace ocid {
namespace {

bool Missing(int e) { return e == ENOENT || e == ENOTDIR || e == ELOOP; }

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

}  // namespace

bool HostFiles::Open(const std::string& host_root, std::unique_ptr<HostFiles>* out, Error* err) {
  auto f = std::unique_ptr<HostFiles>(new HostFiles());
  f->root_.reset(::open(host_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!f->root_.valid()) return Fail(err, "cannot open host root", host_root, errno);
  char link[64], buf[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", f->root_.get());
  ssize_t n = ::readlink(link, buf, sizeof buf - 1);
  if (n <= 0) return Fail(err, "cannot resolve host root", host_root, errno);
  f->root_path_.assign(buf, static_cast<size_t>(n));
  *out = std::move(f);
  return true;
}

HostRead HostFiles::OpenPath(const std::string& path, int flags, UniqueFd* fd, Error* err) const {
  Error e;
  if (OpenInRoot(root_.get(), path, flags, fd, &e)) return HostRead::kOk;
  if (Missing(e.errnum)) return HostRead::kMissing;
  *err = Error{e.what, Display(path), e.errnum};
  return HostRead::kError;
}

HostRead HostFiles::Read(const std::string& path, size_t limit, std::string* out,
                         Error* err) const {
  // O_PATH first, then only a regular file is opened (files.h).
  UniqueFd pfd;
  HostRead r = OpenPath(path, O_PATH, &pfd, err);
  if (r != HostRead::kOk) return r;
  UniqueFd fd;
  if (!ReopenRegularFile(pfd.get(), Display(path), &fd, err)) return HostRead::kError;
  if (!ReadAllFd(fd.get(), limit, Display(path), out, err)) return HostRead::kError;
  return HostRead::kOk;
}

HostRead HostFiles::ReadLink(const std::string& path, std::string* out, Error* err) const {
  UniqueFd dir;
  HostRead r = OpenPath(DirOf(path), O_PATH | O_DIRECTORY, &dir, err);
  if (r != HostRead::kOk) return r;
  std::string leaf = path.substr(path.rfind('/') + 1);
  char buf[PATH_MAX];
  ssize_t n = ::readlinkat(dir.get(), leaf.c_str(), buf, sizeof buf);
  if (n < 0) {
    if (Missing(errno) || errno == EINVAL) return HostRead::kMissing;  // EINVAL: not a link
    Fail(err, "cannot read link", Display(path), errno);
    return HostRead::kError;
  }
  out->assign(buf, static_cast<size_t>(n));
  return HostRead::kOk;
}

HostRead HostFiles::List(const std::string& dir, std::vector<std::string>* names,
                         Error* err) const {
  names->clear();
  UniqueFd fd;
  HostRead r = OpenPath(dir, O_RDONLY | O_DIRECTORY, &fd, err);
  if (r != HostRead::kOk) return r;
  if (!ListDirectory(fd.get(), Display(dir), names, err)) return HostRead::kError;
  std::sort(names->begin(), names->end());
  return HostRead::kOk;
}

HostRead HostFiles::Stat(const std::string& path, struct stat* st, Error* err) const {
  UniqueFd fd;
  HostRead r = OpenPath(path, O_PATH, &fd, err);
  if (r != HostRead::kOk) return r;
  if (::fstat(fd.get(), st) != 0) {
    Fail(err, "cannot stat", Display(path), errno);
    return HostRead::kError;
  }
  return HostRead::kOk;
}

HostRead HostFiles::Identity(const std::string& path, FileIdentity* out, Error* err) const {
  struct stat st;
  HostRead r = Stat(path, &st, err);
  if (r != HostRead::kOk) return r;
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  return HostRead::kOk;
}

HostRead HostFiles::Owner(const std::string& path, FileOwner* out, Error* err) const {
  struct stat st;
  HostRead r = Stat(path, &st, err);
  if (r != HostRead::kOk) return r;
  out->uid = st.st_uid;
  out->mode = st.st_mode & 07777;
  return HostRead::kOk;
}

bool HostFiles::Exists(const std::string& path) const {
  UniqueFd fd;
  Error ignored;
  return OpenPath(path, O_PATH, &fd, &ignored) == HostRead::kOk;
}

}  // namespace ocid
