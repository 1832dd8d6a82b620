// `oci-decorator check`: can this node serve a container that asks, and
// if not, why. Pure: inventories, the host (HostView) and NodeFacts in, a
// CheckReport out; rendering is check_render.h, the command check_cmd.h.
//
// Per inventory and feature:
//   - the feature's plan, from the planner's own BuildInventoryPlan (what
//     `cdi generate` and the device plugin use): builds or not, and why;
//   - each entry through BuildInventoryPlan on that entry alone, so every
//     missing required entry is named with the paths tried (not only the
//     first), with the files it found: type, major:minor of devices, mode,
//     owner, and permission problems (a library only its owner can read);
//     optional entries missing are information;
//   - a feature the inventory's "needs_nic" names needs a NIC of its PCI
//     vendors (nic.h, NicsFor: the device plugin's decision and line);
//     without one it cannot serve;
//   - the version lock (version_lock.h, CheckVersions): the loaded module's
//     and the library's versions; a mismatch the inventory enforces fails
//     the features it guards, one it does not enforce and an unknown
//     version warn;
//   - the inventory's conditions (inventory.h HostCondition): met or not,
//     by what, and for each "exists_named_in" file the path it names; a
//     named path that does not exist is a warning (a node that fails every
//     container relying on the condition), with the condition's
//     "description", the vendor's own words on what to do;
//   - each feature's groups (GroupEntry) as the planner reads them: the
//     gid and the clients' mode; a required one is a warning (hook-mode
//     containers must be started with it), one others may use is
//     information;
//   - directory entries with "create_if": missing and the condition met,
//     the directory is created (root, 0755) when a container asks
//     (information); existing and writable by group or others, a warning;
//   - CDI specs of the inventory in /etc/cdi and /var/run/cdi: current
//     (byte for byte what `cdi generate` would write now) or stale;
//     missing_source (a failure) when current but mounting a "create_if"
//     directory that is not there (engines create no CDI mount source, and
//     /run is emptied at boot); unsafe
//     (a failure) when the spec or one of its preload files is not root's
//     or is writable by group or others, or the directory is one root's
//     writer would refuse: the writer's rule over the writer's walk, the
//     links to the directory and its real ancestors (dir_trust.h).
// Per node: the NICs, the cgroup layout, the kernel interfaces, the
// delivery modes set up (hooks.d entries, the runtime shim in docker or
// containerd), and where each mode puts libraries (library_dirs.h). Not set up is information; an
// inventory that no mode delivers (no hooks.d entry, no shim, no current CDI spec) is not ready.
//
// Ready: at least one inventory, none broken, every feature's state not
// FAIL, every inventory delivered. WARN never makes a node not ready.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "host_view.h"
#include "inventory.h"
#include "node_facts.h"
#include "version_lock.h"

namespace ocid {

enum class CheckState { kOk, kInfo, kWarn, kFail };
const char* CheckStateName(CheckState s);  // "ok", "info", "warn", "fail"

struct CheckedFile {
  std::string path, resolved;  // host paths, as the user names them
  FileType type = FileType::kOther;
  uint32_t major = 0, minor = 0;  // devices
  uint32_t mode = 0;              // permission bits
  uint32_t uid = 0, gid = 0;
  std::string problem;  // a permission problem, "" when none
};

struct EntryCheck {
  std::string category;  // "devices", "libraries", ...
  bool optional = false;
  std::string create_if;           // the entry's condition, "" when none
  bool create = false;             // missing; created (root, 0755) when a container asks
  std::vector<std::string> tried;  // the alternatives, as host paths
  CheckState state = CheckState::kOk;
  std::string reason;  // why not OK
  std::vector<CheckedFile> files;
};

struct FeatureCheck {
  std::string name;
  CheckState state = CheckState::kOk;
  std::vector<std::string> reasons;   // why FAIL, one line each
  std::vector<std::string> warnings;  // why WARN: the feature still serves
  bool plan_ok = false;
  size_t mounts = 0, devices = 0;  // in the plan, when it builds
  bool needs_nic = false;          // the inventory's "needs_nic" names it
  std::vector<EntryCheck> entries;
};

struct CdiCheck {
  std::string path;       // host path of the spec
  std::string inventory;  // "" when no loaded inventory has this file name
  std::string state;      // "current", "stale", "missing_source", "unsafe", "unreadable", "orphan"
  std::string reason;
};

// One "exists_named_in" file of a condition.
struct NamedPathCheck {
  std::string file;     // host path, as the user names it
  bool exists = false;  // the file is there
  std::string names;    // the absolute path its first line names, "" when none
  bool names_exists = false;
};

struct ConditionCheck {
  std::string name;
  std::string description;  // the inventory's words, "" when none
  bool met = false;
  std::string by;                  // the path that met it, as the user names it
  std::vector<std::string> tried;  // its "exists" paths, as the user names them
  std::vector<NamedPathCheck> named_in;
  CheckState state = CheckState::kOk;
  std::string why;  // one line
};

// A "groups" entry of a feature, read on the host as the planner reads it.
struct GroupCheck {
  std::string feature;
  std::string gid_file, mode_file;  // host paths as the user names them; mode_file may be ""
  bool gid_known = false;           // the file holds a group id
  uint32_t gid = 0;                 // 0: none
  bool mode_known = false;
  uint32_t mode = 0;  // the clients' mode (mode_file, else default_mode)
  bool required = false;
  CheckState state = CheckState::kOk;
  std::string why;  // one line
};

struct InventoryCheck {
  std::string file;
  std::string activation_flag;
  bool loaded = true;
  std::string error;  // why it is broken
  CheckState state = CheckState::kOk;
  std::vector<std::string> reasons;  // why not ready
  std::vector<FeatureCheck> features;
  std::vector<ConditionCheck> conditions;  // by name
  std::vector<GroupCheck> groups;          // by feature, in the inventory's order
  std::vector<CdiCheck> cdi;
  VersionReport version;  // state kNotConfigured: no version lock
  bool version_enforced = false;
  std::vector<std::string> version_features;  // the features it guards
  CheckState version_state = CheckState::kOk;
  bool delivered = false;  // some delivery mode reaches its containers
};

// Where one delivery mode mounts an inventory's libraries (library_dirs.h).
struct LibraryPlacement {
  std::string mode;         // "hook", "runtime_shim", "cdi", "device_plugin"
  bool image_libc = false;  // true: the one of `dirs` holding the image's libc.so.6;
                            // false: every one of `dirs`
  std::vector<std::string> dirs;
  std::string why;
};

struct CheckReport {
  static constexpr int kSchemaVersion = 1;
  bool ready = false;
  std::vector<std::string> reasons;  // why not ready, one line each
  std::string config_dir, host_root;
  std::vector<InventoryCheck> inventories;
  NodeFacts node;
  bool engine_set_up = false;                  // a hooks.d entry or a shim registration of ours
  std::vector<CdiCheck> orphan_cdi;            // specs of ours no loaded inventory writes
  std::vector<LibraryPlacement> library_dirs;  // one per delivery mode
};

// The report. `host_root` is the host root's path ("/" for the real host),
// as `cdi generate` puts it into specs.
CheckReport BuildCheckReport(const std::string& config_dir, const InventorySet& set,
                             const HostView& host, const std::string& host_root,
                             const NodeFacts& node);

}  // namespace ocid
