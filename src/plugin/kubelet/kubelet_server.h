// One kubelet DevicePlugin service for one extended resource, on its own
// unix socket in the kubelet's directory. The answers come from the
// ResourceWatch's current view through kubelet_allocate; this class adds
// the socket, the gRPC server and the ListAndWatch stream.
//
// A gRPC server cannot be restarted: when the kubelet deletes the socket
// (it does on every restart), the owner destroys this object and makes a
// new one.
#pragma once
#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>

#include "cdi_dir_keeper.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "error.h"
#include "plugin_options.h"
#include "resource_watch.h"

namespace ocid {

class DevicePluginServer final : public v1beta1::DevicePlugin::Service {
 public:
  // `cdi` (null without --cdi-dir) says which CDI devices Allocate may name.
  DevicePluginServer(std::string resource, std::string socket_path, const ResourceWatch* watch,
                     const PluginOptions& opts, const KubernetesOptions& k8s,
                     const CdiDirKeeper* cdi = nullptr);
  ~DevicePluginServer() override;
  DevicePluginServer(const DevicePluginServer&) = delete;
  DevicePluginServer& operator=(const DevicePluginServer&) = delete;

  // Listens on the socket (created 0600; a stale socket there is replaced)
  // and serves on gRPC's threads.
  bool Start(Error* err);
  // Tells open ListAndWatch streams to end (they return at their next
  // wake-up: a view change, ResourceWatch::Stop(), or kStreamPoll); does not
  // wait. Lets an owner stop many servers at once.
  void BeginStop() { stopping_ = true; }
  // Ends open streams, stops serving (calls still running after kStopGrace
  // are cancelled) and removes the socket if it is still the one this
  // server created.
  void Stop();
  // False once the socket file is gone or replaced (the kubelet restarted).
  bool SocketIntact() const;

  const std::string& resource() const { return resource_; }
  const std::string& socket_path() const { return socket_path_; }

  grpc::Status GetDevicePluginOptions(grpc::ServerContext* ctx, const v1beta1::Empty* req,
                                      v1beta1::DevicePluginOptions* out) override;
  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const v1beta1::Empty* req,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  grpc::Status GetPreferredAllocation(grpc::ServerContext* ctx,
                                      const v1beta1::PreferredAllocationRequest* req,
                                      v1beta1::PreferredAllocationResponse* out) override;
  grpc::Status Allocate(grpc::ServerContext* ctx, const v1beta1::AllocateRequest* req,
                        v1beta1::AllocateResponse* out) override;
  grpc::Status PreStartContainer(grpc::ServerContext* ctx,
                                 const v1beta1::PreStartContainerRequest* req,
                                 v1beta1::PreStartContainerResponse* out) override;

 private:
  std::string resource_;
  std::string socket_path_;
  const ResourceWatch* watch_;
  KubernetesOptions k8s_;
  std::string cdi_dir_;  // PluginOptions::cdi_dir
  const CdiDirKeeper* cdi_;
  std::unique_ptr<grpc::Server> server_;
  std::atomic<bool> stopping_{false};
  dev_t socket_dev_ = 0;
  ino_t socket_ino_ = 0;
};

}  // namespace ocid
