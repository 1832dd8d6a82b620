#include "kubelet_allocate.h"

#include "cdi.h"
#include "error.h"
#include "inventory.h"
#include "path_text.h"
#include "slot_ids.h"

namespace ocid {
namespace {

bool IsSocketNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

constexpr const char* kPreloadEnv = "LD_PRELOAD";

// Fills one container's answer from a healthy resource; with a
// `preload_file`, the preload goes through it (see the header).
void FillContainer(const ClusterResource& r, AllocateMode mode, bool name_cdi,
                   const std::string& preload_file, v1beta1::ContainerAllocateResponse* c) {
  if (name_cdi && (mode == AllocateMode::kCdi || mode == AllocateMode::kBoth))
    c->add_cdi_devices()->set_name(r.cdi_device);
  if (mode == AllocateMode::kMounts || mode == AllocateMode::kBoth) {
    for (const DeliveredMount& m : r.delivery.mounts) {
      v1beta1::Mount* pm = c->add_mounts();
      pm->set_container_path(m.container_path);
      pm->set_host_path(m.host_path);
      pm->set_read_only(m.read_only);
    }
    for (const DeliveredDevice& d : r.delivery.devices) {
      v1beta1::DeviceSpec* pd = c->add_devices();
      pd->set_container_path(d.container_path);
      pd->set_host_path(d.host_path);
      pd->set_permissions(d.permissions);
    }
    for (const auto& kv : r.delivery.env) (*c->mutable_envs())[kv.first] = kv.second;
    if (!preload_file.empty() && c->envs().count(kPreloadEnv)) {
      c->mutable_envs()->erase(kPreloadEnv);
      v1beta1::Mount* pm = c->add_mounts();
      pm->set_container_path("/etc/ld.so.preload");
      pm->set_host_path(preload_file);
      pm->set_read_only(true);
    }
  }
}

}  // namespace

std::string SocketNameFor(const std::string& resource) {
  std::string name = "oci-decorator-";
  for (char c : resource) name += IsSocketNameChar(c) ? c : '_';
  return name + ".sock";
}

std::string DeviceIdPrefix(const std::string& resource) { return Basename(resource).substr(0, 50); }

std::vector<std::string> DeviceIds(const std::string& resource, int slots) {
  return SlotIds(DeviceIdPrefix(resource) + "-", slots);
}

bool IsDeviceId(const std::string& resource, int slots, const std::string& id) {
  return IsSlotId(id, DeviceIdPrefix(resource) + "-", slots);
}

PreloadFile PreloadFileFor(const ClusterResource& r, const std::string& cdi_dir) {
  PreloadFile f;
  size_t eq = r.cdi_device.find('=');
  if (cdi_dir.empty() || eq == std::string::npos) return f;
  for (const auto& [key, value] : r.delivery.env) {
    if (key != kPreloadEnv) continue;
    // DeliveryOf joins the plan's preload paths with spaces; the file
    // holds one a line (cdi.h).
    size_t start = 0;
    while (start < value.size()) {
      size_t end = value.find(' ', start);
      if (end == std::string::npos) end = value.size();
      if (end > start) f.bytes += value.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  if (f.bytes.empty()) return f;
  Inventory inv;
  inv.file = r.inventory;
  f.name = CdiPreloadFileName(CdiFileName(inv), r.cdi_device.substr(eq + 1));
  f.path = cdi_dir + "/" + f.name;
  return f;
}

std::string SupplementalGroupsNote(const ClusterResource& r, AllocateMode mode) {
  if (mode != AllocateMode::kMounts || !r.healthy || r.k8s_name.empty() ||
      r.delivery.additional_gids.empty())
    return "";
  std::string gids;
  for (uint32_t g : r.delivery.additional_gids)
    gids += (gids.empty() ? "" : ", ") + std::to_string(g);
  return r.k8s_name + ": pods need securityContext.supplementalGroups: [" + gids +
         "] (the --allocate mounts answer cannot add groups; the host's service admits only "
         "them; --allocate cdi or both carries them in the CDI spec)";
}

const ClusterResource* FindK8sResource(const ClusterView& view, const std::string& k8s_name) {
  for (const ClusterResource& r : view.resources)
    if (!r.k8s_name.empty() && r.k8s_name == k8s_name) return &r;
  return nullptr;
}

v1beta1::ListAndWatchResponse DeviceList(const std::string& resource, int slots,
                                         const ClusterResource* r) {
  v1beta1::ListAndWatchResponse list;
  const char* health = r && r->healthy ? kHealthy : kUnhealthy;
  // Every ID shares the resource's NICs: each carries all their NUMA nodes.
  const std::vector<int> numa = r ? NumaNodes(r->nics) : std::vector<int>{};
  for (const std::string& id : DeviceIds(resource, slots)) {
    v1beta1::Device* d = list.add_devices();
    d->set_id(id);
    d->set_health(health);
    for (int n : numa) d->mutable_topology()->add_nodes()->set_id(n);
  }
  return list;
}

grpc::Status BuildAllocateResponse(const std::string& resource, const ClusterResource* r,
                                   const KubernetesOptions& k8s,
                                   const v1beta1::AllocateRequest& req,
                                   v1beta1::AllocateResponse* out, const CdiResolution& cdi,
                                   std::string* note, const std::string& preload_file) {
  if (note) note->clear();
  std::string what = "Allocate " + resource + ": ";
  if (req.container_requests_size() == 0)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, what + "no container requests");
  // Each container's answer repeats the whole delivery: a request of a few
  // bytes per container must not make us build hundreds of megabytes.
  if (req.container_requests_size() > kMaxContainerRequests)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        what + std::to_string(req.container_requests_size()) +
                            " container requests (at most " +
                            std::to_string(kMaxContainerRequests) + ")");
  for (int i = 0; i < req.container_requests_size(); ++i) {
    const v1beta1::ContainerAllocateRequest& c = req.container_requests(i);
    if (c.devices_ids_size() == 0)
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          what + "container request " + std::to_string(i) + " has no device IDs");
    if (c.devices_ids_size() > k8s.slots)
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          what + "container request " + std::to_string(i) + " has " +
                              std::to_string(c.devices_ids_size()) + " device IDs (" +
                              std::to_string(k8s.slots) + " exist)");
    for (const std::string& id : c.devices_ids())
      if (!IsDeviceId(resource, k8s.slots, id))
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            what + "unknown device ID \"" + Printable(id, kMaxShownId) +
                                "\" (this plugin serves " + DeviceIdPrefix(resource) + "-0 to " +
                                DeviceIdPrefix(resource) + "-" + std::to_string(k8s.slots - 1) +
                                ")");
  }
  if (!r)
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        what + "the resource is no longer served (its inventory is gone)");
  if (!r->healthy)
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, what + "unhealthy: " + r->why);
  if (!cdi.resolves && k8s.allocate == AllocateMode::kCdi)
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        what + "CDI device " + r->cdi_device + " does not resolve: " + cdi.why);
  if (!cdi.resolves && k8s.allocate == AllocateMode::kBoth && note)
    *note = what + "answered without CDI device " + r->cdi_device + " (mounts only): " + cdi.why;
  out->Clear();
  for (int i = 0; i < req.container_requests_size(); ++i)
    FillContainer(*r, k8s.allocate, cdi.resolves, preload_file, out->add_container_responses());
  return grpc::Status::OK;
}

}  // namespace ocid
