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
    if (!BuildCdiSpec(inv, *host, opts_.host_path_root, &spec, &err)) {
      log::Warn("CDI spec of " + inv.file + " not written: " + err.Line());
      continue;  // no device on this host: the resources are unhealthy anyway
    }
    std::string path = dir_ + "/" + spec.file_name;
    std::string current;
    bool exists = false;
    Error rerr;
    if (ReadFileIfExists(path, spec.json.size() + 1, &current, &exists, &rerr) && exists &&
        current == spec.json) {
      written_[inv.file] = path;
      continue;
    }
    if (!WriteFileAtomic(path, spec.json, 0644, &err)) {
      log::Error("CDI spec of " + inv.file + " not written: " + err.Line());
      ok = false;
      continue;
    }
    written_[inv.file] = path;
    std::string names;
    for (const auto& d : spec.devices) names += (names.empty() ? "" : ", ") + d;
    log::Info("wrote " + path + ": kind " + spec.kind + ", devices " + names);
  }
  for (auto it = written_.begin(); it != written_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    if (::unlink(it->second.c_str()) == 0)
      log::Info("removed " + it->second + ": " + it->first + " is gone");
    it = written_.erase(it);
  }
  return ok;
}

}  // namespace ocid
