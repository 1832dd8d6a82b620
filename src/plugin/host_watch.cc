#include "host_watch.h"

#include <fnmatch.h>
#include <sys/inotify.h>

#include <algorithm>

#include "delivery.h"

namespace ocid {
namespace {

// The directory itself gone, or events lost: always worth a rebuild.
constexpr uint32_t kAlways = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW;
constexpr uint32_t kNames = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB;
constexpr uint32_t kSelf = IN_DELETE_SELF | IN_MOVE_SELF;

void Split(const std::string& path, std::string* dir, std::string* leaf) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    *dir = "/";
    *leaf = path;
    return;
  }
  *dir = slash == 0 ? "/" : path.substr(0, slash);
  *leaf = path.substr(slash + 1);
}

bool Matches(const std::set<std::string>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    return p == name || ::fnmatch(p.c_str(), name.c_str(), FNM_PERIOD) == 0;
  });
}

}  // namespace

NameFacts FactsOf(const HostMatch& m) {
  NameFacts f;
  f.type = m.type;
  f.rdev = m.rdev;
  f.mode = m.mode;
  f.uid = m.uid;
  f.gid = m.gid;
  f.dev = m.dev;
  f.ino = m.ino;
  return f;
}

bool WatchedDir::Relevant(uint32_t event_mask, const std::string& name, const ViewFacts& used,
                          const LookupFacts& now) const {
  if (event_mask & kAlways) return true;
  if (any_name) return true;
  if (name.empty()) return false;
  bool file = Matches(files, name);
  bool watched = file || Matches(devices, name);
  if (!watched) return false;
  if (event_mask & (kNames & ~IN_ATTRIB)) return true;  // created, deleted, renamed
  if ((event_mask & IN_CLOSE_WRITE) && file) return true;
  if (!(event_mask & IN_ATTRIB)) return false;
  // An attribute change: does the view use something that changed?
  auto it = used.find(PathOf(name));
  if (it == used.end()) return false;  // the view read no attribute of it
  if (it->second.mixed) return true;
  NameFacts facts;
  return !now(it->first, &facts) || facts != it->second.facts;
}

std::string WatchedDir::PathOf(const std::string& name) const {
  return (host_dir == "/" ? "" : host_dir) + "/" + name;
}

bool RecordingView::Match(const std::string& pattern, std::vector<HostMatch>* out,
                          Error* err) const {
  if (!host_.Match(pattern, out, err)) return false;
  for (const HostMatch& m : *out) {
    NameFacts facts = FactsOf(m);
    Record(m.path, facts);
    // A chmod through a symlink is reported on the name of the file it
    // leads to.
    if (!m.resolved.empty() && m.resolved != m.path) Record(m.resolved, facts);
  }
  return true;
}

void RecordingView::Record(const std::string& path, const NameFacts& facts) const {
  auto [it, first] = used_.emplace(path, UsedFacts{facts, false});
  if (!first && it->second.facts != facts) it->second.mixed = true;
}

std::map<std::string, WatchedDir> PlanWatches(const InventorySet& set, const std::string& host_root,
                                              const std::string& config_dir) {
  std::map<std::string, WatchedDir> dirs;
  for (const Inventory& inv : set.inventories)
    for (const Feature& f : inv.features)
      for (const InventoryEntry& e : f.entries)
        for (const std::string& s : e.sources) {
          bool device = e.kind == EntryKind::kDevice;
          std::string dir, leaf;
          Split(device ? "/dev/" + s : s, &dir, &leaf);
          if (leaf.empty()) continue;
          WatchedDir& w = dirs[UnderRoot(host_root, dir)];
          w.host_dir = dir;
          w.mask |= kNames | kSelf;
          if (device) {
            w.devices.insert(leaf);
          } else {
            w.files.insert(leaf);
            w.mask |= IN_CLOSE_WRITE;
          }
        }
  WatchedDir& conf = dirs[config_dir];
  conf.any_name = true;
  conf.mask |= kNames | kSelf | IN_CLOSE_WRITE;
  return dirs;
}

void Debounce::Event(Clock::time_point now) {
  if (!pending_) first_ = now;
  pending_ = true;
  last_ = now;
}

Debounce::Clock::time_point Debounce::Due() const {
  return std::min(last_ + kQuiet, first_ + kMaxDelay);
}

}  // namespace ocid
