// NICs a feature needs. Onload and TCPDirect accelerate a Solarflare or
// Xilinx/AMD NIC: on a node without one the files may all be there, yet a
// container given them has nothing to accelerate (TCPDirect aborts, Onload
// falls back to the kernel stack). An inventory says so with "needs_nic":
//
//   "needs_nic": {
//     "pci_vendors": ["0x1924", "0x10ee"],  // sysfs `vendor` values that count
//     "features": ["onload", "zf"]          // default: all
//   }
//
// One decision, NicsFor, for `check` (node_check.h) and the device plugin
// (cluster.h): which NICs serve a set of features, and when none does, the
// one line both print. The NICs themselves are read from sysfs here too
// (ReadPciNics), through the HostView under --host-root, so tests hand it
// fake sysfs trees.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "host_view.h"

namespace ocid {

struct Inventory;  // its NicRequirement is the description (inventory.h)
struct InventorySet;

// PCI vendors whose NICs Onload accelerates: Solarflare, and Xilinx/AMD
// (the X2 and X3 families). `check` always lists these NICs.
constexpr const char* kOnloadNicVendors[] = {"0x1924", "0x10ee"};
constexpr const char* kPciDevices = "/sys/bus/pci/devices";

// A NIC from <host-root>/sys/bus/pci/devices/<address>.
struct PciNic {
  std::string address;                  // "0000:01:00.0", the PCI bus id
  std::string vendor, device;           // "0x1924", "0x0b03"
  std::string driver;                   // basename of the driver link; "" = none bound
  std::vector<std::string> interfaces;  // entries of net/
  int numa_node = -1;                   // `numa_node`; -1 = none (one node) or unknown
};

// What the node's NICs are, as read (or why they could not be).
struct HostNics {
  std::vector<PciNic> nics;
  std::string error;  // sysfs could not be listed
};

struct NicVerdict {
  bool needed = false;        // the features need a NIC
  std::vector<PciNic> serve;  // the NICs of the listed vendors, in address order
  std::string why;            // when needed and none serves: the one line
};

// The NICs of the given PCI vendors under
// <host-root>/sys/bus/pci/devices, with their NUMA node. A missing directory
// gives none; a device whose vendor cannot be read is skipped.
bool ReadPciNics(const HostView& host, const std::vector<std::string>& vendors,
                 std::vector<PciNic>* out, Error* err);
// The same, the error kept as a line in the result (`check`, and the
// device plugin once per rebuild).
HostNics ReadHostNics(const HostView& host, const std::vector<std::string>& vendors);

// The NICs that serve `features` of `inv` on this node.
NicVerdict NicsFor(const Inventory& inv, const std::vector<std::string>& features,
                   const HostNics& nics);

// The vendors to read: Onload's, then every inventory's, each once.
std::vector<std::string> NicVendorsToRead(const InventorySet& set);

// The distinct known NUMA nodes of `nics`, ascending (none when every
// numa_node is -1).
std::vector<int> NumaNodes(const std::vector<PciNic>& nics);

// The first line of a sysfs attribute, trimmed ("0x1924\n" -> "0x1924").
std::string FirstLine(std::string_view bytes);

}  // namespace ocid
