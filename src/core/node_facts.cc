#include "node_facts.h"

#include <algorithm>

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

const char* CgroupLayoutName(CgroupLayout l) {
  switch (l) {
    case CgroupLayout::kV1: return "v1";
    case CgroupLayout::kHybrid: return "hybrid";
    case CgroupLayout::kV2: return "v2";
    case CgroupLayout::kUnknown: return "unknown";
  }
  return "unknown";
}

CgroupLayout ReadCgroupLayout(const HostView& host) {
  if (host.Exists("/sys/fs/cgroup/cgroup.controllers")) return CgroupLayout::kV2;
  if (host.Exists("/sys/fs/cgroup/unified/cgroup.controllers")) return CgroupLayout::kHybrid;
  if (host.Exists("/sys/fs/cgroup/devices")) return CgroupLayout::kV1;
  return CgroupLayout::kUnknown;
}

namespace {

// Our files (oci-decorator-*<suffix>) in the CDI directories.
bool ReadOurCdiFiles(const HostView& host, const std::string& suffix, std::vector<CdiFile>* out,
                     Error* err) {
  out->clear();
  for (const char* dir : kCdiDirs) {
    std::vector<std::string> names;
    HostRead r = host.List(dir, &names, err);
    if (r == HostRead::kMissing) continue;
    if (r == HostRead::kError) return false;
    for (const auto& n : names) {
      if (n.rfind("oci-decorator-", 0) != 0 || n.size() < suffix.size() ||
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      CdiFile f;
      f.dir = dir;
      f.name = n;
      if (host.Read(std::string(dir) + "/" + n, kMaxCdiSpecBytes, &f.bytes, &f.error) !=
              HostRead::kOk &&
          f.error.empty())
        f.error = Error{"vanished while being read", host.Display(std::string(dir) + "/" + n)};
      if (f.error.empty() &&
          host.Owner(std::string(dir) + "/" + n, &f.owner, &f.error) != HostRead::kOk &&
          f.error.empty())
        f.error = Error{"vanished while being read", host.Display(std::string(dir) + "/" + n)};
      out->push_back(std::move(f));
    }
  }
  return true;
}

}  // namespace

bool ReadCdiFiles(const HostView& host, std::vector<CdiFile>* out, Error* err) {
  return ReadOurCdiFiles(host, ".json", out, err);
}

bool ReadCdiDirs(const HostView& host, std::vector<CdiDir>* out, Error* err) {
  out->clear();
  for (const char* dir : kCdiDirs) {
    CdiDir d;
    d.dir = dir;
    HostRead r = host.DirSteps(dir, &d.steps, err);
    if (r == HostRead::kError) return false;
    if (r == HostRead::kOk) out->push_back(std::move(d));
  }
  return true;
}

bool ReadCdiPreloadFiles(const HostView& host, std::vector<CdiFile>* out, Error* err) {
  return ReadOurCdiFiles(host, ".preload", out, err);
}

}  // namespace ocid
