// The Kubernetes mode's main loop. One thread owns everything below; gRPC's
// threads only answer from the ResourceWatch's view (kubelet_server), and
// each Register call runs on a thread of its own.
//
//   1. block SIGTERM/SIGINT/SIGHUP (serve_loop.h: read from a signalfd;
//      SIGHUP re-checks the host now), start the ResourceWatch;
//   2. watch --kubelet-dir with inotify (waiting for it if absent); once it
//      is there, own it (kubelet_lock.h: a second instance waits kLockWait
//      for the first to go, then exits 1);
//   3. loop: serve every resource of the view that has a Kubernetes name,
//      each on its own socket; register each with kubelet.sock once it
//      serves (the kubelet dials back during Register); on a view change
//      start/stop servers; when the kubelet deletes a
//      socket or creates a new kubelet.sock (it restarted), serve again and
//      register again; a failed Register is retried with backoff;
//      --health-file is rewritten every kHealthEvery and on every change
//      (health_file.h);
//   4. on a signal: cancel Register calls, stop the servers (all at once),
//      remove our sockets, exit 0, well within 2 s whatever the kubelet does.
//
// The loop never waits for the kubelet: a Register (bounded by
// kRegisterTimeout, cancellable) runs on a worker thread that reports its
// end through an eventfd. Nor does it spin: poll() sleeps until the next
// deadline it can act on (PollTimeoutMs), in the ServeLoop's poll.
// With --cdi-dir, the CDI keeper (cdi_dir_keeper.h) keeps the view's specs on
// its own thread; this loop only starts and stops it.
#include "kubelet_loop.h"

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
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "cdi_dir_keeper.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "exit_codes.h"
#include "health_file.h"
#include "kubelet_allocate.h"
#include "kubelet_lock.h"
#include "kubelet_server.h"
#include "log.h"
#include "resource_watch.h"
#include "serve_loop.h"
#include "unique_fd.h"

namespace ocid {

int PollTimeoutMs(const LoopWait& w, LoopWait::Clock::time_point now) {
  using Clock = LoopWait::Clock;
  // While --kubelet-dir does not exist, how often to look again.
  constexpr std::chrono::seconds kDirPoll{1};
  Clock::time_point next = w.health_due;
  if (!w.dir_watched) {
    next = std::min(next, now + kDirPoll);
  } else {
    for (const auto& r : w.resources) {
      if (!r.serving)
        next = std::min(next, r.next_start);
      else if (!r.registered && !r.attempting && w.kubelet_present)
        next = std::min(next, r.next_attempt);
    }
  }
  if (next == Clock::time_point::max()) return -1;
  if (next <= now) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::min<long long>(ms, 60000));
}

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kFirstBackoff{1};
constexpr std::chrono::seconds kMaxBackoff{30};
// One Register attempt: the kubelet answers in milliseconds (it dials back
// first); a kubelet that takes longer is retried with backoff.
constexpr std::chrono::seconds kRegisterTimeout{5};
// How long a second instance waits for the directory's owner to go: longer
// than an old instance's shutdown (under 2 s) in a rolling update.
constexpr std::chrono::seconds kLockWait{5};

// Register calls off the loop: each on its own thread, bounded by
// kRegisterTimeout, cancellable; the loop hears of each end through fd().
class Registrar {
 public:
  struct Done {
    uint64_t id = 0;
    std::string resource;
    ino_t kubelet_ino = 0;
    grpc::Status status;
  };

  bool Init() {
    fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    return fd_.valid();
  }
  int fd() const { return fd_.get(); }

  uint64_t Start(const std::string& kubelet_socket, const v1beta1::RegisterRequest& req,
                 ino_t kubelet_ino) {
    auto call = std::make_unique<Call>();
    call->ctx.set_deadline(std::chrono::system_clock::now() + kRegisterTimeout);
    call->done.resource = req.resource_name();
    call->done.kubelet_ino = kubelet_ino;
    Call* c = call.get();
    std::lock_guard<std::mutex> l(mu_);
    c->done.id = ++last_id_;
    calls_[c->done.id] = std::move(call);
    c->thread = std::thread([this, c, kubelet_socket, req] {
      auto channel =
          grpc::CreateChannel("unix://" + kubelet_socket, grpc::InsecureChannelCredentials());
      auto stub = v1beta1::Registration::NewStub(channel);
      v1beta1::Empty resp;
      grpc::Status st = stub->Register(&c->ctx, req, &resp);
      {
        std::lock_guard<std::mutex> done_lock(mu_);
        c->done.status = st;
        c->finished = true;
      }
      uint64_t one = 1;
      if (::write(fd_.get(), &one, sizeof one) < 0) { /* a wake-up is pending anyway */
      }
    });
    return c->done.id;
  }

  // Ends a call early (its Done still arrives, with CANCELLED).
  void Cancel(uint64_t id) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = calls_.find(id);
    if (it != calls_.end()) it->second->ctx.TryCancel();
  }

  std::vector<Done> TakeDone() {
    uint64_t count = 0;
    if (::read(fd_.get(), &count, sizeof count) < 0) { /* nothing pending */
    }
    std::vector<std::unique_ptr<Call>> ended;
    {
      std::lock_guard<std::mutex> l(mu_);
      for (auto it = calls_.begin(); it != calls_.end();) {
        if (!it->second->finished) {
          ++it;
          continue;
        }
        ended.push_back(std::move(it->second));
        it = calls_.erase(it);
      }
    }
    std::vector<Done> out;
    for (auto& c : ended) {
      c->thread.join();  // it has only its eventfd write left
      out.push_back(std::move(c->done));
    }
    return out;
  }

  // At shutdown: cancels every call and waits for their threads.
  void CancelAll() {
    std::map<uint64_t, std::unique_ptr<Call>> calls;
    {
      std::lock_guard<std::mutex> l(mu_);
      for (auto& [id, c] : calls_) c->ctx.TryCancel();
      calls.swap(calls_);
    }
    for (auto& [id, c] : calls)
      if (c->thread.joinable()) c->thread.join();
  }

  ~Registrar() { CancelAll(); }

 private:
  struct Call {
    grpc::ClientContext ctx;
    std::thread thread;
    bool finished = false;
    Done done;
  };
  std::mutex mu_;
  std::map<uint64_t, std::unique_ptr<Call>> calls_;
  uint64_t last_id_ = 0;
  UniqueFd fd_;
};

struct Served {
  std::unique_ptr<DevicePluginServer> server;
  bool registered = false;
  ino_t kubelet_ino = 0;  // the kubelet.sock it registered with
  uint64_t attempt = 0;   // the Register call running, 0 for none
  ino_t attempt_ino = 0;  // ... with this kubelet.sock
  Clock::time_point next_start{};
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
  // Owns the kubelet directory or says who does: -1 when owned, else the
  // exit code.
  int TakeLock();
  void OnDirEvents();
  void Reconcile();
  void Restart(const std::string& resource, Served* s);
  // Forgets a registration (the kubelet or our socket changed), cancelling
  // an attempt in progress: the next one may start at once.
  void Unregistered(Served* s);
  void RegisterDue();
  void OnRegisterDone();
  // kubelet.sock's inode, 0 when there is none: a new inode is a new
  // kubelet, however its events were batched.
  ino_t KubeletSocketIno() const;
  HealthState CurrentHealth() const;
  void WriteHealth();
  int TimeoutMs() const;
  // What a signal does: true stops the loop.
  bool OnSignal(int signo);
  // Before each wait: owns the directory once it is there (a lock that stays
  // another's, or a signal while waiting for it, stops the loop with
  // TakeLock's code), then serves, registers and writes the health file.
  // Returns how long the wait may be (ms).
  int Tick();
  void Shutdown();

  std::string Path(const std::string& name) const { return opts_.kubelet_dir + "/" + name; }

  PluginOptions opts_;
  KubernetesOptions k8s_;
  ResourceWatch watch_;
  std::optional<CdiDirKeeper> cdi_;
  ServeLoop loop_;
  UniqueFd inotify_fd_, change_fd_;
  Registrar registrar_;
  KubeletDirLock lock_;
  int dir_watch_ = -1;
  uint64_t groups_said_ = 0;  // the view generation SupplementalGroupsNote last logged
  bool said_waiting_ = false;
  bool said_no_kubelet_ = false;
  bool said_health_error_ = false;
  HealthState last_health_;
  Clock::time_point next_health_{};
  std::map<std::string, Served> served_;  // by resource name
  std::atomic<bool> stopping_{false};
  std::thread change_thread_;
  int exit_code_ = 0;
};

bool KubeletPlugin::Setup() {
  // Blocked before any thread exists, so every thread inherits the mask and
  // the signals only ever arrive through the loop's signalfd.
  Error err;
  if (!loop_.Init(&err)) {
    log::Error(std::string("kubernetes: cannot create signalfd, eventfd or inotify: ") +
               std::strerror(err.errnum));
    return false;
  }
  ::signal(SIGPIPE, SIG_IGN);
  change_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  inotify_fd_.reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (!change_fd_.valid() || !inotify_fd_.valid() || !registrar_.Init()) {
    log::Error(std::string("kubernetes: cannot create signalfd, eventfd or inotify: ") +
               std::strerror(errno));
    return false;
  }
  // The first line also builds the logger before any other thread exists.
  log::Info("kubernetes: inventories in " + opts_.config_dir + ", host files under " +
            opts_.host_root + ", kubelet directory " + opts_.kubelet_dir);
  if (!watch_.Start(&err)) {
    log::Error("kubernetes: " + err.Line());
    return false;
  }
  if (!opts_.cdi_dir.empty()) {
    cdi_.emplace(opts_.cdi_dir, opts_.config_dir);
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
    if (::write(change_fd_.get(), &one, sizeof one) < 0) { /* a wake-up is pending anyway */
    }
  }
}

bool KubeletPlugin::WatchKubeletDir() {
  if (dir_watch_ >= 0) return true;
  dir_watch_ = inotify_add_watch(inotify_fd_.get(), opts_.kubelet_dir.c_str(),
                                 IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                                     IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
  if (dir_watch_ < 0) {
    if (!said_waiting_)
      log::Warn("kubelet directory " + opts_.kubelet_dir + ": " + std::strerror(errno) +
                "; waiting for it");
    said_waiting_ = true;
    return false;
  }
  said_waiting_ = false;
  log::Info("watching " + opts_.kubelet_dir + " for " + kKubeletSocket);
  return true;
}

int KubeletPlugin::TakeLock() {
  auto deadline = Clock::now() + kLockWait;
  bool said = false;
  for (;;) {
    std::string holder;
    Error err;
    switch (lock_.TryTake(opts_.kubelet_dir, &holder, &err)) {
      case KubeletDirLock::Result::kTaken:
        if (said) log::Info("kubernetes: " + opts_.kubelet_dir + " is ours now");
        return -1;
      case KubeletDirLock::Result::kError:
        log::Error("kubernetes: " + err.Line());
        return kExitFailure;
      case KubeletDirLock::Result::kHeld: break;
    }
    if (Clock::now() >= deadline) {
      log::Error("kubernetes: kubelet directory " + opts_.kubelet_dir +
                 " is served by another oci-decorator-device-plugin (" + holder + ", lock " +
                 KubeletDirLock::PathFor(opts_.kubelet_dir) + "); gave up after " +
                 std::to_string(kLockWait.count()) + " s");
      return kExitFailure;
    }
    if (!said)
      log::Info("kubernetes: kubelet directory " + opts_.kubelet_dir + " is held by " + holder +
                "; waiting up to " + std::to_string(kLockWait.count()) + " s for it to stop");
    said = true;
    // A signal while waiting ends the wait, as it would end serving.
    struct pollfd pfd = {loop_.signal_fd(), POLLIN, 0};
    if (::poll(&pfd, 1, 100) > 0) {
      struct signalfd_siginfo si {};
      if (::read(loop_.signal_fd(), &si, sizeof si) == sizeof si && si.ssi_signo != SIGHUP) {
        log::Info(std::string("kubernetes: ") + strsignal(static_cast<int>(si.ssi_signo)) +
                  ": stopping");
        return 0;
      }
    }
  }
}

ino_t KubeletPlugin::KubeletSocketIno() const {
  struct stat st {};
  if (::stat(Path(kKubeletSocket).c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
  return st.st_ino;
}

void KubeletPlugin::Unregistered(Served* s) {
  if (s->attempt != 0) registrar_.Cancel(s->attempt);
  s->attempt = 0;
  s->registered = false;
  s->next_attempt = Clock::time_point{};
  s->backoff = kFirstBackoff;
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
        if (dir_watch_ >= 0) log::Warn("kubelet directory " + opts_.kubelet_dir + " went away");
        if (dir_watch_ >= 0) inotify_rm_watch(inotify_fd_.get(), dir_watch_);
        dir_watch_ = -1;
        // The lock file went with it: when the directory is back, it is
        // taken again (a new file).
        lock_.Release();
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
  // already registered with (its creation seen late), or are registering
  // with, is left alone.
  ino_t now = KubeletSocketIno();
  bool again = false;
  for (auto& [name, s] : served_) {
    if (s.registered && s.kubelet_ino == now) continue;
    if (s.attempt != 0 && s.attempt_ino == now) continue;
    again = again || s.registered;
    Unregistered(&s);
  }
  if (now != 0 && again) log::Info("a new " + Path(kKubeletSocket) + ": registering again");
}

void KubeletPlugin::Restart(const std::string& resource, Served* s) {
  if (s->server) s->server->Stop();
  s->server.reset();
  Unregistered(s);
  auto server = std::make_unique<DevicePluginServer>(resource, Path(SocketNameFor(resource)),
                                                     &watch_, opts_, k8s_, cdi_ ? &*cdi_ : nullptr);
  Error err;
  if (!server->Start(&err)) {
    log::Error("kubernetes: " + resource + ": " + err.Line() + "; retrying");
    s->next_start = Clock::now() + s->backoff;
    s->backoff = std::min(s->backoff * 2, kMaxBackoff);
    return;
  }
  s->backoff = kFirstBackoff;
  s->server = std::move(server);
}

// Serves what the view has, stops what it no longer has, restarts servers
// whose socket the kubelet deleted. Only in a directory this instance owns.
void KubeletPlugin::Reconcile() {
  if (dir_watch_ < 0 || !lock_.held()) return;
  uint64_t generation = 0;
  ClusterView view = watch_.View(&generation);
  // Once per view: what the answers cannot carry.
  if (generation != groups_said_) {
    groups_said_ = generation;
    for (const ClusterResource& r : view.resources)
      if (std::string note = SupplementalGroupsNote(r, k8s_.allocate); !note.empty())
        log::Warn(note);
  }
  std::set<std::string> wanted;
  for (const ClusterResource& r : view.resources)
    if (!r.k8s_name.empty()) wanted.insert(r.k8s_name);
  for (auto it = served_.begin(); it != served_.end();) {
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    log::Info(it->first + " is no longer in the inventories: stopped serving it");
    Unregistered(&it->second);
    if (it->second.server) it->second.server->Stop();
    it = served_.erase(it);
  }
  for (const std::string& name : wanted) {
    Served& s = served_[name];
    bool intact = s.server && s.server->SocketIntact();
    if (intact) continue;
    if (!s.server && Clock::now() < s.next_start) continue;
    if (s.server) log::Info(s.server->socket_path() + " was removed: serving " + name + " again");
    Restart(name, &s);
  }
}

void KubeletPlugin::RegisterDue() {
  if (dir_watch_ < 0 || !lock_.held()) return;
  ino_t ino = KubeletSocketIno();
  if (ino == 0) {
    if (!said_no_kubelet_ && !served_.empty())
      log::Info("waiting for " + Path(kKubeletSocket) + " (the kubelet is not running)");
    said_no_kubelet_ = true;
    return;
  }
  said_no_kubelet_ = false;
  auto now = Clock::now();
  for (auto& [name, s] : served_) {
    if (!s.server || s.registered || s.attempt != 0 || now < s.next_attempt) continue;
    v1beta1::RegisterRequest req;
    req.set_version(kDevicePluginVersion);
    req.set_endpoint(SocketNameFor(name));
    req.set_resource_name(name);
    req.mutable_options()->set_pre_start_required(false);
    req.mutable_options()->set_get_preferred_allocation_available(false);
    s.attempt = registrar_.Start(Path(kKubeletSocket), req, ino);
    s.attempt_ino = ino;
  }
}

void KubeletPlugin::OnRegisterDone() {
  for (Registrar::Done& d : registrar_.TakeDone()) {
    auto it = served_.find(d.resource);
    // A call for a socket since replaced, a kubelet since gone, a resource
    // since dropped: its answer is about something that is no more.
    if (it == served_.end() || it->second.attempt != d.id) continue;
    Served& s = it->second;
    s.attempt = 0;
    const std::string endpoint = SocketNameFor(d.resource);
    if (d.status.ok()) {
      log::Info("registered " + d.resource + " (endpoint " + endpoint + ") with " +
                Path(kKubeletSocket));
      s.registered = true;
      s.kubelet_ino = d.kubelet_ino;
      s.backoff = kFirstBackoff;
      continue;
    }
    log::Warn("register " + d.resource + " with " + Path(kKubeletSocket) +
              " failed: " + Printable(d.status.error_message()) + " (gRPC code " +
              std::to_string(static_cast<int>(d.status.error_code())) + "); retrying in " +
              std::to_string(s.backoff.count()) + " s");
    s.next_attempt = Clock::now() + s.backoff;
    s.backoff = std::min(s.backoff * 2, kMaxBackoff);
  }
}

HealthState KubeletPlugin::CurrentHealth() const {
  HealthState h;
  h.pid = ::getpid();
  h.kubelet_dir = dir_watch_ >= 0 && lock_.held();
  h.kubelet = h.kubelet_dir && KubeletSocketIno() != 0;
  ClusterView view = watch_.View();
  for (const ClusterResource& r : view.resources) {
    if (r.k8s_name.empty()) continue;
    ++h.resources;
    if (r.healthy) ++h.healthy;
    auto it = served_.find(r.k8s_name);
    bool serving = it != served_.end() && it->second.server;
    bool registered = serving && it->second.registered;
    h.served += serving ? 1 : 0;
    h.registered += registered ? 1 : 0;
    if (!registered) h.unregistered.push_back(r.k8s_name);
  }
  if (h.resources == 0) h.why_none = view.none_why.empty() ? "no resources" : view.none_why;
  return h;
}

void KubeletPlugin::WriteHealth() {
  if (opts_.health_file.empty()) return;
  HealthState h = CurrentHealth();
  auto now = Clock::now();
  if (now < next_health_ && h.SameCounts(last_health_)) return;
  h.time = static_cast<int64_t>(std::time(nullptr));
  Error err;
  if (!WriteHealthFile(opts_.health_file, h, &err)) {
    if (!said_health_error_) log::Warn("kubernetes: --health-file: " + err.Line());
    said_health_error_ = true;
  } else {
    said_health_error_ = false;
  }
  last_health_ = h;
  next_health_ = now + kHealthEvery;
}

int KubeletPlugin::TimeoutMs() const {
  LoopWait w;
  w.dir_watched = dir_watch_ >= 0 && lock_.held();
  w.kubelet_present = w.dir_watched && KubeletSocketIno() != 0;
  for (const auto& [name, s] : served_)
    w.resources.push_back(
        {static_cast<bool>(s.server), s.registered, s.attempt != 0, s.next_start, s.next_attempt});
  if (!opts_.health_file.empty()) w.health_due = next_health_;
  return PollTimeoutMs(w, Clock::now());
}

void KubeletPlugin::Shutdown() {
  stopping_ = true;
  registrar_.CancelAll();
  // Every stream is told first, then the watch's stop wakes them all at
  // once, and the servers stop side by side: the total is one server's
  // stop, not the sum.
  for (auto& [name, s] : served_)
    if (s.server) s.server->BeginStop();
  watch_.Stop();
  if (change_thread_.joinable()) change_thread_.join();
  std::vector<std::thread> stops;
  for (auto& [name, s] : served_)
    if (s.server) stops.emplace_back([srv = s.server.get()] { srv->Stop(); });
  for (auto& t : stops) t.join();
  served_.clear();
  if (cdi_) cdi_->Stop();
}

// SIGHUP re-checks the host now; SIGTERM and SIGINT stop.
bool KubeletPlugin::OnSignal(int signo) {
  if (signo == SIGHUP) {
    log::Info("kubernetes: SIGHUP: re-checking the inventories and the host");
    watch_.Recheck();
    return false;
  }
  log::Info(std::string("kubernetes: ") + strsignal(signo) + ": stopping");
  return true;
}

int KubeletPlugin::Tick() {
  if (dir_watch_ < 0 && WatchKubeletDir()) {
    int rc = TakeLock();
    if (rc >= 0) {
      exit_code_ = rc;
      loop_.Stop();
      return -1;
    }
    for (auto& [name, s] : served_) Unregistered(&s);
  }
  Reconcile();
  RegisterDue();
  WriteHealth();
  return TimeoutMs();
}

int KubeletPlugin::Run() {
  if (!Setup()) {
    Shutdown();
    return kExitFailure;
  }
  loop_.OnSignal([this](int signo) { return OnSignal(signo); });
  loop_.Watch(inotify_fd_.get(), [this] { OnDirEvents(); });
  loop_.Watch(change_fd_.get(), [this] {
    uint64_t count = 0;
    if (::read(change_fd_.get(), &count, sizeof count) < 0) { /* nothing pending */
    }
  });
  loop_.Watch(registrar_.fd(), [this] { OnRegisterDone(); });
  Error err;
  if (loop_.Run([this] { return Tick(); }, &err) != 0) {
    log::Error("kubernetes: " + err.Line());
    exit_code_ = kExitFailure;
  }
  Shutdown();
  return exit_code_;
}

}  // namespace

int RunKubeletLoop(const PluginOptions& opts, const KubernetesOptions& k8s) {
  KubeletPlugin plugin(opts, k8s);
  return plugin.Run();
}

}  // namespace ocid
