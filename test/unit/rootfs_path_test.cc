// The rootfs resolver against hostile trees: every case has a marker tree
// outside the rootfs that must stay untouched, and asserts where the
// resolution really landed.
#include "rootfs_path.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "kernel_features.h"
#include "legacy_kernel.h"
#include "syscalls.h"
#include "test_tree.h"

namespace ocid {
namespace {

using test::TempTree;

struct Hostile {
  TempTree outside;  // stands for the host: must never change
  TempTree rootfs;   // the image
  UniqueFd root;
  std::string before;
  Hostile() {
    outside.File("marker/file", "host data");
    outside.Dir("marker/usr/lib64");
    rootfs.Dir("etc");
    rootfs.Dir("usr");
    root.reset(::open(rootfs.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    before = outside.Fingerprint();
  }
  bool OutsideUnchanged() const { return outside.Fingerprint() == before; }
};

// Device and inode of an fd, to compare with a path we expect it to be.
bool SameFile(int fd, const std::string& path) {
  struct stat a, b;
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// The resolvers under test: OpenInRoot (openat2 on this kernel) and the
// userspace walk it falls back to. Every OpenInRoot case runs with both.
using Resolver = bool (*)(int, const std::string&, int, UniqueFd*, Error*);
#define EACH_RESOLVER(r)                 \
  Resolver r = OpenInRoot;               \
  SUBCASE("openat2") { r = OpenInRoot; } \
  SUBCASE("userspace walk") { r = OpenInRootWalk; }

// What one resolution gave: the file reached, or the errno.
struct Outcome {
  int err = 0;
  uint64_t dev = 0, ino = 0;
  bool operator==(const Outcome& o) const { return err == o.err && dev == o.dev && ino == o.ino; }
  bool operator!=(const Outcome& o) const { return !(*this == o); }
};

doctest::String toString(const Outcome& o) {
  if (o.err) return ("errno " + std::to_string(o.err) + " (" + strerror(o.err) + ")").c_str();
  return ("inode " + std::to_string(o.dev) + ":" + std::to_string(o.ino)).c_str();
}

Outcome OfFd(int fd, int err) {
  Outcome o;
  struct stat st;
  if (fd < 0) {
    o.err = err;
  } else if (::fstat(fd, &st) != 0) {
    o.err = -1;
  } else {
    o.dev = st.st_dev;
    o.ino = st.st_ino;
  }
  if (fd >= 0) ::close(fd);
  return o;
}

// openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS itself, with `path` as is
// (and RESOLVE_NO_SYMLINKS for Symlinks::kRefused).
Outcome ByOpenat2(int root, const std::string& path, int flags,
                  Symlinks symlinks = Symlinks::kInRoot) {
  open_how how{};
  how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  if (symlinks == Symlinks::kRefused) how.resolve |= RESOLVE_NO_SYMLINKS;
  int fd;
  do fd = sys::openat2(root, path.c_str(), &how);
  while (fd < 0 && errno == EAGAIN);
  return OfFd(fd, errno);
}

Outcome ByWalk(int root, const std::string& path, int flags,
               Symlinks symlinks = Symlinks::kInRoot) {
  UniqueFd fd;
  Error err;
  if (!OpenInRootWalk(root, path, flags, symlinks, &fd, &err)) return OfFd(-1, err.errnum);
  return OfFd(fd.release(), 0);
}

// Every inode below `dir` (and `dir` itself), symlinks not followed.
std::set<std::pair<uint64_t, uint64_t>> InodesUnder(const std::string& dir) {
  std::set<std::pair<uint64_t, uint64_t>> out;
  struct stat st;
  if (::lstat(dir.c_str(), &st) == 0) out.insert({st.st_dev, st.st_ino});
  for (auto it = std::filesystem::recursive_directory_iterator(dir);
       it != std::filesystem::recursive_directory_iterator(); ++it)
    if (::lstat(it->path().c_str(), &st) == 0) out.insert({st.st_dev, st.st_ino});
  return out;
}

// The flag sets the hook resolves with, plus the ones the walk handles
// separately (no follow of the last component, a real open). O_NONBLOCK:
// a FIFO in the tree must not hang either resolver.
const int kFlagSets[] = {O_PATH,
                         O_PATH | O_NOFOLLOW,
                         O_PATH | O_DIRECTORY,
                         O_RDONLY | O_DIRECTORY,
                         O_RDONLY | O_NONBLOCK,
                         O_PATH | O_NOFOLLOW | O_DIRECTORY};

// Both resolvers give the same outcome for `path` under every flag set,
// with symlinks followed in the root and with symlinks refused, and it is
// never a file of `outside`.
void CheckAgree(int root, const std::string& path,
                const std::set<std::pair<uint64_t, uint64_t>>& outside = {}) {
  for (Symlinks symlinks : {Symlinks::kInRoot, Symlinks::kRefused})
    for (int flags : kFlagSets) {
      CAPTURE(path);
      CAPTURE(flags);
      CAPTURE(symlinks == Symlinks::kRefused);
      Outcome kernel = ByOpenat2(root, path, flags, symlinks);
      Outcome walk = ByWalk(root, path, flags, symlinks);
      CHECK(walk == kernel);
      CHECK(outside.count({walk.dev, walk.ino}) == 0);
    }
}

TEST_CASE("SplitContainerPath rejects relative paths, dot components and /") {
  std::vector<std::string> parts;
  Error err;
  CHECK(SplitContainerPath("/usr//lib64/", &parts, &err));
  CHECK(parts == std::vector<std::string>{"usr", "lib64"});
  CHECK_FALSE(SplitContainerPath("usr/lib", &parts, &err));
  CHECK_FALSE(SplitContainerPath("/usr/../etc", &parts, &err));
  CHECK(err.Line().find("/usr/../etc") != std::string::npos);
  CHECK_FALSE(SplitContainerPath("/./etc", &parts, &err));
  CHECK_FALSE(SplitContainerPath("/", &parts, &err));
}

TEST_CASE("OpenInRoot: .. chains and absolute paths stay inside the root") {
  EACH_RESOLVER(resolve);
  Hostile h;
  h.rootfs.File("etc/passwd", "inside");
  UniqueFd fd;
  Error err;
  REQUIRE(resolve(h.root.get(), "/../../../../etc/passwd", O_RDONLY, &fd, &err));
  CHECK(SameFile(fd.get(), h.rootfs / "etc/passwd"));
  CheckAgree(h.root.get(), "/../../../../etc/passwd");
}

TEST_CASE("OpenInRoot: an absolute symlink is resolved relative to the root") {
  EACH_RESOLVER(resolve);
  Hostile h;
  h.rootfs.Link("usr/lib64", h.outside / "marker/usr/lib64");  // host path, absolute
  UniqueFd fd;
  Error err;
  // The host directory exists, but inside the rootfs that path does not.
  CHECK_FALSE(resolve(h.root.get(), "/usr/lib64", O_PATH | O_DIRECTORY, &fd, &err));
  CHECK(err.errnum == ENOENT);
  CheckAgree(h.root.get(), "/usr/lib64");
  // Once the same path exists inside the rootfs, that is what it resolves to.
  h.rootfs.Dir(h.outside.path().substr(1) + "/marker/usr/lib64");
  REQUIRE(resolve(h.root.get(), "/usr/lib64", O_PATH | O_DIRECTORY, &fd, &err));
  CHECK(SameFile(fd.get(), h.rootfs / (h.outside.path().substr(1) + "/marker/usr/lib64")));
  CheckAgree(h.root.get(), "/usr/lib64", InodesUnder(h.outside.path()));
  CHECK(h.OutsideUnchanged());
}

TEST_CASE("OpenInRoot: a relative symlink with .. cannot climb out") {
  EACH_RESOLVER(resolve);
  Hostile h;
  h.rootfs.Link("usr/bin", "../../../../../../../" + h.outside.path().substr(1) + "/marker");
  h.rootfs.Dir(h.outside.path().substr(1) + "/marker");
  UniqueFd fd;
  Error err;
  REQUIRE(resolve(h.root.get(), "/usr/bin", O_PATH | O_DIRECTORY, &fd, &err));
  CHECK(SameFile(fd.get(), h.rootfs / (h.outside.path().substr(1) + "/marker")));
  CHECK_FALSE(SameFile(fd.get(), h.outside / "marker"));
  CheckAgree(h.root.get(), "/usr/bin", InodesUnder(h.outside.path()));
}

TEST_CASE("OpenInRoot: symlink loops fail with ELOOP") {
  EACH_RESOLVER(resolve);
  Hostile h;
  h.rootfs.Link("a", "b");
  h.rootfs.Link("b", "a");
  UniqueFd fd;
  Error err;
  CHECK_FALSE(resolve(h.root.get(), "/a/x", O_PATH, &fd, &err));
  CHECK(err.errnum == ELOOP);
  CheckAgree(h.root.get(), "/a/x");
  CheckAgree(h.root.get(), "/a");
}

TEST_CASE("OpenInRoot with Symlinks::kRefused: a symlink anywhere on the way is ELOOP") {
  Hostile h;
  h.rootfs.Dir("usr/lib/x86_64-linux-gnu");
  h.rootfs.Link("lib", "usr/lib");                             // merged /usr, relative
  h.rootfs.Link("lib64", "/usr/lib");                          // absolute, inside the root
  h.rootfs.Link("usr/lib64", h.outside / "marker/usr/lib64");  // to the host's tree
  h.rootfs.File("usr/lib/x86_64-linux-gnu/libc.so.6");
  h.rootfs.Link("usr/lib/x86_64-linux-gnu/libc.so.link", "libc.so.6");
  for (auto walk : {false, true}) {
    CAPTURE(walk);
    auto open = [&](const std::string& p, int flags, UniqueFd* fd, Error* err) {
      return walk ? OpenInRootWalk(h.root.get(), p, flags, Symlinks::kRefused, fd, err)
                  : OpenInRoot(h.root.get(), p, flags, Symlinks::kRefused, fd, err);
    };
    UniqueFd fd;
    Error err;
    REQUIRE(open("/usr/lib/x86_64-linux-gnu", O_PATH | O_DIRECTORY, &fd, &err));
    CHECK(SameFile(fd.get(), h.rootfs / "usr/lib/x86_64-linux-gnu"));
    for (const char* p : {"/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                          "/usr/lib/x86_64-linux-gnu/libc.so.link"}) {
      CAPTURE(p);
      CHECK_FALSE(open(p, O_PATH, &fd, &err));
      CHECK(err.errnum == ELOOP);
    }
    // The link itself, as openat2 gives it with O_PATH | O_NOFOLLOW.
    REQUIRE(open("/lib", O_PATH | O_NOFOLLOW, &fd, &err));
    struct stat st;
    CHECK((::fstat(fd.get(), &st) == 0 && S_ISLNK(st.st_mode)));
  }
  for (const char* p : {"/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib"})
    CheckAgree(h.root.get(), p, InodesUnder(h.outside.path()));
  CHECK(h.OutsideUnchanged());
}

TEST_CASE("PrepareMountpoint creates missing parents and an empty file inside the root") {
  Hostile h;
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  REQUIRE(PrepareMountpoint(h.root.get(), "/usr/lib64/libonload.so", MountpointType::kFile, false,
                            &mp, &created, &err));
  CHECK(SameFile(mp.get(), h.rootfs / "usr/lib64/libonload.so"));
  REQUIRE(created.size() == 2);
  CHECK(created[0].path == "/usr/lib64");
  CHECK(created[0].is_dir);
  CHECK(created[1].path == "/usr/lib64/libonload.so");
  CHECK_FALSE(created[1].is_dir);
  CHECK(h.rootfs.Read("usr/lib64/libonload.so").empty());
}

TEST_CASE("PrepareMountpoint follows a symlinked parent only inside the root") {
  Hostile h;
  h.rootfs.Dir("usr/lib");
  h.rootfs.Link("usr/lib64", "/usr/lib");  // a common, harmless layout
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  REQUIRE(PrepareMountpoint(h.root.get(), "/usr/lib64/libonload.so", MountpointType::kFile, false,
                            &mp, &created, &err));
  CHECK(h.rootfs.Exists("usr/lib/libonload.so"));
  CHECK(h.OutsideUnchanged());
}

TEST_CASE("PrepareMountpoint: a parent that is an absolute symlink to a host dir fails closed") {
  Hostile h;
  h.rootfs.Link("usr/lib64", h.outside / "marker/usr/lib64");
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  CHECK_FALSE(PrepareMountpoint(h.root.get(), "/usr/lib64/libonload.so", MountpointType::kFile,
                                false, &mp, &created, &err));
  CHECK(err.Line().find("/usr/lib64") != std::string::npos);
  CHECK(h.OutsideUnchanged());
  CHECK_FALSE(h.outside.Exists("marker/usr/lib64/libonload.so"));
}

TEST_CASE("PrepareMountpoint refuses a symlink as the last component") {
  Hostile h;
  SUBCASE("absolute, to a host file") {
    h.rootfs.Link("etc/ld.so.preload", h.outside / "marker/file");
  }
  SUBCASE("relative, inside the root") {
    h.rootfs.File("etc/real", "x");
    h.rootfs.Link("etc/ld.so.preload", "real");
  }
  SUBCASE("dangling") { h.rootfs.Link("etc/ld.so.preload", "/nonexistent"); }
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  CHECK_FALSE(PrepareMountpoint(h.root.get(), "/etc/ld.so.preload", MountpointType::kFile, false,
                                &mp, &created, &err));
  CHECK(err.Line().find("symlink") != std::string::npos);
  CHECK(created.empty());
  CHECK(h.outside.Read("marker/file") == "host data");
  CHECK(h.OutsideUnchanged());
}

TEST_CASE("PrepareMountpoint refuses the wrong type of object") {
  Hostile h;
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  SUBCASE("a directory where a file is needed") {
    h.rootfs.Dir("usr/bin/onload");
    CHECK_FALSE(PrepareMountpoint(h.root.get(), "/usr/bin/onload", MountpointType::kFile, false,
                                  &mp, &created, &err));
    CHECK(err.Line().find("directory where a file") != std::string::npos);
  }
  SUBCASE("a file where a directory is needed") {
    h.rootfs.File("usr/libexec/onload/profiles", "x");
    CHECK_FALSE(PrepareMountpoint(h.root.get(), "/usr/libexec/onload/profiles",
                                  MountpointType::kDirectory, false, &mp, &created, &err));
    CHECK(err.Line().find("regular file where a directory") != std::string::npos);
  }
  SUBCASE("a FIFO where a file is needed (and no hang opening it)") {
    h.rootfs.Dir("usr/bin");
    REQUIRE(::mkfifo((h.rootfs / "usr/bin/onload").c_str(), 0644) == 0);
    CHECK_FALSE(PrepareMountpoint(h.root.get(), "/usr/bin/onload", MountpointType::kFile, false,
                                  &mp, &created, &err));
    CHECK(err.Line().find("FIFO") != std::string::npos);
  }
  SUBCASE("a file in place of a parent directory") {
    h.rootfs.File("usr/lib64", "x");
    CHECK_FALSE(PrepareMountpoint(h.root.get(), "/usr/lib64/libonload.so", MountpointType::kFile,
                                  false, &mp, &created, &err));
    CHECK(err.errnum == ENOTDIR);
  }
  CHECK(h.OutsideUnchanged());
}

TEST_CASE("PrepareMountpoint accepts an existing file and directory as they are") {
  Hostile h;
  h.rootfs.File("usr/bin/onload", "image's own");
  h.rootfs.Dir("usr/libexec/onload/profiles");
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  REQUIRE(PrepareMountpoint(h.root.get(), "/usr/bin/onload", MountpointType::kFile, false, &mp,
                            &created, &err));
  REQUIRE(PrepareMountpoint(h.root.get(), "/usr/libexec/onload/profiles",
                            MountpointType::kDirectory, false, &mp, &created, &err));
  CHECK(created.empty());
  CHECK(h.rootfs.Read("usr/bin/onload") == "image's own");
}

TEST_CASE("PrepareMountpoint accepts a device node only for device mounts") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: mknod of a device node needs root");
    return;
  }
  Hostile h;
  h.rootfs.Dir("dev");
  REQUIRE(::mknod((h.rootfs / "dev/onload").c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0);
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  CHECK_FALSE(PrepareMountpoint(h.root.get(), "/dev/onload", MountpointType::kFile, false, &mp,
                                &created, &err));
  CHECK(PrepareMountpoint(h.root.get(), "/dev/onload", MountpointType::kFile, true, &mp, &created,
                          &err));
}

TEST_CASE("PrepareMountpoint takes an entry another hook created first") {
  // Containers sharing one rootfs start at once: the name appears between
  // our lookup and our create. Simulated by creating it before the call
  // with the same type; the result must be that entry, not an error, and it
  // is not reported as ours.
  Hostile h;
  h.rootfs.File("usr/bin/onload", "");
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  REQUIRE(PrepareMountpoint(h.root.get(), "/usr/bin/onload", MountpointType::kFile, false, &mp,
                            &created, &err));
  CHECK(created.empty());
}

// ---- The userspace resolver (kernels without openat2) against openat2 ----

// A hostile tree with every kind of escape, loop and odd name, and the
// paths to resolve in it.
struct Maze {
  Hostile h;
  std::string out_rel;  // the outside tree's path, without the leading "/"
  std::vector<std::string> paths;
  Maze() {
    out_rel = h.outside.path().substr(1);
    auto& r = h.rootfs;
    h.outside.Dir("mirrored/dir");
    h.outside.File("mirrored/file", "host");
    r.File("etc/passwd", "inside");
    r.File("usr/lib/libx.so", "x");
    r.Link("usr/lib64", "/usr/lib");                                      // merged-usr style
    r.Link("usr/bin", "../../../../../../../../" + out_rel + "/marker");  // relative escape
    r.Link("usr/sbin", h.outside / "marker");                             // absolute escape
    r.Dir(out_rel + "/mirrored/dir");                                     // exists inside too
    r.File(out_rel + "/mirrored/file", "inside copy");
    r.Link("opt/m", h.outside / "mirrored");                           // absolute, mirrored
    r.Link("opt/mrel", "../../../../../../" + out_rel + "/mirrored");  // relative, mirrored
    r.Link("a", "b");
    r.Link("b", "a");
    r.Link("s", "s/x");
    r.Link("dang", "/nonexistent");
    r.Link("dot", ".");
    r.Link("dotdot", "..");
    r.Link("root", "/");
    r.Link("up", "../../../../..");
    r.Link("fl", "etc/passwd/");
    r.Link("fl2", "etc/passwd");
    r.Link("dirslash", "usr/lib/");
    r.Link("fdlink", "/proc/self/fd/0");  // only text: no procfs inside this root
    r.Link("procroot", "/proc/self/root" + h.outside.path());
    REQUIRE(::mkfifo((r / "fifo").c_str(), 0644) == 0);
    // A chain: chain/lK follows 46-K links to reach etc/passwd.
    for (int i = 0; i < 45; ++i) r.Link("chain/l" + std::to_string(i), "l" + std::to_string(i + 1));
    r.Link("chain/l45", "../etc/passwd");
    // Escapes at every depth: relative ones with just enough ".." to
    // reach the real "/" from the rootfs, and more; absolute ones.
    std::string deep = "deep";
    for (int d = 0; d < 6; ++d) {
      r.Dir(deep);
      int to_real_root =
          d + 1 + static_cast<int>(std::count(h.rootfs.path().begin(), h.rootfs.path().end(), '/'));
      std::string up;
      for (int i = 0; i < to_real_root; ++i) up += "../";
      r.Link(deep + "/rel", up + out_rel + "/marker");
      r.Link(deep + "/relmore", up + "../../../" + out_rel + "/mirrored");
      r.Link(deep + "/abs", h.outside / "marker");
      r.Link(deep + "/absm", h.outside / "mirrored");
      for (const char* leaf : {"rel", "rel/file", "relmore", "relmore/file", "abs", "abs/file",
                               "absm/file", "absm/dir/..", "absm/dir/../../../etc/passwd"})
        paths.push_back(deep + "/" + leaf);
      paths.push_back(deep + "/" + up + out_rel + "/marker/file");  // literal ".."
      paths.push_back("/" + deep + "/" + up + out_rel + "/mirrored/file");
      deep += "/d" + std::to_string(d);
    }
    for (const char* p : {"",
                          ".",
                          "/",
                          "..",
                          "/..",
                          "../../..",
                          "/../../etc/passwd",
                          "etc",
                          "etc/",
                          "etc/.",
                          "etc/..",
                          "etc/passwd",
                          "etc/passwd/",
                          "etc/passwd/.",
                          "etc/passwd/..",
                          "etc//passwd",
                          "//etc///passwd",
                          "usr/lib64",
                          "usr/lib64/",
                          "usr/lib64/libx.so",
                          "usr/lib64/..",
                          "usr/lib64/../lib64/libx.so",
                          "usr/bin",
                          "usr/bin/file",
                          "usr/sbin",
                          "usr/sbin/file",
                          "opt/m",
                          "opt/m/file",
                          "opt/m/dir",
                          "opt/mrel/file",
                          "opt/m/dir/../file",
                          "a",
                          "a/x",
                          "b/",
                          "s",
                          "s/y",
                          "dang",
                          "dang/x",
                          "dot/dot/etc/passwd",
                          "dotdot",
                          "dotdot/dotdot/etc",
                          "root",
                          "root/etc/passwd",
                          "root/..",
                          "up/etc/passwd",
                          "up/..",
                          "fl",
                          "fl2",
                          "fl2/",
                          "dirslash",
                          "dirslash/libx.so",
                          "fdlink",
                          "procroot",
                          "procroot/marker",
                          "fifo",
                          "fifo/",
                          "missing",
                          "missing/x",
                          "etc/missing",
                          "chain/l0",
                          "chain/l4",
                          "chain/l5",
                          "chain/l6",
                          "chain/l7",
                          "chain/l45",
                          "chain/l45/"})
      paths.push_back(p);
    paths.push_back(std::string(300, 'n'));           // name too long
    paths.push_back("etc/" + std::string(255, 'n'));  // longest name
    std::string long_path;
    while (long_path.size() < 4100) long_path += "./";
    paths.push_back(long_path);  // path too long
    paths.push_back(long_path.substr(0, 4094) + "etc/passwd");
    h.before = h.outside.Fingerprint();
  }
};

TEST_CASE("OpenInRootWalk gives openat2's result on every path of a hostile tree") {
  Maze m;
  auto outside = InodesUnder(m.h.outside.path());
  for (const auto& p : m.paths) CheckAgree(m.h.root.get(), p, outside);
  CHECK(m.h.OutsideUnchanged());
}

TEST_CASE("OpenInRootWalk: symlink limits, .. at the root, escapes") {
  Maze m;
  int root = m.h.root.get();
  SUBCASE("39 and 40 links resolve, 41 fail with ELOOP, as in the kernel") {
    // chain/lK follows 46-K links.
    CHECK(ByWalk(root, "chain/l7", O_PATH).err == 0);      // 39
    CHECK(ByWalk(root, "chain/l6", O_PATH).err == 0);      // 40
    CHECK(ByWalk(root, "chain/l5", O_PATH).err == ELOOP);  // 41
    CHECK(ByWalk(root, "chain/l6", O_PATH) == ByOpenat2(root, "chain/l6", O_PATH));
    CHECK(ByWalk(root, "chain/l5", O_PATH) == ByOpenat2(root, "chain/l5", O_PATH));
  }
  SUBCASE(".. at the root stays at the root") {
    Outcome r = ByWalk(root, "/", O_PATH);
    REQUIRE(r.err == 0);
    for (const char* p : {"..", "/..", "../..", "../../../..", "etc/../..", "dotdot", "up"})
      CHECK(ByWalk(root, p, O_PATH) == r);
  }
  SUBCASE("no escape reaches the outside tree, at any depth") {
    auto outside = InodesUnder(m.h.outside.path());
    for (const auto& p : m.paths) {
      CAPTURE(p);
      Outcome w = ByWalk(root, p, O_PATH);
      CHECK(outside.count({w.dev, w.ino}) == 0);
    }
    // The mirrored copies are what the escapes land on.
    UniqueFd fd;
    Error err;
    REQUIRE(OpenInRootWalk(root, "deep/d0/d1/d2/absm/file", O_RDONLY, &fd, &err));
    CHECK(SameFile(fd.get(), m.h.rootfs / (m.out_rel + "/mirrored/file")));
    REQUIRE(OpenInRootWalk(root, "deep/d0/d1/d2/d3/relmore/file", O_RDONLY, &fd, &err));
    CHECK(SameFile(fd.get(), m.h.rootfs / (m.out_rel + "/mirrored/file")));
    CHECK_FALSE(OpenInRootWalk(root, "usr/sbin/file", O_RDONLY, &fd, &err));
    CHECK(err.errnum == ENOENT);
  }
  SUBCASE("errno as openat2 sets it: ENOENT, ENOTDIR, ELOOP") {
    CHECK(ByWalk(root, "missing/x", O_PATH).err == ENOENT);
    CHECK(ByWalk(root, "etc/passwd/x", O_PATH).err == ENOTDIR);
    CHECK(ByWalk(root, "fl", O_PATH).err == ENOTDIR);
    CHECK(ByWalk(root, "a", O_PATH).err == ELOOP);
    CHECK(ByWalk(root, "etc/passwd", O_PATH | O_DIRECTORY).err == ENOTDIR);
  }
  CHECK(m.h.OutsideUnchanged());
}

TEST_CASE("OpenInRootWalk refuses procfs magic links but follows procfs's plain ones") {
  // A symlink to /proc/self/fd/N inside an image is only text (Maze's
  // "fdlink"); crossing a real procfs magic link must be refused. Here the
  // root is /proc itself: "self" and "mounts" are ordinary symlinks, "fd/N",
  // "cwd", "root", "exe" and "ns/*" are magic.
  UniqueFd proc(::open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(proc.valid());
  TempTree outside;
  outside.File("dir/file", "host");
  UniqueFd held(::open(outside.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::string fd = std::to_string(held.get());
  for (const std::string& p : std::vector<std::string>{
           "self/fd/" + fd, "self/fd/" + fd + "/dir/file", "thread-self/fd/" + fd + "/dir",
           "self/cwd", "self/root/etc", "self/exe", "self/ns/mnt", "self/task", "self", "self/",
           "thread-self", "self/status", "mounts", "self/fd", "1/root"}) {
    CAPTURE(p);
    for (int flags : {O_PATH, O_RDONLY | O_NONBLOCK, O_PATH | O_DIRECTORY}) {
      CAPTURE(flags);
      Outcome kernel = ByOpenat2(proc.get(), p, flags);
      CHECK(ByWalk(proc.get(), p, flags) == kernel);
    }
  }
  CHECK(ByWalk(proc.get(), "self/fd/" + fd, O_PATH).err == ELOOP);
  CHECK(ByWalk(proc.get(), "self/fd/" + fd + "/dir/file", O_RDONLY).err == ELOOP);
  CHECK(ByWalk(proc.get(), "self/root/etc", O_PATH).err == ELOOP);
  CHECK(ByWalk(proc.get(), "self/status", O_RDONLY).err == 0);
  // The link itself, not followed, is what O_NOFOLLOW asks for.
  CHECK(ByWalk(proc.get(), "self/fd/" + fd, O_PATH | O_NOFOLLOW).err == 0);
  // From the real "/": /proc/self/root is magic on the way.
  UniqueFd slash(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  CHECK(ByWalk(slash.get(), "proc/self/root" + outside.path(), O_PATH).err == ELOOP);
  CHECK(ByWalk(slash.get(), "proc/self/root" + outside.path(), O_PATH) ==
        ByOpenat2(slash.get(), "proc/self/root" + outside.path(), O_PATH));
}

TEST_CASE("OpenInRootWalk refuses a magic link inside a rootfs with its own /proc") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: mounting procfs inside a rootfs needs root");
    return;
  }
  Maze m;
  m.h.rootfs.Dir("proc");
  m.h.rootfs.Link("usr/lib32", "/proc/self/root" + m.h.outside.path() + "/marker");
  m.h.rootfs.Link("usr/libx", "/proc/self/fd/0");
  std::string rootfs = m.h.rootfs.path();
  std::set<std::pair<uint64_t, uint64_t>> outside = InodesUnder(m.h.outside.path());
  // In a child with its own mount namespace: procfs mounted at rootfs/proc.
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("proc", (rootfs + "/proc").c_str(), "proc", 0, nullptr) != 0)
      ::_exit(100);
    // Opened in this namespace: an fd from before unshare would still be
    // on the old namespace's mount, which has no procfs below it.
    int root = ::open(rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) ::_exit(101);
    int i = 0;
    for (const char* p : {"usr/lib32", "usr/lib32/file", "usr/libx", "proc/self/root",
                          "proc/self/cwd/etc", "proc/1/root/etc", "proc/self/status", "proc/self",
                          "proc/mounts", "fdlink", "procroot/marker"}) {
      ++i;
      for (int flags : kFlagSets) {
        Outcome w = ByWalk(root, p, flags);
        if (w != ByOpenat2(root, p, flags)) ::_exit(i);
        if (outside.count({w.dev, w.ino})) ::_exit(50 + i);
      }
    }
    if (ByWalk(root, "usr/lib32/file", O_PATH).err != ELOOP) ::_exit(90);
    if (ByWalk(root, "proc/self/status", O_RDONLY).err != 0) ::_exit(91);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(m.h.OutsideUnchanged());
}

TEST_CASE("without openat2 (seccomp ENOSYS), OpenInRoot takes the walk and refuses escapes") {
  Maze m;
  int root = m.h.root.get();
  // What openat2 gives, computed here, where it exists.
  std::vector<Outcome> expected;
  for (const auto& p : m.paths) expected.push_back(ByOpenat2(root, p.empty() ? "." : p, O_PATH));
  auto outside = InodesUnder(m.h.outside.path());
  std::string before = m.h.outside.Fingerprint();
  REQUIRE_FALSE(kernel::Openat2Missing());
  int rc = test::InLegacyKernelChild([&] {
    // The filter is real: openat2 is gone.
    open_how how{};
    how.flags = O_PATH;
    if (sys::openat2(root, ".", &how) >= 0 || errno != ENOSYS) return 2;
    UniqueFd fd;
    Error err;
    if (!OpenInRoot(root, "/etc/passwd", O_RDONLY, &fd, &err)) return 3;
    if (!kernel::Openat2Missing()) return 4;  // detected once, remembered
    for (size_t i = 0; i < m.paths.size(); ++i) {
      Outcome o;
      if (OpenInRoot(root, m.paths[i], O_PATH, &fd, &err))
        o = OfFd(fd.release(), 0);
      else
        o.err = err.errnum;
      if (o != expected[i]) return 10;
      if (outside.count({o.dev, o.ino})) return 11;
    }
    // The escapes of the hostile-tree cases, through the public entry points.
    if (OpenInRoot(root, "/usr/sbin/file", O_RDONLY, &fd, &err) || err.errnum != ENOENT) return 20;
    if (!OpenInRoot(root, "/opt/m/file", O_RDONLY, &fd, &err) ||
        !SameFile(fd.get(), m.h.rootfs / (m.out_rel + "/mirrored/file")))
      return 21;
    std::vector<CreatedPath> created;
    // A parent that is an absolute symlink to a host directory fails closed.
    m.h.rootfs.Link("usr/lib32", m.h.outside / "marker/usr/lib64");
    if (PrepareMountpoint(root, "/usr/lib32/libonload.so", MountpointType::kFile, false, &fd,
                          &created, &err))
      return 22;
    // A missing parent is created inside the root; a symlinked final
    // component is refused.
    if (!PrepareMountpoint(root, "/usr/lib64/new/libonload.so", MountpointType::kFile, false, &fd,
                           &created, &err) ||
        !SameFile(fd.get(), m.h.rootfs / "usr/lib/new/libonload.so"))
      return 23;
    if (PrepareMountpoint(root, "/opt/m", MountpointType::kDirectory, false, &fd, &created, &err))
      return 24;
    // The mount id comes from fdinfo here (statx is filtered too).
    UniqueFd parent;
    std::string leaf;
    Mountpoint mp;
    if (!OpenParentCreating(root, "/etc/passwd", &parent, &leaf, &created, &err) ||
        !PrepareMountpointIn(parent.get(), "/etc/passwd", leaf, MountpointType::kFile, false, &mp,
                             &created, &err) ||
        mp.mnt_id == 0)
      return 25;
    return 0;
  });
  CHECK(rc == 0);
  CHECK(m.h.outside.Fingerprint() == before);
  CHECK_FALSE(m.h.outside.Exists("marker/usr/lib64/libonload.so"));
}

}  // namespace
}  // namespace ocid
