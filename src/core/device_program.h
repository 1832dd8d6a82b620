// Device rules -> a cgroup v2 device program (BPF_PROG_TYPE_CGROUP_DEVICE).
// Pure: no I/O; device_cgroup_v2 loads and attaches what this builds.
//
// On a unified hierarchy the kernel runs every device program attached to a
// cgroup (and its ancestors) on each open/mknod of a device node, and allows
// the access only if all of them return 1. A second program can therefore
// never widen access: the hook replaces the runtime's program with one that
// enforces the runtime's rules plus ours (RuncDeviceRules + the plan's).
//
// Semantics of a rule list (the same list the runtime builds from
// config.json):
//   - the LAST rule that matches an access decides; nothing matches: deny;
//   - type 'a' matches every device and every access, whatever its
//     major/minor/access fields say (as cgroup v1 and runc treat it);
//   - an allow rule matches when the requested access is a subset of its
//     access; a deny rule matches when they share any access. (A deny of "w"
//     therefore also denies an O_RDWR open. A plain subset test there would
//     let "deny w" after "allow rwm" pass an O_RDWR open, wider than runc.)
//
// The program: a prologue loads the context
//   struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32 minor; }
// into r2 = device type (access_type & 0xffff), r3 = access (access_type >>
// 16), r4 = major, r5 = minor; then one block per rule, last rule first:
//   if r2 != TYPE goto next            (not for 'a')
//   w1 = w3; w1 &= ACCESS;             (not when the rule's access is rwm)
//     allow: if r1 != r3 goto next     (requested access not a subset)
//     deny:  if r1 == 0 goto next      (no access in common)
//   if r4 != MAJOR goto next           (not for a wildcard major)
//   if r5 != MINOR goto next           (not for a wildcard minor)
//   r0 = ALLOW; exit
// and finally r0 = 0; exit. A block of type 'a' is unconditional: emission
// stops there (the verifier refuses unreachable instructions, and no earlier
// rule could decide anything).
#pragma once
#include <linux/bpf.h>

#include <string>
#include <vector>

#include "device_rule.h"

namespace ocid {

// The license string the program is loaded with.
constexpr const char* kDeviceProgramLicense = "Apache";

// One of runc 1.1's default devices (libcontainer/specconv AllowedDevices):
// a rule runc appends after config.json's linux.resources.devices, and the
// node path it belongs to ("" for rules without a node).
struct RuntimeDefaultDevice {
  const char* path;
  DeviceRule rule;
};
const std::vector<RuntimeDefaultDevice>& RuncDefaultDevices();

// The rules runc 1.1 enforces for a container: config.json's
// linux.resources.devices in order, then its default devices, except a
// default whose path one of linux.devices also has (runc drops those).
// linux.devices entries themselves get no rule: runc 1.1 does not allow them
// in the device cgroup (a config must list them in linux.resources.devices).
std::vector<DeviceRule> RuncDeviceRules(const std::vector<DeviceRule>& resources,
                                        const std::vector<std::string>& linux_device_paths);

// The program enforcing `rules` (see the header comment).
std::vector<bpf_insn> DeviceProgram(const std::vector<DeviceRule>& rules);

}  // namespace ocid
