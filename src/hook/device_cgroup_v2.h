// Executor for cgroup v2 device programs: load the program device_program
// builds, replace the container's device program with it atomically, verify,
// and put the old one back if a later step fails. Every bpf() call of the
// hook lives in this module.
//
// Strategy by the number of device programs attached to the container's own
// cgroup (BPF_PROG_QUERY, attach type BPF_CGROUP_DEVICE):
//   0  nothing restricts device access (e.g. a privileged container): attach
//      nothing and succeed;
//   1  (runc attaches exactly one, with BPF_F_ALLOW_MULTI) load ours and
//      attach it with BPF_F_ALLOW_MULTI | BPF_F_REPLACE in place of the old
//      one: at no moment are both or neither in force;
//   2+ refuse, fail closed. The kernel allows an access only if every
//      attached program does, so adding ours cannot help, and replacing one
//      of them cannot either while the others still deny the devices;
//      detaching the others would drop restrictions someone else put there.
//      Which program is whose is unknowable from here.
// Programs attached to ancestor cgroups also apply and are left alone: they
// can only deny more.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "device_rule.h"
#include "error.h"
#include "unique_fd.h"

namespace ocid {

class DeviceCgroupV2 {
 public:
  // Opens the cgroup directory at `path`, an absolute path of a directory on
  // a cgroup2 file system in the current mount namespace.
  static bool Open(const std::string& path, DeviceCgroupV2* out, Error* err);

  // Replaces the cgroup's device program with one enforcing `rules` (see the
  // strategy above), then checks that ours is attached and the old one gone.
  bool Replace(const std::vector<DeviceRule>& rules, Error* err);
  // Puts the old program back in place of ours (rollback). Best effort.
  void Undo();

  const std::string& path() const { return path_; }

 private:
  bool Verify(Error* err);

  UniqueFd dir_;
  std::string path_;
  UniqueFd old_prog_;
  UniqueFd new_prog_;
  uint32_t old_id_ = 0;
  bool attached_ = false;
};

}  // namespace ocid
