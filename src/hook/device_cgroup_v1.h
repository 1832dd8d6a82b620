// Executor for the cgroup v1 devices controller: allow the planned devices in
// the container's devices cgroup, then re-read devices.list to verify, and
// take back what was added if a later step fails.
#pragma once
#include <string>
#include <vector>

#include "device_rule.h"
#include "error.h"
#include "unique_fd.h"

namespace ocid {

class DeviceCgroupV1 {
 public:
  // Opens the container's devices cgroup directory (found by
  // LocateDeviceCgroup, device_cgroup.h).
  static bool Open(const std::string& path, DeviceCgroupV1* out, Error* err);

  // Allows each rule not already allowed, then verifies all are allowed.
  bool Allow(const std::vector<DeviceRule>& rules, Error* err);
  // Denies again what Allow added (rollback). Best effort.
  void Undo();

  const std::string& path() const { return path_; }

 private:
  bool ReadList(std::vector<DeviceRule>* list, Error* err) const;
  UniqueFd dir_;
  std::string path_;
  std::vector<DeviceRule> added_;
};

}  // namespace ocid
