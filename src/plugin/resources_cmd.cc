#include "resources_cmd.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cluster.h"
#include "error.h"
#include "exit_codes.h"
#include "host_view.h"
#include "inventory.h"
#include "log.h"
#include "nic_json.h"
#include "plugin_options.h"
#include "view_snapshot.h"

namespace ocid {
namespace {

nlohmann::ordered_json ToJson(const ClusterResource& r) {
  using ordered = nlohmann::ordered_json;
  ordered j;
  j["inventory"] = r.inventory;
  j["features"] = r.features;
  if (!r.k8s_name.empty()) j["kubernetes"] = r.k8s_name;
  if (!r.nomad_type.empty()) j["nomad"] = r.nomad_vendor + "/" + r.nomad_type;
  j["cdi"] = r.cdi_device;
  if (!r.profile.empty()) j["profile"] = r.profile;
  j["healthy"] = r.healthy;
  if (!r.healthy) j["why"] = r.why;
  // The NICs that serve it, as `check --json`'s "nics" (nic_json.h).
  j["nics"] = NicsJson(r.nics);
  ordered mounts = ordered::array(), devices = ordered::array(), env = ordered::object();
  for (const auto& m : r.delivery.mounts)
    mounts.push_back({{"host_path", m.host_path},
                      {"container_path", m.container_path},
                      {"read_only", m.read_only}});
  for (const auto& d : r.delivery.devices)
    devices.push_back({{"host_path", d.host_path},
                       {"container_path", d.container_path},
                       {"type", std::string(1, d.type)},
                       {"major", d.major},
                       {"minor", d.minor},
                       {"permissions", d.permissions}});
  for (const auto& [k, v] : r.delivery.env) env[k] = v;
  j["mounts"] = std::move(mounts);
  j["devices"] = std::move(devices);
  j["env"] = std::move(env);
  // The groups its process must be in (the plan's required ones), and the
  // inventory's conditions met here.
  j["additional_gids"] = r.delivery.additional_gids;
  j["conditions"] = r.met_conditions;
  return j;
}

}  // namespace

int RunResources(const PluginOptions& opts, bool json) {
  std::unique_ptr<HostRootView> host;
  Error err;
  if (!HostRootView::Open(opts.host_root, &host, &err)) {
    log::Error(err.Line());
    return kExitBadInput;
  }
  InventorySet set;
  ViewSources src = ViewSourcesOf(opts);
  bool loaded = LoadViewInventories(src, &set, &err);
  if (!loaded) log::Warn(err.Line());
  ClusterView view;
  SnapshotView(src, set, loaded, err, *host, nullptr, &view);
  for (const auto& w : view.warnings) log::Warn(w);

  bool all_healthy = !view.resources.empty();
  for (const auto& r : view.resources) all_healthy = all_healthy && r.healthy;
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& r : view.resources) out.push_back(ToJson(r));
    std::printf(
        "%s\n",
        PrintableJson(out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)).c_str());
    return all_healthy ? kExitOk : kExitFailure;
  }
  if (view.resources.empty())
    std::printf("no resources (inventories in %s)\n", opts.config_dir.c_str());
  for (const auto& r : view.resources) {
    std::string names = r.k8s_name.empty() ? "-" : r.k8s_name;
    names += "  nomad " + (r.nomad_type.empty() ? "-" : r.nomad_vendor + "/" + r.nomad_type);
    names += "  cdi " + r.cdi_device;
    std::printf("%-9s %s\n", r.healthy ? "healthy" : "UNHEALTHY", Printable(names).c_str());
    if (!r.healthy) std::printf("          %s\n", Printable(r.why).c_str());
  }
  return all_healthy ? kExitOk : kExitFailure;
}

}  // namespace ocid
