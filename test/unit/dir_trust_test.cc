// dir_trust: the rule over the steps, pure, and the walk on real trees. The
// writer's use of both is tested in engine_setup_test.cc ("atomic write:
// ..."), `check`'s in host_view_test.cc and node_check_test.cc, and that
// the two agree in node_check_test.cc ("check and root's writer: ...").
#include "dir_trust.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "test_tree.h"

using ocid::DirStep;
using ocid::UnsafeStepReason;
using ocid::UnsafeStepsReason;

namespace {

DirStep Dir(DirStep::Kind kind, const std::string& path, uint32_t uid, uint32_t mode) {
  DirStep s;
  s.kind = kind;
  s.path = path;
  s.uid = uid;
  s.mode = mode;
  return s;
}

DirStep Link(const std::string& path, uint32_t uid, const std::string& parent, uint32_t parent_uid,
             uint32_t parent_mode) {
  DirStep s;
  s.kind = DirStep::Kind::kLink;
  s.path = path;
  s.uid = uid;
  s.parent = parent;
  s.parent_uid = parent_uid;
  s.parent_mode = parent_mode;
  return s;
}

constexpr uint32_t kOther = 12345;  // neither root nor the tests' user

}  // namespace

TEST_CASE("dir_trust: the directory, its ancestors and the links, each by its rule") {
  using K = DirStep::Kind;
  CHECK(UnsafeStepReason(Dir(K::kDir, "/etc/cdi", 0, 0755)).empty());
  CHECK(UnsafeStepReason(Dir(K::kDir, "/etc/cdi", 0, 01777)) ==
        "directory /etc/cdi is writable by others (owner 0, mode 1777)");
  CHECK(UnsafeStepReason(Dir(K::kDir, "/etc/cdi", 0, 0775)) ==
        "directory /etc/cdi is writable by its group (owner 0, mode 0775)");
  CHECK(UnsafeStepReason(Dir(K::kDir, "/etc/cdi", kOther, 0755)) ==
        "directory /etc/cdi belongs to another user (owner 12345, mode 0755)");
  // An ancestor may be writable by others when sticky, as /tmp.
  CHECK(UnsafeStepReason(Dir(K::kAncestor, "/tmp", 0, 01777)).empty());
  CHECK(UnsafeStepReason(Dir(K::kAncestor, "/srv", 0, 0777)) ==
        "directory /srv is writable by others and not sticky (owner 0, mode 0777)");
  CHECK(UnsafeStepReason(Dir(K::kAncestor, "/srv", kOther, 01777)) ==
        "directory /srv belongs to another user (owner 12345, mode 1777)");
  // A link: root's, in a directory others cannot change (its own mode is
  // not looked at: links have none).
  CHECK(UnsafeStepReason(Link("/etc/cdi", 0, "/etc", 0, 0755)).empty());
  CHECK(UnsafeStepReason(Link("/tmp/cdi", 0, "/tmp", 0, 01777)).empty());
  CHECK(UnsafeStepReason(Link("/etc/cdi", kOther, "/etc", 0, 0755)) ==
        "not following symbolic link /etc/cdi: it belongs to another user (owner 12345)");
  CHECK(UnsafeStepReason(Link("/srv/cdi", 0, "/srv", 0, 0777)) ==
        "not following symbolic link /srv/cdi: directory /srv is writable by others and not "
        "sticky (owner 0, mode 0777)");
  // The first refused step, in the walk's order.
  std::vector<DirStep> steps = {
      Link("/etc/cdi", 0, "/etc", 0, 0755), Dir(K::kDir, "/srv/cdi", 0, 0755),
      Dir(K::kAncestor, "/srv", kOther, 0755), Dir(K::kAncestor, "/", 0, 0777)};
  CHECK(UnsafeStepsReason(steps) ==
        "directory /srv belongs to another user (owner 12345, mode 0755)");
  CHECK(UnsafeStepsReason({}).empty());
}

TEST_CASE("dir_trust: WalkDir creates what is missing 0755, from its root, never above it") {
  ocid::test::TempTree t;
  t.Dir("root");
  ocid::UniqueFd root(::open((t / "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(root.valid());
  ocid::UniqueFd out;
  std::vector<DirStep> steps;
  ocid::Error err;
  ::umask(077);  // the mode is set, whatever the umask
  bool made = ocid::WalkDir(root.get(), "/../a/./b", /*create=*/true, &out, &steps, &err);
  ::umask(022);
  REQUIRE_MESSAGE(made, err.Line());
  CHECK(out.valid());
  struct stat st;
  REQUIRE(::stat((t / "root/a/b").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  REQUIRE(steps.size() == 3);  // /a/b, /a, /
  CHECK(steps[0].path == "/a/b");
  CHECK(steps[2].path == "/");
  CHECK_FALSE(t.Exists("a"));  // ".." at the root stayed there

  // Without create, a missing component is ENOENT; a file on the way ENOTDIR.
  CHECK_FALSE(ocid::WalkDir(root.get(), "/a/c", false, &out, &steps, &err));
  CHECK(err.errnum == ENOENT);
  t.File("root/a/file", "x");
  CHECK_FALSE(ocid::WalkDir(root.get(), "/a/file/x", true, &out, &steps, &err));
  CHECK(err.errnum == ENOTDIR);
  CHECK(err.Line() == "cannot open directory: /a/file: Not a directory");
}

TEST_CASE("dir_trust: a directory the path passes through is judged, not only its ancestors") {
  // /x/y/link -> /safe, /x writable by anyone and not sticky: /x is no
  // ancestor of /safe, but whoever can write it can swap y (and the link
  // in it) for theirs, and the same path then leads elsewhere. Refused,
  // naming /x, and nothing made below it.
  ocid::test::TempTree t;
  t.Dir("root");
  t.Dir("root/x");
  t.Dir("root/x/y");
  t.Dir("root/safe");
  REQUIRE(::symlink("/safe", (t / "root/x/y/link").c_str()) == 0);
  REQUIRE(::chmod((t / "root/x").c_str(), 0777) == 0);
  ocid::UniqueFd root(::open((t / "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(root.valid());
  ocid::UniqueFd out;
  std::vector<DirStep> steps;
  ocid::Error err;
  REQUIRE(ocid::WalkDir(root.get(), "/x/y/link/new", /*create=*/true, &out, &steps, &err));
  CHECK_FALSE(out.valid());
  CHECK(UnsafeStepsReason(steps) == "directory /x is writable by others and not sticky (owner " +
                                        std::to_string(::geteuid()) + ", mode 0777)");
  CHECK_FALSE(t.Exists("root/safe/new"));
  // Sticky, as /tmp: the same path is followed.
  REQUIRE(::chmod((t / "root/x").c_str(), 01777) == 0);
  REQUIRE(ocid::WalkDir(root.get(), "/x/y/link/new", /*create=*/true, &out, &steps, &err));
  CHECK(out.valid());
  CHECK(UnsafeStepsReason(steps).empty());
  CHECK(t.Exists("root/safe/new"));
}
