// One snapshot of what the device plugin offers: the inventories of its
// config directory planned on the host as the cluster view (cluster.h),
// with the NICs that serve them and, given a CDI directory, the CDI specs.
// `resources` prints one; the resource watch (src/plugin/resource_watch.h)
// takes one on every rebuild. Each keeps its own log lines and exits; what
// they read is the same.
#pragma once
#include <string>

#include "cluster.h"
#include "error.h"
#include "host_view.h"
#include "inventory.h"

namespace ocid {

// Where a snapshot reads from, and how it names what it hands out.
struct ViewSources {
  std::string config_dir;
  std::string host_path_root;  // what the host calls the root, in handed-out paths
  std::string profile;         // the plugin's --profile; "" = none
  std::string cdi_dir;         // where the CDI specs go; "" = the view carries none
  // The kubelet device-plugins directory whose read-only configMap volumes
  // may be the config directory (kubelet_volume.h); "" = none vouched for.
  std::string kubelet_volumes_of;
};

// How the config directory is read: the writable-by-others rule, with a
// read-only kubelet configMap volume of `kubelet_volumes_of`'s kubelet
// vouched for; none when that is "".
ConfigDirVouch ConfigDirVouchFor(const std::string& kubelet_volumes_of);

// Loads the inventories of src.config_dir with that vouch (LoadInventoryDir).
bool LoadViewInventories(const ViewSources& src, InventorySet* set, Error* err);

// Why a view has no resource, for the health file (readiness): the
// directory could not be read, holds no inventory, or each was refused
// (its line).
std::string NoResourcesWhy(bool loaded, const Error& load_err, const InventorySet& set,
                           const std::string& config_dir, const ClusterView& view);

// The view of `set` (`loaded`: whether the directory was read, else
// `load_err` says why) on `host`: the NICs (ReadHostNics), BuildClusterView,
// and with src.cdi_dir the CDI specs (BuildClusterCdi; when the directory
// could not be read, `previous`'s). `previous` (may be null) is the last
// view. `out->none_why` is set when there is no resource. Reads only
// through `host`.
void SnapshotView(const ViewSources& src, const InventorySet& set, bool loaded,
                  const Error& load_err, const HostView& host, const ClusterView* previous,
                  ClusterView* out);

}  // namespace ocid
