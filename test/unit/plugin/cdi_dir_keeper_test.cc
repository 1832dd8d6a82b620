// CdiDirKeeper on real files: the device plugin's --cdi-dir holds each
// spec of the view with its preload files (cdi.h), restores what others
// delete or change, and removes them all when the inventory is gone.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "../test_tree.h"
#include "cdi_dir_keeper.h"
#include "cluster.h"
#include "host_view.h"
#include "inventory.h"
#include "resource_watch.h"

using namespace std::chrono_literals;

namespace {

// One CDI kind belongs to one inventory (cdi.h CdiKindConflicts).
std::string Inventory(const std::string& lib, const std::string& kind = "example.com/pre") {
  return R"({"version": "1", "activation_flag": "OCI_T", "cdi_kind": ")" + kind + R"(",
    "driver_feature": ["t"],
    "inventory": {"t": {"devices": ["null"],
                        "libraries": [{"source": ")" +
         lib + R"(", "target": "/usr/lib64/libt.so"}],
                        "preload": ["/usr/lib64/libt.so"]}}})";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What ResourceWatch::Rebuild makes of the inventories in `config_dir` on
// this host: the view, with its CDI specs for `cdi_dir` (each call keeps
// the last view as `previous`, as the watch does).
struct Node {
  std::string config_dir, cdi_dir;
  ocid::ClusterView view;
  const ocid::ClusterView& Build() {
    ocid::InventorySet set;
    ocid::Error err;
    REQUIRE_MESSAGE(ocid::LoadInventoryDir(config_dir, &set, &err), err.Line());
    std::unique_ptr<ocid::HostRootView> host;
    REQUIRE_MESSAGE(ocid::HostRootView::Open("/", &host, &err), err.Line());
    ocid::ClusterView next;
    ocid::BuildClusterView(set, *host, {}, "/", &view, &next);
    ocid::BuildClusterCdi(set, *host, "/", cdi_dir, &view, &next);
    view = std::move(next);
    return view;
  }
};

// A keeper of t/cdi for the inventories in t/conf, and the node it reads.
struct Kept {
  Node node;
  ocid::CdiDirKeeper keeper;
  explicit Kept(const ocid::test::TempTree& t)
      : node{t / "conf", t / "cdi", {}}, keeper(t / "cdi", t / "conf") {}
  bool Sync() { return keeper.Sync(node.Build()); }
};

}  // namespace

TEST_CASE("kubelet cdi: --cdi-dir writes the preload files before the spec, and removes them") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  t.Dir("cdi");
  Kept w(t);
  REQUIRE(w.Sync());

  const std::string spec_path = t / "cdi/oci-decorator-pre.json";
  auto spec = nlohmann::json::parse(Slurp(spec_path));
  CHECK(spec.dump().find("LD_PRELOAD") == std::string::npos);
  nlohmann::json want = {{"hostPath", t / "cdi/oci-decorator-pre.t.preload"},
                         {"containerPath", "/etc/ld.so.preload"},
                         {"options", {"ro", "nosuid", "nodev", "bind"}}};
  bool found = false;
  for (const auto& m : spec["devices"][0]["containerEdits"]["mounts"]) found = found || m == want;
  CHECK_MESSAGE(found, spec.dump());
  CHECK(Slurp(t / "cdi/oci-decorator-pre.t.preload") == "/usr/lib64/libt.so\n");
  CHECK(Slurp(t / "cdi/oci-decorator-pre.all.preload") == "/usr/lib64/libt.so\n");
  struct stat st {};
  REQUIRE(::stat((t / "cdi/oci-decorator-pre.t.preload").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);

  // A preload file changed behind the writer's back is put back.
  t.File("cdi/oci-decorator-pre.t.preload", "/evil.so\n");
  REQUIRE(w.Sync());
  CHECK(Slurp(t / "cdi/oci-decorator-pre.t.preload") == "/usr/lib64/libt.so\n");

  // The inventory is gone: the spec and its preload files go too.
  std::filesystem::remove(t / "conf/pre.json");
  REQUIRE(w.Sync());
  CHECK(std::filesystem::is_empty(t / "cdi"));
}

// A library the inventory does not place itself goes by name into both
// standard library directories (library_dirs.h: the plugin answers for
// every image), and the preload file names the first.
TEST_CASE(
    "kubelet cdi: a library by name lands in both library directories, preloaded from the first") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", R"({"version": "1", "activation_flag": "OCI_T",
    "cdi_kind": "example.com/pre", "driver_feature": ["t"],
    "inventory": {"t": {"devices": ["null"],
                        "libraries": [")" +
                              (t / "host/libt.so") + R"("],
                        "preload": ["libt.so"]}}})");
  t.Dir("cdi");
  Kept w(t);
  REQUIRE(w.Sync());
  auto spec = nlohmann::json::parse(Slurp(t / "cdi/oci-decorator-pre.json"));
  std::set<std::string> targets;
  for (const auto& m : spec["devices"][0]["containerEdits"]["mounts"])
    if (m["hostPath"] == t / "host/libt.so") targets.insert(m["containerPath"].get<std::string>());
  CHECK(targets ==
        std::set<std::string>{"/usr/lib/x86_64-linux-gnu/libt.so", "/usr/lib64/libt.so"});
  CHECK(Slurp(t / "cdi/oci-decorator-pre.t.preload") == "/usr/lib/x86_64-linux-gnu/libt.so\n");
  CHECK(Slurp(t / "cdi/oci-decorator-pre.all.preload") == "/usr/lib/x86_64-linux-gnu/libt.so\n");
}

namespace {

struct stat StatOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st;
}

}  // namespace

TEST_CASE(
    "kubelet cdi: a 0666 or foreign-owned spec or preload file is replaced on the next pass") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  t.Dir("cdi");
  Kept w(t);
  REQUIRE(w.Sync());
  const std::string spec = t / "cdi/oci-decorator-pre.json";
  const std::string preload = t / "cdi/oci-decorator-pre.t.preload";
  const std::string bytes = Slurp(spec);
  // The right bytes, the wrong mode / owner: not current.
  REQUIRE(::chmod(spec.c_str(), 0666) == 0);
  REQUIRE(::chown(preload.c_str(), 65534, 65534) == 0);
  REQUIRE(w.Sync());
  for (const auto& p : {spec, preload}) {
    struct stat st = StatOf(p);
    CHECK_MESSAGE((st.st_mode & 07777) == 0644, p);
    CHECK_MESSAGE(st.st_uid == ::geteuid(), p);
  }
  CHECK(Slurp(spec) == bytes);
}

TEST_CASE("kubelet cdi: an inventory that yields no spec any more has its files removed") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  t.Dir("cdi");
  Kept w(t);
  REQUIRE(w.Sync());
  REQUIRE(t.Exists("cdi/oci-decorator-pre.json"));
  // The library is gone: no device of the inventory builds on this host.
  std::filesystem::remove(t / "host/libt.so");
  w.Sync();
  CHECK_FALSE(t.Exists("cdi/oci-decorator-pre.json"));
  CHECK(std::filesystem::is_empty(t / "cdi"));
  // It comes back once it builds again.
  t.File("host/libt.so", "x");
  REQUIRE(w.Sync());
  CHECK(t.Exists("cdi/oci-decorator-pre.json"));
  CHECK(t.Exists("cdi/oci-decorator-pre.t.preload"));
}

TEST_CASE("kubelet cdi: at start, files of inventories removed meanwhile go; others' files stay") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  t.File("conf/gone.json", Inventory(t / "host/libt.so", "example.com/gone"));
  t.File("conf/broken.json", Inventory(t / "host/libt.so", "example.com/broken"));
  t.Dir("cdi");
  {
    Kept before(t);
    REQUIRE(before.Sync());
  }
  REQUIRE(t.Exists("cdi/oci-decorator-gone.json"));
  REQUIRE(t.Exists("cdi/oci-decorator-gone.t.preload"));
  // While no plugin runs: one inventory removed, one broken; the operator
  // keeps files of their own there, named like ours or not.
  std::filesystem::remove(t / "conf/gone.json");
  t.File("conf/broken.json", "{not json");
  const std::string own = R"({"cdiVersion": "0.3.0", "kind": "example.com/own", "devices": []})";
  t.File("cdi/oci-decorator-own.json", own);
  t.File("cdi/oci-decorator-own.x.preload", "/usr/lib64/own.so\n");
  t.File("cdi/vendor.json", own);
  t.File("cdi/oci-decorator-mine.txt", "x");
  // A rendered spec that is not root's is not taken for ours.
  t.File("cdi/oci-decorator-users.json", Slurp(t / "cdi/oci-decorator-gone.json"));
  REQUIRE(::chown((t / "cdi/oci-decorator-users.json").c_str(), 65534, 65534) == 0);

  Kept w(t);
  w.Sync();
  CHECK_FALSE(t.Exists("cdi/oci-decorator-gone.json"));
  CHECK_FALSE(t.Exists("cdi/oci-decorator-gone.t.preload"));
  CHECK_FALSE(t.Exists("cdi/oci-decorator-gone.all.preload"));
  CHECK(t.Exists("cdi/oci-decorator-pre.json"));
  CHECK(t.Exists("cdi/oci-decorator-pre.t.preload"));
  // The broken inventory keeps its last spec.
  CHECK(t.Exists("cdi/oci-decorator-broken.json"));
  CHECK(t.Exists("cdi/oci-decorator-broken.t.preload"));
  CHECK(Slurp(t / "cdi/oci-decorator-own.json") == own);
  CHECK(t.Exists("cdi/oci-decorator-own.x.preload"));  // its spec is still there
  CHECK(t.Exists("cdi/vendor.json"));
  CHECK(t.Exists("cdi/oci-decorator-mine.txt"));
  CHECK(t.Exists("cdi/oci-decorator-users.json"));
}

TEST_CASE("kubelet cdi: a second inventory of one CDI kind gets no spec, and loses one it had") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/a.json", Inventory(t / "host/libt.so"));
  t.File("conf/b.json", Inventory(t / "host/libt.so", "example.com/bb"));
  t.Dir("cdi");
  Kept w(t);
  REQUIRE(w.Sync());
  REQUIRE(t.Exists("cdi/oci-decorator-b.json"));
  // b now claims a's kind: both specs would name "all", and a CDI runtime
  // would resolve neither.
  t.File("conf/b.json", Inventory(t / "host/libt.so"));
  w.Sync();
  CHECK(t.Exists("cdi/oci-decorator-a.json"));
  CHECK(t.Exists("cdi/oci-decorator-a.t.preload"));
  CHECK_FALSE(t.Exists("cdi/oci-decorator-b.json"));
  CHECK_FALSE(t.Exists("cdi/oci-decorator-b.t.preload"));
}

TEST_CASE("kubelet cdi: an inventory with dots in its name never takes another's preload files") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/a.json", Inventory(t / "host/libt.so", "example.com/aa"));
  t.File("conf/a.t.json", Inventory(t / "host/libt.so", "example.com/at"));
  t.Dir("cdi");
  Kept w(t);
  REQUIRE(w.Sync());
  CHECK(t.Exists("cdi/oci-decorator-a.t.preload"));
  CHECK(t.Exists("cdi/oci-decorator-a%2Et.t.preload"));
  // a.t goes: a's files stay.
  std::filesystem::remove(t / "conf/a.t.json");
  REQUIRE(w.Sync());
  CHECK(t.Exists("cdi/oci-decorator-a.json"));
  CHECK(t.Exists("cdi/oci-decorator-a.t.preload"));
  CHECK_FALSE(t.Exists("cdi/oci-decorator-a.t.json"));
  CHECK_FALSE(t.Exists("cdi/oci-decorator-a%2Et.t.preload"));
}

TEST_CASE("kubelet cdi: a pass that finds everything current writes nothing") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  Kept w(t);
  REQUIRE(w.Sync());
  // The spec and its two preload files (t, all).
  CHECK(w.keeper.files_written() == 3);
  REQUIRE(w.Sync());
  REQUIRE(w.Sync());
  CHECK(w.keeper.files_written() == 3);
  // Deleted: that file alone is written again.
  std::filesystem::remove(t / "cdi/oci-decorator-pre.json");
  REQUIRE(w.Sync());
  CHECK(w.keeper.files_written() == 4);
  CHECK(t.Exists("cdi/oci-decorator-pre.json"));
}

TEST_CASE("kubelet cdi: a feature removed from the inventory takes its device and preload file") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  auto two = [&](bool with_u) {
    std::string u =
        with_u
            ? R"(, "u": {"devices": ["null"], "libraries": [{"source": ")" + (t / "host/libt.so") +
                  R"(", "target": "/usr/lib64/libu.so"}], "preload": ["/usr/lib64/libu.so"]})"
            : "";
    return R"({"version": "1", "activation_flag": "OCI_T", "cdi_kind": "example.com/two",
      "driver_feature": ["t")" +
           std::string(with_u ? R"(, "u")" : "") + R"(],
      "inventory": {"t": {"devices": ["null"],
                          "libraries": [{"source": ")" +
           (t / "host/libt.so") + R"(", "target": "/usr/lib64/libt.so"}],
                          "preload": ["/usr/lib64/libt.so"]})" +
           u + "}}";
  };
  t.File("conf/two.json", two(true));
  Kept w(t);
  REQUIRE(w.Sync());
  REQUIRE(t.Exists("cdi/oci-decorator-two.u.preload"));
  std::string why;
  CHECK_MESSAGE(w.keeper.Resolves("example.com/two=u", &why), why);

  t.File("conf/two.json", two(false));
  REQUIRE(w.Sync());
  CHECK_FALSE(t.Exists("cdi/oci-decorator-two.u.preload"));
  CHECK(t.Exists("cdi/oci-decorator-two.t.preload"));
  CHECK(t.Exists("cdi/oci-decorator-two.all.preload"));
  auto spec = nlohmann::json::parse(Slurp(t / "cdi/oci-decorator-two.json"));
  std::vector<std::string> names;
  for (const auto& d : spec["devices"]) names.push_back(d["name"]);
  CHECK(names == std::vector<std::string>{"t", "all"});
  CHECK_FALSE(w.keeper.Resolves("example.com/two=u", &why));
  CHECK_MESSAGE(why.find("has no device \"u\"") != std::string::npos, why);
}

TEST_CASE("kubelet cdi: Resolves names only devices whose spec is there and current") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/a.json", Inventory(t / "host/libt.so"));
  t.File("conf/b.json", Inventory(t / "host/libt.so"));  // a's kind: no spec
  Kept w(t);
  std::string why;
  CHECK_FALSE(w.keeper.Resolves("example.com/pre=t", &why));  // no pass yet
  CHECK_MESSAGE(why.find("not written yet") != std::string::npos, why);
  w.Sync();
  CHECK_MESSAGE(w.keeper.Resolves("example.com/pre=t", &why), why);
  CHECK(w.keeper.Resolves("example.com/pre=all", &why));
  CHECK_FALSE(w.keeper.Resolves("example.com/other=t", &why));
  CHECK_FALSE(w.keeper.Resolves("example.com/pre=zz", &why));
  CHECK_MESSAGE(why.find("is already inventory") != std::string::npos, why);  // the conflict

  // Gone behind the keeper's back: not named, whatever the last pass saw.
  const std::string spec = t / "cdi/oci-decorator-a.json";
  std::filesystem::remove(spec);
  CHECK_FALSE(w.keeper.Resolves("example.com/pre=t", &why));
  CHECK_MESSAGE(why == spec + " is missing or not as written (being rewritten)", why);
  // The device's preload file, edited: not named either.
  w.Sync();
  REQUIRE(w.keeper.Resolves("example.com/pre=t", &why));
  t.File("cdi/oci-decorator-a.t.preload", "/evil.so\n");
  CHECK_FALSE(w.keeper.Resolves("example.com/pre=t", &why));
  CHECK(w.keeper.Resolves("example.com/pre=all", &why));  // its own file is intact

  // No device builds on this host: no spec, and why.
  std::filesystem::remove(t / "host/libt.so");
  w.Sync();
  CHECK_FALSE(t.Exists("cdi/oci-decorator-a.json"));
  CHECK_FALSE(w.keeper.Resolves("example.com/pre=t", &why));
  CHECK_MESSAGE(why.find(spec + ": ") == 0, why);
  CHECK_MESSAGE(why.find("no CDI device can be generated") != std::string::npos, why);
}

namespace {

// Waits up to 5 s for `pred`.
template <typename P>
bool Eventually(P pred) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

}  // namespace

// One inventory in t/conf, a running watch of it (no periodic re-check)
// and a running keeper of t/cdi that re-checks every `period`.
struct Running {
  ocid::test::TempTree t;
  ocid::ResourceWatch watch;
  ocid::CdiDirKeeper keeper;
  static ocid::PluginOptions Options(const ocid::test::TempTree& t) {
    t.File("host/libt.so", "x");
    t.File("conf/pre.json", Inventory(t / "host/libt.so"));
    ocid::PluginOptions opts;
    opts.config_dir = t / "conf";
    opts.cdi_dir = t / "cdi";
    opts.recheck_seconds = 3600;
    return opts;
  }
  explicit Running(std::chrono::milliseconds period)
      : watch(Options(t)), keeper(t / "cdi", t / "conf") {
    ocid::Error err;
    REQUIRE_MESSAGE(watch.Start(&err), err.Line());
    REQUIRE_MESSAGE(keeper.Start(&watch, period, &err), err.Line());
  }
  ~Running() {
    keeper.Stop();
    watch.Stop();
  }
};

TEST_CASE("kubelet cdi: the running keeper restores a deleted, edited or chmod'ed spec at once") {
  Running run(3600s);  // neither the watch nor the keeper re-checks on a timer here
  auto& t = run.t;
  auto& watch = run.watch;
  auto& keeper = run.keeper;

  // The first pass ran before Start returned.
  const std::string spec = t / "cdi/oci-decorator-pre.json";
  REQUIRE(t.Exists("cdi/oci-decorator-pre.json"));
  const std::string bytes = Slurp(spec);
  uint64_t gen = 0;
  watch.View(&gen);
  auto current = [&] {
    struct stat st {};
    return ::lstat(spec.c_str(), &st) == 0 && (st.st_mode & 07777) == 0644 && Slurp(spec) == bytes;
  };

  std::filesystem::remove(spec);
  CHECK(Eventually(current));
  t.File("cdi/oci-decorator-pre.json", "{}");
  CHECK(Eventually(current));
  REQUIRE(::chmod(spec.c_str(), 0666) == 0);
  CHECK(Eventually(current));
  // A preload file, renamed away.
  std::filesystem::rename(t / "cdi/oci-decorator-pre.t.preload", t / "cdi/moved");
  CHECK(Eventually([&] { return t.Exists("cdi/oci-decorator-pre.t.preload"); }));

  // Its own writes do not make it loop: once settled, no pass writes.
  std::this_thread::sleep_for(300ms);
  uint64_t written = keeper.files_written(), passes = keeper.passes();
  std::this_thread::sleep_for(500ms);
  CHECK(keeper.files_written() == written);
  CHECK(keeper.passes() == passes);
  // None of this was a change of the view.
  uint64_t gen_now = 0;
  watch.View(&gen_now);
  CHECK(gen_now == gen);

  // SIGHUP's Recheck wakes the keeper, though the view does not change.
  watch.Recheck();
  CHECK(Eventually([&] { return keeper.passes() > passes; }));
  watch.View(&gen_now);
  CHECK(gen_now == gen);
  CHECK(keeper.files_written() == written);

  // A view change: the inventory is gone, so are its files.
  std::filesystem::remove(t / "conf/pre.json");
  CHECK(Eventually([&] { return !t.Exists("cdi/oci-decorator-pre.json"); }));
  CHECK(Eventually([&] { return !t.Exists("cdi/oci-decorator-pre.t.preload"); }));
  CHECK(t.Exists("cdi/moved"));
  keeper.Stop();
  watch.Stop();
}

// Issue 20's lesson, for the keeper too: a directory others keep writing to
// (another program's specs in /var/run/cdi, here every 5 ms) neither holds
// back the pass an event of ours asked for nor pushes back the periodic one.
TEST_CASE("kubelet cdi: a write storm to others' files in --cdi-dir starves no pass") {
  Running run(400ms);
  auto& t = run.t;
  auto& watch = run.watch;
  auto& keeper = run.keeper;
  const std::string spec = t / "cdi/oci-decorator-pre.json";
  REQUIRE(t.Exists("cdi/oci-decorator-pre.json"));

  std::atomic<bool> storm{true};
  std::thread writer([&] {
    const std::string other = t / "cdi/vendor-x.json";
    while (storm) {
      std::ofstream(other) << "{}";
      std::this_thread::sleep_for(5ms);
    }
  });
  // The periodic pass still comes (others' events alone never make one).
  uint64_t passes = keeper.passes();
  CHECK(Eventually([&] { return keeper.passes() >= passes + 2; }));
  // And an event of ours is acted on within the storm.
  std::filesystem::remove(spec);
  CHECK(Eventually([&] { return t.Exists("cdi/oci-decorator-pre.json"); }));
  storm = false;
  writer.join();
  keeper.Stop();
  watch.Stop();
}

namespace {

// Every entry of `dir`: name, inode, owner, mode and bytes, sorted. Equal
// before and after: nothing was removed, written or replaced there.
std::string Listing(const std::string& dir) {
  std::set<std::string> lines;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    struct stat st {};
    ::lstat(e.path().c_str(), &st);
    lines.insert(e.path().filename().string() + " " + std::to_string(st.st_ino) + " " +
                 std::to_string(st.st_uid) + " " + std::to_string(st.st_mode) + " " +
                 Slurp(e.path().string()));
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Copies every file of `from` into `to` as root's, mode 0644: what root
// keeps in another directory (/etc/cdi from `cdi generate`).
void CopyFiles(const std::string& from, const std::string& to) {
  std::filesystem::create_directories(to);
  for (const auto& e : std::filesystem::directory_iterator(from)) {
    const std::string dst = to + "/" + e.path().filename().string();
    std::ofstream(dst) << Slurp(e.path().string());
    REQUIRE(::chmod(dst.c_str(), 0644) == 0);
  }
}

const std::string kPreloadT = "oci-decorator-pre.t.preload";
const std::string kPreloadBytes = "/usr/lib64/libt.so\n";

}  // namespace

// Issue 27, finding 2. --cdi-dir /tmp/cdi, root's directory in a sticky
// world-writable one, goes (a tmp cleaner, an operator); a local user
// plants /tmp/cdi -> /etc/cdi, where root's specs are. Before, the keeper
// unlinked through the link (the stem of an inventory that yields no spec,
// the files of one that is gone), and Allocate's path-based "is it current"
// followed it: it would name the link's path to the kubelet, which the user
// can re-point at any file before the kubelet mounts it.
TEST_CASE("kubelet cdi: --cdi-dir through a link another user planted: nothing removed or named") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to act as uid 65534");
    return;
  }
  ocid::test::TempTree t;
  ::chmod(t.path().c_str(), 0755);  // so that uid 65534 reaches sticky/
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  // An inventory that yields no spec on this host: its files go by name.
  t.File("conf/nospec.json", Inventory(t / "host/missing.so", "example.com/nospec"));
  t.Dir("sticky/cdi");
  REQUIRE(::chmod((t / "sticky").c_str(), 01777) == 0);
  Node node{t / "conf", t / "sticky/cdi", {}};
  ocid::CdiDirKeeper keeper(t / "sticky/cdi", t / "conf");
  REQUIRE(keeper.Sync(node.Build()));
  std::string why, path;
  REQUIRE_MESSAGE(keeper.Resolves("example.com/pre=t", &why), why);
  REQUIRE(keeper.PreloadFileIfCurrent(kPreloadT, kPreloadBytes, &path));
  CHECK(path == t / "sticky/cdi" + "/" + kPreloadT);

  // Root's directory elsewhere (standing in for /etc/cdi) with the same
  // files, current, and those of the stem that yields no spec.
  CopyFiles(t / "sticky/cdi", t / "victim");
  t.File("victim/oci-decorator-nospec.json", "{}");
  t.File("victim/oci-decorator-nospec.t.preload", kPreloadBytes);
  std::filesystem::remove_all(t / "sticky/cdi");
  REQUIRE(ocid::test::AsNobody(
      [&] { return ::symlink((t / "victim").c_str(), (t / "sticky/cdi").c_str()) == 0; }));
  const std::string before = Listing(t / "victim");

  // The pass refuses the directory: nothing removed, nothing written.
  CHECK_FALSE(keeper.Sync(node.Build()));
  CHECK(Listing(t / "victim") == before);
  // Nothing of it is named.
  CHECK_FALSE(keeper.Resolves("example.com/pre=t", &why));
  CHECK_MESSAGE(why == "CDI directory " + (t / "sticky/cdi") +
                           " refused: not following symbolic link " + (t / "sticky/cdi") +
                           ": it belongs to another user (owner 65534)",
                why);
  path.clear();
  CHECK_FALSE(keeper.PreloadFileIfCurrent(kPreloadT, kPreloadBytes, &path));
  CHECK(path.empty());
  // The inventory goes: its files are not removed through the link either.
  std::filesystem::remove(t / "conf/pre.json");
  CHECK_FALSE(keeper.Sync(node.Build()));
  CHECK(Listing(t / "victim") == before);

  // Root's directory back: the keeper keeps it, and names it again.
  std::filesystem::remove(t / "sticky/cdi");
  t.Dir("sticky/cdi");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  CHECK(keeper.Sync(node.Build()));
  CHECK_MESSAGE(keeper.Resolves("example.com/pre=t", &why), why);
  CHECK(keeper.PreloadFileIfCurrent(kPreloadT, kPreloadBytes, &path));
  CHECK(Listing(t / "victim") == before);
}

// What Allocate names, the kubelet resolves later: the path must lead to
// the directory the keeper's last pass checked, by the writer's rule, as
// Allocate answers. A link root re-points is followed only after a pass
// has checked where it leads; an ancestor made writable by others after
// the pass is refused at once.
TEST_CASE(
    "kubelet cdi: a --cdi-dir re-pointed or made unsafe after a pass is seen as Allocate asks") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  t.Dir("one/cdi");
  t.Link("link", "one");
  Node node{t / "conf", t / "link/cdi", {}};
  ocid::CdiDirKeeper keeper(t / "link/cdi", t / "conf");
  REQUIRE(keeper.Sync(node.Build()));
  REQUIRE(t.Exists("one/cdi/" + kPreloadT));
  std::string why, path;
  REQUIRE_MESSAGE(keeper.Resolves("example.com/pre=t", &why), why);
  REQUIRE(keeper.PreloadFileIfCurrent(kPreloadT, kPreloadBytes, &path));
  CHECK(path == t / "link/cdi/" + kPreloadT);

  // Root re-points the link at another directory with the same files,
  // current: not named until a pass has checked it.
  CopyFiles(t / "one/cdi", t / "two/cdi");
  std::filesystem::remove(t / "link");
  t.Link("link", "two");
  CHECK_FALSE(keeper.Resolves("example.com/pre=t", &why));
  CHECK_MESSAGE(why == "CDI directory " + (t / "link/cdi") +
                           " is not the directory the keeper last checked (replaced)",
                why);
  path.clear();
  CHECK_FALSE(keeper.PreloadFileIfCurrent(kPreloadT, kPreloadBytes, &path));
  CHECK(path.empty());
  REQUIRE(keeper.Sync(node.Build()));
  CHECK_MESSAGE(keeper.Resolves("example.com/pre=t", &why), why);
  CHECK(keeper.PreloadFileIfCurrent(kPreloadT, kPreloadBytes, &path));

  // An ancestor made writable by others after the pass: others could now
  // swap what the path leads to. Refused as Allocate asks, no pass needed.
  REQUIRE(::chmod((t / "two").c_str(), 0777) == 0);
  CHECK_FALSE(keeper.Resolves("example.com/pre=t", &why));
  CHECK_MESSAGE(why == "CDI directory " + (t / "link/cdi") + " refused: directory " + (t / "two") +
                           " is writable by others and not sticky (owner " +
                           std::to_string(::geteuid()) + ", mode 0777)",
                why);
  CHECK_FALSE(keeper.PreloadFileIfCurrent(kPreloadT, kPreloadBytes, &path));
  // A pass then writes and removes nothing there, though the inventory is
  // gone.
  const std::string before = Listing(t / "two/cdi");
  std::filesystem::remove(t / "conf/pre.json");
  CHECK_FALSE(keeper.Sync(node.Build()));
  CHECK(Listing(t / "two/cdi") == before);
  CHECK_FALSE(keeper.PreloadFileIfCurrent(kPreloadT, kPreloadBytes, &path));
  // Safe again: the pass removes the gone inventory's files.
  REQUIRE(::chmod((t / "two").c_str(), 0755) == 0);
  CHECK(keeper.Sync(node.Build()));
  CHECK_FALSE(t.Exists("two/cdi/" + kPreloadT));
}
