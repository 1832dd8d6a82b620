// ResourceWatch on real files: the view follows the inventory directory
// and the host's files without being asked, and a broken inventory keeps
// its resources, unhealthy.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "../test_tree.h"
#include "resource_watch.h"

using namespace std::chrono_literals;
using ocid::ClusterView;
using ocid::Debounce;
using ocid::ResourceWatch;

namespace {

// /dev/null is a character device on every host: the inventory needs it
// and a file the test removes and puts back.
std::string Inventory(const std::string& file) {
  return R"({"version": "1", "activation_flag": "OCI_T", "cdi_kind": "example.com/watch",
    "driver_feature": ["t"],
    "inventory": {"t": {"devices": ["null"], "binaries": [")" +
         file + R"("]}}})";
}

const ocid::ClusterResource* Find(const ClusterView& v, const std::string& name) {
  for (const auto& r : v.resources)
    if (r.k8s_name == name) return &r;
  return nullptr;
}

// Waits (up to 5 s) for a view where `name` has health `healthy`.
bool WaitHealth(const ResourceWatch& w, const std::string& name, bool healthy) {
  uint64_t gen = 0;
  auto deadline = std::chrono::steady_clock::now() + 5s;
  for (;;) {
    ClusterView v = w.View(&gen);
    const auto* r = Find(v, name);
    if (r && r->healthy == healthy) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    w.WaitForChange(gen, 200ms);
  }
}

// touch(1): both timestamps to now, an IN_ATTRIB event and nothing else.
bool Touch(const std::string& path) { return ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) == 0; }

// Waits (up to 5 s) until `w` has rebuilt more than `n` times.
bool WaitRebuilds(const ResourceWatch& w, uint64_t n) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (w.Rebuilds() <= n && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  return w.Rebuilds() > n;
}

}  // namespace

TEST_CASE("resource watch: health follows the host's files and the inventories") {
  ocid::test::TempTree t;
  t.File("host/tool", "x");
  t.File("conf/t.json", Inventory(t / "host/tool"));
  ocid::PluginOptions opts;
  opts.config_dir = t / "conf";
  opts.host_root = "/";
  opts.recheck_seconds = 3600;  // only inotify can make these changes seen in time
  ResourceWatch w(opts);
  ocid::Error err;
  REQUIRE_MESSAGE(w.Start(&err), err.Line());
  uint64_t g0 = 0;
  ClusterView v = w.View(&g0);
  REQUIRE(Find(v, "example.com/t"));
  CHECK(Find(v, "example.com/t")->healthy);

  std::filesystem::remove(t / "host/tool");
  CHECK(WaitHealth(w, "example.com/t", false));
  uint64_t g1 = 0;
  v = w.View(&g1);
  CHECK(g1 != g0);
  CHECK(Find(v, "example.com/t")->why.find("host/tool") != std::string::npos);

  t.File("host/tool", "y");
  CHECK(WaitHealth(w, "example.com/t", true));

  // A broken inventory: its resource stays, unhealthy, with the error.
  t.File("conf/t.json", "{\"version\": ");
  CHECK(WaitHealth(w, "example.com/t", false));
  CHECK(Find(w.View(), "example.com/t")->why.find("t.json") != std::string::npos);
  t.File("conf/t.json", Inventory(t / "host/tool"));
  CHECK(WaitHealth(w, "example.com/t", true));

  // A new inventory appears as a new resource.
  t.File("conf/u.json",
         R"({"version": "1", "activation_flag": "OCI_U", "cdi_kind": "example.com/other",
    "driver_feature": ["u"], "inventory": {"u": {"devices": ["null"]}}})");
  CHECK(WaitHealth(w, "example.com/u", true));

  // Nothing changes: no new generation.
  uint64_t g2 = 0;
  w.View(&g2);
  w.Recheck();
  CHECK(w.WaitForChange(g2, 300ms) == g2);
  w.Stop();
}

TEST_CASE(
    "resource watch: with a CDI directory the view carries the specs; Recheck marks, not bumps") {
  ocid::test::TempTree t;
  t.File("host/tool", "x");
  t.File("conf/t.json", Inventory(t / "host/tool"));
  ocid::PluginOptions opts;
  opts.config_dir = t / "conf";
  opts.host_root = "/";
  opts.cdi_dir = t / "cdi";
  opts.recheck_seconds = 3600;
  ResourceWatch w(opts);
  ocid::Error err;
  REQUIRE_MESSAGE(w.Start(&err), err.Line());
  ClusterView v = w.View();
  CHECK(v.cdi_dir == t / "cdi");
  REQUIRE(v.cdi_specs.size() == 1);
  CHECK(v.cdi_specs[0].state == ocid::ClusterCdiSpec::State::kWritten);
  CHECK(v.cdi_specs[0].spec_path == t / "cdi/oci-decorator-t.json");
  CHECK(v.cdi_specs[0].files.back().bytes.find("example.com/watch") != std::string::npos);

  ResourceWatch::Mark m0 = w.CurrentMark();
  uint64_t r0 = w.Rebuilds();
  CHECK(r0 >= 1);  // the first build
  w.Recheck();
  ResourceWatch::Mark m1 = w.WaitForMark(m0, 5s);
  CHECK(m1.rechecks == m0.rechecks + 1);
  CHECK(m1.generation == m0.generation);
  CHECK(w.Rebuilds() == r0 + 1);  // rebuilt once, though nothing changed
  // The spec changes with the inventory: a new generation.
  t.File("conf/t.json", Inventory(t / "host/tool")
                            .replace(Inventory(t / "host/tool").find("example.com/watch"), 17,
                                     "example.com/other"));
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (w.View().cdi_specs.at(0).kind != "example.com/other" &&
         std::chrono::steady_clock::now() < deadline)
    w.WaitForMark(w.CurrentMark(), 200ms);
  CHECK(w.View().cdi_specs.at(0).kind == "example.com/other");
  CHECK(w.CurrentMark().generation != m1.generation);
  w.Stop();
}

TEST_CASE("resource watch: without a CDI directory the view carries no specs") {
  ocid::test::TempTree t;
  t.File("host/tool", "x");
  t.File("conf/t.json", Inventory(t / "host/tool"));
  ocid::PluginOptions opts;
  opts.config_dir = t / "conf";
  opts.recheck_seconds = 3600;
  ResourceWatch w(opts);
  ocid::Error err;
  REQUIRE_MESSAGE(w.Start(&err), err.Line());
  CHECK(w.View().cdi_dir.empty());
  CHECK(w.View().cdi_specs.empty());
  w.Stop();
}

TEST_CASE("resource watch: a touched device node or file rebuilds nothing; a chmod rebuilds once") {
  // Issue 27: a timestamp change is an attribute change (IN_ATTRIB), and
  // /dev/onload is 0666, so any local user could keep the root plugin
  // rebuilding (and reading libonload.so) with touch. /dev/null stands in
  // for it: 0666 on every host, so this needs no root either.
  ocid::test::TempTree t;
  t.File("host/tool", "x");
  t.File("conf/t.json", Inventory(t / "host/tool"));
  ocid::PluginOptions opts;
  opts.config_dir = t / "conf";
  opts.host_root = "/";
  opts.recheck_seconds = 3600;  // no periodic rebuild during the test
  ResourceWatch w(opts);
  ocid::Error err;
  REQUIRE_MESSAGE(w.Start(&err), err.Line());
  REQUIRE(Find(w.View(), "example.com/t"));
  REQUIRE(Find(w.View(), "example.com/t")->healthy);
  const uint64_t r0 = w.Rebuilds();

  // 20 touches a second for a second, of the device node and of the file:
  // each is an IN_ATTRIB on a watched name, none changes what a view uses.
  for (int i = 0; i < 20; ++i) {
    REQUIRE(Touch("/dev/null"));
    REQUIRE(Touch(t / "host/tool"));
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(Debounce::kMaxDelay + 200ms);  // past any due rebuild
  CHECK(w.Rebuilds() == r0);

  // A chmod of the same file is a change of what the view used: one
  // rebuild, and only one.
  std::filesystem::permissions(t / "host/tool", std::filesystem::perms::owner_all);
  CHECK(WaitRebuilds(w, r0));
  std::this_thread::sleep_for(Debounce::kMaxDelay + 200ms);
  CHECK(w.Rebuilds() == r0 + 1);
  CHECK(Find(w.View(), "example.com/t")->healthy);
  w.Stop();
}

TEST_CASE("resource watch: two paths to one directory share a watch; both's names count") {
  // inotify gives one watch per directory, however many paths lead to it
  // (/sbin and /usr/sbin on a merged-/usr host): the names of each path's
  // entries count on it, not only the last one's.
  ocid::test::TempTree t;
  t.File("host/tool", "x");
  t.File("host/other", "y");
  std::filesystem::create_directory_symlink(t / "host", t / "alias");
  t.File("conf/t.json", Inventory(t / "host/tool"));
  std::string other = Inventory(t / "alias/other");
  for (auto [from, to] : {std::pair<std::string, std::string>{"OCI_T", "OCI_O"},
                          {"example.com/watch", "example.com/other"},
                          {"\"t\"", "\"o\""}})
    for (size_t at = other.find(from); at != std::string::npos; at = other.find(from, at))
      other.replace(at, from.size(), to);
  t.File("conf/o.json", other);
  ocid::PluginOptions opts;
  opts.config_dir = t / "conf";
  opts.host_root = "/";
  opts.recheck_seconds = 3600;
  ResourceWatch w(opts);
  ocid::Error err;
  REQUIRE_MESSAGE(w.Start(&err), err.Line());
  REQUIRE(Find(w.View(), "example.com/t"));
  REQUIRE(Find(w.View(), "example.com/o"));
  CHECK(Find(w.View(), "example.com/o")->healthy);
  std::filesystem::remove(t / "host/other");
  CHECK(WaitHealth(w, "example.com/o", false));
  std::filesystem::remove(t / "host/tool");
  CHECK(WaitHealth(w, "example.com/t", false));
  w.Stop();
}

TEST_CASE("resource watch: Nomad mode creates the directories its resources' plans create") {
  ocid::test::TempTree t;
  t.File("host/tool", "x");
  t.File("host/marker", "");
  t.File("conf/t.json", R"({"version": "1", "activation_flag": "OCI_T",
    "cdi_kind": "example.com/watch", "driver_feature": ["t"],
    "conditions": {"c": {"exists": "/marker"}},
    "inventory": {"t": {"binaries": ["/tool"],
      "directories": [{"source": "/run/ctl", "optional": true, "create_if": "c"}]}}})");
  ocid::PluginOptions opts;
  opts.config_dir = t / "conf";
  opts.host_root = t / "host";
  opts.recheck_seconds = 3600;
  const std::string dir = t / "host/run/ctl";
  {
    // Kubernetes (and `resources`) create nothing.
    ResourceWatch w(opts);
    ocid::Error err;
    REQUIRE_MESSAGE(w.Start(&err), err.Line());
    CHECK(Find(w.View(), "example.com/t")->healthy);
    CHECK_FALSE(std::filesystem::exists(dir));
    w.Stop();
  }
  opts.create_planned_dirs = true;
  ResourceWatch w(opts);
  ocid::Error err;
  REQUIRE_MESSAGE(w.Start(&err), err.Line());
  const ClusterView view = w.View();  // a copy: Find points into it
  const auto* r = Find(view, "example.com/t");
  REQUIRE(r);
  CHECK(r->healthy);
  struct stat st {};
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 07777) == 0755);
  w.Stop();
}
