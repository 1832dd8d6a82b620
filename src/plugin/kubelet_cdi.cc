#include "kubelet_cdi.h"

#include <unistd.h>

#include <memory>
#include <set>

#include "atomic_file.h"
#include "cdi.h"
#include "host_view.h"
#include "inventory.h"
#include "log.h"

namespace ocid {

CdiDirWriter::CdiDirWriter(const PluginOptions& opts, std::string dir)
    : opts_(opts), dir_(std::move(dir)) {}

bool CdiDirWriter::Sync() {
  InventorySet set;
  Error err;
  if (!LoadInventoryDir(opts_.config_dir, &set, &err)) {
    log::Error("CDI specs in " + dir_ + " not updated: " + err.Line());
    return false;
  }
  std::unique_ptr<HostRootView> host;
  if (!HostRootView::Open(opts_.host_root, &host, &err)) {
    log::Error("CDI specs in " + dir_ + " not updated: " + err.Line());
    return false;
  }
  host->set_resolve_paths(true);
  bool ok = true;
  std::set<std::string> present;  // inventories still in the directory
  for (const BrokenInventory& b : set.broken) present.insert(b.file);
  for (const Inventory& inv : set.inventories) {
    present.insert(inv.file);
    CdiSpec spec;
    if (!BuildCdiSpec(inv, *host, opts_.host_path_root, dir_ + "/" + CdiFileName(inv), &spec, &err)) {
      log::Warn("CDI spec of " + inv.file + " not written: " + err.Line());
      continue;  // no device on this host: the resources are unhealthy anyway
    }
    // The preload files first, the spec last (cdi.h CdiFilesOf); each only
    // when it differs from the file.
    std::vector<std::string> paths;
    bool spec_changed = false, failed = false;
    for (const auto& f : CdiFilesOf(spec)) {
      std::string path = dir_ + "/" + f.name;
      paths.push_back(path);
      std::string current;
      bool exists = false;
      Error rerr;
      if (ReadFileIfExists(path, f.bytes.size() + 1, &current, &exists, &rerr) && exists &&
          current == f.bytes)
        continue;
      if (!WriteFileAtomic(path, f.bytes, 0644, &err)) {
        log::Error("CDI spec of " + inv.file + " not written: " + err.Line());
        failed = true;
        break;
      }
      if (f.name == spec.file_name)
        spec_changed = true;
      else
        log::Info("wrote " + path + ": the preload file of " + inv.file);
    }
    if (failed) {
      ok = false;
      continue;
    }
    written_[inv.file] = paths;
    if (!spec_changed) continue;
    log::Info("wrote " + paths.back() + ": " + CdiSpecSummary(spec));
  }
  for (auto it = written_.begin(); it != written_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    // The spec first (an engine then no longer names the preload files).
    for (auto p = it->second.rbegin(); p != it->second.rend(); ++p)
      if (::unlink(p->c_str()) == 0) log::Info("removed " + *p + ": " + it->first + " is gone");
    it = written_.erase(it);
  }
  return ok;
}

}  // namespace ocid
