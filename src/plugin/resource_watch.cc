#include "resource_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "host_dirs.h"
#include "host_view.h"
#include "inventory.h"
#include "log.h"
#include "rootfs_path.h"
#include "unique_fd.h"
#include "view_snapshot.h"

namespace ocid {
namespace {

using Clock = std::chrono::steady_clock;

// Everything a kubelet or Nomad client could see of a view, as one string:
// two views are the same to them when these are equal.
std::string DigestOf(const ClusterView& v) {
  std::string d;
  for (const ClusterResource& r : v.resources) {
    d += r.inventory + '\n' + r.k8s_name + '\n' + r.nomad_vendor + '/' + r.nomad_type + '\n' +
         r.cdi_device + '\n' + (r.healthy ? "1" : "0") + r.why + '\n';
    for (const auto& f : r.features) d += f + ',';
    for (const auto& m : r.delivery.mounts)
      d += "m " + m.host_path + ' ' + m.container_path + (m.read_only ? " ro\n" : " rw\n");
    for (const auto& x : r.delivery.devices)
      d += "d " + x.host_path + ' ' + x.container_path + ' ' + x.type + std::to_string(x.major) +
           ':' + std::to_string(x.minor) + ' ' + std::to_string(x.file_mode) + '\n';
    for (const auto& [k, val] : r.delivery.env) d += "e " + k + '=' + val + '\n';
    for (uint32_t g : r.delivery.additional_gids) d += "g " + std::to_string(g) + '\n';
    for (const auto& c : r.met_conditions) d += "c " + c + '\n';
  }
  // The CDI specs: what the CDI keeper writes (cdi_dir_keeper.h).
  for (const ClusterCdiSpec& c : v.cdi_specs) {
    d +=
        "cdi " + c.inventory + ' ' + std::to_string(static_cast<int>(c.state)) + ' ' + c.why + '\n';
    for (const auto& f : c.files) d += f.name + '\n' + f.bytes + '\n';
  }
  return d;
}

std::string NameOf(const ClusterResource& r) {
  if (!r.k8s_name.empty()) return r.k8s_name;
  return r.nomad_vendor + "/" + r.nomad_type;
}

// What an inotify event says happened, for the debug line of a rebuild.
std::string EventWhat(uint32_t mask) {
  if (mask & IN_Q_OVERFLOW) return "events lost (inotify queue overflow)";
  if (mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) return "the directory itself went";
  if (mask & IN_CREATE) return "created";
  if (mask & IN_DELETE) return "deleted";
  if (mask & IN_MOVED_FROM) return "moved away";
  if (mask & IN_MOVED_TO) return "moved in";
  if (mask & IN_CLOSE_WRITE) return "written";
  if (mask & IN_ATTRIB) return "attributes changed";
  return "changed";
}

// Milliseconds until `t`, rounded up (a deadline 0.4 ms away is not a
// reason to poll with 0), 0 when past, at most a minute.
int MsUntil(Clock::time_point t, Clock::time_point now) {
  if (t <= now) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(t - now).count();
  return static_cast<int>(std::min<long long>(ms, 60000));
}

}  // namespace

ResourceWatch::ResourceWatch(const PluginOptions& opts) : opts_(opts) {
  if (opts_.host_path_root.empty()) opts_.host_path_root = opts_.host_root;
}

ResourceWatch::~ResourceWatch() {
  Stop();
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

bool ResourceWatch::Start(Error* err) {
  std::unique_ptr<HostRootView> probe;
  if (!HostRootView::Open(opts_.host_root, &probe, err)) return false;
  inotify_fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd_ < 0) return Fail(err, "cannot start inotify", "", errno);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Fail(err, "cannot create an eventfd", "", errno);
  Rebuild("start");
  thread_ = std::thread([this] { Loop(); });
  return true;
}

void ResourceWatch::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  changed_.notify_all();
  if (wake_fd_ >= 0) {
    uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
}

ClusterView ResourceWatch::View(uint64_t* generation) const {
  std::lock_guard<std::mutex> l(mu_);
  if (generation) *generation = generation_;
  return view_;
}

uint64_t ResourceWatch::WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> l(mu_);
  changed_.wait_for(l, timeout, [&] { return generation_ != seen || stopping_; });
  return generation_;
}

uint64_t ResourceWatch::Rebuilds() const {
  std::lock_guard<std::mutex> l(mu_);
  return rebuilds_;
}

ResourceWatch::Mark ResourceWatch::CurrentMark() const {
  std::lock_guard<std::mutex> l(mu_);
  return Mark{generation_, rechecked_};
}

ResourceWatch::Mark ResourceWatch::WaitForMark(Mark seen, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> l(mu_);
  changed_.wait_for(l, timeout, [&] {
    return generation_ != seen.generation || rechecked_ != seen.rechecks || stopping_;
  });
  return Mark{generation_, rechecked_};
}

void ResourceWatch::Recheck() {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++recheck_asked_;
  }
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof one);
}

void ResourceWatch::Rebuild(const std::string& why) {
  uint64_t asked = 0, number = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    asked = recheck_asked_;
    number = ++rebuilds_;
  }
  OCID_DEBUG("rebuilding the view (#" + std::to_string(number) + "): " + why);
  InventorySet set;
  Error err;
  ViewSources src = ViewSourcesOf(opts_);
  bool loaded = LoadViewInventories(src, &set, &err);
  if (!loaded) log::Warn("cannot read the inventory directory: " + err.Line());
  std::unique_ptr<HostRootView> host;
  ClusterView next;
  ClusterView previous = View();
  if (!HostRootView::Open(opts_.host_root, &host, &err)) {
    // The host root went away (a DaemonSet's mount?): everything known is
    // kept, unhealthy, until it is back.
    next = previous;
    for (auto& r : next.resources) MarkUnhealthy(&r, err.Line());
    if (next.resources.empty())
      next.none_why = NoResourcesWhy(loaded, err, set, opts_.config_dir, next);
    used_.clear();
    host_root_.reset();
  } else {
    // Every read through `seen`, which records the facts the view uses of
    // each name it matched (host_watch.h): what an attribute change is
    // judged against until the next rebuild.
    RecordingView seen(*host);
    SnapshotView(src, set, loaded, err, seen, &previous, &next);
    used_ = seen.used();
    if (opts_.create_planned_dirs) CreateDirectories(host->fd(), next);
    host_root_.reset(::fcntl(host->fd(), F_DUPFD_CLOEXEC, 0));
  }

  // What changed, one line each.
  std::map<std::string, const ClusterResource*> before;
  for (const auto& r : previous.resources) before[r.inventory + "\n" + NameOf(r)] = &r;
  for (const auto& r : next.resources) {
    auto it = before.find(r.inventory + "\n" + NameOf(r));
    bool was = it != before.end();
    if (was && it->second->healthy == r.healthy && it->second->why == r.why) continue;
    if (r.healthy)
      log::Info("resource " + NameOf(r) + " (" + r.inventory + "): healthy");
    else
      log::Warn("resource " + NameOf(r) + " (" + r.inventory + "): unhealthy: " + r.why);
  }
  std::set<std::string> old_warnings(previous.warnings.begin(), previous.warnings.end());
  for (const auto& w : next.warnings)
    if (!old_warnings.count(w)) log::Warn(w);

  // Watch the config directory and the host directories entries live in,
  // for the names that matter there (host_watch.h); a directory that does
  // not exist yet is caught by the periodic re-check.
  std::map<std::string, WatchedDir> dirs = PlanWatches(set, opts_.host_root, opts_.config_dir);
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (dirs.count(it->first)) {
      ++it;
      continue;
    }
    ::inotify_rm_watch(inotify_fd_, it->second);
    it = watches_.erase(it);
  }
  filters_.clear();
  std::map<int, uint32_t> masks;
  for (const auto& [d, w] : dirs) {
    // Without IN_MASK_ADD the mask replaces the one a directory had.
    int wd = ::inotify_add_watch(inotify_fd_, d.c_str(), w.mask | IN_ONLYDIR);
    if (wd < 0) {
      watches_.erase(d);
      continue;
    }
    watches_[d] = wd;
    filters_[wd].push_back(w);
    // Two paths to one directory (/sbin and /usr/sbin on a merged-/usr
    // host) get one watch: it asks for what both ask for, and an event on
    // it is judged by each one's names (and paths, for their facts).
    uint32_t& mask = masks[wd];
    if (mask != 0 && (mask | w.mask) != w.mask)
      ::inotify_add_watch(inotify_fd_, d.c_str(), mask | w.mask | IN_ONLYDIR);
    mask |= w.mask;
  }

  std::string digest = DigestOf(next);
  std::lock_guard<std::mutex> l(mu_);
  view_ = std::move(next);
  if (digest != digest_ || generation_ == 0) {
    digest_ = std::move(digest);
    ++generation_;
    changed_.notify_all();
  }
  if (rechecked_ != asked) {
    rechecked_ = asked;
    changed_.notify_all();
  }
}

void ResourceWatch::CreateDirectories(int root_fd, const ClusterView& view) {
  Plan plan;
  for (const ClusterResource& r : view.resources) AddDirectoriesToCreate(r.to_create, &plan.mounts);
  if (plan.mounts.empty()) return;
  std::vector<std::string> created;
  Error err;
  bool ok = CreatePlannedDirectories(root_fd, &plan, &created, &err);
  for (const auto& path : created)
    log::Info("created " + UnderRoot(opts_.host_root, path) +
              " (root, 0755): the resources' reservations mount it");
  if (ok) {
    create_error_.clear();
    return;
  }
  // Once until it changes: the next rebuild tries again; the resources
  // stay as they are (the directory may appear by itself, made by the
  // service that uses it).
  if (err.Line() == create_error_) return;
  create_error_ = err.Line();
  log::Warn("cannot create a directory the resources mount: " + create_error_);
}

bool ResourceWatch::FactsNow(const std::string& path, NameFacts* out) const {
  // As HostRootView::Match looks a path up: openat2 inside the host root,
  // symlinks followed there, O_PATH (nothing is opened), fstat.
  if (!host_root_.valid()) return false;
  UniqueFd fd;
  Error ignored;
  if (!OpenInRoot(host_root_.get(), path, O_PATH, &fd, &ignored)) return false;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return false;
  HostMatch m;
  SetStatFacts(st, &m);
  *out = FactsOf(m);
  return true;
}

std::string ResourceWatch::EventPath(int wd, const std::string& name) const {
  std::string dir;
  for (const auto& [d, w] : watches_)
    if (w == wd) dir = d;
  return Printable(dir + (name.empty() ? "" : "/" + name));
}

bool ResourceWatch::DrainEvents(std::string* why) {
  alignas(struct inotify_event) char buf[8192];
  bool relevant = false;
  // Each name looked up once per drain, however many events name it.
  std::map<std::string, std::pair<bool, NameFacts>> looked;
  LookupFacts now = [&](const std::string& path, NameFacts* out) {
    auto it = looked.find(path);
    if (it == looked.end()) {
      NameFacts facts;
      bool found = FactsNow(path, &facts);
      it = looked.emplace(path, std::make_pair(found, facts)).first;
    }
    *out = it->second.second;
    return it->second.first;
  };
  for (;;) {
    ssize_t n = ::read(inotify_fd_, buf, sizeof buf);
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<struct inotify_event*>(p);
      p += sizeof(struct inotify_event) + ev->len;
      if (relevant) continue;
      if (ev->mask & IN_Q_OVERFLOW) {
        relevant = true;
        *why = EventWhat(ev->mask);
        continue;
      }
      // A watch removed by Rebuild still reports IN_IGNORED once: not ours.
      auto it = filters_.find(ev->wd);
      if (it == filters_.end()) continue;
      std::string name = ev->len ? std::string(ev->name) : std::string();
      for (const WatchedDir& w : it->second)
        if (!relevant) relevant = w.Relevant(ev->mask, name, used_, now);
      if (relevant) *why = EventPath(ev->wd, name) + ": " + EventWhat(ev->mask);
    }
  }
  return relevant;
}

void ResourceWatch::Loop() {
  const auto period = std::chrono::seconds(opts_.recheck_seconds);
  Clock::time_point next_recheck = Clock::now() + period;
  Debounce debounce;
  std::string first_event;  // what started the pending debounce
  for (;;) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) return;
    }
    Clock::time_point now = Clock::now();
    Clock::time_point due = next_recheck;
    if (debounce.pending()) due = std::min(due, debounce.Due());
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, MsUntil(due, now));
    if (n < 0 && errno != EINTR) {
      log::Error(std::string("resource watch: poll: ") + std::strerror(errno));
      return;
    }
    now = Clock::now();
    std::string why;  // empty: no rebuild
    if (n > 0 && (fds[1].revents & POLLIN)) {
      uint64_t v;
      (void)!::read(wake_fd_, &v, sizeof v);
      why = "asked (SIGHUP)";  // Recheck() or Stop()
    }
    std::string event;
    if (n > 0 && (fds[0].revents & POLLIN) && DrainEvents(&event)) {
      if (!debounce.pending()) first_event = event;
      debounce.Event(now);
    }
    if (debounce.pending() && now >= debounce.Due() && why.empty()) why = first_event;
    if (now >= next_recheck) {
      if (why.empty()) why = "the periodic re-check";
      next_recheck = now + period;
    }
    if (why.empty()) continue;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) return;
    }
    debounce.Clear();
    Rebuild(why);
  }
}

}  // namespace ocid
