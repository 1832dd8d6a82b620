// The liveness file and `probe`'s verdict (health_file.h).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "../test_tree.h"
#include "atomic_file.h"
#include "health_file.h"
#include "probe_cmd.h"

using ocid::HealthState;

namespace {
HealthState Sample() {
  HealthState s;
  s.time = 1000;
  s.pid = 42;
  s.kubelet_dir = true;
  s.kubelet = true;
  s.resources = 3;
  s.served = 3;
  s.registered = 2;
  s.healthy = 3;
  s.unregistered = {"amd.com/zf"};
  return s;
}
}  // namespace

TEST_CASE("health file: written and read back, one small line") {
  HealthState s = Sample();
  std::string text = ocid::HealthText(s);
  CHECK(text.size() < 512);
  CHECK(text.back() == '\n');
  CHECK(text.find('\n') == text.size() - 1);
  HealthState back;
  std::string why;
  REQUIRE_MESSAGE(ocid::ParseHealth(text, &back, &why), why);
  CHECK(back.SameCounts(s));
  CHECK(back.time == 1000);
}

TEST_CASE("health file: what is not one is refused, saying why") {
  HealthState out;
  std::string why;
  CHECK_FALSE(ocid::ParseHealth("", &out, &why));
  CHECK_FALSE(ocid::ParseHealth("[1]", &out, &why));
  CHECK_FALSE(ocid::ParseHealth(R"({"time": "soon"})", &out, &why));
  CHECK(why.find("time") != std::string::npos);
}

TEST_CASE("probe verdict: fresh, stale, ready") {
  HealthState s = Sample();
  CHECK(ocid::ProbeVerdict(s, 1010, 30, false) == "");
  CHECK(ocid::ProbeVerdict(s, 1030, 30, false) == "");
  std::string stale = ocid::ProbeVerdict(s, 1031, 30, false);
  CHECK(stale.find("stale: written 31 s ago") == 0);
  // A clock stepped back: written "in the future" is still fresh.
  CHECK(ocid::ProbeVerdict(s, 900, 30, false) == "");
  std::string not_ready = ocid::ProbeVerdict(s, 1010, 30, true);
  CHECK(not_ready.find("not ready: 2 of 3 resources registered") == 0);
  CHECK(not_ready.find("amd.com/zf") != std::string::npos);
  s.registered = 3;
  s.unregistered.clear();
  CHECK(ocid::ProbeVerdict(s, 1010, 30, true) == "");
  s.kubelet_dir = false;
  CHECK(ocid::ProbeVerdict(s, 1010, 30, true).find("not ready") == 0);
}

// Issue 27: a plugin whose inventories were all refused served 0 of 0 and
// was "ready"; the DaemonSet looked fine while no node had amd.com/onload.
TEST_CASE("probe verdict: nothing to serve is alive but not ready, saying why") {
  HealthState empty;
  empty.time = 1000;
  empty.kubelet_dir = true;
  empty.kubelet = true;
  empty.why_none =
      "inventory /etc/oci-decorator/oci-decorator.d/onload.json refused: refusing inventories: "
      "the config directory is writable by others (owner 0, mode 0777; ...)";
  CHECK(ocid::ProbeVerdict(empty, 1000, 30, false) == "");
  std::string v = ocid::ProbeVerdict(empty, 1000, 30, true);
  CHECK(v == "not ready: no resource to serve: " + empty.why_none);
  empty.why_none.clear();  // a health file of an older plugin
  CHECK(ocid::ProbeVerdict(empty, 1000, 30, true) ==
        "not ready: no resource to serve: the inventories offer none");
  // The reason travels through the file.
  empty.why_none = "no inventory (*.json) in /etc/oci-decorator/oci-decorator.d";
  HealthState back;
  std::string why;
  REQUIRE(ocid::ParseHealth(ocid::HealthText(empty), &back, &why));
  CHECK(back.why_none == empty.why_none);
  CHECK(back.SameCounts(empty));
}

TEST_CASE("probe: no health file in a directory the writer refuses says so") {
  ocid::test::TempTree t;
  // A disk emptyDir's root: 0777, not sticky (empty_dir.go chmods it so).
  REQUIRE(::mkdir((t / "vol").c_str(), 0700) == 0);
  REQUIRE(::chmod((t / "vol").c_str(), 0777) == 0);
  HealthState s = Sample();
  s.time = static_cast<int64_t>(std::time(nullptr));
  ocid::Error err;
  CHECK_FALSE(ocid::WriteHealthFile(t / "vol/probe/health", s, &err));
  CHECK(err.Line().find("is writable by others and not sticky") != std::string::npos);
  CHECK(ocid::WriteDirRefusal(t / "vol/probe")
            .find("directory " + (t / "vol") + " is writable by others and not sticky") == 0);
  CHECK(ocid::RunProbe(t / "vol/probe/health", 30, false) == 1);
  // A Memory emptyDir's root: a tmpfs of mode 1777, sticky: the writer makes
  // its own 0755 directory inside and writes there.
  REQUIRE(::chmod((t / "vol").c_str(), 01777) == 0);
  CHECK(ocid::WriteDirRefusal(t / "vol/probe") == "");
  REQUIRE_MESSAGE(ocid::WriteHealthFile(t / "vol/probe/health", s, &err), err.Line());
  struct stat st {};
  REQUIRE(::stat((t / "vol/probe").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  CHECK(ocid::RunProbe(t / "vol/probe/health", 30, false) == 0);
  // ... but not in the sticky directory itself.
  CHECK(ocid::WriteDirRefusal(t / "vol").find("is writable by others") != std::string::npos);
}

TEST_CASE("health file: replaced atomically, 0644, and read by RunProbe") {
  ocid::test::TempTree t;
  std::string path = t / "run/health";
  HealthState s = Sample();
  s.time = static_cast<int64_t>(std::time(nullptr));
  ocid::Error err;
  REQUIRE_MESSAGE(ocid::WriteHealthFile(path, s, &err), err.Line());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  CHECK(ocid::RunProbe(path, 30, false) == 0);
  CHECK(ocid::RunProbe(path, 30, true) == 1);  // 2 of 3 registered
  CHECK(ocid::RunProbe(t / "run/none", 30, false) == 1);
  s.time -= 100;
  REQUIRE(ocid::WriteHealthFile(path, s, &err));
  CHECK(ocid::RunProbe(path, 30, false) == 1);
}
