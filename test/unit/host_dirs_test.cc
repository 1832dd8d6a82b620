// host_dirs: the directories a plan creates, on real trees under a
// temporary directory standing for the host root. The other-user half
// needs root to give a link away; without root it says so and skips.
#include "host_dirs.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "plan.h"
#include "test_tree.h"
#include "unique_fd.h"

namespace {

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

ocid::Plan PlanCreating(const std::string& source) {
  ocid::Plan p;
  ocid::MountOp m;
  m.type = ocid::FileType::kDirectory;
  m.source = source;
  m.target = source;
  m.create = true;
  m.mode = S_IFDIR | 0755;
  m.inventory = "/etc/oci-decorator/oci-decorator.d/onload.json";
  m.feature = "onload";
  p.mounts.push_back(m);
  return p;
}

ocid::UniqueFd OpenRoot(const ocid::test::TempTree& t) {
  return ocid::UniqueFd(::open((t / "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
}

constexpr uint32_t kOther = 12345;  // neither root nor the tests' user

}  // namespace

TEST_CASE("host_dirs: a missing directory is made 0755 whatever the umask, and identified") {
  ocid::test::TempTree t;
  t.Dir("root");
  ocid::UniqueFd root = OpenRoot(t);
  REQUIRE(root.valid());
  ocid::Plan p = PlanCreating("/run/onload");
  ocid::MountOp other;  // not to be created: left alone
  other.source = other.target = "/usr/bin/onload";
  p.mounts.push_back(other);
  std::vector<std::string> created;
  ocid::Error err;
  ::umask(077);
  bool ok = ocid::CreatePlannedDirectories(root.get(), &p, &created, &err);
  ::umask(022);
  REQUIRE_MESSAGE(ok, err.Line());
  CHECK(created == std::vector<std::string>{"/run/onload"});
  struct stat st, parent;
  REQUIRE(::stat((t / "root/run/onload").c_str(), &st) == 0);
  REQUIRE(::stat((t / "root/run").c_str(), &parent) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  CHECK((parent.st_mode & 07777) == 0755);  // missing parents too
  CHECK(st.st_uid == ::geteuid());
  const ocid::MountOp& m = p.mounts[0];
  CHECK(m.create);
  CHECK(m.dev == st.st_dev);
  CHECK(m.ino == st.st_ino);
  CHECK(m.mode == st.st_mode);
  CHECK(m.uid == st.st_uid);
  CHECK(m.gid == st.st_gid);
  CHECK(m.resolved == "/run/onload");
  CHECK(p.mounts[1].dev == 0);
  CHECK_FALSE(t.Exists("run"));  // nothing outside the root
}

TEST_CASE("host_dirs: one that exists (a controller was faster) is taken as it is") {
  ocid::test::TempTree t;
  t.Dir("root/run/onload/controller-0");
  REQUIRE(::chmod((t / "root/run/onload").c_str(), 0755) == 0);
  ocid::UniqueFd root = OpenRoot(t);
  ocid::Plan p = PlanCreating("/run/onload");
  std::vector<std::string> created;
  ocid::Error err;
  REQUIRE_MESSAGE(ocid::CreatePlannedDirectories(root.get(), &p, &created, &err), err.Line());
  CHECK(created.empty());
  struct stat st;
  REQUIRE(::stat((t / "root/run/onload").c_str(), &st) == 0);
  CHECK(p.mounts[0].ino == st.st_ino);
  CHECK(t.Exists("root/run/onload/controller-0"));
  // Through a link root made in a directory others cannot change: followed,
  // and the real directory is the one identified.
  ocid::test::TempTree u;
  u.Dir("root/var/run2/onload");
  REQUIRE(::symlink("/var/run2", (u / "root/run").c_str()) == 0);
  ocid::UniqueFd root2 = OpenRoot(u);
  p = PlanCreating("/run/onload");
  REQUIRE_MESSAGE(ocid::CreatePlannedDirectories(root2.get(), &p, &created, &err), err.Line());
  CHECK(p.mounts[0].resolved == "/var/run2/onload");
}

TEST_CASE("host_dirs: refused below a directory others can change; nothing made") {
  ocid::test::TempTree t;
  t.Dir("root/run");
  REQUIRE(::chmod((t / "root/run").c_str(), 0777) == 0);
  ocid::UniqueFd root = OpenRoot(t);
  ocid::Plan p = PlanCreating("/run/onload");
  std::vector<std::string> created;
  ocid::Error err;
  CHECK_FALSE(ocid::CreatePlannedDirectories(root.get(), &p, &created, &err));
  CHECK(Contains(err.Line(),
                 "not creating directory /run/onload: directory /run is writable by "
                 "others and not sticky"));
  CHECK(Contains(err.Line(), "onload.json"));
  CHECK_FALSE(t.Exists("root/run/onload"));
  CHECK(created.empty());
  CHECK(p.mounts[0].dev == 0);
  // An existing one others can write is not root's writer's either.
  REQUIRE(::chmod((t / "root/run").c_str(), 0755) == 0);
  t.Dir("root/run/onload");
  REQUIRE(::chmod((t / "root/run/onload").c_str(), 0777) == 0);
  CHECK_FALSE(ocid::CreatePlannedDirectories(root.get(), &p, &created, &err));
  CHECK(Contains(err.Line(), "/run/onload is writable by others"));
  // Sticky, as /tmp is: the parent is acceptable.
  ocid::test::TempTree s;
  s.Dir("root/run");
  REQUIRE(::chmod((s / "root/run").c_str(), 01777) == 0);
  ocid::UniqueFd root3 = OpenRoot(s);
  p = PlanCreating("/run/onload");
  REQUIRE_MESSAGE(ocid::CreatePlannedDirectories(root3.get(), &p, &created, &err), err.Line());
}

TEST_CASE("host_dirs: a file in the way fails, naming it") {
  ocid::test::TempTree t;
  t.File("root/run", "x");
  ocid::UniqueFd root = OpenRoot(t);
  ocid::Plan p = PlanCreating("/run/onload");
  std::vector<std::string> created;
  ocid::Error err;
  CHECK_FALSE(ocid::CreatePlannedDirectories(root.get(), &p, &created, &err));
  CHECK(Contains(err.Line(), "/run"));
  CHECK(Contains(err.Line(), "Not a directory"));
}

TEST_CASE("host_dirs: a link another user owns is not followed") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to give a link to another user");
    return;
  }
  ocid::test::TempTree t;
  t.Dir("root/home/u");
  REQUIRE(::chown((t / "root/home/u").c_str(), kOther, kOther) == 0);
  REQUIRE(::symlink("/home/u", (t / "root/run").c_str()) == 0);
  REQUIRE(::lchown((t / "root/run").c_str(), kOther, kOther) == 0);
  ocid::UniqueFd root = OpenRoot(t);
  ocid::Plan p = PlanCreating("/run/onload");
  std::vector<std::string> created;
  ocid::Error err;
  CHECK_FALSE(ocid::CreatePlannedDirectories(root.get(), &p, &created, &err));
  CHECK(Contains(err.Line(), "not following symbolic link /run"));
  CHECK_FALSE(t.Exists("root/home/u/onload"));
  // A link root owns into another user's directory: followed, then the
  // directory is refused (it is not root's), nothing made in it.
  REQUIRE(::lchown((t / "root/run").c_str(), 0, 0) == 0);
  CHECK_FALSE(ocid::CreatePlannedDirectories(root.get(), &p, &created, &err));
  CHECK(Contains(err.Line(), "/home/u"));
  CHECK_FALSE(t.Exists("root/home/u/onload"));
}
