// Keeps the inventories' CDI specs current in a directory (--cdi-dir), so
// the cdi_devices that Allocate names always resolve on this node: one
// spec per inventory, the core's BuildCdiSpec under --host-root with host
// paths named under --host-path-root, written atomically when it changed,
// with its preload files (mounted at /etc/ld.so.preload: cdi.h) before it.
// The spec names them under --cdi-dir: the directory must have the same
// path on the host as in the plugin.
//
// A broken inventory keeps its last spec (pods that got its devices keep
// starting while the operator fixes the file); an inventory that is gone
// has its spec removed. Only files this process wrote are ever removed.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "plugin_options.h"

namespace ocid {

class CdiDirWriter {
 public:
  CdiDirWriter(const PluginOptions& opts, std::string dir);
  // Rebuilds every spec and writes those that differ from the file. Each
  // failure is one log line; returns false if any happened.
  bool Sync();

 private:
  PluginOptions opts_;
  std::string dir_;
  // inventory file -> its preload files' paths, then its spec's
  std::map<std::string, std::vector<std::string>> written_;
};

}  // namespace ocid
