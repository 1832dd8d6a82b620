#include "nic.h"

#include <algorithm>

#include "inventory.h"
#include "path_text.h"

namespace ocid {
namespace {

constexpr size_t kMaxAttributeBytes = 64 << 10;  // sysfs files say 4096

// sysfs `numa_node`: a decimal, -1 when the platform gives none.
int NumaNodeOf(const std::string& line) {
  if (line.empty() || line.size() > 6) return -1;
  int n = 0;
  for (char c : line) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

std::string FirstLine(std::string_view bytes) {
  std::string_view s = bytes.substr(0, bytes.find('\n'));
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t\r") - b + 1));
}

bool ReadPciNics(const HostView& host, const std::vector<std::string>& vendors,
                 std::vector<PciNic>* out, Error* err) {
  out->clear();
  std::vector<std::string> names;
  HostRead r = host.List(kPciDevices, &names, err);
  if (r == HostRead::kMissing) return true;
  if (r == HostRead::kError) return false;
  for (const auto& n : names) {
    const std::string dev = std::string(kPciDevices) + "/" + n;
    std::string bytes;
    Error ignored;
    if (host.Read(dev + "/vendor", kMaxAttributeBytes, &bytes, &ignored) != HostRead::kOk) continue;
    PciNic nic;
    nic.address = n;
    nic.vendor = FirstLine(bytes);
    if (std::find(vendors.begin(), vendors.end(), nic.vendor) == vendors.end()) continue;
    if (host.Read(dev + "/device", kMaxAttributeBytes, &bytes, &ignored) == HostRead::kOk)
      nic.device = FirstLine(bytes);
    if (host.Read(dev + "/numa_node", kMaxAttributeBytes, &bytes, &ignored) == HostRead::kOk)
      nic.numa_node = NumaNodeOf(FirstLine(bytes));
    std::string link;
    if (host.ReadLink(dev + "/driver", &link, &ignored) == HostRead::kOk)
      nic.driver = Basename(link);
    host.List(dev + "/net", &nic.interfaces, &ignored);
    out->push_back(std::move(nic));
  }
  return true;
}

HostNics ReadHostNics(const HostView& host, const std::vector<std::string>& vendors) {
  HostNics h;
  Error err;
  if (!ReadPciNics(host, vendors, &h.nics, &err)) h.error = err.Line();
  return h;
}

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
