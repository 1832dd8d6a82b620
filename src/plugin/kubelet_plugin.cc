// The Kubernetes mode's main loop. One thread owns everything below; gRPC's
// threads only answer from the ResourceWatch's view (kubelet_server).
//
//   1. block SIGTERM/SIGINT/SIGHUP (read from a signalfd; SIGHUP re-checks
//      the host now), start the ResourceWatch;
//   2. watch --kubelet-dir with inotify (waiting for it if absent);
//   3. loop: serve every resource of the view that has a Kubernetes name,
//      each on its own socket; register each with kubelet.sock once it
//      serves (the kubelet dials back during Register); on a view change
//      start/stop servers; when the kubelet deletes a
//      socket or creates a new kubelet.sock (it restarted), serve again and
//      register again; a failed Register is retried with backoff;
//   4. on a signal: stop the servers, remove our sockets, exit 0.
// With --cdi-dir, the CDI keeper (kubelet_cdi.h) keeps the view's specs on
// its own thread; this loop only starts and stops it.
#include "kubelet_plugin.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "kubelet_allocate.h"
#include "kubelet_cdi.h"
#include "kubelet_server.h"
#include "log.h"
#include "resource_watch.h"
#include "unique_fd.h"

namespace ocid {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kFirstBackoff{1};
constexpr std::chrono::seconds kMaxBackoff{30};
constexpr std::chrono::seconds kRegisterTimeout{10};
// While --kubelet-dir does not exist, how often to look again.
constexpr std::chrono::seconds kDirPoll{1};

struct Served {
  std::unique_ptr<DevicePluginServer> server;
  bool registered = false;
  ino_t kubelet_ino = 0;  // the kubelet.sock it registered with
  Clock::time_point next_attempt{};
  std::chrono::seconds backoff = kFirstBackoff;
};

class KubeletPlugin {
 public:
  KubeletPlugin(const PluginOptions& opts, const KubernetesOptions& k8s)
      : opts_(opts), k8s_(k8s), watch_(opts) {}
  int Run();

 private:
  bool Setup();
  void WatchViewChanges();
  bool WatchKubeletDir();
  void OnDirEvents();
  void Reconcile();
  void Restart(const std::string& resource, Served* s);
  void RegisterDue();
  bool Register(const std::string& resource, ino_t kubelet_ino);
  // kubelet.sock's inode, 0 when there is none: a new inode is a new
  // kubelet, however its events were batched.
  ino_t KubeletSocketIno() const;
  int PollTimeoutMs() const;
  void Shutdown();

  std::string Path(const std::string& name) const { return k8s_.kubelet_dir + "/" + name; }

  PluginOptions opts_;
  KubernetesOptions k8s_;
  ResourceWatch watch_;
  std::optional<CdiDirKeeper> cdi_;
  UniqueFd signal_fd_, inotify_fd_, change_fd_;
  int dir_watch_ = -1;
  bool said_waiting_ = false;
  bool said_no_kubelet_ = false;
  std::map<std::string, Served> served_;  // by resource name
  std::atomic<bool> stopping_{false};
  std::thread change_thread_;
};

bool KubeletPlugin::Setup() {
  // Blocked before any thread exists, so every thread inherits the mask and
  // the signals only ever arrive through the signalfd.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return false;
  ::signal(SIGPIPE, SIG_IGN);
  signal_fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  change_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  inotify_fd_.reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (!signal_fd_.valid() || !change_fd_.valid() || !inotify_fd_.valid()) {
    log::Error(std::string("kubernetes: cannot create signalfd, eventfd or inotify: ") +
               std::strerror(errno));
    return false;
  }
  // The first line also builds the logger before any other thread exists.
  log::Info("kubernetes: inventories in " + opts_.config_dir + ", host files under " +
            opts_.host_root + ", kubelet directory " + k8s_.kubelet_dir);
  Error err;
  if (!watch_.Start(&err)) {
    log::Error("kubernetes: " + err.Line());
    return false;
  }
  if (!k8s_.cdi_dir.empty()) {
    cdi_.emplace(k8s_.cdi_dir, opts_.config_dir);
    if (!cdi_->Start(&watch_, std::chrono::seconds(opts_.recheck_seconds), &err)) {
      log::Error("kubernetes: " + err.Line());
      return false;
    }
  }
  change_thread_ = std::thread([this] { WatchViewChanges(); });
  return true;
}

// Turns ResourceWatch generations into eventfd wake-ups for the poll loop.
void KubeletPlugin::WatchViewChanges() {
  uint64_t seen = 0;
  watch_.View(&seen);
  while (!stopping_) {
    uint64_t now = watch_.WaitForChange(seen, std::chrono::milliseconds(500));
    if (now == seen) continue;
    seen = now;
    uint64_t one = 1;
    if (::write(change_fd_.get(), &one, sizeof one) < 0) { /* a wake-up is pending anyway */ }
  }
}

bool KubeletPlugin::WatchKubeletDir() {
  if (dir_watch_ >= 0) return true;
  dir_watch_ = inotify_add_watch(inotify_fd_.get(), k8s_.kubelet_dir.c_str(),
                                 IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                                     IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
  if (dir_watch_ < 0) {
    if (!said_waiting_)
      log::Warn("kubelet directory " + k8s_.kubelet_dir + ": " + std::strerror(errno) +
                "; waiting for it");
    said_waiting_ = true;
    return false;
  }
  said_waiting_ = false;
  log::Info("watching " + k8s_.kubelet_dir + " for " + kKubeletSocket);
  return true;
}

ino_t KubeletPlugin::KubeletSocketIno() const {
  struct stat st {};
  if (::stat(Path(kKubeletSocket).c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
  return st.st_ino;
}

void KubeletPlugin::OnDirEvents() {
  alignas(struct inotify_event) char buf[8192];
  bool kubelet_new = false, kubelet_gone = false;
  for (;;) {
    ssize_t n = ::read(inotify_fd_.get(), buf, sizeof buf);
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<struct inotify_event*>(p);
      p += sizeof(struct inotify_event) + ev->len;
      if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
        if (dir_watch_ >= 0) log::Warn("kubelet directory " + k8s_.kubelet_dir + " went away");
        if (dir_watch_ >= 0) inotify_rm_watch(inotify_fd_.get(), dir_watch_);
        dir_watch_ = -1;
        kubelet_gone = true;
        continue;
      }
      // Events were lost: whether kubelet.sock is new is decided by its inode.
      if (ev->mask & IN_Q_OVERFLOW) kubelet_new = true;
      if (ev->len == 0 || std::strcmp(ev->name, kKubeletSocket) != 0) continue;
      if (ev->mask & (IN_CREATE | IN_MOVED_TO)) kubelet_new = true;
      if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) kubelet_gone = true;
    }
  }
  if (!kubelet_gone && !kubelet_new) return;
  // A new kubelet knows none of our resources: all register again. One we
  // already registered with (its creation seen late) is left alone.
  ino_t now = KubeletSocketIno();
  bool again = false;
  for (auto& [name, s] : served_) {
    if (s.registered && s.kubelet_ino == now) continue;
    again = again || s.registered;
    s.registered = false;
    s.next_attempt = Clock::time_point{};
    s.backoff = kFirstBackoff;
  }
  if (now != 0 && again) log::Info("a new " + Path(kKubeletSocket) + ": registering again");
}

void KubeletPlugin::Restart(const std::string& resource, Served* s) {
  if (s->server) s->server->Stop();
  s->server.reset();
  s->registered = false;
  auto server = std::make_unique<DevicePluginServer>(resource, Path(SocketNameFor(resource)),
                                                     &watch_, k8s_, cdi_ ? &*cdi_ : nullptr);
  Error err;
  if (!server->Start(&err)) {
    log::Error("kubernetes: " + resource + ": " + err.Line() + "; retrying");
    s->next_attempt = Clock::now() + s->backoff;
    s->backoff = std::min(s->backoff * 2, kMaxBackoff);
    return;
  }
  s->server = std::move(server);
}

// Serves what the view has, stops what it no longer has, restarts servers
// whose socket the kubelet deleted.
void KubeletPlugin::Reconcile() {
  if (dir_watch_ < 0) return;
  ClusterView view = watch_.View();
  std::set<std::string> wanted;
  for (const ClusterResource& r : view.resources)
    if (!r.k8s_name.empty()) wanted.insert(r.k8s_name);
  for (auto it = served_.begin(); it != served_.end();) {
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    log::Info(it->first + " is no longer in the inventories: stopped serving it");
    if (it->second.server) it->second.server->Stop();
    it = served_.erase(it);
  }
  for (const std::string& name : wanted) {
    Served& s = served_[name];
    bool intact = s.server && s.server->SocketIntact();
    if (intact) continue;
    if (!s.server && Clock::now() < s.next_attempt) continue;
    if (s.server) log::Info(s.server->socket_path() + " was removed: serving " + name + " again");
    Restart(name, &s);
  }
}

bool KubeletPlugin::Register(const std::string& resource, ino_t kubelet_ino) {
  auto channel = grpc::CreateChannel("unix://" + Path(kKubeletSocket),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest req;
  req.set_version(kDevicePluginVersion);
  req.set_endpoint(SocketNameFor(resource));
  req.set_resource_name(resource);
  req.mutable_options()->set_pre_start_required(false);
  req.mutable_options()->set_get_preferred_allocation_available(false);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kRegisterTimeout);
  v1beta1::Empty resp;
  grpc::Status st = stub->Register(&ctx, req, &resp);
  Served& s = served_[resource];
  if (st.ok()) {
    log::Info("registered " + resource + " (endpoint " + req.endpoint() + ") with " +
              Path(kKubeletSocket));
    s.registered = true;
    s.kubelet_ino = kubelet_ino;
    s.backoff = kFirstBackoff;
    return true;
  }
  log::Warn("register " + resource + " with " + Path(kKubeletSocket) + " failed: " +
            Printable(st.error_message()) + " (gRPC code " +
            std::to_string(static_cast<int>(st.error_code())) + "); retrying in " +
            std::to_string(s.backoff.count()) + " s");
  s.next_attempt = Clock::now() + s.backoff;
  s.backoff = std::min(s.backoff * 2, kMaxBackoff);
  return false;
}

void KubeletPlugin::RegisterDue() {
  if (dir_watch_ < 0) return;
  ino_t ino = KubeletSocketIno();
  if (ino == 0) {
    if (!said_no_kubelet_ && !served_.empty())
      log::Info("waiting for " + Path(kKubeletSocket) + " (the kubelet is not running)");
    said_no_kubelet_ = true;
    return;
  }
  said_no_kubelet_ = false;
  for (auto& [name, s] : served_)
    if (s.server && !s.registered && Clock::now() >= s.next_attempt) Register(name, ino);
}

int KubeletPlugin::PollTimeoutMs() const {
  if (dir_watch_ < 0)
    return static_cast<int>(std::chrono::milliseconds(kDirPoll).count());
  auto next = Clock::time_point::max();
  for (const auto& [name, s] : served_)
    if (!s.registered || !s.server) next = std::min(next, s.next_attempt);
  if (next == Clock::time_point::max()) return -1;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 60000));
}

void KubeletPlugin::Shutdown() {
  stopping_ = true;
  for (auto& [name, s] : served_)
    if (s.server) s.server->Stop();
  served_.clear();
  if (change_thread_.joinable()) change_thread_.join();
  if (cdi_) cdi_->Stop();
  watch_.Stop();
}

int KubeletPlugin::Run() {
  if (!Setup()) {
    Shutdown();
    return 1;
  }
  for (;;) {
    if (dir_watch_ < 0 && WatchKubeletDir()) {
      for (auto& [name, s] : served_) s.registered = false;
    }
    Reconcile();
    RegisterDue();
    struct pollfd fds[3] = {{signal_fd_.get(), POLLIN, 0},
                            {inotify_fd_.get(), POLLIN, 0},
                            {change_fd_.get(), POLLIN, 0}};
    int n = ::poll(fds, 3, PollTimeoutMs());
    if (n < 0 && errno != EINTR) {
      log::Error(std::string("kubernetes: poll: ") + std::strerror(errno));
      Shutdown();
      return 1;
    }
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo si {};
      if (::read(signal_fd_.get(), &si, sizeof si) != sizeof si) continue;
      if (si.ssi_signo == SIGHUP) {
        log::Info("kubernetes: SIGHUP: re-checking the inventories and the host");
        watch_.Recheck();
        continue;
      }
      log::Info(std::string("kubernetes: ") + strsignal(static_cast<int>(si.ssi_signo)) +
                ": stopping");
      Shutdown();
      return 0;
    }
    if (fds[1].revents & POLLIN) OnDirEvents();
    if (fds[2].revents & POLLIN) {
      uint64_t count = 0;
      if (::read(change_fd_.get(), &count, sizeof count) < 0) { /* nothing pending */ }
    }
  }
}

}  // namespace

int RunKubernetes(const PluginOptions& opts, const KubernetesOptions& k8s) {
  // Nothing here reads the environment, but gRPC does (GRPC_TRACE,
  // GRPC_VERBOSITY, proxies, poll strategies) when it starts: whatever a
  // DaemonSet or a shell left there must not change how the plugin behaves.
  ::clearenv();
  PluginOptions with_cdi = opts;
  with_cdi.cdi_dir = k8s.cdi_dir;  // the view carries the specs the keeper writes
  KubeletPlugin plugin(with_cdi, k8s);
  return plugin.Run();
}

}  // namespace ocid
