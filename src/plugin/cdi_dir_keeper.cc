#include "cdi_dir_keeper.h"

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
#include <memory>
#include <set>

#include "atomic_file.h"
#include "cdi.h"
#include "cdi_names.h"
#include "log.h"
#include "path_text.h"

namespace ocid {

namespace {

constexpr uint32_t kDirMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE |
                              IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
// Events come in bursts (an editor's save, `rm *`): one pass once this long
// has passed without one, but never later than kMaxDelay after the event
// that asked for it, however busy the directory is with others' files.
constexpr int kQuietMs = 50;
constexpr std::chrono::milliseconds kMaxDelay{200};

}  // namespace

CdiDirKeeper::CdiDirKeeper(std::string dir, std::string config_dir)
    : dir_(std::move(dir)), config_dir_(std::move(config_dir)) {}

CdiDirKeeper::~CdiDirKeeper() {
  Stop();
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void CdiDirKeeper::SayOnce(const std::string& key, const std::string& line, bool error) {
  auto [it, fresh] = said_.emplace(key, line);
  if (!fresh && it->second == line) return;
  it->second = line;
  if (error)
    log::Error(line);
  else
    log::Warn(line);
}

void CdiDirKeeper::RemoveStem(const CdiDirWriter& dir, const std::string& stem,
                              const std::string& why, const std::set<std::string>* keep) {
  std::vector<std::string> removed;
  dir.RemoveStem(stem, keep, &removed);
  for (const auto& n : removed) log::Info("removed " + dir_ + "/" + n + ": " + why);
}

void CdiDirKeeper::RemoveOrphans(const CdiDirWriter& dir, const std::set<std::string>& stems) {
  std::vector<std::string> removed;
  Error err;
  if (!dir.Sweep(stems, &removed, &err)) {
    log::Warn("CDI specs in " + dir_ + " not cleaned up: " + err.Line());
    return;
  }
  for (const auto& n : removed) {
    std::string stem = CdiSpecStem(n);
    if (!stem.empty())
      log::Info("removed " + dir_ + "/" + n + ": no inventory " + stem + ".json in " + config_dir_);
    else
      log::Info("removed " + dir_ + "/" + n + ": no inventory in " + config_dir_ + " writes it");
  }
}

std::shared_ptr<const CdiDirKeeper::Snapshot> CdiDirKeeper::Current() const {
  std::lock_guard<std::mutex> l(snap_mu_);
  return snapshot_;
}

void CdiDirKeeper::Publish(std::shared_ptr<const Snapshot> snap) {
  {
    std::lock_guard<std::mutex> l(snap_mu_);
    snapshot_ = std::move(snap);
  }
  ++passes_;
}

bool CdiDirKeeper::Sync(const ClusterView& view) {
  if (view.cdi_dir.empty()) return true;  // the inventories were never read
  auto snap = std::make_shared<Snapshot>();
  // The directory, once for the whole pass, by the writer's rule: every
  // lookup, write and unlink below goes through this fd, never the path.
  CdiDirWriter dir;
  Error derr;
  if (!CdiDirWriter::Open(dir_, /*create=*/true, &dir, &derr)) {
    snap->dir_why = "CDI directory " + dir_ + " refused: " + derr.Line();
    if (snap->dir_why != dir_said_)
      log::Error(snap->dir_why +
                 "; nothing is written or removed there, and no CDI device or preload file of it "
                 "is handed out, until it passes the rule again");
    dir_said_ = snap->dir_why;
    Publish(std::move(snap));
    return false;
  }
  if (!dir_said_.empty()) log::Info("CDI directory " + dir_ + " passes the writer's rule again");
  dir_said_.clear();
  snap->dev = dir.dev();
  snap->ino = dir.ino();
  const int dfd = dir.fd();

  bool ok = true;
  std::set<std::string> stems, present;
  for (const ClusterCdiSpec& c : view.cdi_specs) stems.insert(c.stem);
  if (!swept_) {
    RemoveOrphans(dir, stems);
    swept_ = true;
  }
  for (const ClusterCdiSpec& c : view.cdi_specs) {
    present.insert(c.inventory);
    if (c.files.empty()) {
      if (c.state == ClusterCdiSpec::State::kKept) continue;  // broken, never had one
      SayOnce(c.inventory, "CDI spec of " + c.inventory + " not written: " + c.why, false);
      RemoveStem(dir, c.stem, c.inventory + " yields no CDI spec now");
      written_.erase(c.inventory);
      if (!c.kind.empty()) snap->kinds.emplace(c.kind, OnDisk{c.spec_path, c.why, {}, {}, {}});
      continue;
    }
    // The preload files first, the spec last (cdi.h CdiFilesOf); each only
    // when it is not current (bytes, mode 0644, root's).
    const std::string spec_name = Basename(c.spec_path);
    std::vector<std::string> files, written;
    std::set<std::string> names;
    for (const auto& f : c.files) {
      files.push_back(f.name);
      names.insert(f.name);
    }
    Error err;
    std::string failed;
    if (!dir.WriteSpecFiles(c.files, /*always=*/false, &written, &err)) failed = err.Line();
    files_written_ += written.size();
    bool spec_changed = false;
    for (const auto& n : written) {
      if (n == spec_name)
        spec_changed = true;
      else
        log::Info("wrote " + dir_ + "/" + n + ": the preload file of " + c.inventory);
    }
    if (!failed.empty()) {
      SayOnce(c.inventory, "CDI spec of " + c.inventory + " not written: " + failed, true);
      if (!c.kind.empty())
        snap->kinds.emplace(c.kind, OnDisk{c.spec_path, "not written: " + failed, {}, {}, {}});
      ok = false;
      continue;
    }
    said_.erase(c.inventory);
    if (spec_changed) log::Info("wrote " + c.spec_path + ": " + c.summary);
    // Preload files of devices the spec no longer has.
    RemoveStem(dir, c.stem, "no device of " + c.inventory + " preloads through it now", &names);
    written_[c.inventory] = files;
    if (c.kind.empty()) continue;
    OnDisk d;
    d.spec_path = c.spec_path;
    d.devices.insert(c.devices.begin(), c.devices.end());
    d.notes = c.warnings;
    d.files = c.files;
    if (!snap->kinds.emplace(c.kind, std::move(d)).second) continue;
  }
  // A kind an inventory lost to an earlier one: say so when asked about it.
  for (const ClusterCdiSpec& c : view.cdi_specs)
    if (c.files.empty() && !c.why.empty())
      if (auto it = snap->kinds.find(c.kind); it != snap->kinds.end() && it->second.why.empty())
        it->second.notes.push_back(c.why);
  for (auto it = written_.begin(); it != written_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    // The spec first (an engine then no longer names the preload files).
    for (auto n = it->second.rbegin(); n != it->second.rend(); ++n)
      if (::unlinkat(dfd, n->c_str(), 0) == 0)
        log::Info("removed " + dir_ + "/" + *n + ": " + it->first + " is gone");
    said_.erase(it->first);
    it = written_.erase(it);
  }
  Publish(std::move(snap));
  WatchDir(dfd);
  return ok;
}

bool CdiDirKeeper::OpenChecked(const Snapshot& snap, UniqueFd* dfd, std::string* why) const {
  if (!snap.dir_why.empty()) {
    *why = snap.dir_why;
    return false;
  }
  Error err;
  if (!OpenWriteDir(dir_, /*create=*/false, dfd, &err)) {
    *why = "CDI directory " + dir_ + " refused: " + err.Line();
    return false;
  }
  struct stat st {};
  if (::fstat(dfd->get(), &st) != 0 || st.st_dev != snap.dev || st.st_ino != snap.ino) {
    *why = "CDI directory " + dir_ + " is not the directory the keeper last checked (replaced)";
    return false;
  }
  return true;
}

bool CdiDirKeeper::Resolves(const std::string& cdi_device, std::string* why) const {
  std::shared_ptr<const Snapshot> snap = Current();
  size_t eq = cdi_device.find('=');
  std::string kind = cdi_device.substr(0, eq);
  std::string device = eq == std::string::npos ? "" : cdi_device.substr(eq + 1);
  if (!snap) {
    *why = "no CDI spec of kind " + kind + " in " + dir_ + " (not written yet)";
    return false;
  }
  if (!snap->dir_why.empty()) {
    *why = snap->dir_why;
    Wake();
    return false;
  }
  auto it = snap->kinds.find(kind);
  if (it == snap->kinds.end()) {
    *why = "no CDI spec of kind " + kind + " in " + dir_ + " (not written yet)";
    return false;
  }
  const OnDisk& d = it->second;
  if (!d.why.empty()) {
    *why = d.spec_path + ": " + d.why;
    return false;
  }
  if (!d.devices.count(device)) {
    *why = d.spec_path + " has no device \"" + device + "\"";
    for (const auto& n : d.notes) *why += "; " + n;
    return false;
  }
  // The spec names its preload files by path: the directory must be the
  // one the pass checked, and each file current in it, now.
  UniqueFd dfd;
  if (!OpenChecked(*snap, &dfd, why)) {
    Wake();
    return false;
  }
  const std::string spec_name = Basename(d.spec_path);
  const std::string preload_name = CdiPreloadFileName(spec_name, device);
  for (const auto& f : d.files) {
    if (f.name != spec_name && f.name != preload_name) continue;
    if (FileIsCurrentAt(dfd.get(), f.name, f.bytes, 0644)) continue;
    *why = dir_ + "/" + f.name + " is missing or not as written (being rewritten)";
    Wake();
    return false;
  }
  return true;
}

bool CdiDirKeeper::PreloadFileIfCurrent(const std::string& name, const std::string& bytes,
                                        std::string* path) const {
  std::shared_ptr<const Snapshot> snap = Current();
  if (!snap) return false;
  UniqueFd dfd;
  std::string why;
  if (!OpenChecked(*snap, &dfd, &why) || !FileIsCurrentAt(dfd.get(), name, bytes, 0644)) {
    Wake();
    return false;
  }
  *path = dir_ + "/" + name;
  return true;
}

void CdiDirKeeper::Wake() const {
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof one);
}

void CdiDirKeeper::WatchDir(int dfd) {
  if (inotify_fd_ < 0) return;  // not started: a test's Sync
  // The directory the pass checked, through its fd: never whatever the path
  // leads to by now. The same directory gives the same watch; a new one
  // (removed and made again, or another reached) a new watch, and the old
  // one is dropped (its events end with IN_IGNORED).
  const std::string self = "/proc/self/fd/" + std::to_string(dfd);
  int wd = ::inotify_add_watch(inotify_fd_, self.c_str(), kDirMask);
  if (wd < 0 && dir_watch_ >= 0) log::Warn("CDI directory " + dir_ + ": " + std::strerror(errno));
  if (dir_watch_ >= 0 && wd != dir_watch_) ::inotify_rm_watch(inotify_fd_, dir_watch_);
  dir_watch_ = wd;
}

bool CdiDirKeeper::Start(const ResourceWatch* watch, std::chrono::milliseconds period, Error* err) {
  inotify_fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd_ < 0) return Fail(err, "cannot start inotify", "", errno);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Fail(err, "cannot create an eventfd", "", errno);
  ResourceWatch::Mark seen = watch->CurrentMark();
  Sync(watch->View());
  thread_ = std::thread([this, watch, period] { Loop(watch, period); });
  // View changes and honoured rechecks, as wake-ups of the loop.
  waiter_ = std::thread([this, watch, seen]() mutable {
    constexpr auto kTick = std::chrono::milliseconds(250);
    while (!stopping_) {
      auto begin = std::chrono::steady_clock::now();
      ResourceWatch::Mark now = watch->WaitForMark(seen, kTick);
      if (now == seen) {
        // Back before its time with nothing new: the watch stopped.
        if (std::chrono::steady_clock::now() - begin < kTick / 2) return;
        continue;
      }
      seen = now;
      Wake();
    }
  });
  return true;
}

void CdiDirKeeper::Stop() {
  stopping_ = true;
  Wake();
  if (waiter_.joinable()) waiter_.join();
  if (thread_.joinable()) thread_.join();
}

void CdiDirKeeper::Loop(const ResourceWatch* watch, std::chrono::milliseconds period) {
  using Clock = std::chrono::steady_clock;
  alignas(struct inotify_event) char buf[4096];
  // The periodic pass is a deadline: events (others' files) never push it back.
  Clock::time_point next_pass = Clock::now() + period;
  while (!stopping_) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_pass - Clock::now());
    int n = ::poll(fds, 2, static_cast<int>(std::max<int64_t>(0, wait.count() + 1)));
    if (n < 0 && errno != EINTR) {
      log::Error(std::string("CDI keeper: poll: ") + std::strerror(errno));
      return;
    }
    if (stopping_) return;
    bool due = Clock::now() >= next_pass;
    if (fds[1].revents & POLLIN) {
      uint64_t v;
      (void)!::read(wake_fd_, &v, sizeof v);
      due = true;
    }
    if (fds[0].revents & POLLIN) {
      // Only events for our names matter (not others' files, not our
      // temporary names), and the directory itself going away or changing
      // its mode or owner.
      const Clock::time_point first = Clock::now();
      for (;;) {
        ssize_t got;
        while ((got = ::read(inotify_fd_, buf, sizeof buf)) > 0)
          for (char* p = buf; p < buf + got;) {
            auto* ev = reinterpret_cast<struct inotify_event*>(p);
            p += sizeof(struct inotify_event) + ev->len;
            if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW)) {
              if ((ev->mask & IN_IGNORED) && ev->wd == dir_watch_) dir_watch_ = -1;
              due = true;
            } else if (ev->len == 0 ? (ev->mask & IN_ATTRIB) != 0 : IsOurCdiFileName(ev->name)) {
              // One of our names, or the directory's own mode or owner
              // (the writer's rule again).
              due = true;
            }
          }
        pollfd quiet = {inotify_fd_, POLLIN, 0};
        if (!due || Clock::now() - first >= kMaxDelay || ::poll(&quiet, 1, kQuietMs) <= 0) break;
      }
    }
    if (!due) continue;
    next_pass = Clock::now() + period;
    Sync(watch->View());
  }
}

}  // namespace ocid
