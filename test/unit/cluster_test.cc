// Cluster resources from inventories against a fake host: names, health,
// deliveries, groups, and a broken inventory that keeps its resources.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "cluster.h"
#include "fake_host.h"
#include "host_view.h"
#include "inventory.h"
#include "inventory_texts.h"
#include "node_check.h"
#include "node_facts.h"
#include "onload_version_fixture.h"
#include "test_tree.h"

using ocid::BuildClusterView;
using ocid::CheckK8sResourceName;
using ocid::ClusterResource;
using ocid::ClusterView;
using ocid::InventorySet;
using ocid_test::FakeHost;
using ocid_test::LoadInventories;

namespace {

const char* kOnload = R"({
  "version": "1", "activation_flag": "OCI_ONLOAD", "cdi_kind": "amd.com/onload",
  "driver_feature": ["onload", "zf"],
  "inventory": {
    "onload": {"devices": ["onload", "sfc_char"], "binaries": ["/usr/bin/onload"],
               "libraries": ["/usr/lib64/libonload.so*"], "preload": ["libonload.so"]},
    "zf": {"devices": ["sfc_char"], "libraries": ["/usr/lib64/libonload_zf.so"]}
  }
})";
const char* kRdma = R"({
  "version": "1", "activation_flag": "OCI_RDMA", "driver_feature": ["rdma"],
  "inventory": {"rdma": {"devices": ["infiniband/uverbs0"]}}
})";

FakeHost Host() {
  FakeHost h;
  h.Chr("/dev/onload", 240, 0)
      .Chr("/dev/sfc_char", 241, 3, 0660)
      .Chr("/dev/infiniband/uverbs0", 231, 192)
      .File("/usr/bin/onload")
      .File("/usr/lib64/libonload.so")
      .File("/usr/lib64/libonload_zf.so");
  return h;
}

const ClusterResource* Find(const ClusterView& v, const std::string& nomad_type) {
  for (const auto& r : v.resources)
    if (r.nomad_type == nomad_type) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("cluster: one resource per feature, named from the CDI kind") {
  InventorySet set = LoadInventories({{"/c/onload.json", kOnload}, {"/c/rdma.json", kRdma}});
  ClusterView v;
  BuildClusterView(set, Host(), {}, "/", nullptr, &v);
  REQUIRE(v.resources.size() == 4);
  const ClusterResource* onload = Find(v, "onload");
  REQUIRE(onload);
  CHECK(onload->k8s_name == "amd.com/onload");
  CHECK(onload->nomad_vendor == "amd");
  CHECK(onload->cdi_device == "amd.com/onload=onload");
  CHECK(onload->healthy);
  REQUIRE(Find(v, "zf"));
  CHECK(Find(v, "zf")->k8s_name == "amd.com/zf");
  // The Nomad group of every feature, as nomad-onload's "onloadzf".
  const ClusterResource* all = Find(v, "onloadzf");
  REQUIRE(all);
  CHECK(all->k8s_name.empty());
  CHECK(all->cdi_device == "amd.com/onload=all");
  CHECK(all->features == std::vector<std::string>{"onload", "zf"});
  // Without cdi_kind: the default vendor.
  REQUIRE(Find(v, "rdma"));
  CHECK(Find(v, "rdma")->k8s_name == "oci-decorator.local/rdma");
  CHECK(Find(v, "rdma")->nomad_vendor == "oci-decorator");
  CHECK(Find(v, "rdma")->cdi_device == "oci-decorator.local/rdma=rdma");
}

TEST_CASE("cluster: the delivery is the plan, named under the host path root") {
  InventorySet set = LoadInventories({{"/c/onload.json", kOnload}});
  ClusterView v;
  BuildClusterView(set, Host(), {}, "/host", nullptr, &v);
  const ClusterResource* onload = Find(v, "onload");
  REQUIRE(onload);
  REQUIRE(onload->delivery.devices.size() == 2);
  CHECK(onload->delivery.devices[0].host_path == "/host/dev/onload");
  CHECK(onload->delivery.devices[0].container_path == "/dev/onload");
  CHECK(onload->delivery.devices[0].major == 240);
  CHECK(onload->delivery.devices[1].minor == 3);
  CHECK(onload->delivery.devices[1].file_mode == 0660);
  CHECK(onload->delivery.devices[1].permissions == "rw");
  // For every image: the library in both standard library directories.
  for (const char* dir : {"/usr/lib64", "/usr/lib/x86_64-linux-gnu"}) {
    CAPTURE(dir);
    bool lib = false;
    for (const auto& m : onload->delivery.mounts)
      if (m.container_path == std::string(dir) + "/libonload.so") {
        lib = true;
        CHECK(m.host_path == "/host/usr/lib64/libonload.so");
        CHECK(m.read_only);
      }
    CHECK(lib);
  }
  REQUIRE(onload->delivery.env.size() == 1);
  CHECK(onload->delivery.env[0].first == "LD_PRELOAD");
  CHECK(onload->delivery.env[0].second == "/usr/lib/x86_64-linux-gnu/libonload.so");
  // zf preloads nothing.
  CHECK(Find(v, "zf")->delivery.env.empty());
}

TEST_CASE("cluster: health follows the host, feature by feature") {
  InventorySet set = LoadInventories({{"/c/onload.json", kOnload}});
  FakeHost h = Host();
  h.Remove("/dev/onload");
  ClusterView v;
  BuildClusterView(set, h, {}, "/", nullptr, &v);
  REQUIRE(Find(v, "onload"));
  CHECK_FALSE(Find(v, "onload")->healthy);
  CHECK(Find(v, "onload")->why.find("/dev/onload") != std::string::npos);
  CHECK(Find(v, "onload")->delivery.mounts.empty());
  CHECK(Find(v, "zf")->healthy);
  CHECK_FALSE(Find(v, "onloadzf")->healthy);

  // A regular file where a device node belongs is not a device.
  FakeHost f = Host();
  f.Remove("/dev/sfc_char").File("/dev/sfc_char");
  BuildClusterView(set, f, {}, "/", nullptr, &v);
  CHECK_FALSE(Find(v, "zf")->healthy);
  CHECK_FALSE(Find(v, "onload")->healthy);
}

TEST_CASE("cluster: a broken inventory keeps its resources, unhealthy, and only its own") {
  InventorySet good = LoadInventories({{"/c/onload.json", kOnload}, {"/c/rdma.json", kRdma}});
  ClusterView before, after;
  BuildClusterView(good, Host(), {}, "/", nullptr, &before);
  InventorySet broken =
      LoadInventories({{"/c/onload.json", "{\"version\": "}, {"/c/rdma.json", kRdma}});
  REQUIRE(broken.broken.size() == 1);
  BuildClusterView(broken, Host(), {}, "/", &before, &after);
  REQUIRE(after.resources.size() == 4);
  for (const auto& r : after.resources) {
    if (r.inventory == "/c/onload.json") {
      CHECK_FALSE(r.healthy);
      CHECK(r.why.find("/c/onload.json") != std::string::npos);
    } else {
      CHECK(r.healthy);
    }
  }
  CHECK(Find(after, "onload")->k8s_name == "amd.com/onload");
  // Without a previous view there is nothing to keep: a warning says so.
  BuildClusterView(broken, Host(), {}, "/", nullptr, &after);
  CHECK(after.resources.size() == 1);
  REQUIRE(after.warnings.size() == 1);
  CHECK(after.warnings[0].find("/c/onload.json") != std::string::npos);
}

TEST_CASE("cluster: a name two inventories claim stays with the first") {
  const char* other = R"({"version": "1", "activation_flag": "OCI_X", "cdi_kind": "amd.com/other",
    "driver_feature": ["zf"], "inventory": {"zf": {"devices": ["sfc_char"]}}})";
  InventorySet set = LoadInventories({{"/c/a.json", kOnload}, {"/c/b.json", other}});
  ClusterView v;
  BuildClusterView(set, Host(), {}, "/", nullptr, &v);
  int zf = 0;
  for (const auto& r : v.resources)
    if (r.nomad_type == "zf") {
      ++zf;
      CHECK(r.inventory == "/c/a.json");
    }
  CHECK(zf == 1);
  REQUIRE_FALSE(v.warnings.empty());
  CHECK(v.warnings[0].find("amd.com/zf") != std::string::npos);
}

TEST_CASE("cluster: Kubernetes resource names") {
  std::string why;
  CHECK(CheckK8sResourceName("amd.com/onload", &why));
  CHECK(CheckK8sResourceName("oci-decorator.local/rdma_0.x", &why));
  CHECK_FALSE(CheckK8sResourceName("onload", &why));
  CHECK_FALSE(CheckK8sResourceName("AMD.com/onload", &why));
  CHECK_FALSE(CheckK8sResourceName("kubernetes.io/onload", &why));
  CHECK_FALSE(CheckK8sResourceName("x.k8s.io/onload", &why));
  CHECK(why.find("reserved") != std::string::npos);
  CHECK_FALSE(CheckK8sResourceName("amd.com/-onload", &why));
  CHECK_FALSE(CheckK8sResourceName("amd.com/" + std::string(64, 'a'), &why));
  CHECK_FALSE(CheckK8sResourceName("amd.com/a/b", &why));
  CHECK_FALSE(CheckK8sResourceName("amd..com/a", &why));
}

TEST_CASE(
    "cluster: a plugin-level profile goes to the preloading resources, and their CDI device") {
  std::string json = kOnload;
  json.replace(json.find("\"driver_feature\""), 0,
               R"("profiles": {"latency": {"EF_POLL_USEC": "100000"}}, )");
  InventorySet set = LoadInventories({{"/c/onload.json", json}, {"/c/rdma.json", kRdma}});
  ClusterView v;
  BuildClusterView(set, Host(), {}, "/", nullptr, &v, "latency");
  const ClusterResource* onload = Find(v, "onload");
  REQUIRE(onload);
  CHECK(onload->healthy);
  CHECK(onload->profile == "latency");
  CHECK(onload->cdi_device == "amd.com/onload=onload-latency");
  CHECK(onload->delivery.env ==
        std::vector<std::pair<std::string, std::string>>{
            {"LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libonload.so"}, {"EF_POLL_USEC", "100000"}});
  const ClusterResource* zf = Find(v, "zf");
  REQUIRE(zf);
  CHECK(zf->profile.empty());  // preloads nothing
  CHECK(zf->cdi_device == "amd.com/onload=zf");
  CHECK(zf->delivery.env.empty());
  const ClusterResource* group = Find(v, "onloadzf");
  REQUIRE(group);
  CHECK(group->profile == "latency");
  const ClusterResource* rdma = Find(v, "rdma");
  REQUIRE(rdma);
  CHECK(rdma->healthy);  // no profiles: not affected

  ClusterView bad;
  BuildClusterView(set, Host(), {}, "/", nullptr, &bad, "nope");
  const ClusterResource* b = Find(bad, "onload");
  REQUIRE(b);
  CHECK_FALSE(b->healthy);
  CHECK(b->why.find("unknown profile \"nope\"") != std::string::npos);
  CHECK(b->why.find("available: latency") != std::string::npos);
  CHECK(Find(bad, "zf")->healthy);
}

TEST_CASE("cluster: the CDI specs of a view are cdi.h's, from the same inventories and host") {
  InventorySet set = LoadInventories({{"/c/onload.json", kOnload}, {"/c/rdma.json", kRdma}});
  ClusterView v;
  FakeHost h = Host();
  BuildClusterView(set, h, {}, "/host", nullptr, &v);
  ocid::BuildClusterCdi(set, h, "/host", "/var/run/cdi", nullptr, &v);
  CHECK(v.cdi_dir == "/var/run/cdi");
  REQUIRE(v.cdi_specs.size() == 2);
  const ocid::ClusterCdiSpec& c = v.cdi_specs[0];
  CHECK(c.inventory == "/c/onload.json");
  CHECK(c.state == ocid::ClusterCdiSpec::State::kWritten);
  CHECK(c.kind == "amd.com/onload");
  CHECK(c.spec_path == "/var/run/cdi/oci-decorator-onload.json");
  // Byte for byte what `cdi generate` writes into that directory.
  ocid::CdiSpec want;
  ocid::Error err;
  REQUIRE(ocid::BuildCdiSpec(set.inventories[0], h, "/host", c.spec_path, &want, &err));
  std::vector<ocid::CdiFileToWrite> files = ocid::CdiFilesOf(want);
  REQUIRE(c.files.size() == files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    CHECK(c.files[i].name == files[i].name);
    CHECK(c.files[i].bytes == files[i].bytes);
  }
  CHECK(c.files.back().name == "oci-decorator-onload.json");
  CHECK(c.devices == want.devices);
  // Every resource's CDI device is one its spec has.
  for (const ClusterResource& r : v.resources) {
    if (r.inventory != "/c/onload.json") continue;
    std::string dev = r.cdi_device.substr(r.cdi_device.find('=') + 1);
    CHECK_MESSAGE(std::find(c.devices.begin(), c.devices.end(), dev) != c.devices.end(), dev);
  }
  // rdma has no device on this host: no spec, and why.
  FakeHost no_rdma = Host();
  no_rdma.Remove("/dev/infiniband/uverbs0");
  ClusterView w;
  BuildClusterCdi(set, no_rdma, "/host", "/var/run/cdi", &v, &w);
  CHECK(w.cdi_specs[1].state == ocid::ClusterCdiSpec::State::kNone);
  CHECK(w.cdi_specs[1].files.empty());
  CHECK(w.cdi_specs[1].why.find("no CDI device can be generated") != std::string::npos);
}

TEST_CASE(
    "cluster: CDI specs: a second inventory of one kind gets none; a broken one keeps its last") {
  std::string rdma_as_onload = kRdma;
  rdma_as_onload.insert(rdma_as_onload.find('{') + 1, R"("cdi_kind": "amd.com/onload",)");
  InventorySet set =
      LoadInventories({{"/c/onload.json", kOnload}, {"/c/rdma.json", rdma_as_onload}});
  ClusterView v;
  ocid::BuildClusterCdi(set, Host(), "/", "/cdi", nullptr, &v);
  REQUIRE(v.cdi_specs.size() == 2);
  CHECK(v.cdi_specs[0].state == ocid::ClusterCdiSpec::State::kWritten);
  CHECK(v.cdi_specs[1].state == ocid::ClusterCdiSpec::State::kNone);
  CHECK(v.cdi_specs[1].why.find("is already inventory /c/onload.json's") != std::string::npos);

  InventorySet broken =
      LoadInventories({{"/c/onload.json", "{\"version\": "}, {"/c/rdma.json", kRdma}});
  ClusterView after;
  ocid::BuildClusterCdi(broken, Host(), "/", "/cdi", &v, &after);
  REQUIRE(after.cdi_specs.size() == 2);
  const ocid::ClusterCdiSpec& kept = after.cdi_specs[1];  // loaded first, then broken
  CHECK(kept.inventory == "/c/onload.json");
  CHECK(kept.state == ocid::ClusterCdiSpec::State::kKept);
  CHECK(kept.why.find("/c/onload.json") != std::string::npos);
  REQUIRE(!kept.files.empty());
  CHECK(kept.files.back().bytes == v.cdi_specs[0].files.back().bytes);
  // Broken from the start: nothing to keep, nothing to write.
  ocid::BuildClusterCdi(broken, Host(), "/", "/cdi", nullptr, &after);
  CHECK(after.cdi_specs[1].state == ocid::ClusterCdiSpec::State::kKept);
  CHECK(after.cdi_specs[1].files.empty());
  CHECK(after.cdi_specs[1].stem == "onload");
}

// --- the NIC a feature needs ("needs_nic"), from a fake sysfs tree ---------------

namespace {

// onload.json's requirement, zf exempt: only onload (and the group) need a NIC.
const char* kOnloadNic = R"({
  "version": "1", "activation_flag": "OCI_ONLOAD", "cdi_kind": "amd.com/onload",
  "driver_feature": ["onload", "zf"],
  "needs_nic": {"pci_vendors": ["0x1924", "0x10ee"], "features": ["onload"]},
  "inventory": {
    "onload": {"devices": ["onload", "sfc_char"], "binaries": ["/usr/bin/onload"],
               "libraries": ["/usr/lib64/libonload.so*"], "preload": ["libonload.so"]},
    "zf": {"devices": ["sfc_char"], "libraries": ["/usr/lib64/libonload_zf.so"]}
  }
})";

// A PCI device as sysfs has it: the bus's entry a link into the device tree.
void PciDevice(const ocid::test::TempTree& t, const std::string& addr, const std::string& vendor,
               const std::string& numa, const std::string& iface) {
  const std::string dev = "sys/devices/pci0000:00/0000:00:02.0/" + addr;
  t.File(dev + "/vendor", vendor + "\n");
  t.File(dev + "/device", "0x0b03\n");
  t.File(dev + "/numa_node", numa + "\n");
  if (!iface.empty()) t.Dir(dev + "/net/" + iface);
  t.Link("sys/bus/pci/devices/" + addr, "../../../devices/pci0000:00/0000:00:02.0/" + addr);
}

ocid::HostNics Nics(const ocid::test::TempTree& t, const InventorySet& set) {
  std::unique_ptr<ocid::HostRootView> files;
  ocid::Error err;
  REQUIRE_MESSAGE(ocid::HostRootView::Open(t.path(), &files, &err), err.Line());
  return ocid::ReadHostNics(*files, ocid::NicVendorsToRead(set));
}

}  // namespace

TEST_CASE("cluster: a feature that needs a NIC is unhealthy without one, with check's line") {
  InventorySet set =
      LoadInventories({{"/etc/ocid.d/onload.json", kOnloadNic}, {"/etc/ocid.d/rdma.json", kRdma}});
  REQUIRE(set.broken.empty());
  ocid::test::TempTree t;
  PciDevice(t, "0000:00:1f.6", "0x8086", "0", "eno1");  // an Intel NIC: not one of its vendors
  ocid::HostNics nics = Nics(t, set);
  REQUIRE(nics.error.empty());
  CHECK(nics.nics.empty());

  ClusterView v;
  BuildClusterView(set, Host(), nics, "/", nullptr, &v);
  const ClusterResource* onload = Find(v, "onload");
  REQUIRE(onload);
  CHECK_FALSE(onload->healthy);
  CHECK(onload->delivery.mounts.empty());
  CHECK(onload->why ==
        "no NIC of PCI vendor 0x1924 or 0x10ee in /sys/bus/pci/devices (the inventory's "
        "\"needs_nic\")");
  CHECK_FALSE(Find(v, "onloadzf")->healthy);  // the group holds onload
  CHECK(Find(v, "zf")->healthy);              // not named: needs none
  CHECK(Find(v, "rdma")->healthy);            // no "needs_nic": needs none

  // `check` on the same node says the same line for the same feature.
  ocid::NodeFacts node;
  node.nics = nics.nics;
  ocid::CheckReport r = ocid::BuildCheckReport("/etc/ocid.d", set, Host(), "/", node);
  const ocid::FeatureCheck* fc = nullptr;
  for (const auto& i : r.inventories)
    for (const auto& f : i.features)
      if (f.name == "onload") fc = &f;
  REQUIRE(fc);
  CHECK(fc->needs_nic);
  REQUIRE_FALSE(fc->reasons.empty());
  CHECK(fc->reasons.back() == onload->why);
}

TEST_CASE("cluster: the NICs that serve a resource, with their NUMA nodes") {
  InventorySet set = LoadInventories({{"/etc/ocid.d/onload.json", kOnloadNic}});
  ocid::test::TempTree t;
  PciDevice(t, "0000:af:00.0", "0x1924", "1", "ens1f0np0");
  PciDevice(t, "0000:af:00.1", "0x1924", "1", "ens1f1np1");
  PciDevice(t, "0000:3b:00.0", "0x10ee", "-1", "");
  PciDevice(t, "0000:00:1f.6", "0x8086", "0", "eno1");
  ClusterView v;
  BuildClusterView(set, Host(), Nics(t, set), "/", nullptr, &v);
  const ClusterResource* onload = Find(v, "onload");
  REQUIRE(onload);
  CHECK(onload->healthy);
  REQUIRE(onload->nics.size() == 3);
  CHECK(onload->nics[0].address == "0000:3b:00.0");  // sysfs order: by address
  CHECK(onload->nics[0].numa_node == -1);
  CHECK(onload->nics[1].address == "0000:af:00.0");
  CHECK(onload->nics[1].numa_node == 1);
  CHECK(onload->nics[1].interfaces == std::vector<std::string>{"ens1f0np0"});
  CHECK(ocid::NumaNodes(onload->nics) == std::vector<int>{1});
  CHECK(Find(v, "zf")->nics.empty());  // it needs none: no NICs recorded
  CHECK(Find(v, "onloadzf")->nics.size() == 3);
}

TEST_CASE("cluster: resources of a version-locked inventory carry the versions read") {
  // The library's banner and the module's sysfs file (version_lock.h).
  const std::string inv = R"({
    "version": "1", "activation_flag": "OCI_ONLOAD", "cdi_kind": "amd.com/onload",
    "driver_feature": ["onload", "zf"],
    "version_lock": {"module_version": "/sys/module/onload/version",
                     "library": "/usr/lib64/libonload.so", "features": ["onload"]},
    "inventory": {"onload": {"devices": ["onload"]}, "zf": {"devices": ["sfc_char"]}}
  })";
  InventorySet set = LoadInventories({{"/etc/ocid.d/onload.json", inv}});
  REQUIRE(set.broken.empty());
  FakeHost h = Host();
  const std::string version = ocid_test::ReleaseVersion("9.2.0.43", "cloud");
  h.Content("/sys/module/onload/version", ocid_test::ModuleFile(version))
      .Content("/usr/lib64/libonload.so",
               ocid_test::RealLibrary(ocid_test::Banner(version), 4096, 65536));
  ClusterView v;
  BuildClusterView(set, h, {}, "/", nullptr, &v);
  const ClusterResource* onload = Find(v, "onload");
  REQUIRE(onload);
  CHECK(onload->versions.module_version == "9.2.0.43 cloud");
  CHECK(onload->versions.library_version == "9.2.0.43 cloud");
  CHECK(Find(v, "zf")->versions.state == ocid::VersionState::kNotConfigured);  // not guarded
}

TEST_CASE("cluster: one rebuild reads each inventory's version lock once, however many features") {
  // Issue 27: every planned resource and every CDI device read the library
  // up to its banner again (a real libonload.so: 590 KB each), so a view
  // of one inventory read it 7 times. A view and its CDI specs now plan
  // with the one reading the view took (ClusterView::version_locks).
  auto locked = [](const std::string& name, const std::string& lib, int features) {
    std::string names, entries;
    for (int i = 0; i < features; ++i) {
      std::string f = "\"f" + std::to_string(i) + "\"";
      names += (i ? ", " : "") + f;
      entries +=
          (i ? ", " : "") + f + R"(: {"devices": ["onload"], "libraries": [")" + lib + R"("]})";
    }
    return R"({"version": "1", "activation_flag": "OCI_)" + name + R"(", "cdi_kind": ")" + name +
           R"(.com/lock", "driver_feature": [)" + names + R"(],
      "version_lock": {"module_version": "/sys/module/onload/version", "library": ")" +
           lib + R"("}, "inventory": {)" + entries + "}}";
  };
  const std::string version = ocid_test::ReleaseVersion("9.2.0.43");
  for (int features : {1, 2, 5}) {
    CAPTURE(features);
    std::string a = locked("a", "/usr/lib64/libonload.so", features);
    std::string b = locked("b", "/opt/onload/usr/lib64/libonload.so", features);
    InventorySet set =
        LoadInventories({{"/c/a.json", a}, {"/c/b.json", b}, {"/c/rdma.json", kRdma}});
    REQUIRE_MESSAGE(set.broken.empty(), set.broken[0].error.Line());
    FakeHost h = Host();
    h.Content("/sys/module/onload/version", ocid_test::ModuleFile(version));
    for (const char* lib : {"/usr/lib64/libonload.so", "/opt/onload/usr/lib64/libonload.so"})
      h.Content(lib, ocid_test::RealLibrary(ocid_test::Banner(version), 4096, 65536));
    ClusterView v;
    BuildClusterView(set, h, {}, "/", nullptr, &v);
    ocid::BuildClusterCdi(set, h, "/", "/var/run/cdi", nullptr, &v);
    // Everything planned and healthy, so every plan did ask for the lock.
    CHECK(v.resources.size() == 2 * (features + (features > 1 ? 1 : 0)) + 1);
    for (const ClusterResource& r : v.resources) CHECK_MESSAGE(r.healthy, r.why);
    for (const ocid::ClusterCdiSpec& c : v.cdi_specs)
      CHECK(c.state == ocid::ClusterCdiSpec::State::kWritten);
    // Two inventories with a lock: two library reads, one each.
    CHECK(h.reads_of["/usr/lib64/libonload.so"] == 1);
    CHECK(h.reads_of["/opt/onload/usr/lib64/libonload.so"] == 1);
    CHECK(h.reads_of["/sys/module/onload/version"] == 2);
  }
}
