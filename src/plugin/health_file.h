// The Kubernetes mode's liveness file (--health-file) and the verdict the
// `probe` subcommand (probe_cmd.h) gives on it, for a DaemonSet's exec
// probes.
//
// The main loop rewrites the file (atomically: atomic_file.h) every
// kHealthEvery and whenever its counts change, so a fresh file means the
// loop is running. One small JSON object:
//   {"time": <unix seconds>, "pid": <pid>, "kubelet_dir": true|false,
//    "kubelet": true|false, "resources": N, "served": N, "registered": N,
//    "healthy": N, "unregistered": ["amd.com/zf", ...], "why_none": "..."}
// resources: those of the view with a Kubernetes name; served: those with a
// socket up; registered: those the current kubelet accepted; kubelet_dir:
// the directory is there and this instance owns it; kubelet: kubelet.sock
// is there; why_none: when resources is 0, why (the inventories refused,
// with the refusal's line; none in the directory; ...).
//
// `probe` says fresh (exit 0) when the file was written at most --max-age
// seconds ago; with --ready, also when the kubelet directory is owned, there
// is at least one resource, and every resource is registered: a plugin that
// serves nothing is not ready (its inventories were refused, or there are
// none: a DaemonSet must show that, not hide it), and the line says why.
// Anything else: exit 1 and one line saying why. With no file at all, the
// line says why the plugin could not write one where the writer's rule
// refuses its directory (atomic_file.h, WriteDirRefusal).
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "error.h"

namespace ocid {

constexpr std::chrono::seconds kHealthEvery{5};
constexpr int kDefaultProbeMaxAge = 30;
// Far more than HealthText writes for any node: a larger file is not ours.
constexpr size_t kMaxHealthBytes = size_t{64} * 1024;

struct HealthState {
  int64_t time = 0;  // unix seconds
  int64_t pid = 0;
  bool kubelet_dir = false;
  bool kubelet = false;
  int resources = 0, served = 0, registered = 0, healthy = 0;
  std::vector<std::string> unregistered;
  std::string why_none;  // when resources == 0

  // Everything but the time: a change is worth writing at once.
  bool SameCounts(const HealthState& o) const;
};

std::string HealthText(const HealthState& s);
// Parses HealthText's output; false with *why on anything else.
bool ParseHealth(const std::string& text, HealthState* out, std::string* why);

// The verdict on a parsed state at `now` (unix seconds): "" when the probe
// passes, else why not (one line).
std::string ProbeVerdict(const HealthState& s, int64_t now, int max_age, bool ready);

bool WriteHealthFile(const std::string& path, const HealthState& s, Error* err);

}  // namespace ocid
