#include "host_view.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "files.h"
#include "rootfs_path.h"

namespace ocid {
namespace {

std::string FdPath(int fd) {
  char link[64], buf[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = ::readlink(link, buf, sizeof buf - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

bool Missing(int e) { return e == ENOENT || e == ENOTDIR || e == ELOOP; }

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

HostRead NotHere(const HostView& view, const std::string& path, Error* err) {
  Fail(err, "cannot read host file", view.Display(path), ENOTSUP);
  return HostRead::kError;
}

}  // namespace

const char* FileTypeName(FileType t) {
  switch (t) {
    case FileType::kRegular: return "file";
    case FileType::kDirectory: return "directory";
    case FileType::kCharDevice: return "char-device";
    case FileType::kBlockDevice: return "block-device";
    case FileType::kOther: return "other";
  }
  return "other";
}

FileType FileTypeOf(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISCHR(mode)) return FileType::kCharDevice;
  if (S_ISBLK(mode)) return FileType::kBlockDevice;
  return FileType::kOther;
}

void SetStatFacts(const struct stat& st, HostMatch* m) {
  m->type = FileTypeOf(st.st_mode);
  m->rdev = st.st_rdev;
  m->mode = st.st_mode;
  m->uid = st.st_uid;
  m->gid = st.st_gid;
  m->dev = st.st_dev;
  m->ino = st.st_ino;
}

bool HasGlob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool HostRootView::Open(const std::string& host_root, std::unique_ptr<HostRootView>* out,
                        Error* err) {
  // NOLINTNEXTLINE(modernize-make-unique): the constructor is private
  auto v = std::unique_ptr<HostRootView>(new HostRootView());
  v->root_.reset(::open(host_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!v->root_.valid()) return Fail(err, "cannot open host root", host_root, errno);
  v->root_path_ = FdPath(v->root_.get());
  if (v->root_path_.empty()) return Fail(err, "cannot resolve host root", host_root);
  *out = std::move(v);
  return true;
}

std::string HostRootView::ResolvedOf(int fd, const std::string& path) const {
  std::string real = FdPath(fd);
  if (root_path_ == "/") return real;
  if (real.rfind(root_path_ + "/", 0) == 0) return real.substr(root_path_.size());
  return path;
}

std::string HostRootView::Resolve(const std::string& path) const {
  auto it = opened_.find(path);
  if (it != opened_.end() && it->second.valid()) return ResolvedOf(it->second.get(), path);
  UniqueFd fd;
  Error ignored;
  if (!OpenInRoot(root_.get(), path, O_PATH, &fd, &ignored)) return "";
  return ResolvedOf(fd.get(), path);
}

bool HostView::ReadChunks(const std::string& path, size_t, const ChunkSink&, Error* err) const {
  return Fail(err, "cannot read host file", Display(path), ENOTSUP);
}

HostRead HostView::Read(const std::string& path, size_t limit, std::string* out, Error* err) const {
  out->clear();
  Error e;
  auto keep = [out](std::string_view chunk) {
    out->append(chunk);
    return true;
  };
  if (ReadChunks(path, limit, keep, &e)) return HostRead::kOk;
  out->clear();
  if (Missing(e.errnum)) return HostRead::kMissing;
  *err = e;
  return HostRead::kError;
}

HostRead HostView::ReadLink(const std::string& path, std::string*, Error* err) const {
  return NotHere(*this, path, err);
}

HostRead HostView::List(const std::string& dir, std::vector<std::string>* names, Error* err) const {
  names->clear();
  return NotHere(*this, dir, err);
}

HostRead HostView::Identity(const std::string& path, FileIdentity*, Error* err) const {
  return NotHere(*this, path, err);
}

HostRead HostView::Owner(const std::string& path, FileOwner*, Error* err) const {
  return NotHere(*this, path, err);
}

HostRead HostView::DirSteps(const std::string& dir, std::vector<DirStep>* out, Error* err) const {
  out->clear();
  return NotHere(*this, dir, err);
}

HostRead HostRootView::OpenPath(const std::string& path, int flags, UniqueFd* fd,
                                Error* err) const {
  Error e;
  if (OpenInRoot(root_.get(), path, flags, fd, &e)) return HostRead::kOk;
  if (Missing(e.errnum)) return HostRead::kMissing;
  *err = Error{e.what, Display(path), e.errnum};
  return HostRead::kError;
}

HostRead HostRootView::OpenRegular(const std::string& path, UniqueFd* fd, struct stat* st,
                                   Error* err) const {
  // Resolved in the root to an O_PATH fd, which opens nothing; then only a
  // regular file is opened (files.h): a device node or FIFO planted where
  // a profile, the version-lock library or an engine config is expected is
  // never opened.
  UniqueFd where;
  if (!OpenInRoot(root_.get(), path, O_PATH, &where, err)) {
    err->path = Display(path);
    return Missing(err->errnum) ? HostRead::kMissing : HostRead::kError;
  }
  if (!ReopenRegularFile(where.get(), Display(path), fd, err, st)) return HostRead::kError;
  return HostRead::kOk;
}

bool HostRootView::ReadChunks(const std::string& path, size_t limit, const ChunkSink& sink,
                              Error* err) const {
  UniqueFd fd;
  struct stat st;
  if (OpenRegular(path, &fd, &st, err) != HostRead::kOk) return false;
  auto too_big = [&] {
    return Fail(err, "host file is larger than " + std::to_string(limit) + " bytes", Display(path));
  };
  // sysfs files report 4096 whatever they hold: the size is checked again
  // on what is read.
  if (static_cast<uint64_t>(st.st_size) > limit) return too_big();
  // Sized to the file (sysfs: its one page), never zero-filled: this runs
  // on every activated start, for the module's version and the library.
  const size_t cap = std::clamp<size_t>(static_cast<size_t>(st.st_size), 4096, 65536);
  std::unique_ptr<char[]> buf(new char[cap]);
  auto show = [&sink](std::string_view chunk) { return sink(chunk); };
  int errnum = 0;
  switch (ReadInChunks(fd.get(), buf.get(), cap, limit, show, &errnum)) {
    case ChunkEnd::kError: return Fail(err, "cannot read host file", Display(path), errnum);
    case ChunkEnd::kOverLimit: return too_big();
    case ChunkEnd::kEof:
    case ChunkEnd::kEnough: return true;
  }
  return true;
}

HostRead HostRootView::Read(const std::string& path, size_t limit, std::string* out,
                            Error* err) const {
  out->clear();
  UniqueFd fd;
  Error e;
  HostRead r = OpenRegular(path, &fd, nullptr, &e);
  if (r == HostRead::kError) *err = e;
  if (r != HostRead::kOk) return r;
  if (!ReadAllFd(fd.get(), limit, Display(path), out, err)) return HostRead::kError;
  return HostRead::kOk;
}

HostRead HostRootView::ReadLink(const std::string& path, std::string* out, Error* err) const {
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

HostRead HostRootView::List(const std::string& dir, std::vector<std::string>* names,
                            Error* err) const {
  names->clear();
  UniqueFd fd;
  HostRead r = OpenPath(dir, O_RDONLY | O_DIRECTORY, &fd, err);
  if (r != HostRead::kOk) return r;
  if (!ListDirectory(fd.get(), Display(dir), names, err)) return HostRead::kError;
  std::sort(names->begin(), names->end());
  return HostRead::kOk;
}

HostRead HostRootView::Stat(const std::string& path, struct stat* st, Error* err) const {
  UniqueFd fd;
  HostRead r = OpenPath(path, O_PATH, &fd, err);
  if (r != HostRead::kOk) return r;
  if (::fstat(fd.get(), st) != 0) {
    Fail(err, "cannot stat", Display(path), errno);
    return HostRead::kError;
  }
  return HostRead::kOk;
}

HostRead HostRootView::Identity(const std::string& path, FileIdentity* out, Error* err) const {
  struct stat st;
  HostRead r = Stat(path, &st, err);
  if (r == HostRead::kOk) *out = FileIdentity{st.st_dev, st.st_ino};
  return r;
}

HostRead HostRootView::Owner(const std::string& path, FileOwner* out, Error* err) const {
  struct stat st;
  HostRead r = Stat(path, &st, err);
  if (r == HostRead::kOk) *out = FileOwner{st.st_uid, st.st_mode & 07777};
  return r;
}

bool HostRootView::Exists(const std::string& path) const {
  UniqueFd fd;
  Error ignored;
  return OpenPath(path, O_PATH, &fd, &ignored) == HostRead::kOk;
}

HostRead HostRootView::DirSteps(const std::string& dir, std::vector<DirStep>* out,
                                Error* err) const {
  // The writer's own walk, from the host root's fd instead of "/".
  UniqueFd fd;
  Error e;
  if (WalkDir(root_.get(), dir, /*create=*/false, &fd, out, &e)) return HostRead::kOk;
  out->clear();
  if (Missing(e.errnum)) return HostRead::kMissing;
  *err = Error{e.what, e.path.empty() ? "" : Display(e.path), e.errnum};
  return HostRead::kError;
}

bool HostRootView::OpenSource(const std::string& path, UniqueFd* out, Error* err) const {
  auto it = opened_.find(path);
  if (it != opened_.end() && it->second.valid()) {
    *out = std::move(it->second);
    opened_.erase(it);
    return true;
  }
  return OpenInRoot(root_.get(), path, O_PATH, out, err);
}

bool HostRootView::Match(const std::string& pattern, std::vector<HostMatch>* out,
                         Error* err) const {
  out->clear();
  size_t slash = pattern.rfind('/');
  std::string dir = slash == 0 ? "/" : pattern.substr(0, slash);
  std::string leaf = pattern.substr(slash + 1);

  std::vector<std::string> paths;
  if (!HasGlob(leaf)) {
    paths.push_back(pattern);
  } else {
    UniqueFd dfd;
    Error e;
    if (!OpenInRoot(root_.get(), dir, O_RDONLY | O_DIRECTORY, &dfd, &e)) {
      if (Missing(e.errnum)) return true;
      *err = e;
      return false;
    }
    std::vector<std::string> names;
    if (!ListDirectory(dfd.get(), Display(dir), &names, err)) return false;
    for (const auto& n : names)
      if (::fnmatch(leaf.c_str(), n.c_str(), FNM_PERIOD) == 0)
        paths.push_back((dir == "/" ? "" : dir) + "/" + n);
    std::sort(paths.begin(), paths.end());
  }

  for (const auto& p : paths) {
    UniqueFd fd;
    Error e;
    if (!OpenInRoot(root_.get(), p, O_PATH, &fd, &e)) {
      if (Missing(e.errnum)) continue;  // absent, or a dangling link
      *err = e;
      return false;
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Fail(err, "cannot stat host path", p, errno);
    HostMatch m;
    m.path = p;
    if (resolve_paths_) m.resolved = ResolvedOf(fd.get(), p);
    SetStatFacts(st, &m);
    opened_[p] = std::move(fd);
    out->push_back(std::move(m));
  }
  return true;
}

}  // namespace ocid
