// Library directories: the fixed tables, and the probe of an image's
// libc.so.6 (the threat model is in library_dirs.h).
#include "library_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "rootfs_path.h"
#include "unique_fd.h"

namespace ocid {
namespace {

// The Debian multiarch triplet of the architecture this binary runs on:
// libraries built for it are only loadable by programs of the same one.
#if defined(__x86_64__)
constexpr const char* kTriplet = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr const char* kTriplet = "aarch64-linux-gnu";
#else
#pragma message( \
    "library_dirs: no multiarch triplet for this architecture; libraries go to /usr/lib64 only")
constexpr const char* kTriplet = "";
#endif

constexpr const char* kUnseenWhy =
    "one answer for every image: Debian/Ubuntu multiarch and RHEL/Fedora/SUSE lib64";

// Not a directory that is there: ENOENT (missing), ENOTDIR (a file on the
// way), ELOOP (a symlink on the way, refused, or a link loop).
bool NotThere(int errnum) { return errnum == ENOENT || errnum == ENOTDIR || errnum == ELOOP; }

// Whether `dir` (a candidate) holds a libc.so.6 that ends at a regular
// file. False with `err` only for a failure that says nothing about that.
bool HasLibc(int rootfs_fd, const std::string& dir, bool* has, Error* err) {
  *has = false;
  UniqueFd d;
  Error e;
  // The directory itself, with no symlink on the way: /lib -> usr/lib is
  // the same place as a later candidate, a link out of the image's tree is
  // no standard directory, and either way the image only picks among ours.
  if (!OpenInRoot(rootfs_fd, dir, O_PATH | O_DIRECTORY, Symlinks::kRefused, &d, &e)) {
    if (NotThere(e.errnum)) return true;
    return Fail(err, "cannot look for the image's libc.so.6", dir, e.errnum);
  }
  // libc.so.6 may be a link (to libc-2.31.so): followed inside the root
  // only, never a magic link; O_PATH opens nothing (no FIFO wait, no device
  // open), fstat tells what it is.
  const std::string libc = dir + "/libc.so.6";
  UniqueFd f;
  if (!OpenInRoot(rootfs_fd, libc, O_PATH, &f, &e)) {
    if (NotThere(e.errnum)) return true;
    return Fail(err, "cannot look for the image's libc.so.6", libc, e.errnum);
  }
  struct stat st;
  if (::fstat(f.get(), &st) != 0)
    return Fail(err, "cannot look for the image's libc.so.6", libc, errno);
  *has = S_ISREG(st.st_mode);
  return true;
}

}  // namespace

const char* MultiarchTriplet() { return kTriplet; }

std::string JoinDirs(const std::vector<std::string>& dirs) {
  std::string s;
  for (size_t i = 0; i < dirs.size(); ++i)
    s += (i == 0 ? "" : i + 1 == dirs.size() ? " and " : ", ") + dirs[i];
  return s;
}

std::vector<std::string> LibcCandidates() {
  std::vector<std::string> c;
  const std::string t = kTriplet;
  if (!t.empty()) c.insert(c.end(), {"/usr/lib/" + t, "/lib/" + t});
  c.insert(c.end(), {"/usr/lib64", "/lib64", "/usr/lib", "/lib"});
  return c;
}

LibraryDirs UnseenLibraryDirs(const std::string& why) {
  LibraryDirs d;
  const std::string t = kTriplet;
  if (!t.empty()) d.dirs.push_back("/usr/lib/" + t);
  d.dirs.push_back("/usr/lib64");
  d.why = why.empty() ? kUnseenWhy : why;
  return d;
}

LibraryDirs ImageLibraryDirs(const std::string& dir) {
  LibraryDirs d;
  d.dirs = {dir};
  d.why = "the image's libc.so.6 is in " + dir;
  return d;
}

LibraryDirs NoGlibcLibraryDirs() {
  LibraryDirs d = UnseenLibraryDirs("the image has no libc.so.6 in " + JoinDirs(LibcCandidates()) +
                                    "; " + kUnseenWhy);
  d.no_glibc = true;
  return d;
}

bool FindImageLibc(int rootfs_fd, std::string* dir, Error* err) {
  dir->clear();
  for (const auto& c : LibcCandidates()) {
    bool has = false;
    if (!HasLibc(rootfs_fd, c, &has, err)) return false;
    if (has) {
      *dir = c;
      return true;
    }
  }
  return true;
}

LibraryDirs ProbeLibraryDirs(const std::string& rootfs) {
  // The rootfs path is the runtime's (trusted, SECURITY.md 1); only what is
  // below it is the image's, and that is looked at by descriptor.
  UniqueFd root(::open(rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  Error err;
  if (!root.valid()) {
    if (errno == ENOENT)
      return UnseenLibraryDirs("no rootfs at " + rootfs + " to look at; " + kUnseenWhy);
    Fail(&err, "cannot open the rootfs to look for its libc.so.6", rootfs, errno);
  } else {
    std::string dir;
    if (FindImageLibc(root.get(), &dir, &err))
      return dir.empty() ? NoGlibcLibraryDirs() : ImageLibraryDirs(dir);
  }
  LibraryDirs d = UnseenLibraryDirs("the image could not be looked at; " + std::string(kUnseenWhy));
  d.probe_error = err.Line();
  return d;
}

}  // namespace ocid
