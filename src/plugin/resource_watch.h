// Keeps the cluster view (core cluster.h) current for a long-running
// device plugin: rebuilt when an inventory file or a watched host path
// changes (inotify on the config directory and the directories of the
// inventories' host entries, filtered to the names that matter: host_watch.h),
// and on a slow periodic re-check as a backstop for what inotify cannot see
// (a bind mount, a sysfs change). The re-check is a deadline on the steady
// clock: no stream of events can push it back.
//
// Both plugin modes read the view from here; neither plans on its own.
// With a CDI directory (PluginOptions::cdi_dir) the view also carries the
// CDI specs, built from the same inventories and host in the same rebuild;
// the CDI keeper (cdi_dir_keeper.h) only writes what it reads here.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "error.h"
#include "host_watch.h"
#include "plugin_options.h"
#include "unique_fd.h"

namespace ocid {

class ResourceWatch {
 public:
  explicit ResourceWatch(const PluginOptions& opts);
  ~ResourceWatch();
  ResourceWatch(const ResourceWatch&) = delete;
  ResourceWatch& operator=(const ResourceWatch&) = delete;

  // Builds the first view and starts watching (one thread). Fails only when
  // the host root cannot be opened or inotify cannot start.
  bool Start(Error* err);
  void Stop();

  // The current view and its generation (bumped whenever a rebuild gives a
  // different view: resources, health, deliveries or CDI specs).
  ClusterView View(uint64_t* generation = nullptr) const;
  // Blocks until the generation is not `seen`, `timeout` passes, or Stop();
  // returns the generation then current.
  uint64_t WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) const;
  // Rebuilds now (tests, SIGHUP).
  void Recheck();

  // The generation, and how many Recheck() calls a rebuild has honoured:
  // what keeps something derived from the view on disk (the CDI keeper)
  // looks again after a SIGHUP even when the view did not change, and
  // ListAndWatch, which waits on the generation alone, is not woken.
  struct Mark {
    uint64_t generation = 0;
    uint64_t rechecks = 0;
    bool operator==(const Mark& o) const {
      return generation == o.generation && rechecks == o.rechecks;
    }
  };
  Mark CurrentMark() const;
  // Blocks until the mark is not `seen`, `timeout` passes, or Stop();
  // returns the mark then current.
  Mark WaitForMark(Mark seen, std::chrono::milliseconds timeout) const;

  // How many rebuilds have run, the first included, whether or not the
  // view changed: what a rebuild costs (it reads every inventory, plans
  // every resource, reads the version lock's library) is paid each time.
  // Each is also one debug line, "rebuilding the view (#N): <why>".
  uint64_t Rebuilds() const;

 private:
  void Loop();
  void Rebuild(const std::string& why);
  // Reads what inotify has; true when an event can change the view, with
  // the first such event in *why.
  bool DrainEvents(std::string* why);
  // The watched directory of `wd` and `name` in it, for a log line.
  std::string EventPath(int wd, const std::string& name) const;
  // `path` (within the host root) looked up now, as the planner looks it
  // up: the executor of WatchedDir::Relevant's lookup.
  bool FactsNow(const std::string& path, NameFacts* out) const;
  // With PluginOptions::create_planned_dirs: the directories the view's
  // resources' plans create, under the host root `root_fd` (host_dirs.h);
  // each made is one info line, a failure one warning until it changes.
  void CreateDirectories(int root_fd, const ClusterView& view);

  PluginOptions opts_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  ClusterView view_;
  std::string digest_;
  uint64_t generation_ = 0;
  uint64_t recheck_asked_ = 0;  // Recheck() calls
  uint64_t rechecked_ = 0;      // of those, how many a finished rebuild covers
  uint64_t rebuilds_ = 0;
  bool stopping_ = false;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop() and Recheck() wake the loop
  // Loop thread only: directory -> inotify watch, and what counts there.
  std::map<std::string, int> watches_;
  std::map<int, std::vector<WatchedDir>> filters_;  // one per path of the directory
  // Loop thread only: what the current view used of each name it matched,
  // and the host root it was matched in (host_watch.h).
  ViewFacts used_;
  UniqueFd host_root_;
  std::string create_error_;  // Loop thread only: the last CreateDirectories failure logged
  std::thread thread_;
};

}  // namespace ocid
