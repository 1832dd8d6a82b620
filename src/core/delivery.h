// What a container receives from a plan when an engine, not the hook,
// applies it: CDI containerEdits, a kubelet Allocate response, a Nomad
// reservation. One rendering for all of them, so the three cannot drift.
//
// Host paths are named as the host names them: `host_path_root` ("/" for
// the real host) prefixes each resolved host path, as in a CDI spec. A
// device plugin that looks at the host through a mount (say /host in a
// DaemonSet) plans under that mount and hands out paths under "/".
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "device_rule.h"
#include "error.h"
#include "plan.h"

namespace ocid {

struct DeliveredMount {
  std::string host_path;  // resolved host file or directory
  std::string container_path;
  bool read_only = true;
};

struct DeliveredDevice {
  std::string host_path;  // the host's device node (resolved)
  std::string container_path;
  char type = 'c';  // 'c' or 'b'
  uint32_t major = 0, minor = 0;
  uint32_t file_mode = 0;                          // the host node's permission bits
  std::string permissions = kGrantedDeviceAccess;  // cgroup access (device_rule.h)
};

struct Delivery {
  std::vector<DeliveredDevice> devices;
  std::vector<DeliveredMount> mounts;                    // parents before children
  std::vector<std::pair<std::string, std::string>> env;  // LD_PRELOAD, profile
  // The plan's required groups (GroupOp::required), host gids, sorted and
  // unique: what the process must also be a member of.
  std::vector<uint32_t> additional_gids;
};

// "/host" + "/usr/lib" -> "/host/usr/lib"; "/" leaves the path alone.
std::string UnderRoot(const std::string& root, const std::string& path);

// Renders `plan`. Fails on a preload path LD_PRELOAD cannot carry (a space
// or ':'), naming it.
bool DeliveryOf(const Plan& plan, const std::string& host_path_root, Delivery* out, Error* err);

}  // namespace ocid
