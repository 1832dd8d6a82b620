// What of the host a ResourceWatch listens to, and when a burst of changes
// makes it rebuild.
//
// inotify on a directory reports every change to every name in it, and a
// host's /dev changes all the time: each `>/dev/null` closes a written
// file there. Listening to all of it let a busy /dev hold a rebuild back
// forever (issue 20: /dev/onload removed under a 20 Hz write storm was
// never noticed). So only what can change a view counts:
//   - in a directory of device entries (/dev and below): a name an entry
//     can match created, deleted or renamed, or the attributes of such a
//     node changed in a way the view sees (below); writes are not asked
//     for at all;
//   - in a directory of other entries: the same, and a write closed on
//     such a name (a library rewritten in place: its content, which the
//     version lock reads, may have changed);
//   - in the config directory: every change (any file may be an
//     inventory);
//   - anywhere: the directory itself deleted or moved away, or lost events
//     (queue overflow).
// Names are matched as the planner matches them: the last component of a
// source, literally or as a glob (fnmatch, FNM_PERIOD).
//
// Attribute changes (issue 27). IN_ATTRIB also reports a timestamp change,
// and /dev/onload is 0666 on a real host: any local user's `touch` made
// the root plugin rebuild, each rebuild reading libonload.so up to its
// banner. A view uses a few facts of each name it matched, as the planner
// saw them (HostRootView::Match: symlinks followed inside the host root):
// its type, device numbers, permission bits and owner, and which file it
// is (NameFacts). They are recorded at each rebuild, from what that
// rebuild's view used: every read of the rebuild goes through a
// RecordingView, which keeps the facts of every match under the path
// matched and the path it resolves to. An IN_ATTRIB on a watched name
// then counts only when the name, looked up again the planner's way, shows
// other facts than the view used, or cannot be looked up. A timestamp, a
// link count or an extended attribute is nothing a view uses.
//   - A name the view did not match is not relevant on IN_ATTRIB: the view
//     read no attribute of it, and an attribute change cannot make a name
//     appear, go or lead elsewhere (those are IN_CREATE, IN_DELETE,
//     IN_MOVED_*, which always count).
//   - A name matched twice in one rebuild with different facts (changed
//     while the view was built) may be either in the view: any IN_ATTRIB
//     on it counts.
//   - The content of a file is not an attribute: it changes with a write
//     (IN_CLOSE_WRITE, which counts) or a new file (IN_CREATE, IN_MOVED_TO).
// The decision is WatchedDir::Relevant, pure; the lookup is handed to it
// (resource_watch.cc: openat2 inside the host root and fstat).
//
// Relevant events are debounced: a package upgrade touches many files, so
// the rebuild waits until kQuiet has passed without one, but never longer
// than kMaxDelay after the first: a steady stream of relevant events
// delays a rebuild by at most kMaxDelay, never indefinitely.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "host_view.h"
#include "inventory.h"

namespace ocid {

// What a view uses of one host name: the fields of its HostMatch that a
// plan carries (the file the name leads to, symlinks followed).
struct NameFacts {
  FileType type = FileType::kOther;
  uint64_t rdev = 0;          // a device's numbers
  uint32_t mode = 0;          // st_mode: type and permission bits
  uint32_t uid = 0, gid = 0;  // owner
  uint64_t dev = 0, ino = 0;  // which file
  bool operator==(const NameFacts& o) const {
    return type == o.type && rdev == o.rdev && mode == o.mode && uid == o.uid && gid == o.gid &&
           dev == o.dev && ino == o.ino;
  }
  bool operator!=(const NameFacts& o) const { return !(*this == o); }
};
NameFacts FactsOf(const HostMatch& m);

// What a view used of one name; `mixed` when one rebuild matched it twice
// with different facts.
struct UsedFacts {
  NameFacts facts;
  bool mixed = false;
};
// By path within the host root ("/dev/onload").
using ViewFacts = std::map<std::string, UsedFacts>;

// Looks `path` (within the host root) up now, the planner's way; false when
// it cannot be (gone, a dangling link, an error).
using LookupFacts = std::function<bool(const std::string& path, NameFacts* out)>;

struct WatchedDir {
  uint32_t mask = 0;              // for inotify_add_watch
  bool any_name = false;          // the config directory
  std::string host_dir;           // the directory within the host root ("/dev"); "" for config
  std::set<std::string> devices;  // leaf names or globs of device entries
  std::set<std::string> files;    // leaf names or globs of other entries
  // Whether an event (its inotify mask and name, "" for none) on this
  // directory can change a view that used `used`. `now` is asked only for
  // an IN_ATTRIB on a watched name the view used.
  bool Relevant(uint32_t event_mask, const std::string& name, const ViewFacts& used,
                const LookupFacts& now) const;
  // The path within the host root of `name` here.
  std::string PathOf(const std::string& name) const;
};

// The directories to watch, by path under the host root (and the config
// directory as it is given), with what counts in each.
std::map<std::string, WatchedDir> PlanWatches(const InventorySet& set, const std::string& host_root,
                                              const std::string& config_dir);

// A HostView that forwards every read to `host` and records what each
// Match found (the facts a view uses), for WatchedDir::Relevant. Every
// virtual of HostView is forwarded (one added there must be here too, or
// a view built through this one would get HostView's ENOTSUP default).
class RecordingView : public HostView {
 public:
  explicit RecordingView(const HostView& host) : host_(host) {}
  bool Match(const std::string& pattern, std::vector<HostMatch>* out, Error* err) const override;
  std::string Display(const std::string& path) const override { return host_.Display(path); }
  std::string Resolve(const std::string& path) const override { return host_.Resolve(path); }
  bool ReadChunks(const std::string& path, size_t limit, const ChunkSink& sink,
                  Error* err) const override {
    return host_.ReadChunks(path, limit, sink, err);
  }
  HostRead Read(const std::string& path, size_t limit, std::string* out,
                Error* err) const override {
    return host_.Read(path, limit, out, err);
  }
  HostRead ReadLink(const std::string& path, std::string* out, Error* err) const override {
    return host_.ReadLink(path, out, err);
  }
  HostRead List(const std::string& dir, std::vector<std::string>* names,
                Error* err) const override {
    return host_.List(dir, names, err);
  }
  HostRead Identity(const std::string& path, FileIdentity* out, Error* err) const override {
    return host_.Identity(path, out, err);
  }
  HostRead Owner(const std::string& path, FileOwner* out, Error* err) const override {
    return host_.Owner(path, out, err);
  }
  bool Exists(const std::string& path) const override { return host_.Exists(path); }
  // What the reads so far used.
  const ViewFacts& used() const { return used_; }

 private:
  void Record(const std::string& path, const NameFacts& facts) const;
  const HostView& host_;
  mutable ViewFacts used_;
};

class Debounce {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kQuiet{100};
  static constexpr std::chrono::milliseconds kMaxDelay{200};

  // A relevant event at `now`.
  void Event(Clock::time_point now);
  bool pending() const { return pending_; }
  // When to rebuild: kQuiet after the last event, at most kMaxDelay after
  // the first. Only meaningful while pending().
  Clock::time_point Due() const;
  void Clear() { pending_ = false; }

 private:
  bool pending_ = false;
  Clock::time_point first_{}, last_{};
};

}  // namespace ocid
