// Nomad device groups and reservations from a cluster view: IDs unique
// across groups, health, the union of groups, mount_onload / set_preload,
// unknown and unhealthy IDs.
#include <doctest/doctest.h>

#include <string>

#include "nomad_devices.h"

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
  onload.delivery.mounts = {{"/usr/bin/onload", "/usr/bin/onload", true},
                            {"/usr/lib64/libonload.so", "/usr/lib64/libonload.so", true}};
  onload.delivery.devices = {{"/dev/onload", "/dev/onload", 'c', 240, 0, 0666, "rw"},
                             {"/dev/sfc_char", "/dev/sfc_char", 'c', 241, 0, 0666, "rw"}};
  onload.delivery.env = {{"LD_PRELOAD", "/usr/lib64/libonload.so"}};
  ClusterResource zf = Res("amd", "zf", "amd.com/onload=zf", true);
  zf.delivery.mounts = {{"/usr/lib64/libonload_zf.so", "/usr/lib64/libonload_zf.so", true}};
  zf.delivery.devices = {{"/dev/sfc_char", "/dev/sfc_char", 'c', 241, 0, 0666, "rw"}};
  ClusterResource rdma = Res("oci-decorator", "rdma", "", true);
  rdma.delivery.mounts = {{"/host/usr/lib/librdma.so", "/usr/lib/librdma.so", true}};
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

TEST_CASE("nomad groups: one per Nomad type, slots IDs unique across groups, health and attributes") {
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
  REQUIRE(r.mounts.size() == 2);
  CHECK(r.mounts[0].task_path == "/usr/bin/onload");
  CHECK(r.mounts[0].read_only);
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].task_path == "/dev/onload");
  CHECK(r.devices[0].permissions == "rw");
  CHECK(r.envs.at("LD_PRELOAD") == "/usr/lib64/libonload.so");
}

TEST_CASE("nomad reserve: IDs of several groups give the union, without duplicates") {
  NomadReservation r;
  std::string err;
  REQUIRE(NomadReserve(View(), Cfg(), {"amd-zf-0", "amd-onload-0", "amd-onload-3", "oci-decorator-rdma-0"},
                       &r, &err) == ReserveError::kNone);
  std::vector<std::string> mounts, devices;
  for (auto& m : r.mounts) mounts.push_back(m.task_path);
  for (auto& d : r.devices) devices.push_back(d.task_path);
  CHECK(mounts == std::vector<std::string>{"/usr/lib64/libonload_zf.so", "/usr/bin/onload",
                                           "/usr/lib64/libonload.so", "/usr/lib/librdma.so"});
  CHECK(r.mounts[3].host_path == "/host/usr/lib/librdma.so");
  CHECK(devices == std::vector<std::string>{"/dev/sfc_char", "/dev/onload"});
  CHECK(r.envs.at("LD_PRELOAD") == "/usr/lib64/libonload.so");
}

TEST_CASE("nomad reserve: set_preload false drops LD_PRELOAD; mount_onload false drops Onload's mounts only") {
  NomadConfig c = Cfg();
  c.set_preload = false;
  c.mount_onload = false;
  NomadReservation r;
  std::string err;
  REQUIRE(NomadReserve(View(), c, {"amd-onload-0", "oci-decorator-rdma-1"}, &r, &err) == ReserveError::kNone);
  CHECK(r.envs.empty());
  REQUIRE(r.mounts.size() == 1);  // the other inventory's mount stays
  CHECK(r.mounts[0].task_path == "/usr/lib/librdma.so");
  CHECK(r.devices.size() == 2);  // devices always
}

TEST_CASE("nomad reserve: unknown, out-of-range, unhealthy, empty") {
  NomadReservation r;
  std::string err;
  CHECK(NomadReserve(View(), Cfg(), {"amd-onload-0", "amd-nope-0"}, &r, &err) == ReserveError::kUnknownId);
  CHECK(err == "unknown device ID \"amd-nope-0\"");
  CHECK(NomadReserve(View(), Cfg(4), {"amd-onload-4"}, &r, &err) == ReserveError::kUnknownId);
  CHECK(err == "unknown device ID \"amd-onload-4\"");
  for (const char* bad : {"amd-onload-", "amd-onload-01", "amd-onload--1", "amd-onload-1x", "amd-onload",
                          "onload-0", "amd-onload-99999999999999999999", " amd-onload-0"}) {
    INFO(bad);
    CHECK(NomadReserve(View(), Cfg(), {bad}, &r, &err) == ReserveError::kUnknownId);
  }
  CHECK(NomadReserve(View(), Cfg(100000), {"amd-onload-99999"}, &r, &err) == ReserveError::kNone);
  CHECK(NomadReserve(View(), Cfg(), {"acme-fpga-0"}, &r, &err) == ReserveError::kUnhealthy);
  CHECK(err.find("device acme-fpga-0 (acme/fpga) is unhealthy: required binaries entry") == 0);
  CHECK(NomadReserve(View(), Cfg(), {}, &r, &err) == ReserveError::kInvalid);
}
