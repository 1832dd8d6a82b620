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
//     node changed (chmod, chown); writes are not asked for at all;
//   - in a directory of other entries: the same, and a write closed on
//     such a name (a library rewritten in place);
//   - in the config directory: every change (any file may be an
//     inventory);
//   - anywhere: the directory itself deleted or moved away, or lost events
//     (queue overflow).
// Names are matched as the planner matches them: the last component of a
// source, literally or as a glob (fnmatch, FNM_PERIOD).
//
// Relevant events are debounced: a package upgrade touches many files, so
// the rebuild waits until kQuiet has passed without one, but never longer
// than kMaxDelay after the first: a steady stream of relevant events
// delays a rebuild by at most kMaxDelay, never indefinitely.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "inventory.h"

namespace ocid {

struct WatchedDir {
  uint32_t mask = 0;              // for inotify_add_watch
  bool any_name = false;          // the config directory
  std::set<std::string> devices;  // leaf names or globs of device entries
  std::set<std::string> files;    // leaf names or globs of other entries
  // Whether an event (its inotify mask and name, "" for none) on this
  // directory can change a view.
  bool Relevant(uint32_t event_mask, const std::string& name) const;
};

// The directories to watch, by path under the host root (and the config
// directory as it is given), with what counts in each.
std::map<std::string, WatchedDir> PlanWatches(const InventorySet& set, const std::string& host_root,
                                              const std::string& config_dir);

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
