// The pure half of the Kubernetes mode: how a cluster resource (core
// cluster.h) is named and counted on the kubelet's side, and what Allocate
// answers for it. No sockets, no threads: the gRPC service (kubelet_server)
// and the tests call these with a view in hand.
//
// Protocol decisions, as the kubelet sees them:
//   socket    <kubelet-dir>/oci-decorator-<resource>.sock, '/' and anything
//             outside [A-Za-z0-9._-] replaced by '_'
//             (amd.com/onload -> oci-decorator-amd.com_onload.sock);
//   devices   --slots virtual IDs "<name>-<n>", n = 0..slots-1, where name
//             is the resource's name after the '/' (onload-0..onload-63):
//             the resource is shareable, an ID only counts a container;
//   health    every ID has the resource's health ("Healthy"/"Unhealthy");
//   topology  a resource served by NICs (its inventory's "needs_nic"): every
//             ID carries TopologyInfo with the distinct NUMA nodes of those
//             NICs (sysfs numa_node), none when all are -1. The kubelet's
//             Topology Manager then offers hints only for NUMA node sets
//             that include one of them (devicemanager/topology_hints.go);
//             without TopologyInfo the resource has no preference;
//   Allocate  an unknown ID -> INVALID_ARGUMENT naming it; no container,
//             a container without IDs, more than 256 containers or more
//             IDs than slots in one -> INVALID_ARGUMENT; an unhealthy or
//             vanished resource -> FAILED_PRECONDITION with the reason;
//             otherwise, per container, cdi_devices [<cdi_device>] and/or
//             the delivery (mounts read-only, devices "rw", env).
//             The CDI device is named only when it resolves (with
//             --cdi-dir: a spec the CDI keeper has written or found
//             current, cdi_dir_keeper.h; without, the operator's word that
//             specs are written elsewhere); when it does not, `both`
//             answers the delivery alone (and says so in one log line),
//             `cdi` is FAILED_PRECONDITION naming the spec and why.
//   preload   in the delivery, through the CDI writer's preload file
//             mounted read-only at /etc/ld.so.preload when there is one
//             (--cdi-dir, PreloadFileFor, and the keeper vouches for it as
//             Allocate answers: cdi_dir_keeper.h PreloadFileIfCurrent, the
//             directory the last pass checked, reached by the writer's
//             rule, and the file current in it), which keeps an image's
//             own LD_PRELOAD (glibc loads both); else env LD_PRELOAD,
//             which replaces it.
#pragma once
#include <grpcpp/support/status.h>

#include <cstddef>
#include <string>
#include <vector>

#include "cluster.h"
#include "deviceplugin/v1beta1/api.pb.h"
#include "plugin_options.h"
#include "slot_ids.h"

namespace ocid {

constexpr const char* kDevicePluginVersion = "v1beta1";
constexpr const char* kKubeletSocket = "kubelet.sock";
constexpr const char* kHealthy = "Healthy";
constexpr const char* kUnhealthy = "Unhealthy";
// More containers than any pod has; Allocate refuses a request with more.
constexpr int kMaxContainerRequests = 256;

// "oci-decorator-amd.com_onload.sock" for "amd.com/onload".
std::string SocketNameFor(const std::string& resource);

// The prefix of the resource's device IDs: its name after the '/', cut to
// 50 characters so that "<prefix>-<n>" stays within the kubelet's 63.
std::string DeviceIdPrefix(const std::string& resource);
// "<prefix>-<n>" for n in [0, slots).
std::vector<std::string> DeviceIds(const std::string& resource, int slots);
// True when `id` is one of DeviceIds(resource, slots), without building the
// list: "<prefix>-" then a decimal below slots, no leading zeros.
bool IsDeviceId(const std::string& resource, int slots, const std::string& id);

// The resource named `k8s_name` in `view`, or null.
const ClusterResource* FindK8sResource(const ClusterView& view, const std::string& k8s_name);

// The ListAndWatch message: every ID with the resource's health (absent
// counts as unhealthy).
v1beta1::ListAndWatchResponse DeviceList(const std::string& resource, int slots,
                                         const ClusterResource* r);

// Whether the resource's CDI device resolves on this node now.
struct CdiResolution {
  bool resolves = true;
  std::string why;  // when it does not: the spec and why
};

// The preload file the CDI writer keeps for `r` in `cdi_dir` (cdi_dir_keeper.h:
// the spec's name and cdi.h CdiPreloadFileName for the device of
// r.cdi_device, "oci-decorator-onload.onload.preload") and the bytes it
// holds when current (one preloaded container path a line). Empty path when
// there is no cdi_dir, no CDI device or nothing to preload. Naming it is
// the keeper's call (PreloadFileIfCurrent), not this path's.
struct PreloadFile {
  std::string path;  // cdi_dir/name
  std::string name;  // in cdi_dir
  std::string bytes;
};
PreloadFile PreloadFileFor(const ClusterResource& r, const std::string& cdi_dir);

// Allocate for `resource` given its current state `r` (null: not in the
// view any more) and whether its CDI device resolves. Fills `out` only
// when the status is OK; *note gets the log line of an answer that leaves
// out the CDI device ("" otherwise). `preload_file`,
// a host path, is the written preload file of r (PreloadFileFor, vouched
// for by the keeper): the mounts answer mounts it at /etc/ld.so.preload
// instead of setting env LD_PRELOAD; "" = env LD_PRELOAD.
grpc::Status BuildAllocateResponse(const std::string& resource, const ClusterResource* r,
                                   const KubernetesOptions& k8s,
                                   const v1beta1::AllocateRequest& req,
                                   v1beta1::AllocateResponse* out, const CdiResolution& cdi = {},
                                   std::string* note = nullptr,
                                   const std::string& preload_file = "");

// What a mounts answer cannot carry: the device plugin API has no field
// for a container's groups, so a healthy resource whose delivery needs
// supplementary groups (Delivery::additional_gids, the plan's required
// groups) answered with --allocate mounts reaches its service only when the
// pod adds them. The log line that says so ("" when nothing is missing: no
// group, or a cdi/both answer, whose CDI spec carries them).
std::string SupplementalGroupsNote(const ClusterResource& r, AllocateMode mode);

}  // namespace ocid
