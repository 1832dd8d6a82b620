// Device cgroup dispatch: which mechanism enforces the container's devices,
// decided per container, and one executor for either.
//
//   v1  /proc/<pid>/cgroup has a "devices" line and a v1 devices hierarchy
//       is visible in our mount table (hybrid hosts, where cgroup2 sits at
//       /sys/fs/cgroup/unified, are v1 for devices): DeviceCgroupV1;
//   v2  otherwise, with a "0::" line and a visible cgroup2 mount:
//       DeviceCgroupV2. A "devices" line alone does not make v1: the kernel
//       lists every v1 hierarchy that exists, mounted where we can see it or
//       not (e.g. cgroup2 mounted over /sys/fs/cgroup in a private mount
//       namespace, the way runc runs on pure v2 on hybrid machines).
//   else a clear error.
// "Visible" means not covered by a later mount on the same or a parent path.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "device_cgroup_v1.h"
#include "device_cgroup_v2.h"
#include "device_rule.h"
#include "error.h"

namespace ocid {

enum class CgroupMode { kV1, kV2 };

struct DeviceCgroupLocation {
  CgroupMode mode = CgroupMode::kV1;
  std::string path;  // the container's cgroup directory in the devices (v1) or unified (v2) tree
};

// Pure: decides from the container's /proc/<pid>/cgroup and our mountinfo.
bool LocateDeviceCgroup(std::string_view proc_pid_cgroup, std::string_view mountinfo,
                        DeviceCgroupLocation* out, Error* err);

class DeviceCgroup {
 public:
  // Reads /proc/<pid>/cgroup through proc_pid_fd and our mountinfo, and opens
  // the backend. Must run in the host mount namespace.
  static bool Open(int proc_pid_fd, DeviceCgroup* out, Error* err);

  // v1: allows `ours` in the container's devices cgroup. v2: replaces the
  // container's device program with one enforcing `container` (the rules the
  // runtime enforces) followed by `ours`.
  bool Allow(const std::vector<DeviceRule>& container, const std::vector<DeviceRule>& ours,
             Error* err);
  // Takes back what Allow did (rollback). Best effort.
  void Undo();

  CgroupMode mode() const { return mode_; }

 private:
  CgroupMode mode_ = CgroupMode::kV1;
  DeviceCgroupV1 v1_;
  DeviceCgroupV2 v2_;
};

}  // namespace ocid
