// Keeps the cluster view (core cluster.h) current for a long-running
// device plugin: rebuilt when an inventory file or a watched host path
// changes (inotify on the config directory, /dev and the directories of
// the inventories' host entries), and on a slow periodic re-check as a
// backstop for what inotify cannot see (a bind mount, a sysfs change).
//
// Both plugin modes read the view from here; neither plans on its own.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "cluster.h"
#include "error.h"
#include "plugin_options.h"

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
  // different view: resources, health or deliveries).
  ClusterView View(uint64_t* generation = nullptr) const;
  // Blocks until the generation is not `seen`, `timeout` passes, or Stop();
  // returns the generation then current.
  uint64_t WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) const;
  // Rebuilds now (tests, SIGHUP).
  void Recheck();

 private:
  void Loop();
  void Rebuild();

  PluginOptions opts_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  ClusterView view_;
  std::string digest_;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop() and Recheck() wake the loop
  std::map<std::string, int> watches_;  // directory -> inotify watch (loop thread only)
  std::thread thread_;
};

}  // namespace ocid
