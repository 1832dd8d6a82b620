// Nomad device groups and reservations from a cluster view: IDs unique
// across groups, health, the union of groups, mount_onload / set_preload,
// unknown and unhealthy IDs.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "fake_host.h"
#include "host_view.h"
#include "inventory.h"
#include "nic.h"
#include "nomad_devices.h"
#include "shared_dir_view.h"
#include "test_tree.h"

using ocid::ClusterResource;
using ocid::ClusterView;
using ocid::NomadConfig;
using ocid::NomadGroups;
using ocid::NomadReservation;
using ocid::NomadReserve;
using ocid::ReserveError;

namespace {

ClusterResource Res(const std::string& vendor, const std::string& type, const std::string& cdi,
                    bool healthy) {
  ClusterResource r;
  r.inventory = "/etc/oci-decorator/oci-decorator.d/" + vendor + ".json";
  r.features = {type};
  r.nomad_vendor = vendor;
  r.nomad_type = type;
  r.cdi_device = cdi;
  r.healthy = healthy;
  if (!healthy) r.why = "required binaries entry not found on the host: /usr/bin/" + type;
  return r;
}

ClusterView View() {
  ClusterView v;
  ClusterResource onload = Res("amd", "onload", "amd.com/onload=onload", true);
  // Libraries as a plan for every image delivers them: in both standard
  // library directories, the preload naming the first.
  onload.delivery.mounts = {
      {"/usr/bin/onload", "/usr/bin/onload", true},
      {"/usr/lib64/libonload.so", "/usr/lib/x86_64-linux-gnu/libonload.so", true},
      {"/usr/lib64/libonload.so", "/usr/lib64/libonload.so", true}};
  onload.delivery.devices = {{"/dev/onload", "/dev/onload", 'c', 240, 0, 0666, "rw"},
                             {"/dev/sfc_char", "/dev/sfc_char", 'c', 241, 0, 0666, "rw"}};
  onload.delivery.env = {{"LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libonload.so"}};
  ClusterResource zf = Res("amd", "zf", "amd.com/onload=zf", true);
  zf.delivery.mounts = {
      {"/usr/lib64/libonload_zf.so", "/usr/lib/x86_64-linux-gnu/libonload_zf.so", true},
      {"/usr/lib64/libonload_zf.so", "/usr/lib64/libonload_zf.so", true}};
  zf.delivery.devices = {{"/dev/sfc_char", "/dev/sfc_char", 'c', 241, 0, 0666, "rw"}};
  ClusterResource rdma = Res("oci-decorator", "rdma", "", true);
  rdma.delivery.mounts = {
      {"/host/usr/lib/librdma.so", "/usr/lib/x86_64-linux-gnu/librdma.so", true},
      {"/host/usr/lib/librdma.so", "/usr/lib64/librdma.so", true}};
  ClusterResource k8s_only;  // no Nomad type: not a group
  k8s_only.k8s_name = "amd.com/other";
  ClusterResource broken = Res("acme", "fpga", "acme.com/fpga=fpga", false);
  v.resources = {onload, zf, rdma, k8s_only, broken};
  return v;
}

NomadConfig Cfg(int slots = 4) {
  NomadConfig c;
  c.slots = slots;
  return c;
}

}  // namespace

TEST_CASE(
    "nomad groups: one per Nomad type, slots IDs unique across groups, health and attributes") {
  auto groups = NomadGroups(View(), Cfg(3));
  REQUIRE(groups.size() == 4);
  CHECK(groups[0].vendor == "amd");
  CHECK(groups[0].type == "onload");
  CHECK(groups[0].name == "oci-decorator");
  CHECK(groups[0].ids == std::vector<std::string>{"amd-onload-0", "amd-onload-1", "amd-onload-2"});
  CHECK(groups[1].ids[0] == "amd-zf-0");
  CHECK(groups[2].ids[2] == "oci-decorator-rdma-2");
  CHECK(groups[0].attributes.at("features") == "onload");
  CHECK(groups[0].attributes.at("cdi_device") == "amd.com/onload=onload");
  CHECK(groups[0].attributes.at("inventory") == "/etc/oci-decorator/oci-decorator.d/amd.json");
  CHECK(groups[2].attributes.count("cdi_device") == 0);
  CHECK(groups[0].healthy);
  CHECK_FALSE(groups[3].healthy);
  CHECK(groups[3].why.find("/usr/bin/fpga") != std::string::npos);
}

TEST_CASE("nomad groups: a colliding ID prefix is left out with a warning") {
  ClusterView v;
  v.resources = {Res("a-b", "c", "", true), Res("a", "b-c", "", true)};
  std::vector<std::string> warnings;
  auto groups = NomadGroups(v, Cfg(1), &warnings);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].vendor == "a-b");
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("a/b-c") != std::string::npos);
}

TEST_CASE("nomad reserve: one group gives its delivery") {
  NomadReservation r;
  std::string err;
  REQUIRE(NomadReserve(View(), Cfg(), {"amd-onload-1"}, &r, &err) == ReserveError::kNone);
  REQUIRE(r.mounts.size() == 3);
  CHECK(r.mounts[0].task_path == "/usr/bin/onload");
  CHECK(r.mounts[0].read_only);
  CHECK(r.mounts[1].task_path == "/usr/lib/x86_64-linux-gnu/libonload.so");
  CHECK(r.mounts[2].task_path == "/usr/lib64/libonload.so");
  CHECK(r.mounts[2].host_path == "/usr/lib64/libonload.so");
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].task_path == "/dev/onload");
  CHECK(r.devices[0].permissions == "rw");
  CHECK(r.envs.at("LD_PRELOAD") == "/usr/lib/x86_64-linux-gnu/libonload.so");
}

TEST_CASE("nomad reserve: IDs of several groups give the union, without duplicates") {
  NomadReservation r;
  std::string err;
  REQUIRE(NomadReserve(View(), Cfg(),
                       {"amd-zf-0", "amd-onload-0", "amd-onload-3", "oci-decorator-rdma-0"}, &r,
                       &err) == ReserveError::kNone);
  std::vector<std::string> mounts, devices;
  for (auto& m : r.mounts) mounts.push_back(m.task_path);
  for (auto& d : r.devices) devices.push_back(d.task_path);
  CHECK(mounts == std::vector<std::string>{
                      "/usr/lib/x86_64-linux-gnu/libonload_zf.so", "/usr/lib64/libonload_zf.so",
                      "/usr/bin/onload", "/usr/lib/x86_64-linux-gnu/libonload.so",
                      "/usr/lib64/libonload.so", "/usr/lib/x86_64-linux-gnu/librdma.so",
                      "/usr/lib64/librdma.so"});
  CHECK(r.mounts[5].host_path == "/host/usr/lib/librdma.so");
  CHECK(r.mounts[6].host_path == "/host/usr/lib/librdma.so");
  CHECK(devices == std::vector<std::string>{"/dev/sfc_char", "/dev/onload"});
  CHECK(r.envs.at("LD_PRELOAD") == "/usr/lib/x86_64-linux-gnu/libonload.so");
}

TEST_CASE(
    "nomad reserve: set_preload false drops LD_PRELOAD; mount_onload false drops Onload's mounts "
    "only") {
  NomadConfig c = Cfg();
  c.set_preload = false;
  c.mount_onload = false;
  NomadReservation r;
  std::string err;
  REQUIRE(NomadReserve(View(), c, {"amd-onload-0", "oci-decorator-rdma-1"}, &r, &err) ==
          ReserveError::kNone);
  CHECK(r.envs.empty());
  REQUIRE(r.mounts.size() == 2);  // the other inventory's mounts stay
  CHECK(r.mounts[0].task_path == "/usr/lib/x86_64-linux-gnu/librdma.so");
  CHECK(r.mounts[1].task_path == "/usr/lib64/librdma.so");
  CHECK(r.devices.size() == 2);  // devices always
}

TEST_CASE("nomad reserve: unknown, out-of-range, unhealthy, empty") {
  NomadReservation r;
  std::string err;
  CHECK(NomadReserve(View(), Cfg(), {"amd-onload-0", "amd-nope-0"}, &r, &err) ==
        ReserveError::kUnknownId);
  CHECK(err == "unknown device ID \"amd-nope-0\"");
  CHECK(NomadReserve(View(), Cfg(4), {"amd-onload-4"}, &r, &err) == ReserveError::kUnknownId);
  CHECK(err == "unknown device ID \"amd-onload-4\"");
  for (const char* bad :
       {"amd-onload-", "amd-onload-01", "amd-onload--1", "amd-onload-1x", "amd-onload", "onload-0",
        "amd-onload-99999999999999999999", " amd-onload-0"}) {
    INFO(bad);
    CHECK(NomadReserve(View(), Cfg(), {bad}, &r, &err) == ReserveError::kUnknownId);
  }
  CHECK(NomadReserve(View(), Cfg(100000), {"amd-onload-99999"}, &r, &err) == ReserveError::kNone);
  CHECK(NomadReserve(View(), Cfg(), {"acme-fpga-0"}, &r, &err) == ReserveError::kUnhealthy);
  CHECK(err.find("device acme-fpga-0 (acme/fpga) is unhealthy: required binaries entry") == 0);
  CHECK(NomadReserve(View(), Cfg(), {}, &r, &err) == ReserveError::kInvalid);
}

// --- NIC attributes and hw_locality, from a fake sysfs tree -------------------------
// (put on the wire by FillGroups: Nomad's attribute.proto:16 int_val for
// numa_node, device.proto:74-84 DetectedDevice.hw_locality.pci_bus_id;
// nomad_standin.py checks the decoded Fingerprint)

namespace {

const char* kNicInventory = R"({
  "version": "1", "activation_flag": "OCI_ONLOAD", "cdi_kind": "amd.com/onload",
  "driver_feature": ["onload"],
  "needs_nic": {"pci_vendors": ["0x1924"]},
  "inventory": {"onload": {"devices": ["onload"]}}
})";

// A PCI NIC as sysfs lays it out: the bus's entry a link into the device tree.
void Nic(const ocid::test::TempTree& t, const std::string& addr, const std::string& numa,
         const std::string& iface) {
  const std::string dev = "sys/devices/pci0000:00/0000:00:02.0/" + addr;
  t.File(dev + "/vendor", "0x1924\n");
  t.File(dev + "/device", "0x0b03\n");
  t.File(dev + "/numa_node", numa + "\n");
  t.Dir(dev + "/net/" + iface);
  t.Link("sys/bus/pci/devices/" + addr, "../../../devices/pci0000:00/0000:00:02.0/" + addr);
}

// The view the plugin builds on a host with /dev/onload and the NICs of `t`.
ClusterView NicView(const ocid::test::TempTree& t) {
  std::vector<ocid::InventoryFile> raw = {{"/etc/ocid.d/onload.json", kNicInventory, {}}};
  ocid::InventorySet set;
  ocid::ParseInventoryFiles(raw, &set);
  REQUIRE(set.broken.empty());
  std::unique_ptr<ocid::HostRootView> files;
  ocid::Error err;
  REQUIRE_MESSAGE(ocid::HostRootView::Open(t.path(), &files, &err), err.Line());
  ocid_test::FakeHost host;
  host.Chr("/dev/onload", 240, 0);
  ClusterView v;
  ocid::BuildClusterView(set, host, ocid::ReadHostNics(*files, ocid::NicVendorsToRead(set)), "/",
                         nullptr, &v);
  return v;
}

}  // namespace

TEST_CASE("nomad groups: one NIC: its bus id as every instance's hw_locality, NUMA node an int") {
  ocid::test::TempTree t;
  Nic(t, "0000:af:00.0", "1", "ens1f0np0");
  ClusterView v = NicView(t);
  REQUIRE(v.resources.size() == 1);
  v.resources[0].versions.library_version = "9.2.0.43 cloud";  // as the version lock read them
  v.resources[0].versions.module_version = "9.2.0.43 cloud";
  auto groups = NomadGroups(v, Cfg(2));
  REQUIRE(groups.size() == 1);
  const auto& g = groups[0];
  CHECK(g.healthy);
  CHECK(g.pci_bus_id == "0000:af:00.0");
  CHECK(g.attributes.at("pci_bus_ids") == "0000:af:00.0");
  CHECK(g.attributes.at("interfaces") == "ens1f0np0");
  CHECK(g.attributes.at("numa_nodes") == "1");
  CHECK(g.int_attributes.at("numa_node") == 1);
  CHECK(g.attributes.at("library_version") == "9.2.0.43 cloud");
  CHECK(g.attributes.at("module_version") == "9.2.0.43 cloud");
}

TEST_CASE("nomad groups: NICs on two NUMA nodes: no hw_locality, no single numa_node") {
  ocid::test::TempTree t;
  Nic(t, "0000:3b:00.0", "0", "ens2f0np0");
  Nic(t, "0000:af:00.0", "1", "ens1f0np0");
  auto groups = NomadGroups(NicView(t), Cfg(2));
  REQUIRE(groups.size() == 1);
  const auto& g = groups[0];
  CHECK(g.pci_bus_id.empty());  // an instance is not tied to one of them
  CHECK(g.attributes.at("pci_bus_ids") == "0000:3b:00.0,0000:af:00.0");
  CHECK(g.attributes.at("interfaces") == "ens2f0np0,ens1f0np0");
  CHECK(g.attributes.at("numa_nodes") == "0,1");
  CHECK(g.int_attributes.count("numa_node") == 0);
  CHECK(g.attributes.count("library_version") == 0);  // no version lock: not known
}

TEST_CASE("nomad groups: numa_node -1 everywhere: bus id, no NUMA attributes; no NIC: unhealthy") {
  ocid::test::TempTree t;
  Nic(t, "0000:01:00.0", "-1", "eth1");
  auto groups = NomadGroups(NicView(t), Cfg(1));
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].pci_bus_id == "0000:01:00.0");
  CHECK(groups[0].attributes.count("numa_nodes") == 0);
  CHECK(groups[0].int_attributes.empty());

  ocid::test::TempTree none;
  auto bare = NomadGroups(NicView(none), Cfg(1));
  REQUIRE(bare.size() == 1);
  CHECK_FALSE(bare[0].healthy);
  CHECK(bare[0].why.find("no NIC of PCI vendor 0x1924 in /sys/bus/pci/devices") == 0);
  CHECK(bare[0].pci_bus_id.empty());
  CHECK(bare[0].attributes.count("pci_bus_ids") == 0);
}

// --- the inventory's conditions and groups, from a view of a fake host -------

TEST_CASE("nomad groups: conditions met and required groups are attributes") {
  ocid_test::FakeHost h;
  h.Chr("/dev/onload", 240, 0);
  SUBCASE("no condition met, no group: neither attribute") {
    auto groups = NomadGroups(SharedDirView(h, "/"), NomadConfig{});
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].healthy);
    CHECK(groups[0].attributes.count("conditions") == 0);
    CHECK(groups[0].attributes.count("additional_gids") == 0);
  }
  SUBCASE("the condition met, a group others may not use: both") {
    h.Content("/sys/module/m/parameters/ctl_path", "/usr/sbin/ctl\n").File("/usr/sbin/ctl");
    h.Content("/sys/module/m/parameters/client_gid", "4242\n");
    h.Content("/sys/module/m/parameters/client_mode", "432\n");  // 0660
    ClusterView v = SharedDirView(h, "/");
    REQUIRE(v.resources.size() == 1);
    CHECK(v.resources[0].met_conditions == std::vector<std::string>{"ctl"});
    REQUIRE(v.resources[0].to_create.size() == 1);
    CHECK(v.resources[0].to_create[0].source == "/run/ctl");
    auto groups = NomadGroups(v, NomadConfig{});
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].attributes.at("conditions") == "ctl");
    CHECK(groups[0].attributes.at("additional_gids") == "4242");
    // The reservation mounts the directory; it cannot carry the group.
    NomadReservation res;
    std::string err;
    REQUIRE(NomadReserve(v, NomadConfig{}, {groups[0].ids[0]}, &res, &err) == ReserveError::kNone);
    bool mounted = false;
    for (const auto& m : res.mounts)
      mounted = mounted || (m.task_path == "/run/ctl" && m.host_path == "/run/ctl");
    CHECK(mounted);
  }
  SUBCASE("a group the default mode admits others to: not an attribute") {
    h.Content("/sys/module/m/parameters/client_gid", "4242\n");
    auto groups = NomadGroups(SharedDirView(h, "/"), NomadConfig{});
    CHECK(groups[0].attributes.count("additional_gids") == 0);
  }
}
