#include "kubelet_server.h"

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "kubelet_allocate.h"
#include "log.h"

namespace ocid {
namespace {

// How often an idle ListAndWatch stream looks for shutdown or a cancelled
// client; view changes wake it at once.
constexpr std::chrono::milliseconds kStreamPoll{500};
// How long Stop() lets calls in progress finish before cancelling them.
constexpr std::chrono::milliseconds kStopGrace{1000};

std::string PeerOf(const grpc::ServerContext* ctx) {
  std::string peer = ctx->peer();
  return peer.empty() ? "?" : peer;
}

}  // namespace

DevicePluginServer::DevicePluginServer(std::string resource, std::string socket_path,
                                       const ResourceWatch* watch, const PluginOptions& opts,
                                       const KubernetesOptions& k8s, const CdiDirKeeper* cdi)
    : resource_(std::move(resource)),
      socket_path_(std::move(socket_path)),
      watch_(watch),
      k8s_(k8s),
      cdi_dir_(opts.cdi_dir),
      cdi_(cdi) {}

DevicePluginServer::~DevicePluginServer() { Stop(); }

bool DevicePluginServer::Start(Error* err) {
  if (socket_path_.size() >= sizeof(sockaddr_un{}.sun_path)) {
    *err = Error{"socket path longer than " + std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
                     " bytes (use a shorter --kubelet-dir)",
                 socket_path_, ENAMETOOLONG};
    return false;
  }
  // A stale socket (ours from a killed run) would make bind fail; anything
  // that is not a socket is left alone and reported.
  struct stat st {};
  if (::lstat(socket_path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      *err = Error{"refusing to replace a non-socket", socket_path_, EEXIST};
      return false;
    }
    ::unlink(socket_path_.c_str());
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path_, grpc::InsecureServerCredentials());
  builder.RegisterService(this);
  // The socket is bound inside BuildAndStart: a umask makes it 0600 from
  // the start, with no window where others could connect. Only this thread
  // creates files while it is set.
  mode_t old = ::umask(0177);
  server_ = builder.BuildAndStart();
  ::umask(old);
  if (!server_ || ::lstat(socket_path_.c_str(), &st) != 0) {
    server_.reset();
    *err = Error{"cannot serve the device plugin API on", socket_path_, 0};
    return false;
  }
  socket_dev_ = st.st_dev;
  socket_ino_ = st.st_ino;
  log::Info("serving " + resource_ + " on " + socket_path_);
  return true;
}

void DevicePluginServer::Stop() {
  if (!server_) return;
  stopping_ = true;
  // Streams notice stopping_ within kStreamPoll (at once when the owner has
  // stopped the ResourceWatch); the deadline cancels whatever is still
  // running after that.
  server_->Shutdown(std::chrono::system_clock::now() + kStopGrace);
  server_->Wait();
  server_.reset();
  if (SocketIntact()) ::unlink(socket_path_.c_str());
}

bool DevicePluginServer::SocketIntact() const {
  struct stat st {};
  return ::lstat(socket_path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
         st.st_dev == socket_dev_ && st.st_ino == socket_ino_;
}

grpc::Status DevicePluginServer::GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                                        v1beta1::DevicePluginOptions* out) {
  out->set_pre_start_required(false);
  out->set_get_preferred_allocation_available(false);
  return grpc::Status::OK;
}

grpc::Status DevicePluginServer::ListAndWatch(
    grpc::ServerContext* ctx, const v1beta1::Empty*,
    grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  uint64_t generation = 0;
  ClusterView view = watch_->View(&generation);
  const ClusterResource* r = FindK8sResource(view, resource_);
  bool healthy = r && r->healthy;
  if (!writer->Write(DeviceList(resource_, k8s_.slots, r))) return grpc::Status::CANCELLED;
  log::Info("ListAndWatch " + resource_ + " (" + PeerOf(ctx) + "): " + std::to_string(k8s_.slots) +
            " devices " + (healthy ? kHealthy : kUnhealthy));
  while (!stopping_ && !ctx->IsCancelled()) {
    uint64_t now = watch_->WaitForChange(generation, kStreamPoll);
    if (now == generation) continue;
    generation = now;
    view = watch_->View(&generation);
    r = FindK8sResource(view, resource_);
    bool h = r && r->healthy;
    if (h == healthy) continue;  // deliveries changed, the device list did not
    healthy = h;
    log::Info(resource_ + " is now " + (h ? kHealthy : kUnhealthy) +
              (h || !r ? std::string(r ? "" : ": no longer in the inventories") : ": " + r->why));
    if (!writer->Write(DeviceList(resource_, k8s_.slots, r))) return grpc::Status::CANCELLED;
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginServer::GetPreferredAllocation(grpc::ServerContext*,
                                                        const v1beta1::PreferredAllocationRequest*,
                                                        v1beta1::PreferredAllocationResponse*) {
  return grpc::Status(
      grpc::StatusCode::UNIMPLEMENTED,
      "GetPreferredAllocation: not offered (get_preferred_allocation_available is false)");
}

grpc::Status DevicePluginServer::Allocate(grpc::ServerContext* ctx,
                                          const v1beta1::AllocateRequest* req,
                                          v1beta1::AllocateResponse* out) {
  ClusterView view = watch_->View();
  const ClusterResource* r = FindK8sResource(view, resource_);
  // A CDI device is named only when its spec is there (cdi_dir_keeper.h).
  CdiResolution cdi;
  if (cdi_ && r && r->healthy && k8s_.allocate != AllocateMode::kMounts)
    cdi.resolves = cdi_->Resolves(r->cdi_device, &cdi.why);
  // The CDI writer's preload file, only when the keeper vouches for it now
  // (cdi_dir_keeper.h PreloadFileIfCurrent: --cdi-dir reached by the writer's
  // rule is the directory its last pass checked, and the file in it is
  // current: the bytes, 0644, root's). A mount of a missing file fails the
  // container, and one that is not ours, or reached through a path others
  // can change, is not trusted. Otherwise the answer preloads through env
  // LD_PRELOAD.
  std::string preload_file;
  if (cdi_ && r && k8s_.allocate != AllocateMode::kCdi) {
    PreloadFile pf = PreloadFileFor(*r, cdi_dir_);
    if (!pf.name.empty()) cdi_->PreloadFileIfCurrent(pf.name, pf.bytes, &preload_file);
  }
  std::string note;
  grpc::Status st = BuildAllocateResponse(resource_, r, k8s_, *req, out, cdi, &note, preload_file);
  if (!st.ok())
    log::Warn(st.error_message() + " (from " + PeerOf(ctx) + ")");
  else if (!note.empty())
    log::Warn(note + " (from " + PeerOf(ctx) + ")");
  else
    OCID_DEBUG("Allocate " + resource_ + ": " + std::to_string(req->container_requests_size()) +
               " container(s)");
  return st;
}

grpc::Status DevicePluginServer::PreStartContainer(grpc::ServerContext*,
                                                   const v1beta1::PreStartContainerRequest*,
                                                   v1beta1::PreStartContainerResponse*) {
  return grpc::Status::OK;
}

}  // namespace ocid
