#include "node_facts.h"

namespace ocid {

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
