// CdiDirWriter on real files: the device plugin's --cdi-dir writes each
// spec with its preload files (cdi.h), and removes them all when the
// inventory is gone.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../test_tree.h"
#include "kubelet_cdi.h"

namespace {

// One CDI kind belongs to one inventory (cdi.h CdiKindConflicts).
std::string Inventory(const std::string& lib, const std::string& kind = "example.com/pre") {
  return R"({"version": "1", "activation_flag": "OCI_T", "cdi_kind": ")" + kind + R"(",
    "driver_feature": ["t"],
    "inventory": {"t": {"devices": ["null"],
                        "libraries": [{"source": ")" + lib + R"(", "target": "/usr/lib64/libt.so"}],
                        "preload": ["/usr/lib64/libt.so"]}}})";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("kubelet cdi: --cdi-dir writes the preload files before the spec, and removes them") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  t.Dir("cdi");
  ocid::PluginOptions opts;
  opts.config_dir = t / "conf";
  opts.host_root = "/";
  opts.host_path_root = "/";
  ocid::CdiDirWriter w(opts, t / "cdi");
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

namespace {

struct stat StatOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st;
}

ocid::PluginOptions OptionsFor(const ocid::test::TempTree& t) {
  ocid::PluginOptions opts;
  opts.config_dir = t / "conf";
  opts.host_root = "/";
  opts.host_path_root = "/";
  return opts;
}

}  // namespace

TEST_CASE("kubelet cdi: a 0666 or foreign-owned spec or preload file is replaced on the next Sync") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  t.Dir("cdi");
  ocid::CdiDirWriter w(OptionsFor(t), t / "cdi");
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
  ocid::CdiDirWriter w(OptionsFor(t), t / "cdi");
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
    ocid::CdiDirWriter before(OptionsFor(t), t / "cdi");
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

  ocid::CdiDirWriter w(OptionsFor(t), t / "cdi");
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
  ocid::CdiDirWriter w(OptionsFor(t), t / "cdi");
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
  ocid::CdiDirWriter w(OptionsFor(t), t / "cdi");
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
