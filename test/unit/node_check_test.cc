// `check`: the report from inventories on fake hosts (FakeHost) and node
// facts, its table and JSON; the facts and engine readers on real fake
// trees (TempTree) under a host root.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "atomic_file.h"
#include "cdi.h"
#include "check_render.h"
#include "engine_check.h"
#include "fake_host.h"
#include "host_view.h"
#include "inventory.h"
#include "node_check.h"
#include "node_facts.h"
#include "onload_version_fixture.h"
#include "test_tree.h"
#include "version.h"

using ocid::CheckReport;
using ocid::CheckState;
using ocid::Error;
using ocid::Inventory;
using ocid::InventorySet;
using ocid::NodeFacts;
using ocid_test::FakeHost;

namespace {

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

const char* kOnload = R"({
  "version": "1",
  "activation_flag": "OCI_ONLOAD",
  "driver_feature": ["onload", "zf"],
  "needs_nic": {"pci_vendors": ["0x1924", "0x10ee"]},
  "inventory": {
    "onload": {
      "devices": ["onload", "sfc_char"],
      "binaries": ["/usr/bin/onload", {"source": "/usr/bin/onload_extra", "optional": true}],
      "libraries": [{"source": ["/usr/lib64/libonload.so*", "/usr/lib/x86_64-linux-gnu/libonload.so*"]}],
      "preload": ["libonload.so"]
    },
    "zf": {"devices": ["sfc_char"], "binaries": ["/usr/bin/zf_stackdump"]}
  }
})";

const char* kRdma = R"({
  "version": "1", "activation_flag": "OCI_RDMA", "driver_feature": ["rdma"],
  "inventory": {"rdma": {"devices": ["infiniband/uverbs0"]}}
})";

Inventory Parse(const std::string& json, const std::string& file) {
  Inventory inv;
  Error err;
  REQUIRE_MESSAGE(ocid::ParseInventory(json, file, &inv, &err), err.Line());
  return inv;
}

InventorySet Set(std::vector<Inventory> invs) {
  InventorySet s;
  s.inventories = std::move(invs);
  return s;
}

FakeHost Host() {
  FakeHost h;
  h.Chr("/dev/onload", 240, 0)
      .Chr("/dev/sfc_char", 241, 3)
      .File("/usr/bin/onload")
      .File("/usr/bin/zf_stackdump")
      .File("/usr/lib64/libonload.so");
  return h;
}

// A node with a Solarflare NIC and the hook's hooks.d entry.
NodeFacts Node() {
  NodeFacts n;
  n.nics.push_back({"0000:01:00.0", "0x1924", "0x0b03", "sfc", {"eth1"}, 0});
  n.cgroup = ocid::CgroupLayout::kHybrid;
  ocid::HooksEntry h;
  h.file = "/usr/share/containers/oci/hooks.d/oci-decorator-prestart.json";
  h.hook_path = "/usr/libexec/oci/hooks.d/oci-decorator";
  h.stages = {"prestart"};
  h.ours = true;
  n.engines.hooks.push_back(h);
  return n;
}

const std::string kFile = "/etc/ocid.d/onload.json";

CheckReport Report(const FakeHost& host, const NodeFacts& node, std::vector<Inventory> invs = {}) {
  if (invs.empty()) invs.push_back(Parse(kOnload, kFile));
  return ocid::BuildCheckReport("/etc/ocid.d", Set(std::move(invs)), host, "/", node);
}

const ocid::FeatureCheck& Feature(const CheckReport& r, const std::string& name) {
  for (const auto& i : r.inventories)
    for (const auto& f : i.features)
      if (f.name == name) return f;
  FAIL("no feature " << name);
  throw 0;
}

}  // namespace

TEST_CASE("check: everything present, a NIC and a hooks.d entry: ready") {
  CheckReport r = Report(Host(), Node());
  CHECK(r.ready);
  CHECK(r.reasons.empty());
  REQUIRE(r.inventories.size() == 1);
  CHECK(r.inventories[0].state == CheckState::kOk);
  CHECK(r.inventories[0].delivered);
  const auto& onload = Feature(r, "onload");
  CHECK(onload.plan_ok);
  CHECK(onload.needs_nic);
  CHECK(onload.devices == 2);
  // The optional entry missing is information, not a problem.
  bool info = false;
  for (const auto& e : onload.entries)
    if (e.optional) {
      CHECK(e.state == CheckState::kInfo);
      CHECK(Contains(e.reason, "/usr/bin/onload_extra"));
      info = true;
    }
  CHECK(info);
  CHECK(onload.state == CheckState::kOk);
}

TEST_CASE("check: devices are reported with type, major:minor, mode and owner") {
  FakeHost h = Host();
  h.Perm("/dev/sfc_char", 0660, 0, 44);
  CheckReport r = Report(h, Node());
  const auto& onload = Feature(r, "onload");
  const ocid::CheckedFile* sfc = nullptr;
  for (const auto& e : onload.entries)
    for (const auto& f : e.files)
      if (f.path == "/dev/sfc_char") sfc = &f;
  REQUIRE(sfc);
  CHECK(sfc->type == ocid::FileType::kCharDevice);
  CHECK(sfc->major == 241);
  CHECK(sfc->minor == 3);
  CHECK(sfc->mode == 0660);
  CHECK(sfc->gid == 44);
  CHECK(Contains(sfc->problem, "only its owner or group can open it read-write"));
  // A permission problem warns; the node stays ready (root containers work).
  CHECK(onload.state == CheckState::kWarn);
  CHECK(r.ready);
  std::string table = ocid::CheckTable(r);
  CHECK(Contains(table, "char 241:3, mode 0660, owner 0:44"));
}

TEST_CASE("check: a library only root can read is a warning naming it") {
  FakeHost h = Host();
  h.Perm("/usr/lib64/libonload.so", 0600);
  CheckReport r = Report(h, Node());
  const auto& onload = Feature(r, "onload");
  CHECK(onload.state == CheckState::kWarn);
  CHECK(onload.reasons.empty());
  REQUIRE(!onload.warnings.empty());
  CHECK(Contains(
      onload.warnings[0],
      "/usr/lib64/libonload.so: only its owner or group can read it (mode 0600, owner 0:0)"));
  CHECK(r.ready);
  CHECK(Contains(ocid::CheckTable(r), "WARN  libraries"));
}

TEST_CASE("check: every missing required entry is named, with the paths tried") {
  FakeHost h = Host();
  h.Remove("/usr/bin/onload").Remove("/usr/lib64/libonload.so").Remove("/usr/bin/zf_stackdump");
  CheckReport r = Report(h, Node());
  CHECK_FALSE(r.ready);
  const auto& onload = Feature(r, "onload");
  CHECK(onload.state == CheckState::kFail);
  CHECK_FALSE(onload.plan_ok);
  int failed = 0;
  for (const auto& e : onload.entries) {
    if (e.state != CheckState::kFail) continue;
    ++failed;
    if (e.category == "libraries") {
      REQUIRE(e.tried.size() == 2);
      CHECK(e.tried[1] == "/usr/lib/x86_64-linux-gnu/libonload.so*");
      CHECK(Contains(e.reason, "required libraries entry of feature \"onload\" not found"));
      CHECK(Contains(e.reason,
                     "/usr/lib64/libonload.so* or /usr/lib/x86_64-linux-gnu/libonload.so*"));
    }
  }
  CHECK(failed == 2);  // binaries and libraries, not only the first
  CHECK(onload.reasons.size() == 2);
  bool zf_named = false;
  for (const auto& why : r.reasons) zf_named = zf_named || Contains(why, "/usr/bin/zf_stackdump");
  CHECK(zf_named);
}

TEST_CASE("check: a device entry that is a regular file fails the feature") {
  FakeHost h = Host();
  h.Remove("/dev/onload").File("/dev/onload");
  CheckReport r = Report(h, Node());
  CHECK(Feature(r, "onload").state == CheckState::kFail);
  CHECK(Contains(Feature(r, "onload").reasons[0], "host path is a file, expected a device node"));
  CHECK(Feature(r, "zf").state == CheckState::kOk);
  CHECK_FALSE(r.ready);
}

TEST_CASE("check: no Solarflare/Xilinx NIC: Onload features fail, others do not") {
  NodeFacts n = Node();
  n.nics.clear();
  FakeHost h = Host();
  h.Chr("/dev/infiniband/uverbs0", 231, 192);
  CheckReport r = Report(h, n, {Parse(kOnload, kFile), Parse(kRdma, "/etc/ocid.d/rdma.json")});
  CHECK_FALSE(r.ready);
  CHECK(Feature(r, "onload").state == CheckState::kFail);
  CHECK(Feature(r, "zf").state == CheckState::kFail);
  CHECK(Feature(r, "onload").reasons.back() ==
        "no NIC of PCI vendor 0x1924 or 0x10ee in /sys/bus/pci/devices (the inventory's "
        "\"needs_nic\")");
  CHECK_FALSE(Feature(r, "rdma").needs_nic);
  CHECK(Feature(r, "rdma").state == CheckState::kOk);
  CHECK(Contains(ocid::CheckTable(r), "FAIL  nic"));
  // Without the Onload inventory the same node is ready.
  CHECK(Report(h, n, {Parse(kRdma, "/etc/ocid.d/rdma.json")}).ready);
}

TEST_CASE("check: the inventory's needs_nic decides, not the device names") {
  NodeFacts n = Node();
  n.nics.clear();
  // Lists /dev/onload but says nothing of a NIC: needs none (the old
  // heuristic on device names is gone).
  const std::string no_option = R"({"version": "1", "activation_flag": "OCI_ONLOAD",
    "driver_feature": ["onload"], "inventory": {"onload": {"devices": ["onload"]}}})";
  CheckReport r = Report(Host(), n, {Parse(no_option, kFile)});
  CHECK_FALSE(Feature(r, "onload").needs_nic);
  CHECK(Feature(r, "onload").state == CheckState::kOk);
  // A Mellanox requirement on an RDMA feature: its vendor, read and named.
  const std::string mlx = R"({"version": "1", "activation_flag": "OCI_RDMA",
    "driver_feature": ["rdma"], "needs_nic": {"pci_vendors": ["0x15b3"]},
    "inventory": {"rdma": {"devices": ["infiniband/uverbs0"]}}})";
  FakeHost h = Host();
  h.Chr("/dev/infiniband/uverbs0", 231, 192);
  r = Report(h, n, {Parse(mlx, "/etc/ocid.d/rdma.json")});
  CHECK(Feature(r, "rdma").needs_nic);
  CHECK(Feature(r, "rdma").reasons.back() ==
        "no NIC of PCI vendor 0x15b3 in /sys/bus/pci/devices (the inventory's \"needs_nic\")");
  n.nics.push_back({"0000:3b:00.0", "0x15b3", "0x1017", "mlx5_core", {"ens2f0"}, 0});
  r = Report(h, n, {Parse(mlx, "/etc/ocid.d/rdma.json")});
  CHECK(Feature(r, "rdma").state == CheckState::kOk);
  CHECK(Contains(ocid::CheckTable(r), "0x15b3:0x1017, driver mlx5_core, NUMA node 0, ens2f0"));
}

TEST_CASE("check: delivery modes") {
  FakeHost h = Host();
  NodeFacts n = Node();
  n.engines.hooks.clear();

  SUBCASE("none set up: not ready, saying what to run") {
    CheckReport r = Report(h, n);
    CHECK_FALSE(r.ready);
    CHECK_FALSE(r.inventories[0].delivered);
    CHECK(Contains(r.reasons.back(), "no delivery mode is set up"));
  }
  SUBCASE("the runtime shim in docker is enough") {
    ocid::RuntimeEntry e;
    e.engine = "docker";
    e.ours = true;
    n.engines.runtimes.push_back(e);
    CHECK(Report(h, n).ready);
  }
  SUBCASE("a hooks.d entry that is not ours does not count") {
    ocid::HooksEntry e;
    e.ours = false;
    e.problem = "its args do not run `hook`";
    n.engines.hooks.push_back(e);
    CHECK_FALSE(Report(h, n).ready);
  }
  SUBCASE("a current CDI spec delivers; a stale one warns and does not") {
    Inventory inv = Parse(kOnload, kFile);
    ocid::CdiSpec spec;
    Error err;
    REQUIRE(ocid::BuildCdiSpec(inv, h, "/", "/etc/cdi/oci-decorator-onload.json", &spec, &err));
    REQUIRE_FALSE(spec.preload_files.empty());
    n.cdi_files.push_back({"/etc/cdi", "oci-decorator-onload.json", spec.json, {}});
    for (const auto& f : spec.preload_files)
      n.cdi_preload_files.push_back({"/etc/cdi", f.name, f.bytes, {}});
    CheckReport r = Report(h, n);
    CHECK(r.ready);
    REQUIRE(r.inventories[0].cdi.size() == 1);
    CHECK(r.inventories[0].cdi[0].state == "current");
    CHECK(r.inventories[0].cdi[0].path == "/etc/cdi/oci-decorator-onload.json");

    // The spec alone, its preload file missing or different: stale.
    auto preload = n.cdi_preload_files;
    n.cdi_preload_files.pop_back();
    r = Report(h, n);
    CHECK(r.inventories[0].cdi[0].state == "stale");
    CHECK(Contains(r.inventories[0].cdi[0].reason, "preload file /etc/cdi/oci-decorator-onload."));
    CHECK(Contains(r.inventories[0].cdi[0].reason, "missing"));
    n.cdi_preload_files = preload;
    n.cdi_preload_files.back().bytes += "/x.so\n";
    r = Report(h, n);
    CHECK(r.inventories[0].cdi[0].state == "stale");
    CHECK(Contains(r.inventories[0].cdi[0].reason, "differs"));
    // The same files in the other CDI directory do not count for this one.
    n.cdi_preload_files = preload;
    for (auto& f : n.cdi_preload_files) f.dir = "/var/run/cdi";
    r = Report(h, n);
    CHECK(r.inventories[0].cdi[0].state == "stale");
    n.cdi_preload_files = preload;

    n.cdi_files[0].bytes += " ";
    r = Report(h, n);
    CHECK_FALSE(r.ready);
    CHECK(r.inventories[0].cdi[0].state == "stale");
    CHECK(Contains(r.inventories[0].cdi[0].reason, "cdi generate"));
    CHECK(r.inventories[0].state == CheckState::kFail);

    // The library moved: the spec written before names the old file.
    n.cdi_files[0].bytes = spec.json;
    FakeHost moved = h;
    moved.Remove("/usr/lib64/libonload.so").File("/usr/lib/x86_64-linux-gnu/libonload.so");
    r = Report(moved, n);
    CHECK(r.inventories[0].cdi[0].state == "stale");
  }
  SUBCASE("a spec or preload file others can write, or a CDI dir others can change, is unsafe") {
    n.engines.hooks = Node().engines.hooks;  // delivered anyway: unsafe still fails
    Inventory inv = Parse(kOnload, kFile);
    ocid::CdiSpec spec;
    Error err;
    REQUIRE(ocid::BuildCdiSpec(inv, h, "/", "/etc/cdi/oci-decorator-onload.json", &spec, &err));
    n.cdi_files.push_back({"/etc/cdi", "oci-decorator-onload.json", spec.json, {}});
    for (const auto& f : spec.preload_files)
      n.cdi_preload_files.push_back({"/etc/cdi", f.name, f.bytes, {}});
    auto step = [](ocid::DirStep::Kind kind, const std::string& path) {
      ocid::DirStep d;
      d.kind = kind;
      d.path = path;
      d.mode = 0755;
      return d;
    };
    n.cdi_dirs.push_back(
        {"/etc/cdi",
         {step(ocid::DirStep::Kind::kDir, "/etc/cdi"), step(ocid::DirStep::Kind::kAncestor, "/etc"),
          step(ocid::DirStep::Kind::kAncestor, "/")}});
    CheckReport r = Report(h, n);
    REQUIRE(r.inventories[0].cdi.size() == 1);
    REQUIRE(r.inventories[0].cdi[0].state == "current");
    CHECK(r.ready);

    auto unsafe = [&](const std::string& why) {
      CheckReport u = Report(h, n);
      CHECK(u.inventories[0].cdi[0].state == "unsafe");
      CHECK_MESSAGE(u.inventories[0].cdi[0].reason == why, u.inventories[0].cdi[0].reason);
      CHECK(u.inventories[0].state == CheckState::kFail);
      CHECK_FALSE(u.ready);
      CHECK(Contains(ocid::CheckTable(u), "FAIL  cdi"));
    };
    n.cdi_files[0].owner.mode = 0666;
    unsafe("/etc/cdi/oci-decorator-onload.json is writable by others (owner 0, mode 0666)");
    n.cdi_files[0].owner.mode = 0644;
    n.cdi_preload_files[0].owner.uid = 65534;
    unsafe("its preload file /etc/cdi/" + n.cdi_preload_files[0].name +
           " belongs to another user (owner 65534, mode 0644)");
    n.cdi_preload_files[0].owner.uid = 0;
    n.cdi_dirs[0].steps[0].mode = 01777;
    unsafe(
        "directory /etc/cdi is writable by others (owner 0, mode 1777): others can replace its "
        "specs");
    n.cdi_dirs[0].steps[0].mode = 0755;
    n.cdi_dirs[0].steps[1].mode = 0777;
    unsafe(
        "directory /etc is writable by others and not sticky (owner 0, mode 0777): others can "
        "replace its specs");
    n.cdi_dirs[0].steps[1].mode = 01777;  // sticky, as /tmp: fine above
    CHECK(Report(h, n).inventories[0].cdi[0].state == "current");
  }
  SUBCASE("a spec no inventory writes is an orphan") {
    n.engines.hooks = Node().engines.hooks;
    n.cdi_files.push_back({"/var/run/cdi", "oci-decorator-gone.json", "{}", {}});
    CheckReport r = Report(h, n);
    CHECK(r.ready);
    REQUIRE(r.orphan_cdi.size() == 1);
    CHECK(r.orphan_cdi[0].path == "/var/run/cdi/oci-decorator-gone.json");
    CHECK(Contains(ocid::CheckTable(r), "WARN  cdi"));
  }
}

TEST_CASE("check: broken inventories and an empty config directory are not ready") {
  InventorySet set = Set({Parse(kOnload, kFile)});
  set.broken.push_back(
      {"/etc/ocid.d/bad.json", "OCI_BAD", Error{"invalid inventory /etc/ocid.d/bad.json", "", 0}});
  CheckReport r = ocid::BuildCheckReport("/etc/ocid.d", set, Host(), "/", Node());
  CHECK_FALSE(r.ready);
  REQUIRE(r.inventories.size() == 2);
  CHECK_FALSE(r.inventories[0].loaded);  // sorted by file: bad.json first
  CHECK(Contains(ocid::CheckTable(r), "broken: invalid inventory /etc/ocid.d/bad.json"));

  CheckReport empty = ocid::BuildCheckReport("/etc/ocid.d", InventorySet{}, Host(), "/", Node());
  CHECK_FALSE(empty.ready);
  CHECK(empty.reasons == std::vector<std::string>{"no inventories in /etc/ocid.d"});
}

TEST_CASE("check --json: schema version 1 and its fields") {
  FakeHost h = Host();
  h.Remove("/usr/bin/zf_stackdump");
  NodeFacts n = Node();
  n.kernel.openat2 = false;
  nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(Report(h, n)));
  CHECK(j["version"] == 1);
  CHECK(j["ready"] == false);
  CHECK(j["reasons"].is_array());
  CHECK(j["config_dir"] == "/etc/ocid.d");
  CHECK(j["host_root"] == "/");
  const auto& inv = j["inventories"][0];
  CHECK(inv["file"] == kFile);
  CHECK(inv["activation_flag"] == "OCI_ONLOAD");
  CHECK(inv["loaded"] == true);
  CHECK(inv["state"] == "fail");
  CHECK(inv["delivered"] == true);
  CHECK(inv["cdi"].is_array());
  const auto& onload = inv["features"][0];
  CHECK(onload["name"] == "onload");
  CHECK(onload["state"] == "ok");
  CHECK(onload["plan_builds"] == true);
  CHECK(onload["needs_nic"] == true);
  CHECK(onload["device_rules"] == 2);
  auto entry = [](const nlohmann::json& feature, const std::string& category) {
    for (const auto& e : feature["entries"])
      if (e["category"] == category) return e;
    return nlohmann::json();
  };
  const auto dev = entry(onload, "devices");
  CHECK(dev["category"] == "devices");
  CHECK(dev["files"][0]["type"] == "char-device");
  CHECK(dev["files"][0]["major"] == 240);
  CHECK(dev["files"][0]["minor"] == 0);
  CHECK(dev["files"][0]["mode"] == "0666");
  CHECK(dev["files"][0]["uid"] == 0);
  const auto& zf = inv["features"][1];
  CHECK(zf["state"] == "fail");
  CHECK(zf["plan_builds"] == false);
  CHECK(entry(zf, "binaries")["tried"] == nlohmann::json::array({"/usr/bin/zf_stackdump"}));
  CHECK(j["nics"][0]["vendor"] == "0x1924");
  CHECK(j["nics"][0]["driver"] == "sfc");
  CHECK(j["nics"][0]["interfaces"][0] == "eth1");
  CHECK(j["cgroup"]["mode"] == "hybrid");
  CHECK(j["kernel"]["openat2"] == false);
  CHECK(j["kernel"]["mount_api"] == true);
  CHECK(j["delivery"]["engine_set_up"] == true);
  CHECK(j["delivery"]["hooks"][0]["set_up"] == true);
  CHECK(j["delivery"]["runtimes"].is_array());
  CHECK(j["delivery"]["cdi_error"] == "");
  // Where each mode puts libraries (issue 28).
  const auto& libs = j["delivery"]["library_dirs"];
  for (const char* mode : {"hook", "runtime_shim"}) {
    CAPTURE(mode);
    CHECK(libs[mode]["rule"] == "image_libc");
    CHECK(libs[mode]["dirs"] ==
          nlohmann::json::array({"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64",
                                 "/lib64", "/usr/lib", "/lib"}));
    CHECK(Contains(libs[mode]["why"].get<std::string>(), "the image's libc.so.6"));
  }
  for (const char* mode : {"cdi", "device_plugin"}) {
    CAPTURE(mode);
    CHECK(libs[mode]["rule"] == "all");
    CHECK(libs[mode]["dirs"] == nlohmann::json::array({"/usr/lib/x86_64-linux-gnu", "/usr/lib64"}));
    CHECK(Contains(libs[mode]["why"].get<std::string>(), "one answer for every image"));
  }
  const std::string table = ocid::CheckTable(Report(h, n));
  CHECK(Contains(table, "INFO  lib dirs    hook"));
  CHECK(Contains(table, "one of /usr/lib/x86_64-linux-gnu, /lib/x86_64-linux-gnu, /usr/lib64"));
  CHECK(Contains(table, "INFO  lib dirs    cdi"));
  CHECK(
      Contains(table, "all of /usr/lib/x86_64-linux-gnu, /usr/lib64: one answer for every image"));
  n.cdi_error = "cannot open directory: /etc/cdi: Permission denied";
  CHECK(Contains(ocid::CheckTable(Report(h, n)), "WARN  cdi         -"));
}

TEST_CASE("check table: aligned columns, one line per row, the verdict last") {
  FakeHost h = Host();
  h.Remove("/usr/bin/zf_stackdump");
  std::string t = ocid::CheckTable(Report(h, Node()));
  std::vector<std::string> lines;
  for (size_t p = 0; p < t.size();) {
    size_t e = t.find('\n', p);
    lines.push_back(t.substr(p, e - p));
    p = e + 1;
  }
  REQUIRE(lines.size() > 5);
  size_t detail = lines[0].find("DETAIL");
  size_t subject = lines[0].find("SUBJECT");
  REQUIRE(detail != std::string::npos);
  for (const auto& l : lines) {
    if (l.rfind("NOT READY", 0) == 0) break;
    std::string state = l.substr(0, 4);
    CHECK_MESSAGE((state == "STAT" || state == "OK  " || state == "INFO" || state == "WARN" ||
                   state == "FAIL"),
                  l);
    CHECK_MESSAGE(l[subject - 1] == ' ', l);
    CHECK_MESSAGE(l[detail - 1] == ' ', l);
  }
  CHECK(Contains(t, "FAIL  feature     zf"));
  CHECK(Contains(t, "NOT READY:\n  /etc/ocid.d/onload.json: feature zf: required binaries entry"));
}

// --- the readers, on trees under a host root --------------------------------

TEST_CASE("node facts: NICs from sysfs, filtered by vendor") {
  ocid::test::TempTree t;
  const std::string d = "sys/bus/pci/devices/";
  t.File(d + "0000:01:00.0/vendor", "0x1924\n");
  t.File(d + "0000:01:00.0/device", "0x0b03\n");
  t.Link(d + "0000:01:00.0/driver", "../../../bus/pci/drivers/sfc");
  t.Dir(d + "0000:01:00.0/net/eth1");
  t.Dir(d + "0000:01:00.0/net/eth0");
  t.File(d + "0000:01:00.0/numa_node", "1\n");
  t.File(d + "0000:02:00.0/numa_node", "-1\n");   // the platform gives none
  t.File(d + "0000:02:00.0/vendor", "0x10ee\n");  // Xilinx, no driver bound
  t.File(d + "0000:02:00.0/device", "0x5084\n");
  t.File(d + "0000:03:00.0/vendor", "0x8086\n");  // Intel: not listed
  t.Dir(d + "0000:04:00.0");                      // no vendor file: skipped
  std::unique_ptr<ocid::HostRootView> files;
  Error err;
  REQUIRE(ocid::HostRootView::Open(t.path(), &files, &err));
  std::vector<ocid::PciNic> nics;
  REQUIRE_MESSAGE(ocid::ReadPciNics(*files, {"0x1924", "0x10ee"}, &nics, &err), err.Line());
  REQUIRE(nics.size() == 2);
  CHECK(nics[0].address == "0000:01:00.0");
  CHECK(nics[0].vendor == "0x1924");
  CHECK(nics[0].device == "0x0b03");
  CHECK(nics[0].driver == "sfc");
  CHECK(nics[0].interfaces == std::vector<std::string>{"eth0", "eth1"});
  CHECK(nics[1].vendor == "0x10ee");
  CHECK(nics[1].driver.empty());
  CHECK(nics[1].interfaces.empty());
  CHECK(nics[0].numa_node == 1);
  CHECK(nics[1].numa_node == -1);
  // The vendors asked for decide: Intel's alone.
  REQUIRE(ocid::ReadPciNics(*files, {"0x8086"}, &nics, &err));
  REQUIRE(nics.size() == 1);
  CHECK(nics[0].address == "0000:03:00.0");
  CHECK(nics[0].numa_node == -1);  // no numa_node file

  ocid::test::TempTree none;
  REQUIRE(ocid::HostRootView::Open(none.path(), &files, &err));
  REQUIRE(ocid::ReadPciNics(*files, {"0x1924"}, &nics, &err));
  CHECK(nics.empty());
}

TEST_CASE("node facts: cgroup layout") {
  auto layout = [](const std::function<void(ocid::test::TempTree&)>& make) {
    ocid::test::TempTree t;
    make(t);
    std::unique_ptr<ocid::HostRootView> files;
    Error err;
    REQUIRE(ocid::HostRootView::Open(t.path(), &files, &err));
    return std::string(ocid::CgroupLayoutName(ocid::ReadCgroupLayout(*files)));
  };
  CHECK(layout([](auto& t) { t.File("sys/fs/cgroup/cgroup.controllers", "cpu io\n"); }) == "v2");
  CHECK(layout([](auto& t) {
          t.Dir("sys/fs/cgroup/devices");
          t.File("sys/fs/cgroup/unified/cgroup.controllers", "");
        }) == "hybrid");
  CHECK(layout([](auto& t) { t.Dir("sys/fs/cgroup/devices"); }) == "v1");
  CHECK(layout([](auto& t) { t.Dir("sys"); }) == "unknown");
}

TEST_CASE("node facts: our CDI spec files in both directories") {
  ocid::test::TempTree t;
  t.File("etc/cdi/oci-decorator-onload.json", "{\"a\":1}\n");
  t.File("etc/cdi/nvidia.json", "{}");
  t.Dir("run/cdi");
  t.Link("var/run", "/run");  // absolute: resolved inside the host root
  t.File("run/cdi/oci-decorator-rdma.json", "{}");
  std::unique_ptr<ocid::HostRootView> files;
  Error err;
  REQUIRE(ocid::HostRootView::Open(t.path(), &files, &err));
  std::vector<ocid::CdiFile> cdi;
  REQUIRE(ocid::ReadCdiFiles(*files, &cdi, &err));
  REQUIRE(cdi.size() == 2);
  CHECK(cdi[0].dir == "/etc/cdi");
  CHECK(cdi[0].bytes == "{\"a\":1}\n");
  CHECK(cdi[1].dir == "/var/run/cdi");
  CHECK(cdi[1].name == "oci-decorator-rdma.json");
}

TEST_CASE("engine check: parsers") {
  ocid::HooksEntryFacts f;
  Error err;
  REQUIRE(ocid::ParseHooksEntry(
      R"({"version":"1.0.0","hook":{"path":"/x/oci-decorator","args":["oci-decorator","hook","prestart"]},"when":{"always":true},"stages":["prestart"]})",
      "e.json", &f, &err));
  CHECK(f.hook_path == "/x/oci-decorator");
  CHECK(f.args.size() == 3);
  CHECK(f.stages == std::vector<std::string>{"prestart"});
  CHECK_FALSE(ocid::ParseHooksEntry("{\"hook\":{}}", "e.json", &f, &err));
  CHECK(Contains(err.Line(), "no string hook.path"));

  std::vector<std::pair<std::string, std::string>> rt;
  REQUIRE(ocid::ParseDockerRuntimes(
      R"({"runtimes":{"oci-decorator":{"path":"/usr/bin/oci-decorator-runtime","runtimeArgs":[]},"x":{}}})",
      "daemon.json", &rt, &err));
  REQUIRE(rt.size() == 1);
  CHECK(rt[0].second == "/usr/bin/oci-decorator-runtime");
  REQUIRE(ocid::ParseDockerRuntimes("  \n", "daemon.json", &rt, &err));
  CHECK(rt.empty());
  CHECK_FALSE(ocid::ParseDockerRuntimes("{", "daemon.json", &rt, &err));
  CHECK(Contains(err.Line(), "daemon.json"));

  CHECK(
      ocid::ContainerdBinaryNames(
          "# BinaryName = \"/no\"\n[a.options]\n  BinaryName = \"/usr/bin/oci-decorator-runtime\"\n"
          "BinaryName='/lit'\nBinaryNameX = \"/no\"\n") ==
      std::vector<std::string>{"/usr/bin/oci-decorator-runtime", "/lit"});
}

TEST_CASE("engine check: hooks.d, docker and containerd under a host root") {
  ocid::test::TempTree t;
  t.File("usr/libexec/oci/hooks.d/oci-decorator", "binary");
  t.Link("usr/bin/oci-decorator-runtime", "/usr/libexec/oci/hooks.d/oci-decorator");
  t.File("usr/bin/other-oci-decorator", "another binary");
  t.Link("opt/oci-decorator", "/usr/bin/other-oci-decorator");
  const std::string hooks = "usr/share/containers/oci/hooks.d/";
  auto entry = [](const std::string& path, const std::string& args, const std::string& stage) {
    return R"({"version":"1.0.0","hook":{"path":")" + path + R"(","args":)" + args +
           R"(},"when":{"always":true},"stages":[")" + stage + R"("]})";
  };
  t.File(hooks + "oci-decorator-prestart.json",
         entry("/usr/libexec/oci/hooks.d/oci-decorator", R"(["oci-decorator","hook","prestart"])",
               "prestart"));
  t.File(hooks + "oci-decorator-poststop.json",
         entry("/usr/libexec/oci/hooks.d/oci-decorator", R"(["oci-decorator","hook","poststop"])",
               "poststop"));
  t.File(hooks + "wrong-args.json", entry("/usr/libexec/oci/hooks.d/oci-decorator",
                                          R"(["oci-decorator","plan"])", "prestart"));
  t.File(hooks + "nvidia.json", entry("/usr/bin/nvidia-container-toolkit", "[]", "prestart"));
  t.File("etc/containers/oci/hooks.d/old.json",
         entry("/opt/oci-decorator", R"(["oci-decorator","hook"])", "prestart"));
  t.File(hooks + "broken.json", "{");  // someone else's: ignored
  t.File("etc/docker/daemon.json",
         R"({"runtimes":{"ocid":{"path":"/usr/bin/oci-decorator-runtime"},)"
         R"("misnamed":{"path":"/usr/libexec/oci/hooks.d/oci-decorator"},)"
         R"("runc2":{"path":"/usr/sbin/runc"}}})");
  t.File("etc/containerd/conf.d/oci-decorator.toml",
         "[x.options]\n  BinaryName = \"/usr/bin/oci-decorator-runtime\"\n");

  std::unique_ptr<ocid::HostRootView> files;
  Error err;
  REQUIRE(ocid::HostRootView::Open(t.path(), &files, &err));
  ocid::FileIdentity self;
  REQUIRE(files->Identity("/usr/libexec/oci/hooks.d/oci-decorator", &self, &err) ==
          ocid::HostRead::kOk);
  ocid::EngineSetup s;
  ocid::ReadEngineSetup(*files, self, &s);

  REQUIRE(s.hooks.size() == 4);  // nvidia's and the broken one are not ours
  std::map<std::string, const ocid::HooksEntry*> by;
  for (const auto& h : s.hooks) by[h.file.substr(h.file.rfind('/') + 1)] = &h;
  CHECK(by["oci-decorator-prestart.json"]->ours);
  CHECK_FALSE(by["oci-decorator-poststop.json"]->ours);
  CHECK(Contains(by["oci-decorator-poststop.json"]->problem, "no prestart or createRuntime"));
  CHECK(Contains(by["wrong-args.json"]->problem, "do not run `hook`"));
  CHECK(Contains(by["old.json"]->problem, "is not this oci-decorator binary"));
  CHECK(s.warnings.empty());

  REQUIRE(s.runtimes.size() == 3);
  CHECK(s.runtimes[0].engine == "docker");
  CHECK(s.runtimes[0].name == "misnamed");  // JSON object order: sorted keys
  CHECK(Contains(s.runtimes[0].problem, "not oci-decorator-runtime"));
  CHECK(s.runtimes[1].name == "ocid");
  CHECK(s.runtimes[1].ours);
  CHECK(s.runtimes[2].engine == "containerd");
  CHECK_FALSE(s.runtimes[2].ours);
  CHECK(Contains(s.runtimes[2].problem, "does not import it"));

  // No "default-runtime": docker's runc.
  CHECK(s.docker_default.read);
  CHECK(s.docker_default.name == "runc");
  CHECK_FALSE(s.docker_default.shim);

  // The shim as the default, running another runtime; or a misnamed one.
  t.File("etc/docker/daemon.json",
         R"({"default-runtime":"ocid","runtimes":{"ocid":{"path":"/usr/bin/oci-decorator-runtime",)"
         R"("runtimeArgs":["--ocid-runtime=/usr/bin/crun"]}}})");
  ocid::ReadEngineSetup(*files, self, &s);
  CHECK(s.docker_default.name == "ocid");
  CHECK(s.docker_default.shim);
  CHECK(s.docker_default.shim_runs == "/usr/bin/crun");
  // As docker's default the shim starts every container: what it runs must exist.
  CHECK(Contains(s.docker_default.problem, "the runtime it runs, "));
  CHECK(Contains(s.docker_default.problem, "/usr/bin/crun, does not exist"));
  t.File("usr/bin/crun", "a runtime");
  ocid::ReadEngineSetup(*files, self, &s);
  CHECK(s.docker_default.problem.empty());
  // Settings the shim cannot read: the default file, or one runtimeArgs name.
  const std::string settings = std::string(OCID_DEFAULT_SHIM_CONFIG).substr(1);
  t.File(settings, R"({"log_level": "loud"})");
  ocid::ReadEngineSetup(*files, self, &s);
  CHECK(Contains(s.docker_default.problem, "loud"));
  t.File(settings, R"({"runtime": "/usr/bin/crun"})");
  ocid::ReadEngineSetup(*files, self, &s);
  CHECK(s.docker_default.problem.empty());
  t.File("etc/docker/daemon.json",
         R"({"default-runtime":"ocid","runtimes":{"ocid":{"path":"/usr/bin/oci-decorator-runtime",)"
         R"("runtimeArgs":["--ocid-config","/etc/none.json"]}}})");
  ocid::ReadEngineSetup(*files, self, &s);
  CHECK(Contains(s.docker_default.problem, "/etc/none.json does not exist"));
  t.File("etc/docker/daemon.json",
         R"({"default-runtime":"ocid","runtimes":{"ocid":{"path":"/usr/bin/oci-decorator-runtime",)"
         R"("runtimeArgs":["--ocid-bogus","x"]}}})");
  ocid::ReadEngineSetup(*files, self, &s);
  CHECK(Contains(s.docker_default.problem, "its runtimeArgs: unknown shim option"));
  t.File("etc/docker/daemon.json",
         R"({"default-runtime":"misnamed","runtimes":{)"
         R"("misnamed":{"path":"/usr/libexec/oci/hooks.d/oci-decorator"}}})");
  ocid::ReadEngineSetup(*files, self, &s);
  CHECK(s.docker_default.name == "misnamed");
  CHECK_FALSE(s.docker_default.shim);
  t.File("etc/docker/daemon.json",
         R"({"runtimes":{"ocid":{"path":"/usr/bin/oci-decorator-runtime"},)"
         R"("misnamed":{"path":"/usr/libexec/oci/hooks.d/oci-decorator"},)"
         R"("runc2":{"path":"/usr/sbin/runc"}}})");

  // Imported by config.toml: now containerd reads it.
  t.File("etc/containerd/config.toml",
         "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n");
  ocid::ReadEngineSetup(*files, self, &s);
  CHECK(s.runtimes.back().ours);

  // A daemon.json docker cannot read is a warning, not a crash.
  t.File("etc/docker/daemon.json", "{\"runtimes\": [");
  ocid::ReadEngineSetup(*files, self, &s);
  REQUIRE(s.warnings.size() == 1);
  CHECK(Contains(s.warnings[0], "daemon.json"));
  CHECK_FALSE(s.docker_default.read);
}

TEST_CASE("host files: reads stay inside the host root and never wait on a FIFO") {
  ocid::test::TempTree t;
  t.File("etc/real.json", "inside");
  t.Link("etc/abs.json", "/etc/real.json");               // absolute: inside the root
  t.Link("etc/out.json", "../../../../../etc/hostname");  // climbs: stays in the root
  REQUIRE(::mkfifo((t / "etc/fifo.json").c_str(), 0644) == 0);
  std::unique_ptr<ocid::HostRootView> files;
  Error err;
  REQUIRE(ocid::HostRootView::Open(t.path(), &files, &err));
  std::string bytes;
  REQUIRE(files->Read("/etc/abs.json", 1024, &bytes, &err) == ocid::HostRead::kOk);
  CHECK(bytes == "inside");
  CHECK(files->Read("/etc/out.json", 1024, &bytes, &err) == ocid::HostRead::kMissing);
  CHECK(files->Read("/etc/fifo.json", 1024, &bytes, &err) == ocid::HostRead::kError);
  CHECK(Contains(err.Line(), "not a regular file"));
  CHECK(files->Read("/etc/real.json", 3, &bytes, &err) == ocid::HostRead::kError);
  std::string link;
  CHECK(files->ReadLink("/etc/real.json", &link, &err) == ocid::HostRead::kMissing);  // not a link
  REQUIRE(files->ReadLink("/etc/abs.json", &link, &err) == ocid::HostRead::kOk);
  CHECK(link == "/etc/real.json");
  CHECK(files->Display("/etc/x") == t.path() + "/etc/x");
}

namespace {

// The Onload inventory with a version lock guarding `features`.
Inventory Locked(bool enforce, const std::string& features = "[]") {
  std::string json = kOnload;
  json.insert(json.find("\"driver_feature\""),
              std::string(R"("version_lock": {"enforce": )") + (enforce ? "true" : "false") +
                  R"(, "module_version": "/sys/module/onload/version", )"
                  R"("library": ["/usr/lib64/libonload.so"], "features": )" +
                  features + "},\n  ");
  return Parse(json, kFile);
}

// Both sides as Onload writes them (onload_version_fixture.h): `module` and
// `library` are release versions, "" for none.
FakeHost VersionHost(const std::string& module, const std::string& library) {
  FakeHost h = Host();
  if (!module.empty())
    h.Content("/sys/module/onload/version",
              ocid_test::ModuleFile(ocid_test::ReleaseVersion(module)));
  h.Content("/usr/lib64/libonload.so",
            library.empty() ? std::string("no banner")
                            : std::string("\x7f"
                                          "ELF...") +
                                  '\0' + ocid_test::Banner(ocid_test::ReleaseVersion(library)));
  return h;
}

}  // namespace

TEST_CASE("check: the version lock") {
  SUBCASE("match: ok, reported with both versions") {
    CheckReport r = Report(VersionHost("8.1.2.26", "8.1.2.26"), Node(), {Locked(true)});
    CHECK(r.ready);
    const auto& i = r.inventories[0];
    CHECK(i.version.state == ocid::VersionState::kMatch);
    CHECK(i.version_state == CheckState::kOk);
    CHECK(i.version_features == std::vector<std::string>{"onload", "zf"});
    std::string t = ocid::CheckTable(r);
    CHECK(Contains(t, "version"));
    CHECK(Contains(t,
                   "module \"8.1.2.26\", library \"8.1.2.26\" (/usr/lib64/libonload.so): match, "
                   "enforced"));
    nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
    const auto& v = j["inventories"][0]["version_lock"];
    CHECK(v["state"] == "match");
    CHECK(v["enforce"] == true);
    CHECK(v["module_version"] == "8.1.2.26");
    CHECK(v["module_path"] == "/sys/module/onload/version");
    CHECK(v["library_version"] == "8.1.2.26");
    CHECK(v["library_path"] == "/usr/lib64/libonload.so");
  }
  SUBCASE("mismatch, enforced: the guarded features fail, naming both versions") {
    CheckReport r =
        Report(VersionHost("8.1.0.15", "8.1.2.26"), Node(), {Locked(true, R"(["onload"])")});
    CHECK_FALSE(r.ready);
    CHECK(Feature(r, "onload").state == CheckState::kFail);
    CHECK(Feature(r, "zf").state == CheckState::kOk);  // not guarded
    bool named = false;
    for (const auto& why : r.reasons)
      named = named || (Contains(why, "feature onload") && Contains(why, "8.1.2.26") &&
                        Contains(why, "8.1.0.15"));
    CHECK(named);
    nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
    CHECK(j["inventories"][0]["version_lock"]["state"] == "mismatch");
    CHECK(j["inventories"][0]["version_lock"]["check_state"] == "fail");
    CHECK(Contains(ocid::CheckTable(r), "FAIL  version"));
  }
  SUBCASE("mismatch, not enforced: a warning, still ready") {
    CheckReport r = Report(VersionHost("8.1.0.15", "8.1.2.26"), Node(), {Locked(false)});
    CHECK(r.ready);
    CHECK(Feature(r, "onload").state == CheckState::kWarn);
    CHECK(Feature(r, "onload").reasons.empty());
    CHECK(Contains(Feature(r, "onload").warnings.back(), "(not enforced: allowed)"));
  }
  SUBCASE("unknown (no module loaded): a warning, still ready") {
    CheckReport r = Report(VersionHost("", "8.1.2.26"), Node(), {Locked(true)});
    CHECK(r.ready);
    CHECK(r.inventories[0].version.state == ocid::VersionState::kUnknown);
    CHECK(Feature(r, "onload").state == CheckState::kWarn);
    CHECK(Contains(ocid::CheckTable(r), "WARN  version"));
    nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
    CHECK(j["inventories"][0]["version_lock"]["state"] == "unknown");
    CHECK(j["inventories"][0]["features"][0]["warnings"].size() == 1);
  }
  SUBCASE(
      "unknown on a feature that fails for another reason: the verdict names only the failure") {
    NodeFacts n = Node();
    n.nics.clear();
    CheckReport r = Report(VersionHost("", "8.1.2.26"), n, {Locked(true)});
    CHECK_FALSE(r.ready);
    CHECK(Feature(r, "onload").state == CheckState::kFail);
    CHECK_FALSE(Feature(r, "onload").warnings.empty());
    for (const auto& why : r.reasons) CHECK_FALSE(Contains(why, "version lock"));
  }
  SUBCASE("not configured: no row, JSON says so") {
    CheckReport r = Report(Host(), Node());
    CHECK_FALSE(Contains(ocid::CheckTable(r), "version  "));
    nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
    CHECK(j["inventories"][0]["version_lock"]["state"] == "not_configured");
  }
}

// Issue 27, finding 5: `check` judged a CDI directory by its path's
// prefixes (/etc/cdi, /etc, /), the writer by the directory the path
// reaches and that directory's real ancestors (walked up by ".."),
// following a link only under a rule. /etc/cdi a root link into a
// directory another user owns was "current" to `check` and refused by the
// writer. Both now apply one rule to one walk (dir_trust.h); these trees
// are real, `check` reads them under a host root, the writer from "/".
namespace {

// A host tree to hand `check` as --host-root, whose /etc/cdi the writer
// (OpenWriteDir, atomic_file.h) is asked about too. Links are relative, so
// that both walks reach the same directories.
struct CdiTree {
  ocid::test::TempTree t;

  // The writer's verdict on <tree>/etc/cdi: "" or its reason, the tree's
  // own path cut out of it (it names real paths).
  std::string Writer() const {
    ocid::UniqueFd fd;
    Error err;
    if (ocid::OpenWriteDir(t / "etc/cdi", /*create=*/false, &fd, &err)) return "";
    std::string line = err.Line();
    for (size_t at; (at = line.find(t.path())) != std::string::npos;)
      line.erase(at, t.path().size());
    return line;
  }

  // `check`'s verdict on a current spec of ours in /etc/cdi: its state and
  // reason, with the CDI directories read from the tree.
  std::pair<std::string, std::string> Check() const {
    FakeHost h = Host();
    NodeFacts n = Node();  // a hooks.d entry: the spec alone is judged
    ocid::CdiSpec spec;
    Error err;
    REQUIRE(ocid::BuildCdiSpec(Parse(kOnload, kFile), h, "/", "/etc/cdi/oci-decorator-onload.json",
                               &spec, &err));
    n.cdi_files.push_back({"/etc/cdi", "oci-decorator-onload.json", spec.json, {}});
    for (const auto& f : spec.preload_files)
      n.cdi_preload_files.push_back({"/etc/cdi", f.name, f.bytes, {}});
    std::unique_ptr<ocid::HostRootView> view;
    REQUIRE(ocid::HostRootView::Open(t.path(), &view, &err));
    REQUIRE_MESSAGE(ocid::ReadCdiDirs(*view, &n.cdi_dirs, &err), err.Line());
    CheckReport r = Report(h, n);
    REQUIRE(r.inventories.size() == 1);
    REQUIRE(r.inventories[0].cdi.size() == 1);
    return {r.inventories[0].cdi[0].state, r.inventories[0].cdi[0].reason};
  }

  void Chown(const std::string& rel, uid_t uid) const {
    REQUIRE(::lchown((t / rel).c_str(), uid, uid) == 0);
  }
  void Chmod(const std::string& rel, mode_t mode) const {
    REQUIRE(::chmod((t / rel).c_str(), mode) == 0);
  }
};

constexpr uid_t kUser = 1000;
const std::string kOthersCanReplace = ": others can replace its specs";

}  // namespace

TEST_CASE(
    "check: /etc/cdi, a root link into another user's directory, is unsafe as the writer says") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to make a directory of uid 1000");
    return;
  }
  CdiTree tree;
  tree.t.Dir("etc");
  tree.t.Dir("srv/u/cdi");
  tree.Chown("srv/u", kUser);              // the user's home, say
  tree.t.Link("etc/cdi", "../srv/u/cdi");  // the link and its target are root's
  const std::string why = "directory /srv/u belongs to another user (owner 1000, mode 0755)";
  CHECK(tree.Writer() == why);
  auto [state, reason] = tree.Check();
  CHECK(state == "unsafe");
  CHECK(reason == why + kOthersCanReplace);

  // The same in a world-writable directory that is not sticky; sticky, as
  // /tmp, it is fine (others cannot rename what root made in it).
  CdiTree open;
  open.t.Dir("etc");
  open.t.Dir("srv/pub/cdi");
  open.Chmod("srv/pub", 0777);
  open.t.Link("etc/cdi", "../srv/pub/cdi");
  const std::string open_why =
      "directory /srv/pub is writable by others and not sticky (owner 0, mode 0777)";
  CHECK(open.Writer() == open_why);
  CHECK(open.Check() == std::make_pair(std::string("unsafe"), open_why + kOthersCanReplace));
  open.Chmod("srv/pub", 01777);
  CHECK(open.Writer() == "");
  CHECK(open.Check().first == "current");
}

TEST_CASE("check and root's writer: the same verdict, the same words, on every tree") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to make files of uid 1000");
    return;
  }
  struct Case {
    const char* name;
    std::function<void(const CdiTree&)> make;
    const char* why;  // the writer's reason, "" when it writes there
  };
  const Case cases[] = {
      {"a plain directory", [](const CdiTree& c) { c.t.Dir("etc/cdi"); }, ""},
      {"the directory world-writable",
       [](const CdiTree& c) {
         c.t.Dir("etc/cdi");
         c.Chmod("etc/cdi", 01777);
       },
       "directory /etc/cdi is writable by others (owner 0, mode 1777)"},
      {"the directory group-writable",
       [](const CdiTree& c) {
         c.t.Dir("etc/cdi");
         c.Chmod("etc/cdi", 0775);
       },
       "directory /etc/cdi is writable by its group (owner 0, mode 0775)"},
      {"an ancestor world-writable",
       [](const CdiTree& c) {
         c.t.Dir("etc/cdi");
         c.Chmod("etc", 0777);
       },
       "directory /etc is writable by others and not sticky (owner 0, mode 0777)"},
      {"an ancestor sticky",
       [](const CdiTree& c) {
         c.t.Dir("etc/cdi");
         c.Chmod("etc", 01777);
       },
       ""},
      {"a root link to a root directory",
       [](const CdiTree& c) {
         c.t.Dir("etc");
         c.t.Dir("srv/cdi");
         c.t.Link("etc/cdi", "../srv/cdi");
       },
       ""},
      {"a link into another user's directory",
       [](const CdiTree& c) {
         c.t.Dir("etc");
         c.t.Dir("srv/u/cdi");
         c.Chown("srv/u", kUser);
         c.t.Link("etc/cdi", "../srv/u/cdi");
       },
       "directory /srv/u belongs to another user (owner 1000, mode 0755)"},
      {"a link to another user's directory",
       [](const CdiTree& c) {
         c.t.Dir("etc");
         c.t.Dir("srv/cdi");
         c.Chown("srv/cdi", kUser);
         c.t.Link("etc/cdi", "../srv/cdi");
       },
       "directory /srv/cdi belongs to another user (owner 1000, mode 0755)"},
      {"a link another user made",
       [](const CdiTree& c) {
         c.t.Dir("etc");
         c.t.Dir("srv/cdi");
         c.t.Link("etc/cdi", "../srv/cdi");
         c.Chown("etc/cdi", kUser);
       },
       "not following symbolic link /etc/cdi: it belongs to another user (owner 1000)"},
      {"a link in a directory others can change",
       [](const CdiTree& c) {
         c.t.Dir("etc");
         c.t.Dir("srv/cdi");
         c.t.Link("etc/cdi", "../srv/cdi");
         c.Chmod("etc", 0777);
       },
       "not following symbolic link /etc/cdi: directory /etc is writable by others and not sticky "
       "(owner 0, mode 0777)"},
      {"a second link, in a directory others can change",
       [](const CdiTree& c) {
         c.t.Dir("etc");
         c.t.Dir("srv/real");
         c.t.Link("etc/cdi", "../srv/cdi");
         c.t.Link("srv/cdi", "real");
         c.Chmod("srv", 0777);
       },
       "not following symbolic link /srv/cdi: directory /srv is writable by others and not sticky "
       "(owner 0, mode 0777)"},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    CdiTree tree;
    c.make(tree);
    std::string writer = tree.Writer();
    CHECK(writer == c.why);
    auto [state, reason] = tree.Check();
    if (writer.empty()) {
      CHECK(state == "current");
    } else {
      CHECK(state == "unsafe");
      CHECK(reason == writer + kOthersCanReplace);
    }
  }
}

// --- conditions, groups and directories to create (issue 30) -----------------

namespace {

// The shipped shape: a condition whose file names a program, a directory
// created when it is met, and a group read from two files.
const char* kShared = R"({
  "version": "1",
  "activation_flag": "OCI_ONLOAD",
  "driver_feature": ["onload"],
  "conditions": {
    "ctl": {"exists_named_in": ["/sys/module/m/parameters/ctl_path"],
            "description": "the vendor's words on it"},
    "plain": {"exists": ["/etc/plain", "/etc/plain2"]}
  },
  "inventory": {
    "onload": {
      "devices": ["onload"],
      "directories": [{"source": "/run/ctl", "optional": true, "create_if": "ctl"}],
      "groups": [{"gid_file": "/sys/module/m/parameters/client_gid",
                  "mode_file": "/sys/module/m/parameters/client_mode",
                  "default_mode": "0666", "optional": true}]
    }
  }
})";

FakeHost SharedHost() {
  FakeHost h;
  h.Chr("/dev/onload", 240, 0);
  return h;
}

CheckReport SharedReport(const FakeHost& h, const std::string& root = "/") {
  return ocid::BuildCheckReport("/etc/ocid.d", Set({Parse(kShared, kFile)}), h, root, Node());
}

const ocid::ConditionCheck& Condition(const CheckReport& r, const std::string& name) {
  for (const auto& c : r.inventories.at(0).conditions)
    if (c.name == name) return c;
  FAIL("no condition " << name);
  throw 0;
}

const ocid::EntryCheck& DirEntry(const CheckReport& r) {
  for (const auto& e : Feature(r, "onload").entries)
    if (e.category == "directories") return e;
  FAIL("no directories entry");
  throw 0;
}

}  // namespace

TEST_CASE("check: conditions, met, not met, and a named path that does not exist") {
  SUBCASE("nothing of it on the host: information, with the inventory's words") {
    CheckReport r = SharedReport(SharedHost());
    const auto& c = Condition(r, "ctl");
    CHECK_FALSE(c.met);
    CHECK(c.state == CheckState::kInfo);
    CHECK(c.description == "the vendor's words on it");
    REQUIRE(c.named_in.size() == 1);
    CHECK(c.named_in[0].file == "/sys/module/m/parameters/ctl_path");
    CHECK_FALSE(c.named_in[0].exists);
    CHECK(c.named_in[0].names.empty());
    CHECK(Contains(c.why, "not met"));
    CHECK(Contains(c.why, "the vendor's words on it"));
    const auto& p = Condition(r, "plain");
    CHECK(p.tried == std::vector<std::string>{"/etc/plain", "/etc/plain2"});
    CHECK(p.state == CheckState::kInfo);
    CHECK(r.ready);
    CHECK(r.inventories[0].state == CheckState::kOk);
  }
  SUBCASE("met: ok, by the path the file names") {
    FakeHost h = SharedHost();
    h.Content("/sys/module/m/parameters/ctl_path", "/usr/sbin/ctl\n").File("/usr/sbin/ctl");
    h.File("/etc/plain2");
    CheckReport r = SharedReport(h);
    const auto& c = Condition(r, "ctl");
    CHECK(c.met);
    CHECK(c.state == CheckState::kOk);
    CHECK(c.by == "/usr/sbin/ctl");
    CHECK(c.named_in[0].exists);
    CHECK(c.named_in[0].names == "/usr/sbin/ctl");
    CHECK(c.named_in[0].names_exists);
    CHECK(Condition(r, "plain").by == "/etc/plain2");
    CHECK(r.ready);
  }
  SUBCASE("the file names a path that does not exist: a warning naming both") {
    FakeHost h = SharedHost();
    h.Content("/sys/module/m/parameters/ctl_path", "/sbin/ctl\n");
    CheckReport r = SharedReport(h, "/host");
    const auto& c = Condition(r, "ctl");
    CHECK_FALSE(c.met);
    CHECK(c.state == CheckState::kWarn);
    CHECK(c.named_in[0].exists);
    CHECK(c.named_in[0].names == "/sbin/ctl");
    CHECK_FALSE(c.named_in[0].names_exists);
    CHECK(c.why ==
          "/sys/module/m/parameters/ctl_path names /sbin/ctl, which does not exist under /host: "
          "every container that uses ctl fails (the vendor's words on it)");
    // A warning: the node still serves what does not use it.
    CHECK(r.inventories[0].state == CheckState::kWarn);
    CHECK(r.ready);
    const std::string t = ocid::CheckTable(r);
    CHECK(Contains(t, "WARN  condition    ctl"));
    nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
    const auto& jc = j["inventories"][0]["conditions"][0];
    CHECK(jc["name"] == "ctl");
    CHECK(jc["met"] == false);
    CHECK(jc["state"] == "warn");
    CHECK(jc["by"] == "");
    CHECK(jc["description"] == "the vendor's words on it");
    CHECK(jc["named_in"][0] == nlohmann::json{{"file", "/sys/module/m/parameters/ctl_path"},
                                              {"exists", true},
                                              {"names", "/sbin/ctl"},
                                              {"names_exists", false}});
    CHECK(jc["tried"] == nlohmann::json::array());
    CHECK(j["inventories"][0]["conditions"][1]["tried"] ==
          nlohmann::json::array({"/etc/plain", "/etc/plain2"}));
  }
  SUBCASE("the file names no absolute path: a warning") {
    FakeHost h = SharedHost();
    h.Content("/sys/module/m/parameters/ctl_path", "ctl\n");
    CheckReport r = SharedReport(h);
    const auto& c = Condition(r, "ctl");
    CHECK(c.state == CheckState::kWarn);
    CHECK(Contains(c.why, "names no absolute path"));
  }
}

TEST_CASE(
    "check: a create_if directory: created when asked, or a warning when others can write it") {
  SUBCASE("missing, condition not met: optional, skipped") {
    CheckReport r = SharedReport(SharedHost());
    const auto& e = DirEntry(r);
    CHECK(e.create_if == "ctl");
    CHECK_FALSE(e.create);
    CHECK(e.state == CheckState::kInfo);
    CHECK(Contains(e.reason, "/run/ctl (condition ctl not met)"));
  }
  SUBCASE("missing, condition met: will be created (information)") {
    FakeHost h = SharedHost();
    h.Content("/sys/module/m/parameters/ctl_path", "/usr/sbin/ctl\n").File("/usr/sbin/ctl");
    CheckReport r = SharedReport(h);
    const auto& e = DirEntry(r);
    CHECK(e.create);
    CHECK(e.state == CheckState::kInfo);
    CHECK(e.files.empty());
    CHECK(Contains(e.reason, "/run/ctl will be created (root, 0755) when a container asks"));
    CHECK(Feature(r, "onload").state == CheckState::kOk);
    CHECK(r.ready);
    CHECK(Contains(ocid::CheckTable(r), "INFO  directories  /run/ctl"));
    nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
    for (const auto& je : j["inventories"][0]["features"][0]["entries"]) {
      if (je["category"] != "directories") {
        CHECK(je["create_if"] == "");
        CHECK(je["create"] == false);
        continue;
      }
      CHECK(je["create_if"] == "ctl");
      CHECK(je["create"] == true);
    }
  }
  SUBCASE("existing, root's 0755: mounted, ok") {
    FakeHost h = SharedHost();
    h.Dir("/run/ctl");
    CheckReport r = SharedReport(h);
    const auto& e = DirEntry(r);
    CHECK_FALSE(e.create);
    CHECK(e.state == CheckState::kOk);
  }
  SUBCASE("existing, writable by group or others: a warning") {
    for (unsigned perm : {0775u, 0757u}) {
      CAPTURE(perm);
      FakeHost h = SharedHost();
      h.Dir("/run/ctl").Perm("/run/ctl", perm);
      CheckReport r = SharedReport(h);
      const auto& e = DirEntry(r);
      CHECK(e.state == CheckState::kWarn);
      CHECK(Contains(e.reason, "any local user could stand in for the service it serves"));
      CHECK(Feature(r, "onload").state == CheckState::kWarn);
      CHECK(r.ready);
    }
    // Sticky, as /tmp: what others write there they cannot replace.
    FakeHost h = SharedHost();
    h.Dir("/run/ctl").Perm("/run/ctl", 01777);
    CHECK(DirEntry(SharedReport(h)).state == CheckState::kOk);
  }
}

TEST_CASE("check: groups, as the planner reads them") {
  const std::string gid = "/sys/module/m/parameters/client_gid";
  const std::string mode = "/sys/module/m/parameters/client_mode";
  auto group = [](const CheckReport& r) {
    REQUIRE(r.inventories.at(0).groups.size() == 1);
    return r.inventories[0].groups[0];
  };
  SUBCASE("no gid file, optional: information") {
    const auto g = group(SharedReport(SharedHost()));
    CHECK(g.feature == "onload");
    CHECK(g.gid_file == gid);
    CHECK(g.mode_file == mode);
    CHECK_FALSE(g.gid_known);
    CHECK(g.state == CheckState::kInfo);
    CHECK(Contains(g.why, "not on this host"));
  }
  SUBCASE("gid 0: none") {
    FakeHost h = SharedHost();
    h.Content(gid, "0\n");
    const auto g = group(SharedReport(h));
    CHECK(g.gid_known);
    CHECK(g.gid == 0);
    CHECK(g.state == CheckState::kInfo);
  }
  SUBCASE("a gid, mode 0 falls back to the default 0666: not required") {
    FakeHost h = SharedHost();
    h.Content(gid, "4242\n").Content(mode, "0\n");
    CheckReport r = SharedReport(h);
    const auto g = group(r);
    CHECK(g.gid == 4242);
    CHECK(g.mode_known);
    CHECK(g.mode == 0666);
    CHECK_FALSE(g.required);
    CHECK(g.state == CheckState::kInfo);
    CHECK(Contains(g.why, "0666 admits others"));
    nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
    CHECK(j["inventories"][0]["groups"][0]["mode"] == "0666");
    CHECK(j["inventories"][0]["groups"][0]["required"] == false);
  }
  SUBCASE("a gid and mode 0660 (432 in decimal): required, a warning") {
    FakeHost h = SharedHost();
    h.Content(gid, "4242\n").Content(mode, "432\n");
    CheckReport r = SharedReport(h);
    const auto g = group(r);
    CHECK(g.mode == 0660);
    CHECK(g.required);
    CHECK(g.state == CheckState::kWarn);
    CHECK(Contains(g.why, "hook-mode containers need --group-add 4242"));
    CHECK(Contains(g.why, "supplementalGroups: [4242]"));
    CHECK(r.inventories[0].state == CheckState::kWarn);
    CHECK(r.ready);
    CHECK(Contains(ocid::CheckTable(r), "WARN  group        4242 (onload)"));
    nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
    CHECK(j["inventories"][0]["groups"][0] == nlohmann::json{{"feature", "onload"},
                                                             {"gid_file", gid},
                                                             {"gid", 4242},
                                                             {"mode_file", mode},
                                                             {"mode", "0660"},
                                                             {"required", true},
                                                             {"state", "warn"},
                                                             {"why", g.why}});
  }
  SUBCASE("a gid file that holds no number: fails, as every container that asks would") {
    FakeHost h = SharedHost();
    h.Content(gid, "onload_users\n");
    CheckReport r = SharedReport(h);
    const auto g = group(r);
    CHECK_FALSE(g.gid_known);
    CHECK(g.state == CheckState::kFail);
    CHECK(Contains(g.why, "does not hold a decimal group id"));
    CHECK_FALSE(r.ready);
    nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
    CHECK(j["inventories"][0]["groups"][0]["gid"].is_null());
    CHECK(j["inventories"][0]["groups"][0]["mode"].is_null());
    CHECK(Contains(ocid::CheckTable(r), "FAIL  group        ? (onload)"));
  }
}

TEST_CASE("check: an inventory without conditions or groups reports none") {
  CheckReport r = Report(Host(), Node());
  CHECK(r.inventories[0].conditions.empty());
  CHECK(r.inventories[0].groups.empty());
  nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
  CHECK(j["inventories"][0]["conditions"] == nlohmann::json::array());
  CHECK(j["inventories"][0]["groups"] == nlohmann::json::array());
}

TEST_CASE("check: a current CDI spec mounting a create_if directory that is missing fails") {
  FakeHost h = SharedHost();
  h.Content("/sys/module/m/parameters/ctl_path", "/usr/sbin/ctl\n").File("/usr/sbin/ctl");
  h.Dir("/run/ctl");
  Inventory inv = Parse(kShared, kFile);
  ocid::CdiSpec spec;
  Error err;
  // Written while the directory was there (cdi generate creates it).
  REQUIRE(ocid::BuildCdiSpec(inv, h, "/", "/etc/cdi/oci-decorator-onload.json", &spec, &err));
  REQUIRE(Contains(spec.json, "/run/ctl"));
  NodeFacts n = Node();
  n.engines.hooks.clear();
  n.cdi_files.push_back({"/etc/cdi", "oci-decorator-onload.json", spec.json, {}});
  auto report = [&](const FakeHost& host) {
    return ocid::BuildCheckReport("/etc/ocid.d", Set({inv}), host, "/", n);
  };
  CheckReport r = report(h);
  REQUIRE(r.inventories[0].cdi.size() == 1);
  CHECK(r.inventories[0].cdi[0].state == "current");
  CHECK(r.ready);

  // After a reboot /run is empty: the same bytes, but every container fails.
  FakeHost rebooted = h;
  rebooted.Remove("/run/ctl");
  r = report(rebooted);
  CHECK(r.inventories[0].cdi[0].state == "missing_source");
  const std::string& why = r.inventories[0].cdi[0].reason;
  CHECK(Contains(why, "it mounts /run/ctl, which does not exist"));
  CHECK(Contains(why, "`oci-decorator cdi generate`"));
  CHECK(Contains(why, "`systemd-tmpfiles --create`"));
  CHECK_FALSE(r.ready);
  CHECK_FALSE(r.inventories[0].delivered);
  CHECK(r.inventories[0].state == CheckState::kFail);
  CHECK(Contains(ocid::CheckTable(r), "FAIL  cdi          /etc/cdi/oci-decorator-onload.json"));
  nlohmann::json j = nlohmann::json::parse(ocid::CheckJson(r));
  CHECK(j["inventories"][0]["cdi"][0]["state"] == "missing_source");

  // Condition not met: nothing would be created, the spec is merely stale.
  rebooted.Remove("/usr/sbin/ctl");
  CHECK(report(rebooted).inventories[0].cdi[0].state == "stale");
}
