#include "nic.h"

#include <algorithm>

#include "inventory.h"

namespace ocid {

NicVerdict NicsFor(const Inventory& inv, const std::vector<std::string>& features,
                   const HostNics& nics) {
  NicVerdict v;
  const NicRequirement& need = inv.needs_nic;
  v.needed = need.Needs(features);
  if (!v.needed) return v;
  for (const auto& n : nics.nics)
    if (std::find(need.pci_vendors.begin(), need.pci_vendors.end(), n.vendor) !=
        need.pci_vendors.end())
      v.serve.push_back(n);
  if (!v.serve.empty()) return v;
  std::string vendors;
  for (size_t i = 0; i < need.pci_vendors.size(); ++i)
    vendors += (i == 0                             ? ""
                : i + 1 == need.pci_vendors.size() ? " or "
                                                   : ", ") +
               need.pci_vendors[i];
  v.why = "no NIC of PCI vendor " + vendors + " in " + kPciDevices +
          " (the inventory's \"needs_nic\")" + (nics.error.empty() ? "" : ": " + nics.error);
  return v;
}

std::vector<std::string> NicVendorsToRead(const InventorySet& set) {
  std::vector<std::string> out(std::begin(kOnloadNicVendors), std::end(kOnloadNicVendors));
  for (const auto& inv : set.inventories)
    for (const auto& v : inv.needs_nic.pci_vendors)
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

std::vector<int> NumaNodes(const std::vector<PciNic>& nics) {
  std::vector<int> out;
  for (const auto& n : nics)
    if (n.numa_node >= 0 && std::find(out.begin(), out.end(), n.numa_node) == out.end())
      out.push_back(n.numa_node);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ocid
