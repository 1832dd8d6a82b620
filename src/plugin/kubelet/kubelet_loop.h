// The Kubernetes mode's main loop (kubernetes_cmd.h is the command): the
// kubelet device plugin API v1beta1 (proto/deviceplugin/v1beta1/api.proto),
// one resource per feature (kubelet_allocate.h has the protocol decisions).
#pragma once
#include <chrono>
#include <vector>

#include "plugin_options.h"

namespace ocid {

// Serves until SIGTERM or SIGINT; returns the exit code. opts.cdi_dir is
// the directory the CDI keeper writes, and the view's resources name their
// specs there.
int RunKubeletLoop(const PluginOptions& opts, const KubernetesOptions& k8s);

// What the main loop may wait for, to decide how long it sleeps in poll().
// Only deadlines it can act on count: a registration is not due while
// kubelet.sock is missing (inotify on the directory wakes the loop when it
// comes) or while an attempt is running (its end wakes the loop).
struct LoopWait {
  using Clock = std::chrono::steady_clock;
  struct Resource {
    bool serving = false;  // its socket is up
    bool registered = false;
    bool attempting = false;           // a Register call is running
    Clock::time_point next_start{};    // when a failed server may start again
    Clock::time_point next_attempt{};  // when a failed Register may run again
  };
  bool dir_watched = false;
  bool kubelet_present = false;
  std::vector<Resource> resources;
  Clock::time_point health_due = Clock::time_point::max();
};
// Milliseconds for poll(): rounded up, at most a minute, -1 for nothing.
int PollTimeoutMs(const LoopWait& w, LoopWait::Clock::time_point now);

}  // namespace ocid
