// nic: the NICs read from a fake sysfs (ReadPciNics, ReadHostNics), which of
// them serve a feature (NicsFor), the vendors to read, and their NUMA nodes.
#include "nic.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fake_host.h"
#include "inventory.h"

namespace {

using ocid::Error;
using ocid::HostNics;
using ocid::PciNic;

const std::string kDevices = "/sys/bus/pci/devices/";

// One PCI device under the fake sysfs; "" leaves an attribute out.
void AddNic(ocid_test::FakeHost& h, const std::string& address, const std::string& vendor,
            const std::string& device, const std::string& numa, const std::string& driver,
            const std::vector<std::string>& interfaces) {
  const std::string d = kDevices + address;
  h.Dir(d);
  if (!vendor.empty()) h.Content(d + "/vendor", vendor);
  if (!device.empty()) h.Content(d + "/device", device);
  if (!numa.empty()) h.Content(d + "/numa_node", numa);
  if (!driver.empty()) h.Link(d + "/driver", "../../../bus/pci/drivers/" + driver);
  for (const auto& i : interfaces) h.Dir(d + "/net/" + i);
}

PciNic Nic(const std::string& address, const std::string& vendor, int numa = -1) {
  PciNic n;
  n.address = address;
  n.vendor = vendor;
  n.numa_node = numa;
  return n;
}

ocid::Inventory NeedsNic(const std::vector<std::string>& vendors,
                         const std::vector<std::string>& features = {}) {
  ocid::Inventory inv;
  inv.needs_nic.pci_vendors = vendors;
  inv.needs_nic.features = features;
  return inv;
}

}  // namespace

TEST_CASE("nic: ReadPciNics keeps the listed vendors' NICs, with what sysfs says of each") {
  ocid_test::FakeHost h;
  AddNic(h, "0000:01:00.0", "0x1924\n", "0x0b03\n", "1\n", "sfc", {"eth0", "eth1"});
  AddNic(h, "0000:02:00.0", "0x8086\n", "0x1572\n", "0\n", "i40e", {"eno1"});
  AddNic(h, "0000:03:00.0", " 0x10ee \n", "0x5084\n", "-1\n", "", {});
  AddNic(h, "0000:04:00.0", "", "0x0b03\n", "0\n", "sfc", {});  // no vendor: skipped
  std::vector<PciNic> nics;
  Error err;
  REQUIRE_MESSAGE(ocid::ReadPciNics(h, {"0x1924", "0x10ee"}, &nics, &err), err.Line());
  REQUIRE(nics.size() == 2);
  CHECK(nics[0].address == "0000:01:00.0");
  CHECK(nics[0].vendor == "0x1924");
  CHECK(nics[0].device == "0x0b03");
  CHECK(nics[0].driver == "sfc");
  CHECK(nics[0].numa_node == 1);
  CHECK(nics[0].interfaces == std::vector<std::string>{"eth0", "eth1"});
  CHECK(nics[1].address == "0000:03:00.0");
  CHECK(nics[1].vendor == "0x10ee");  // trimmed
  CHECK(nics[1].driver.empty());      // none bound
  CHECK(nics[1].numa_node == -1);
  CHECK(nics[1].interfaces.empty());
}

TEST_CASE("nic: a numa_node that is not a small decimal is unknown") {
  for (const char* bad : {"", "x\n", "1x\n", "1234567\n", "-2\n"}) {
    CAPTURE(bad);
    ocid_test::FakeHost h;
    AddNic(h, "0000:01:00.0", "0x1924\n", "", bad, "", {});
    if (std::string(bad).empty()) h.Content(kDevices + "0000:01:00.0/numa_node", "");
    std::vector<PciNic> nics;
    Error err;
    REQUIRE(ocid::ReadPciNics(h, {"0x1924"}, &nics, &err));
    REQUIRE(nics.size() == 1);
    CHECK(nics[0].numa_node == -1);
  }
}

TEST_CASE("nic: no sysfs PCI directory gives no NICs and no error") {
  ocid_test::FakeHost h;
  std::vector<PciNic> nics{Nic("stale", "0x1924")};
  Error err;
  CHECK(ocid::ReadPciNics(h, {"0x1924"}, &nics, &err));
  CHECK(nics.empty());
  CHECK(err.empty());
  HostNics host = ocid::ReadHostNics(h, {"0x1924"});
  CHECK(host.nics.empty());
  CHECK(host.error.empty());
}

TEST_CASE("nic: FirstLine trims the first line of an attribute") {
  CHECK(ocid::FirstLine("0x1924\n") == "0x1924");
  CHECK(ocid::FirstLine(" \t0x1924\r\nsecond\n") == "0x1924");
  CHECK(ocid::FirstLine("  \n0x1924") == "");
  CHECK(ocid::FirstLine("") == "");
}

TEST_CASE("nic: NicsFor serves a feature that needs a NIC from the inventory's vendors") {
  HostNics host;
  host.nics = {Nic("0000:01:00.0", "0x1924"), Nic("0000:02:00.0", "0x8086"),
               Nic("0000:03:00.0", "0x10ee")};
  ocid::NicVerdict v = ocid::NicsFor(NeedsNic({"0x10ee", "0x1924"}), {"onload"}, host);
  CHECK(v.needed);
  REQUIRE(v.serve.size() == 2);
  CHECK(v.serve[0].address == "0000:01:00.0");
  CHECK(v.serve[1].address == "0000:03:00.0");
  CHECK(v.why.empty());

  SUBCASE("a feature the requirement does not name needs none") {
    ocid::NicVerdict w = ocid::NicsFor(NeedsNic({"0x1924"}, {"zf"}), {"onload"}, host);
    CHECK_FALSE(w.needed);
    CHECK(w.serve.empty());
  }
  SUBCASE("an inventory without needs_nic needs none") {
    CHECK_FALSE(ocid::NicsFor(NeedsNic({}), {"onload"}, host).needed);
  }
}

TEST_CASE("nic: when no NIC serves, one line says which vendors and why") {
  HostNics host;
  host.nics = {Nic("0000:02:00.0", "0x8086")};
  ocid::NicVerdict v = ocid::NicsFor(NeedsNic({"0x1924"}), {"onload"}, host);
  CHECK(v.needed);
  CHECK(v.serve.empty());
  CHECK(v.why ==
        "no NIC of PCI vendor 0x1924 in /sys/bus/pci/devices (the inventory's \"needs_nic\")");
  v = ocid::NicsFor(NeedsNic({"0x1924", "0x10ee", "0xabcd"}), {"onload"}, host);
  CHECK(v.why ==
        "no NIC of PCI vendor 0x1924, 0x10ee or 0xabcd in /sys/bus/pci/devices (the "
        "inventory's \"needs_nic\")");
  host.error = "cannot list /sys/bus/pci/devices: Permission denied";
  v = ocid::NicsFor(NeedsNic({"0x1924", "0x10ee"}), {"onload"}, host);
  CHECK(v.why ==
        "no NIC of PCI vendor 0x1924 or 0x10ee in /sys/bus/pci/devices (the inventory's "
        "\"needs_nic\"): cannot list /sys/bus/pci/devices: Permission denied");
}

TEST_CASE("nic: the vendors to read are Onload's, then each inventory's, once") {
  ocid::InventorySet set;
  set.inventories = {NeedsNic({"0xabcd", "0x1924"}), NeedsNic({}), NeedsNic({"0xabcd", "0x15b3"})};
  CHECK(ocid::NicVendorsToRead(set) ==
        std::vector<std::string>{"0x1924", "0x10ee", "0xabcd", "0x15b3"});
  CHECK(ocid::NicVendorsToRead(ocid::InventorySet{}) ==
        std::vector<std::string>{"0x1924", "0x10ee"});
}

TEST_CASE("nic: NumaNodes lists the known nodes once, ascending") {
  CHECK(ocid::NumaNodes({}).empty());
  CHECK(ocid::NumaNodes({Nic("a", "0x1924"), Nic("b", "0x1924")}).empty());
  CHECK(ocid::NumaNodes({Nic("a", "0x1924", 3), Nic("b", "0x1924", -1), Nic("c", "0x1924", 0),
                         Nic("d", "0x1924", 3)}) == std::vector<int>{0, 3});
}
