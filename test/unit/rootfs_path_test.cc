// The rootfs resolver against hostile trees: every case has a marker tree
// outside the rootfs that must stay untouched, and asserts where the
// resolution really landed.
#include "rootfs_path.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "test_tree.h"

namespace ocid {
namespace {

using test::TempTree;

struct Hostile {
  TempTree outside;   // stands for the host: must never change
  TempTree rootfs;    // the image
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
  Hostile h;
  h.rootfs.File("etc/passwd", "inside");
  UniqueFd fd;
  Error err;
  REQUIRE(OpenInRoot(h.root.get(), "/../../../../etc/passwd", O_RDONLY, &fd, &err));
  CHECK(SameFile(fd.get(), h.rootfs / "etc/passwd"));
}

TEST_CASE("OpenInRoot: an absolute symlink is resolved relative to the root") {
  Hostile h;
  h.rootfs.Link("usr/lib64", h.outside / "marker/usr/lib64");  // host path, absolute
  UniqueFd fd;
  Error err;
  // The host directory exists, but inside the rootfs that path does not.
  CHECK_FALSE(OpenInRoot(h.root.get(), "/usr/lib64", O_PATH | O_DIRECTORY, &fd, &err));
  CHECK(err.errnum == ENOENT);
  // Once the same path exists inside the rootfs, that is what it resolves to.
  h.rootfs.Dir(h.outside.path().substr(1) + "/marker/usr/lib64");
  REQUIRE(OpenInRoot(h.root.get(), "/usr/lib64", O_PATH | O_DIRECTORY, &fd, &err));
  CHECK(SameFile(fd.get(), h.rootfs / (h.outside.path().substr(1) + "/marker/usr/lib64")));
  CHECK(h.OutsideUnchanged());
}

TEST_CASE("OpenInRoot: a relative symlink with .. cannot climb out") {
  Hostile h;
  h.rootfs.Link("usr/bin", "../../../../../../../" + h.outside.path().substr(1) + "/marker");
  h.rootfs.Dir(h.outside.path().substr(1) + "/marker");
  UniqueFd fd;
  Error err;
  REQUIRE(OpenInRoot(h.root.get(), "/usr/bin", O_PATH | O_DIRECTORY, &fd, &err));
  CHECK(SameFile(fd.get(), h.rootfs / (h.outside.path().substr(1) + "/marker")));
  CHECK_FALSE(SameFile(fd.get(), h.outside / "marker"));
}

TEST_CASE("OpenInRoot: symlink loops fail with ELOOP") {
  Hostile h;
  h.rootfs.Link("a", "b");
  h.rootfs.Link("b", "a");
  UniqueFd fd;
  Error err;
  CHECK_FALSE(OpenInRoot(h.root.get(), "/a/x", O_PATH, &fd, &err));
  CHECK(err.errnum == ELOOP);
}

TEST_CASE("PrepareMountpoint creates missing parents and an empty file inside the root") {
  Hostile h;
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  REQUIRE(PrepareMountpoint(h.root.get(), "/usr/lib64/libonload.so", MountpointType::kFile,
                            false, &mp, &created, &err));
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
  REQUIRE(PrepareMountpoint(h.root.get(), "/usr/lib64/libonload.so", MountpointType::kFile,
                            false, &mp, &created, &err));
  CHECK(h.rootfs.Exists("usr/lib/libonload.so"));
  CHECK(h.OutsideUnchanged());
}

TEST_CASE("PrepareMountpoint: a parent that is an absolute symlink to a host dir fails closed") {
  Hostile h;
  h.rootfs.Link("usr/lib64", h.outside / "marker/usr/lib64");
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  CHECK_FALSE(PrepareMountpoint(h.root.get(), "/usr/lib64/libonload.so",
                                MountpointType::kFile, false, &mp, &created, &err));
  CHECK(err.Line().find("/usr/lib64") != std::string::npos);
  CHECK(h.OutsideUnchanged());
  CHECK_FALSE(h.outside.Exists("marker/usr/lib64/libonload.so"));
}

TEST_CASE("PrepareMountpoint refuses a symlink as the last component") {
  Hostile h;
  SUBCASE("absolute, to a host file") { h.rootfs.Link("etc/ld.so.preload", h.outside / "marker/file"); }
  SUBCASE("relative, inside the root") {
    h.rootfs.File("etc/real", "x");
    h.rootfs.Link("etc/ld.so.preload", "real");
  }
  SUBCASE("dangling") { h.rootfs.Link("etc/ld.so.preload", "/nonexistent"); }
  UniqueFd mp;
  std::vector<CreatedPath> created;
  Error err;
  CHECK_FALSE(PrepareMountpoint(h.root.get(), "/etc/ld.so.preload", MountpointType::kFile,
                                false, &mp, &created, &err));
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
    CHECK_FALSE(PrepareMountpoint(h.root.get(), "/usr/bin/onload", MountpointType::kFile,
                                  false, &mp, &created, &err));
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
    CHECK_FALSE(PrepareMountpoint(h.root.get(), "/usr/bin/onload", MountpointType::kFile,
                                  false, &mp, &created, &err));
    CHECK(err.Line().find("FIFO") != std::string::npos);
  }
  SUBCASE("a file in place of a parent directory") {
    h.rootfs.File("usr/lib64", "x");
    CHECK_FALSE(PrepareMountpoint(h.root.get(), "/usr/lib64/libonload.so",
                                  MountpointType::kFile, false, &mp, &created, &err));
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
  REQUIRE(PrepareMountpoint(h.root.get(), "/usr/bin/onload", MountpointType::kFile, false,
                            &mp, &created, &err));
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
  CHECK_FALSE(PrepareMountpoint(h.root.get(), "/dev/onload", MountpointType::kFile, false,
                                &mp, &created, &err));
  CHECK(PrepareMountpoint(h.root.get(), "/dev/onload", MountpointType::kFile, true, &mp,
                          &created, &err));
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


}  // namespace
}  // namespace ocid
