// The Plan: everything the hook will do to one container, decided before
// anything is done. Pure data, printable as JSON (plan_json.h), carried out
// by the executors (mounter, device cgroup, preload).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "device_rule.h"
#include "env_profile.h"
#include "host_view.h"
#include "library_dirs.h"
#include "preload.h"

namespace ocid {

struct MountOp {
  FileType type = FileType::kRegular;  // what the source is
  std::string source;                  // host path as matched (within --host-root)
  std::string resolved;                // host path after symlinks (within --host-root)
  std::string target;                  // absolute path inside the container
  bool readonly = true;
  bool nosuid = true;
  bool nodev = true;          // false for device nodes
  uint64_t rdev = 0;          // devices only
  uint32_t mode = 0;          // st_mode of the source (a device's fileMode in config.json)
  uint32_t uid = 0, gid = 0;  // owner of the source (`check` reports it)
  uint64_t dev = 0, ino = 0;  // identity of the planned source
  std::string inventory;      // provenance: file and feature
  std::string feature;
  bool library = false;  // a library mounted by name into a library directory
  // A directory missing on the host whose entry's condition is met
  // ("create_if"): the executor creates it (root, 0755) before it mounts it,
  // and fills in its identity (host_dirs.h). Until then dev, ino are 0.
  bool create = false;
};

// A supplementary group a feature names ("groups", inventory.h), as read on
// the host.
struct GroupOp {
  uint32_t gid = 0;         // host group id (from gid_file), never 0
  uint32_t mode = 0;        // the clients' mode (mode_file, else default_mode)
  bool mode_known = false;  // false: neither gave one
  bool required = false;    // mode unknown, or it gives others nothing
  bool present = false;     // the container's process already has it (hook, shim)
  std::string gid_file;     // host paths, as the inventory names them
  std::string mode_file;
  std::string inventory;  // provenance: the first file and feature naming it
  std::string feature;
};

struct ActivatedInventory {
  std::string file;
  std::string activation_flag;
  std::vector<std::string> features;
  std::string requested_by;  // "env OCI_ONLOAD=all"
  std::string profile;       // the environment profile selected, "" = none
  std::string profile_by;    // "env OCI_ONLOAD_PROFILE=latency"
};

struct Plan {
  std::string container_id;
  int pid = 0;
  std::string rootfs;  // absolute host path
  std::vector<ActivatedInventory> activated;
  // Where libraries go (library_dirs.h): each library entry without a
  // "target" or "target_dir" is mounted by name into every one of them.
  LibraryDirs library_dirs;
  std::vector<MountOp> mounts;           // parents before children
  std::vector<DeviceRule> device_rules;  // one per device mount
  // The device rules the runtime itself enforces (config.json's, then its
  // defaults): a cgroup v2 device program replacing the runtime's must keep
  // them. Set when device_rules is not empty.
  std::vector<DeviceRule> container_device_rules;
  std::vector<std::string> preload;  // absolute container paths
  std::vector<GroupOp> groups;       // merged by gid, in the order first named
  // The conditions (inventory.h) of the activated inventories that are met
  // on the host, by name, sorted and unique.
  std::vector<std::string> met_conditions;
  // The selected profiles' variables (env_profile.h), to set where the
  // delivery mode can: the container's own value of a variable wins in the
  // runtime shim; hook mode cannot set any (HookModeWarnings).
  EnvList env;
  HostCredentials process;            // who the image's preload is read for
  std::vector<std::string> skipped;   // optional entries not found
  std::vector<std::string> ignored;   // requests an activation policy ignores
  std::vector<std::string> warnings;  // one line each: version lock not checked, or
                                      // a mismatch allowed ("enforce": false); what
                                      // the container asked for and will not get

  bool Active() const { return !activated.empty(); }
};

}  // namespace ocid
