#include "nomad_devices.h"

#include <algorithm>
#include <set>

#include "error.h"
#include "slot_ids.h"

namespace ocid {
namespace {

std::string IdPrefix(const ClusterResource& r) { return r.nomad_vendor + "-" + r.nomad_type + "-"; }

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// mount_onload governs the Onload inventory only: other vendors' files are
// their plan and always mounted.
bool IsOnloadInventory(const ClusterResource& r) {
  return r.cdi_device.rfind("amd.com/onload=", 0) == 0;
}

// "a:b" + "b:c" -> "a:b:c": two groups may preload the same library.
void AddPreload(std::string* have, const std::string& more) {
  std::vector<std::string> parts;
  std::set<std::string> seen;
  const std::string* both[] = {have, &more};
  for (const std::string* s : both) {
    size_t start = 0;
    while (start <= s->size()) {
      size_t end = s->find_first_of(": ", start);
      if (end == std::string::npos) end = s->size();
      std::string p = s->substr(start, end - start);
      if (!p.empty() && seen.insert(p).second) parts.push_back(p);
      start = end + 1;
    }
  }
  *have = Join(parts, ":");
}

void AddDelivery(const ClusterResource& r, const NomadConfig& cfg, NomadReservation* out,
                 std::set<std::string>* mounted, std::set<std::string>* devs) {
  const Delivery& d = r.delivery;
  if (cfg.mount_onload || !IsOnloadInventory(r)) {
    for (const DeliveredMount& m : d.mounts)
      if (mounted->insert(m.container_path).second)
        out->mounts.push_back({m.container_path, m.host_path, m.read_only});
  }
  for (const DeliveredDevice& dev : d.devices)
    if (devs->insert(dev.container_path).second)
      out->devices.push_back({dev.container_path, dev.host_path, dev.permissions});
  for (const auto& [key, value] : d.env) {
    if (key == "LD_PRELOAD") {
      if (cfg.set_preload) AddPreload(&out->envs["LD_PRELOAD"], value);
    } else {
      out->envs.emplace(key, value);  // the first group's value wins
    }
  }
  auto it = out->envs.find("LD_PRELOAD");
  if (it != out->envs.end() && it->second.empty()) out->envs.erase(it);
}

// The group `id` names ("<vendor>-<type>-<n>", n < slots), or
// groups.size().
size_t FindGroup(const std::vector<NomadGroup>& groups, int slots, const std::string& id) {
  for (size_t i = 0; i < groups.size(); ++i)
    if (IsSlotId(id, groups[i].vendor + "-" + groups[i].type + "-", slots)) return i;
  return groups.size();
}

// Where the group's NICs are, and the versions the version lock read.
void AddNicAttributes(const ClusterResource& r, NomadGroup* g) {
  if (!r.nics.empty()) {
    std::vector<std::string> bus_ids, interfaces, numa;
    for (const PciNic& n : r.nics) {
      bus_ids.push_back(n.address);
      interfaces.insert(interfaces.end(), n.interfaces.begin(), n.interfaces.end());
    }
    for (int n : NumaNodes(r.nics)) numa.push_back(std::to_string(n));
    g->attributes["pci_bus_ids"] = Join(bus_ids, ",");
    if (!interfaces.empty()) g->attributes["interfaces"] = Join(interfaces, ",");
    if (!numa.empty()) g->attributes["numa_nodes"] = Join(numa, ",");
    if (numa.size() == 1) g->int_attributes["numa_node"] = std::stoll(numa[0]);
    if (r.nics.size() == 1) g->pci_bus_id = r.nics[0].address;
  }
  if (!r.versions.library_version.empty())
    g->attributes["library_version"] = r.versions.library_version;
  if (!r.versions.module_version.empty())
    g->attributes["module_version"] = r.versions.module_version;
}

}  // namespace

std::vector<NomadGroup> NomadGroups(const ClusterView& view, const NomadConfig& cfg,
                                    std::vector<std::string>* warnings, bool with_ids) {
  std::vector<NomadGroup> groups;
  std::set<std::string> prefixes;
  for (size_t i = 0; i < view.resources.size(); ++i) {
    const ClusterResource& r = view.resources[i];
    if (r.nomad_type.empty()) continue;
    if (!prefixes.insert(IdPrefix(r)).second) {
      if (warnings)
        warnings->push_back("Nomad group " + r.nomad_vendor + "/" + r.nomad_type + " of " +
                            r.inventory + " left out: its device IDs (" + IdPrefix(r) +
                            "N) collide with another group's");
      continue;
    }
    NomadGroup g;
    g.vendor = r.nomad_vendor;
    g.type = r.nomad_type;
    g.name = kNomadDeviceName;
    g.healthy = r.healthy;
    g.why = r.healthy ? "" : r.why;
    g.resource = i;
    if (with_ids) g.ids = SlotIds(IdPrefix(r), cfg.slots);
    g.attributes["features"] = Join(r.features, ",");
    g.attributes["inventory"] = r.inventory;
    if (!r.cdi_device.empty()) g.attributes["cdi_device"] = r.cdi_device;
    // Host facts for constraints: the inventory's conditions met here
    // (set_contains; absent when none is), and the groups a task's user must be in, which a
    // reservation cannot carry.
    if (!r.met_conditions.empty()) g.attributes["conditions"] = Join(r.met_conditions, ",");
    if (!r.delivery.additional_gids.empty()) {
      std::vector<std::string> gids;
      for (uint32_t gid : r.delivery.additional_gids) gids.push_back(std::to_string(gid));
      g.attributes["additional_gids"] = Join(gids, ",");
    }
    AddNicAttributes(r, &g);
    groups.push_back(std::move(g));
  }
  return groups;
}

ReserveError NomadReserve(const ClusterView& view, const NomadConfig& cfg,
                          const std::vector<std::string>& ids, NomadReservation* out,
                          std::string* err) {
  if (ids.empty()) {
    *err = "no device IDs to reserve";
    return ReserveError::kInvalid;
  }
  std::vector<NomadGroup> groups = NomadGroups(view, cfg, nullptr, /*with_ids=*/false);
  std::vector<size_t> picked;  // group indexes, in first-asked order
  for (const std::string& id : ids) {
    size_t gi = FindGroup(groups, cfg.slots, id);
    if (gi == groups.size()) {
      *err = "unknown device ID \"" + Printable(id, kMaxShownId) + "\"";
      return ReserveError::kUnknownId;
    }
    const NomadGroup& g = groups[gi];
    if (!g.healthy) {
      *err = "device " + id + " (" + g.vendor + "/" + g.type + ") is unhealthy: " + g.why;
      return ReserveError::kUnhealthy;
    }
    if (std::find(picked.begin(), picked.end(), gi) == picked.end()) picked.push_back(gi);
  }
  NomadReservation res;
  std::set<std::string> mounted, devs;
  for (size_t p : picked)
    AddDelivery(view.resources[groups[p].resource], cfg, &res, &mounted, &devs);
  *out = std::move(res);
  return ReserveError::kNone;
}

}  // namespace ocid
