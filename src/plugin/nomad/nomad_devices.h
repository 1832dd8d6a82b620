// The cluster view (core cluster.h) as Nomad sees it: device groups with
// virtual device instances, and the ContainerReservation for a set of
// instance IDs. Pure (no gRPC), so it is unit tested on built views.
//
// Attributes. Names follow Nomad's own device plugins (snake_case, e.g.
// nomad-device-nvidia's driver_version, pci_bandwidth in fingerprint.go);
// strings but for numa_node, an int (structs.Attribute int_val) so that a
// job can compare it as a number. hw_locality.pci_bus_id is what Nomad's
// scheduler matches against the client's sysfs NUMA map for a job's `numa`
// block (scheduler/feasible/device.go, memoryNodeMatcher.Matches: an
// instance without it never matches there); it is set only where one NIC
// serves the group, since a virtual instance is not tied to one of several.
//
// IDs. Reserve receives IDs only, not the group, so an ID names its group:
// "<vendor>-<type>-<n>" ("amd-onload-0", "amd-onloadzf-63"), n < slots.
// The IDs are stable across restarts (Nomad requires it) because they
// depend on the inventory's names and `slots` only.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cluster.h"
#include "nomad_config.h"

namespace ocid {

// Nomad's device_name for every group of this plugin.
inline constexpr const char* kNomadDeviceName = "oci-decorator";

struct NomadGroup {
  std::string vendor;  // "amd"
  std::string type;    // "onload", "zf", "onloadzf"
  std::string name;    // kNomadDeviceName
  std::vector<std::string> ids;
  bool healthy = false;
  std::string why;  // health description when unhealthy
  // String attributes for constraints: features, inventory, cdi_device;
  // for a group served by NICs (its inventory's "needs_nic") pci_bus_ids,
  // interfaces, numa_nodes (comma-separated), and library_version and
  // module_version when the version lock read them.
  std::map<std::string, std::string> attributes;
  // Integer attributes: numa_node, when its NICs are on one known node.
  std::map<std::string, int64_t> int_attributes;
  // Every instance's hw_locality.pci_bus_id: the one NIC that serves the
  // group ("" when none or several).
  std::string pci_bus_id;
  size_t resource = 0;  // index into the view's resources
};

// One group per resource with a Nomad type, in the view's order. A group
// whose ID prefix collides with an earlier one's ("a-b"/"c" vs "a"/"b-c")
// is left out with a warning in *warnings.
// `with_ids` false leaves `ids` empty (Reserve parses IDs instead).
std::vector<NomadGroup> NomadGroups(const ClusterView& view, const NomadConfig& cfg,
                                    std::vector<std::string>* warnings = nullptr,
                                    bool with_ids = true);

struct NomadMount {
  std::string task_path, host_path;
  bool read_only = true;
};
struct NomadDevice {
  std::string task_path, host_path, permissions;
};
struct NomadReservation {
  std::map<std::string, std::string> envs;
  std::vector<NomadMount> mounts;
  std::vector<NomadDevice> devices;
};

enum class ReserveError { kNone, kInvalid, kUnknownId, kUnhealthy };

// The union of the deliveries of the groups the IDs belong to. Mounts are
// left out for the Onload inventory (cdi kind amd.com/onload) when
// mount_onload is false, never for other inventories; LD_PRELOAD only with
// set_preload. Fails naming the first unknown ID (a client's bytes: cut at
// kMaxShownId, through Printable), or the unhealthy group and why.
ReserveError NomadReserve(const ClusterView& view, const NomadConfig& cfg,
                          const std::vector<std::string>& ids, NomadReservation* out,
                          std::string* err);

}  // namespace ocid
