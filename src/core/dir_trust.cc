#include "dir_trust.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <deque>

namespace ocid {
namespace {

bool TrustedOwner(uid_t uid) { return uid == 0 || uid == ::geteuid(); }

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string Join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += "/" + n;
  return s.empty() ? "/" : s;
}

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

constexpr int kDirFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kMaxLinks = 40;  // as the kernel's MAXSYMLINKS

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

DirStep DirectoryStep(DirStep::Kind kind, const std::string& path, const struct stat& st) {
  DirStep s;
  s.kind = kind;
  s.path = path;
  s.uid = st.st_uid;
  s.mode = st.st_mode & 07777u;
  return s;
}

// `name` in `parent` is a directory just made by mkdirat: give it 0755
// whatever the umask.
bool SetNewDirMode(int parent, const std::string& name, const std::string& shown, Error* err) {
  UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() || ::fchmod(fd.get(), 0755) != 0)
    return Fail(err, "cannot set the mode of directory", shown, errno);
  return true;
}

// The directory `fd` (named by `names`) and each directory above it, up to
// the root (`top`), walked by "..": its real ancestors.
bool AddChain(int fd, const struct stat& top, std::vector<std::string> names,
              std::vector<DirStep>* steps, Error* err) {
  UniqueFd cur(::openat(fd, ".", kDirFlags));
  struct stat here;
  if (!cur.valid() || ::fstat(cur.get(), &here) != 0)
    return Fail(err, "cannot stat", Join(names), errno);
  steps->push_back(DirectoryStep(DirStep::Kind::kDir, Join(names), here));
  while (!SameFile(here, top)) {
    UniqueFd up(::openat(cur.get(), "..", kDirFlags));
    struct stat above;
    if (!up.valid() || ::fstat(up.get(), &above) != 0)
      return Fail(err, "cannot stat the parent of", Join(names), errno);
    if (SameFile(here, above)) break;  // "/" of the file system: nothing is above
    if (!names.empty()) names.pop_back();
    steps->push_back(DirectoryStep(DirStep::Kind::kAncestor, Join(names), above));
    cur = std::move(up);
    here = above;
  }
  return true;
}

}  // namespace

std::string UnsafeDirReason(const std::string& dir, uid_t uid, mode_t mode, bool ancestor) {
  std::string what;
  bool sticky_ok = ancestor && (mode & S_ISVTX);
  if (!TrustedOwner(uid))
    what = "belongs to another user";
  else if ((mode & S_IWOTH) && !sticky_ok)
    what = ancestor ? "is writable by others and not sticky" : "is writable by others";
  else if ((mode & S_IWGRP) && !sticky_ok)
    what = ancestor ? "is writable by its group and not sticky" : "is writable by its group";
  if (what.empty()) return "";
  return "directory " + dir + " " + what + " (owner " + std::to_string(uid) + ", mode " +
         Octal(mode) + ")";
}

std::string UnsafeFileReason(const std::string& path, uid_t uid, mode_t mode) {
  std::string what;
  if (!TrustedOwner(uid))
    what = "belongs to another user";
  else if (mode & S_IWOTH)
    what = "is writable by others";
  else if (mode & S_IWGRP)
    what = "is writable by its group";
  if (what.empty()) return "";
  return path + " " + what + " (owner " + std::to_string(uid) + ", mode " + Octal(mode) + ")";
}

std::string UnsafeStepReason(const DirStep& step) {
  switch (step.kind) {
    case DirStep::Kind::kDir: return UnsafeDirReason(step.path, step.uid, step.mode, false);
    case DirStep::Kind::kAncestor: return UnsafeDirReason(step.path, step.uid, step.mode, true);
    case DirStep::Kind::kLink: break;
  }
  std::string why = UnsafeDirReason(step.parent, step.parent_uid, step.parent_mode, true);
  if (why.empty() && !TrustedOwner(step.uid))
    why = "it belongs to another user (owner " + std::to_string(step.uid) + ")";
  return why.empty() ? "" : "not following symbolic link " + step.path + ": " + why;
}

std::string UnsafeStepsReason(const std::vector<DirStep>& steps) {
  for (const DirStep& s : steps) {
    std::string why = UnsafeStepReason(s);
    if (!why.empty()) return why;
  }
  return "";
}

bool WalkDir(int root, const std::string& dir, bool create, UniqueFd* out,
             std::vector<DirStep>* steps, Error* err) {
  out->reset();
  steps->clear();
  struct stat top;
  if (::fstat(root, &top) != 0) return Fail(err, "cannot stat", "/", errno);
  std::deque<std::string> rest;
  for (auto& c : Components(dir)) rest.push_back(std::move(c));
  UniqueFd cur(::openat(root, ".", kDirFlags));
  if (!cur.valid()) return Fail(err, "cannot open directory", "/", errno);
  std::vector<std::string> names;  // where cur is, below the root
  int links = 0;
  while (!rest.empty()) {
    std::string c = std::move(rest.front());
    rest.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      struct stat here;
      if (::fstat(cur.get(), &here) != 0) return Fail(err, "cannot stat", Join(names), errno);
      if (SameFile(here, top)) continue;  // never above the root
      UniqueFd up(::openat(cur.get(), "..", kDirFlags));
      if (!up.valid())
        return Fail(err, "cannot open directory", Join(names) + (names.empty() ? ".." : "/.."),
                    errno);
      cur = std::move(up);
      if (!names.empty()) names.pop_back();
      continue;
    }
    const std::string shown = Join(names) + (names.empty() ? "" : "/") + c;
    // The directory a name is looked up in decides where the path leads:
    // one others could change (another user's, or writable and not
    // sticky) could send the same path elsewhere later, whether or not it
    // ends up above the directory reached (a link may lead away from it).
    // It is held to the ancestor rule (for a link, as the directory holding
    // it, below), and the walk stops there: nothing is made in it and
    // nothing below it is followed.
    auto refused_here = [&]() -> int {  // 1 refused, 0 not, -1 error
      struct stat passed;
      if (::fstat(cur.get(), &passed) != 0) return -1;
      DirStep step = DirectoryStep(DirStep::Kind::kAncestor, Join(names), passed);
      if (UnsafeStepReason(step).empty()) return 0;
      steps->push_back(std::move(step));
      return 1;
    };
    UniqueFd next(::openat(cur.get(), c.c_str(), kDirFlags));
    if (!next.valid() && errno == ENOENT && create) {
      if (int r = refused_here(); r != 0) {
        if (r < 0) return Fail(err, "cannot stat", Join(names), errno);
        return true;  // refused: *out stays invalid
      }
      if (::mkdirat(cur.get(), c.c_str(), 0755) == 0) {
        if (!SetNewDirMode(cur.get(), c, shown, err)) return false;
      } else if (errno != EEXIST) {
        return Fail(err, "cannot create directory", shown, errno);
      }
      next.reset(::openat(cur.get(), c.c_str(), kDirFlags));
    }
    if (next.valid()) {
      if (int r = refused_here(); r != 0) {
        if (r < 0) return Fail(err, "cannot stat", Join(names), errno);
        return true;  // refused: *out stays invalid
      }
      cur = std::move(next);
      names.push_back(std::move(c));
      continue;
    }
    int e = errno;
    struct stat lst;
    if ((e != ENOTDIR && e != ELOOP) ||
        ::fstatat(cur.get(), c.c_str(), &lst, AT_SYMLINK_NOFOLLOW) != 0)
      return Fail(err, "cannot open directory", shown, e);
    if (!S_ISLNK(lst.st_mode)) return Fail(err, "cannot open directory", shown, ENOTDIR);
    if (++links > kMaxLinks) return Fail(err, "cannot open directory", dir, ELOOP);
    struct stat in;
    if (::fstat(cur.get(), &in) != 0) return Fail(err, "cannot stat", Join(names), errno);
    DirStep link;
    link.kind = DirStep::Kind::kLink;
    link.path = shown;
    link.uid = lst.st_uid;
    link.parent = Join(names);
    link.parent_uid = in.st_uid;
    link.parent_mode = in.st_mode & 07777u;
    steps->push_back(std::move(link));
    if (!UnsafeStepReason(steps->back()).empty()) return true;  // not followed
    char buf[PATH_MAX];
    ssize_t n = ::readlinkat(cur.get(), c.c_str(), buf, sizeof buf);
    if (n < 0 || static_cast<size_t>(n) >= sizeof buf)
      return Fail(err, "cannot read link", shown, n < 0 ? errno : ENAMETOOLONG);
    std::string target(buf, static_cast<size_t>(n));
    auto parts = Components(target);
    rest.insert(rest.begin(), parts.begin(), parts.end());
    if (!target.empty() && target[0] == '/') {
      cur.reset(::openat(root, ".", kDirFlags));
      if (!cur.valid()) return Fail(err, "cannot open directory", "/", errno);
      names.clear();
    }
  }
  if (!AddChain(cur.get(), top, names, steps, err)) return false;
  *out = std::move(cur);
  return true;
}

}  // namespace ocid
