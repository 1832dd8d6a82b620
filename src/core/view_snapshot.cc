#include "view_snapshot.h"

#include "kubelet_volume.h"
#include "nic.h"

namespace ocid {

ConfigDirVouch ConfigDirVouchFor(const std::string& kubelet_volumes_of) {
  if (kubelet_volumes_of.empty()) return nullptr;
  return [kdir = kubelet_volumes_of](int dirfd) { return KubeletConfigVolumeWhyNot(dirfd, kdir); };
}

bool LoadViewInventories(const ViewSources& src, InventorySet* set, Error* err) {
  return LoadInventoryDir(src.config_dir, set, err, ConfigDirVouchFor(src.kubelet_volumes_of));
}

std::string NoResourcesWhy(bool loaded, const Error& load_err, const InventorySet& set,
                           const std::string& config_dir, const ClusterView& view) {
  if (!loaded) return "cannot read the inventory directory: " + load_err.Line();
  if (!set.broken.empty()) {
    const BrokenInventory& b = set.broken.front();
    std::string more = set.broken.size() > 1
                           ? " (and " + std::to_string(set.broken.size() - 1) + " more refused)"
                           : "";
    return "inventory " + b.file + " refused: " + b.error.Line() + more;
  }
  if (set.inventories.empty()) return "no inventory (*.json) in " + config_dir;
  if (!view.warnings.empty()) return view.warnings.front();
  return "the inventories in " + config_dir + " name no feature";
}

void SnapshotView(const ViewSources& src, const InventorySet& set, bool loaded,
                  const Error& load_err, const HostView& host, const ClusterView* previous,
                  ClusterView* out) {
  // The NICs, once per snapshot, through the same reader as `check`.
  HostNics nics = ReadHostNics(host, NicVendorsToRead(set));
  BuildClusterView(set, host, nics, src.host_path_root, previous, out, src.profile);
  // The CDI specs of the same set on the same host; an unreadable
  // inventory directory keeps the last ones.
  if (!src.cdi_dir.empty() && loaded) {
    BuildClusterCdi(set, host, src.host_path_root, src.cdi_dir, previous, out);
  } else if (!src.cdi_dir.empty() && previous) {
    out->cdi_dir = previous->cdi_dir;
    out->cdi_specs = previous->cdi_specs;
  }
  if (out->resources.empty())
    out->none_why = NoResourcesWhy(loaded, load_err, set, src.config_dir, *out);
}

}  // namespace ocid
