#include "container_root.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "confinement.h"

namespace {

std::vector<ocid::IdMapping> Parse(const std::string& text, bool* ok) {
  std::vector<ocid::IdMapping> out;
  ocid::Error err;
  *ok = ocid::ParseIdMap(text, "uid_map", &out, &err);
  return out;
}

}  // namespace

TEST_CASE("id maps: the kernel's format, padded columns") {
  bool ok = false;
  auto m = Parse("         0     100000      65536\n", &ok);
  REQUIRE(ok);
  REQUIRE(m.size() == 1);
  CHECK(m[0].container_id == 0);
  CHECK(m[0].host_id == 100000);
  CHECK(m[0].size == 65536);
  m = Parse("      1000     101000          1\n         0     200000       1000\n", &ok);
  REQUIRE(ok);
  REQUIRE(m.size() == 2);
  uint32_t host = 0;
  CHECK(ocid::MapToHost(m, 0, &host));
  CHECK(host == 200000);
  // The identity map of the initial user namespace.
  m = Parse("         0          0 4294967295\n", &ok);
  REQUIRE(ok);
  CHECK(m[0].size == 4294967295u);
}

TEST_CASE("id maps: an empty map parses empty (a namespace whose map is not written yet)") {
  bool ok = false;
  CHECK(Parse("", &ok).empty());
  CHECK(ok);
}

TEST_CASE("id maps: malformed lines are refused") {
  bool ok = true;
  for (const char* bad :
       {"0 100000\n", "0 100000 65536 7\n", "x 1 1\n", "0 -1 1\n", "0 4294967296 1\n", "0 1 0\n",
        "\n", "0 1 1\n\n", "00000000000000 1 1\n"}) {
    Parse(bad, &ok);
    CHECK_MESSAGE(!ok, bad);
  }
}

TEST_CASE("id maps: more lines than the kernel allows are refused") {
  std::string text;
  for (int i = 0; i < 341; ++i)
    text += std::to_string(i) + " " + std::to_string(100000 + i) + " 1\n";
  bool ok = true;
  Parse(text, &ok);
  CHECK(!ok);
}

TEST_CASE("the hook's own process has no user namespace of its own") {
  int proc = ::open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(proc >= 0);
  ocid::ContainerRoot root;
  ocid::Error err;
  CHECK(ocid::FindContainerRoot(proc, "/proc/self", &root, &err));
  CHECK(!root.user_namespace);
  CHECK(root.uid == 0);
  ::close(proc);
}

// Under the hook's real seccomp filter (setfsuid, setfsgid, capget and
// capset must stay allowed), in a forked child: files created while entered
// belong to the container's root, and after it to root again, with the
// capabilities unchanged (a root-only 0700 directory stays writable).
TEST_CASE("AsContainerRoot: created files get the container root's ids, then root's again") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root (setfsuid to another uid)");
    return;
  }
  char dir[] = "/tmp/ocid-container-root.XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  REQUIRE(::chmod(dir, 0700) == 0);
  std::string d = dir;
  pid_t pid = ::fork();
  if (pid == 0) {
    ocid::Error err;
    if (!ocid::ConfineHook(&err)) ::_exit(100);
    {
      ocid::AsContainerRoot as_root;
      if (!as_root.Enter(ocid::ContainerRoot{true, 100000, 100001}, &err)) ::_exit(1);
      if (::mkdir((d + "/as-container").c_str(), 0755) != 0) ::_exit(2);
    }
    if (::mkdir((d + "/as-host").c_str(), 0755) != 0) ::_exit(3);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  struct stat st;
  REQUIRE(::stat((d + "/as-container").c_str(), &st) == 0);
  CHECK(st.st_uid == 100000);
  CHECK(st.st_gid == 100001);
  REQUIRE(::stat((d + "/as-host").c_str(), &st) == 0);
  CHECK(st.st_uid == 0);
  CHECK(st.st_gid == 0);
  ::rmdir((d + "/as-container").c_str());
  ::rmdir((d + "/as-host").c_str());
  ::rmdir(dir);
}

TEST_CASE("AsContainerRoot: without a user namespace nothing changes") {
  ocid::AsContainerRoot as_root;
  ocid::Error err;
  uid_t before = static_cast<uid_t>(::setfsuid(static_cast<uid_t>(-1)));
  CHECK(as_root.Enter(ocid::ContainerRoot{}, &err));
  CHECK(static_cast<uid_t>(::setfsuid(static_cast<uid_t>(-1))) == before);
}
