// The gRPC services of the Nomad plugin: go-plugin's controller, Nomad's
// BasePlugin and DevicePlugin. They share one NomadState: the config from
// SetConfig and the ResourceWatch built for it.
//
// Nomad calls SetConfig before it fingerprints; a second SetConfig with
// other paths or period replaces the watch, and open Fingerprint streams
// send the new view. Streams end when Nomad cancels them or on shutdown.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "go-plugin/grpc_controller.grpc.pb.h"
#include "go-plugin/grpc_stdio.grpc.pb.h"
#include "nomad_config.h"
#include "plugins/base/proto/base.grpc.pb.h"
#include "plugins/device/proto/device.grpc.pb.h"
#include "resource_watch.h"

namespace ocid {

class NomadState {
 public:
  explicit NomadState(const PluginOptions& cli) : cli_(cli), cfg_(NomadConfigFrom(cli)) {}
  ~NomadState();

  // The command line's settings as a config (SetConfig starts from them).
  NomadConfig Defaults() const { return NomadConfigFrom(cli_); }
  // Replaces the config (and the watch when what it watches changed).
  bool Configure(const NomadConfig& cfg, std::string* err);
  // The config, its generation and a started watch (built from the current
  // config on first use, so Fingerprint before SetConfig also works).
  std::shared_ptr<ResourceWatch> Watch(NomadConfig* cfg, uint64_t* cfg_gen, std::string* err);

  void RequestShutdown();
  bool ShuttingDown() const;
  // Waits up to `timeout` for a shutdown request; true if there is one.
  bool WaitShutdown(std::chrono::milliseconds timeout) const;

 private:
  bool StartWatchLocked(std::string* err);

  const PluginOptions cli_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  NomadConfig cfg_;
  uint64_t cfg_gen_ = 1;
  std::shared_ptr<ResourceWatch> watch_;
  bool shutdown_ = false;
};

class ControllerService final : public plugin::GRPCController::Service {
 public:
  explicit ControllerService(NomadState* s) : state_(s) {}
  grpc::Status Shutdown(grpc::ServerContext*, const plugin::Empty*, plugin::Empty*) override;

 private:
  NomadState* state_;
};

// go-plugin's client opens StreamStdio on connect and logs a warning when
// it is missing. Our stderr already reaches the client through the pipe
// it gave us, so the stream sends nothing; it stays open until the client
// goes or the plugin shuts down.
class StdioService final : public plugin::GRPCStdio::Service {
 public:
  explicit StdioService(NomadState* s) : state_(s) {}
  grpc::Status StreamStdio(grpc::ServerContext*, const google::protobuf::Empty*,
                           grpc::ServerWriter<plugin::StdioData>*) override;

 private:
  NomadState* state_;
};

class BasePluginService final : public hashicorp::nomad::plugins::base::proto::BasePlugin::Service {
 public:
  explicit BasePluginService(NomadState* s) : state_(s) {}
  grpc::Status PluginInfo(grpc::ServerContext*,
                          const hashicorp::nomad::plugins::base::proto::PluginInfoRequest*,
                          hashicorp::nomad::plugins::base::proto::PluginInfoResponse*) override;
  grpc::Status ConfigSchema(grpc::ServerContext*,
                            const hashicorp::nomad::plugins::base::proto::ConfigSchemaRequest*,
                            hashicorp::nomad::plugins::base::proto::ConfigSchemaResponse*) override;
  grpc::Status SetConfig(grpc::ServerContext*,
                         const hashicorp::nomad::plugins::base::proto::SetConfigRequest*,
                         hashicorp::nomad::plugins::base::proto::SetConfigResponse*) override;

 private:
  NomadState* state_;
};

// The Stats answer for a view, stamped `now`. Per device a summary
// ("healthy"/"unhealthy") and a "healthy" bool; StatValue carries its
// values in google.protobuf wrapper messages (Nomad's stats.proto), never
// as bare scalars.
void FillNomadStats(const ClusterView& view, const NomadConfig& cfg,
                    std::chrono::system_clock::time_point now,
                    hashicorp::nomad::plugins::device::StatsResponse* out);

// When Stats sends. Nomad's client keeps the groups of the last message
// until the next one replaces them all (hashicorp/nomad
// client/devicemanager/instance.go, collectStats, lines 512-516:
// `i.deviceStats = sresp.Groups`), and reads the stream with no deadline
// (plugins/device/client.go, handleStats, lines 124-153: a bare
// stream.Recv()); only the stream's end stops its collection (instance.go
// lines 478-481). So a stream that sends less often than the requested
// collection_interval (1 s by default) loses nothing: the rule is a message
// when the stream opens, one as soon as the state below changes, and
// otherwise one every NomadStatsRefresh. Each message still carries every
// group and instance (about 130 bytes an instance: 0.5 MB for four groups
// at 1024 slots, which a message a second would send for nothing).
//
// The state a Stats message reports: slots, and per group its name and
// health with the reason. Equal states make equal messages but for their
// timestamps.
std::string NomadStatsState(const ClusterView& view, const NomadConfig& cfg);
// The period of an unchanged state: the collection interval when it is
// longer, else kNomadStatsRefresh.
inline constexpr std::chrono::seconds kNomadStatsRefresh{60};
std::chrono::milliseconds NomadStatsRefresh(std::chrono::milliseconds collection_interval);

class DevicePluginService final : public hashicorp::nomad::plugins::device::DevicePlugin::Service {
 public:
  explicit DevicePluginService(NomadState* s) : state_(s) {}
  grpc::Status Fingerprint(
      grpc::ServerContext*, const hashicorp::nomad::plugins::device::FingerprintRequest*,
      grpc::ServerWriter<hashicorp::nomad::plugins::device::FingerprintResponse>*) override;
  grpc::Status Reserve(grpc::ServerContext*,
                       const hashicorp::nomad::plugins::device::ReserveRequest*,
                       hashicorp::nomad::plugins::device::ReserveResponse*) override;
  grpc::Status Stats(
      grpc::ServerContext*, const hashicorp::nomad::plugins::device::StatsRequest*,
      grpc::ServerWriter<hashicorp::nomad::plugins::device::StatsResponse>*) override;

 private:
  NomadState* state_;
};

}  // namespace ocid
