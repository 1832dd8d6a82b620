#include "nomad_service.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "error.h"
#include "log.h"
#include "nomad_devices.h"
#include "version.h"

namespace ocid {
namespace {

namespace base = hashicorp::nomad::plugins::base::proto;
namespace dev = hashicorp::nomad::plugins::device;
namespace hcl = hashicorp::nomad::plugins::shared::hclspec;
namespace structs = hashicorp::nomad::plugins::shared::structs;
using std::chrono::milliseconds;

// How often a stream looks at its context (Nomad cancelling it) while it
// waits for a change; cancellation is not a wake-up the watch can see.
constexpr milliseconds kPoll{250};

bool SameWatch(const NomadConfig& a, const NomadConfig& b) {
  return a.config_dir == b.config_dir && a.host_root == b.host_root &&
         a.host_path_root == b.host_path_root && a.fingerprint_period == b.fingerprint_period &&
         a.profile == b.profile;  // the profile is in the view the watch builds
}

// SetConfig refuses a host root that is not a directory now, naming the
// key, instead of a plugin that fingerprints nothing and says why only in
// its log. A missing config_dir is fine: no inventories yet.
bool CheckPaths(const NomadConfig& cfg, std::string* err) {
  struct stat st {};
  if (stat(cfg.host_root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *err = "config key \"host_root\": " + Printable(cfg.host_root) + " is not a directory";
    return false;
  }
  return true;
}

void FillGroups(const ClusterView& view, const NomadConfig& cfg, dev::FingerprintResponse* out) {
  std::vector<std::string> warnings;
  for (const NomadGroup& g : NomadGroups(view, cfg, &warnings)) {
    dev::DeviceGroup* pg = out->add_device_group();
    pg->set_vendor(g.vendor);
    pg->set_device_type(g.type);
    pg->set_device_name(g.name);
    for (const std::string& id : g.ids) {
      dev::DetectedDevice* d = pg->add_devices();
      d->set_id(id);
      d->set_healthy(g.healthy);
      d->set_health_description(g.healthy ? "healthy" : g.why);
      if (!g.pci_bus_id.empty()) d->mutable_hw_locality()->set_pci_bus_id(g.pci_bus_id);
    }
    for (const auto& [k, v] : g.attributes) (*pg->mutable_attributes())[k].set_string_val(v);
    for (const auto& [k, v] : g.int_attributes) (*pg->mutable_attributes())[k].set_int_val(v);
  }
  for (const std::string& w : warnings) log::Warn("nomad: " + w);
}

}  // namespace

void FillNomadStats(const ClusterView& view, const NomadConfig& cfg,
                    std::chrono::system_clock::time_point now, dev::StatsResponse* out) {
  auto since = now.time_since_epoch();
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(since);
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(since - secs);
  for (const NomadGroup& g : NomadGroups(view, cfg)) {
    dev::DeviceGroupStats* gs = out->add_groups();
    gs->set_vendor(g.vendor);
    gs->set_type(g.type);
    gs->set_name(g.name);
    // Virtual devices have no counters: the statistic is their health.
    for (const std::string& id : g.ids) {
      dev::DeviceStats& s = (*gs->mutable_instance_stats())[id];
      s.mutable_summary()->mutable_string_val()->set_value(g.healthy ? "healthy" : "unhealthy");
      s.mutable_summary()->set_desc("health of the group's plan on this host");
      structs::StatValue& h = (*s.mutable_stats()->mutable_attributes())["healthy"];
      h.mutable_bool_val()->set_value(g.healthy);
      h.set_desc(g.healthy ? "healthy" : g.why);
      s.mutable_timestamp()->set_seconds(secs.count());
      s.mutable_timestamp()->set_nanos(static_cast<int32_t>(nanos.count()));
    }
  }
}

std::string NomadStatsState(const ClusterView& view, const NomadConfig& cfg) {
  std::string state = std::to_string(cfg.slots);
  for (const NomadGroup& g : NomadGroups(view, cfg, nullptr, /*with_ids=*/false)) {
    state += '\0' + g.vendor + '\0' + g.type + '\0' + g.name + '\0' + (g.healthy ? "1" : "0");
    state += '\0' + g.why;
  }
  return state;
}

std::chrono::milliseconds NomadStatsRefresh(std::chrono::milliseconds collection_interval) {
  return std::max<milliseconds>(collection_interval, kNomadStatsRefresh);
}

// --- state ---------------------------------------------------------------------------------

NomadState::~NomadState() {
  std::lock_guard<std::mutex> l(mu_);
  if (watch_) watch_->Stop();
}

bool NomadState::Configure(const NomadConfig& cfg, std::string* err) {
  if (!CheckPaths(cfg, err)) return false;
  std::shared_ptr<ResourceWatch> old;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (watch_ && !SameWatch(cfg_, cfg)) old = std::move(watch_);
    cfg_ = cfg;
    ++cfg_gen_;
  }
  // Stopping wakes the streams waiting on the old watch; they pick up the
  // new one (built from the new config) on their next turn.
  if (old) old->Stop();
  cv_.notify_all();
  return true;
}

bool NomadState::StartWatchLocked(std::string* err) {
  auto w = std::make_shared<ResourceWatch>(WatchOptions(cfg_, cli_));
  Error e;
  if (!w->Start(&e)) {
    *err = e.Line();
    return false;
  }
  watch_ = std::move(w);
  return true;
}

std::shared_ptr<ResourceWatch> NomadState::Watch(NomadConfig* cfg, uint64_t* cfg_gen,
                                                 std::string* err) {
  std::lock_guard<std::mutex> l(mu_);
  if (!watch_ && !StartWatchLocked(err)) return nullptr;
  *cfg = cfg_;
  *cfg_gen = cfg_gen_;
  return watch_;
}

void NomadState::RequestShutdown() {
  {
    std::lock_guard<std::mutex> l(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
}

bool NomadState::ShuttingDown() const {
  std::lock_guard<std::mutex> l(mu_);
  return shutdown_;
}

bool NomadState::WaitShutdown(milliseconds timeout) const {
  std::unique_lock<std::mutex> l(mu_);
  return cv_.wait_for(l, timeout, [this] { return shutdown_; });
}

// --- go-plugin controller ----------------------------------------------------------------------

grpc::Status ControllerService::Shutdown(grpc::ServerContext*, const plugin::Empty*,
                                         plugin::Empty*) {
  log::Info("nomad: shutdown requested by the client");
  state_->RequestShutdown();
  return grpc::Status::OK;
}

grpc::Status StdioService::StreamStdio(grpc::ServerContext* ctx, const google::protobuf::Empty*,
                                       grpc::ServerWriter<plugin::StdioData>*) {
  while (!ctx->IsCancelled() && !state_->WaitShutdown(kPoll)) {
  }
  return grpc::Status::OK;
}

// --- base plugin ---------------------------------------------------------------------------

grpc::Status BasePluginService::PluginInfo(grpc::ServerContext*, const base::PluginInfoRequest*,
                                           base::PluginInfoResponse* out) {
  out->set_type(base::DEVICE);
  out->add_plugin_api_versions("v0.1.0");
  out->set_plugin_version(OCID_VERSION);
  out->set_name("oci-decorator");
  return grpc::Status::OK;
}

// Every key an optional attribute of its type: a missing key arrives as
// null and keeps the command line's value (defaults live in one place,
// NomadConfig, not in HCL literals too).
grpc::Status BasePluginService::ConfigSchema(grpc::ServerContext*, const base::ConfigSchemaRequest*,
                                             base::ConfigSchemaResponse* out) {
  hcl::Object* obj = out->mutable_spec()->mutable_object();
  for (const NomadConfigKey& k : NomadConfigKeys()) {
    hcl::Attr* a = (*obj->mutable_attributes())[k.name].mutable_attr();
    a->set_name(k.name);
    a->set_type(k.hcl_type);
    a->set_required(false);
  }
  return grpc::Status::OK;
}

grpc::Status BasePluginService::SetConfig(grpc::ServerContext*, const base::SetConfigRequest* in,
                                          base::SetConfigResponse*) {
  // From the command line's defaults, not from the last SetConfig: a key
  // removed from the block goes back to its default.
  NomadConfig cfg = state_->Defaults();
  std::string err;
  if (!DecodeNomadConfig(in->msgpack_config(), &cfg, &err) || !state_->Configure(cfg, &err)) {
    log::Error("nomad: SetConfig refused: " + err);
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, err);
  }
  log::Info("nomad: config: config_dir " + cfg.config_dir + ", host_root " + cfg.host_root +
            ", host_path_root " + cfg.host_path_root + ", set_preload " +
            (cfg.set_preload ? "true" : "false") + ", mount_onload " +
            (cfg.mount_onload ? "true" : "false") + ", fingerprint_period " +
            std::to_string(cfg.fingerprint_period.count()) + "s, slots " +
            std::to_string(cfg.slots) + (cfg.profile.empty() ? "" : ", profile " + cfg.profile));
  return grpc::Status::OK;
}

// --- device plugin -------------------------------------------------------------------------

// Sends the groups now and again whenever the view or the config changes;
// open until Nomad cancels it or the plugin shuts down (Nomad drops the
// plugin's devices when the stream ends).
grpc::Status DevicePluginService::Fingerprint(
    grpc::ServerContext* ctx, const dev::FingerprintRequest*,
    grpc::ServerWriter<dev::FingerprintResponse>* writer) {
  std::shared_ptr<ResourceWatch> sent_watch;
  uint64_t sent_gen = 0, sent_cfg = 0;
  while (!ctx->IsCancelled() && !state_->ShuttingDown()) {
    NomadConfig cfg;
    uint64_t cfg_gen = 0, gen = 0;
    std::string err;
    std::shared_ptr<ResourceWatch> w = state_->Watch(&cfg, &cfg_gen, &err);
    if (!w) {
      log::Error("nomad: fingerprint: " + err);
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, err);
    }
    ClusterView view = w->View(&gen);
    if (w != sent_watch || gen != sent_gen || cfg_gen != sent_cfg) {
      dev::FingerprintResponse resp;
      FillGroups(view, cfg, &resp);
      for (const std::string& warning : view.warnings) log::Warn("nomad: " + warning);
      if (!writer->Write(resp)) break;
      size_t healthy = 0;
      for (const auto& g : resp.device_group())
        healthy += g.devices_size() > 0 && g.devices(0).healthy();
      log::Info("nomad: fingerprint: " + std::to_string(resp.device_group_size()) +
                " device groups, " + std::to_string(healthy) + " healthy");
      sent_watch = w;
      sent_gen = gen;
      sent_cfg = cfg_gen;
    }
    w->WaitForChange(gen, kPoll);
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::Reserve(grpc::ServerContext*, const dev::ReserveRequest* in,
                                          dev::ReserveResponse* out) {
  NomadConfig cfg;
  uint64_t cfg_gen = 0;
  std::string err;
  std::shared_ptr<ResourceWatch> w = state_->Watch(&cfg, &cfg_gen, &err);
  if (!w) return grpc::Status(grpc::StatusCode::UNAVAILABLE, err);
  std::vector<std::string> ids(in->device_ids().begin(), in->device_ids().end());
  NomadReservation res;
  switch (NomadReserve(w->View(), cfg, ids, &res, &err)) {
    case ReserveError::kNone: break;
    // As the kubelet mode's Allocate: an ID we did not advertise is a bad
    // argument, an unhealthy group a failed precondition.
    case ReserveError::kInvalid:
    case ReserveError::kUnknownId:
      log::Warn("nomad: reserve: " + err);
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, err);
    case ReserveError::kUnhealthy:
      log::Warn("nomad: reserve: " + err);
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, err);
  }
  dev::ContainerReservation* c = out->mutable_container_res();
  for (const auto& [k, v] : res.envs) (*c->mutable_envs())[k] = v;
  for (const NomadMount& m : res.mounts) {
    dev::Mount* pm = c->add_mounts();
    pm->set_task_path(m.task_path);
    pm->set_host_path(m.host_path);
    pm->set_read_only(m.read_only);
  }
  for (const NomadDevice& d : res.devices) {
    dev::DeviceSpec* pd = c->add_devices();
    pd->set_task_path(d.task_path);
    pd->set_host_path(d.host_path);
    pd->set_permissions(d.permissions);
  }
  // Every ID is one we advertise, but a client may repeat them: the list is
  // cut (error.h Printable), one line whatever was asked.
  std::string list;
  for (const std::string& id : ids) list += (list.empty() ? "" : ",") + id;
  log::Info("nomad: reserve " + Printable(list) + ": " + std::to_string(res.mounts.size()) +
            " mounts, " + std::to_string(res.devices.size()) + " devices, " +
            std::to_string(res.envs.size()) + " env");
  return grpc::Status::OK;
}

// Stats: a message when the stream opens, then only when the groups'
// health changes (NomadStatsState), and otherwise every
// NomadStatsRefresh(collection_interval): see nomad_service.h for why the
// Nomad client is content with that. Each message carries every group: the
// client replaces its whole set with each one.
grpc::Status DevicePluginService::Stats(grpc::ServerContext* ctx, const dev::StatsRequest* in,
                                        grpc::ServerWriter<dev::StatsResponse>* writer) {
  milliseconds interval{1000};
  if (in->has_collection_interval()) {
    int64_t ms =
        in->collection_interval().seconds() * 1000 + in->collection_interval().nanos() / 1000000;
    interval = milliseconds(std::clamp<int64_t>(ms, 1000, int64_t{3600} * 1000));
  }
  const milliseconds refresh = NomadStatsRefresh(interval);
  std::string sent_state;
  auto sent_at = std::chrono::steady_clock::time_point::min();
  while (!ctx->IsCancelled() && !state_->ShuttingDown()) {
    NomadConfig cfg;
    uint64_t cfg_gen = 0, gen = 0;
    std::string err;
    std::shared_ptr<ResourceWatch> w = state_->Watch(&cfg, &cfg_gen, &err);
    if (!w) return grpc::Status(grpc::StatusCode::UNAVAILABLE, err);
    ClusterView view = w->View(&gen);
    std::string now_state = NomadStatsState(view, cfg);
    auto now = std::chrono::steady_clock::now();
    if (sent_at == std::chrono::steady_clock::time_point::min() || now_state != sent_state ||
        now - sent_at >= refresh) {
      dev::StatsResponse resp;
      FillNomadStats(view, cfg, std::chrono::system_clock::now(), &resp);
      if (!writer->Write(resp)) break;
      sent_state = std::move(now_state);
      sent_at = now;
    }
    // Woken by a new view at once; a SetConfig or the refresh is seen
    // within kPoll, as is Nomad cancelling the stream.
    w->WaitForChange(gen, kPoll);
  }
  return grpc::Status::OK;
}

}  // namespace ocid
