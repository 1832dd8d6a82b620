// The runtime shim's executor: carries a Plan out by editing the bundle's
// config.json before the runtime reads it, so the runtime itself makes the
// mounts, creates the device nodes and allows them in the device cgroup. The
// rules then belong to the runtime: `runc update` and systemd re-apply them
// instead of wiping them (the known limit of hook mode).
//
// What is added:
//   mounts                    one read-only bind per file or directory of the
//                             plan: {"destination": target, "type": "bind",
//                             "source": <host root><resolved host path>,
//                             "options": ["bind","ro","nosuid","nodev"]}
//   linux.devices             one entry per device node, with the host node's
//                             type, major:minor and permission bits, uid/gid 0
//   linux.resources.devices   {"allow": true, type, major, minor, "rwm"}
//   process.env               LD_PRELOAD: the preload list appended to the
//                             container's own value (space separated), or set;
//                             the profile's variables (Plan::env), except those
//                             the container sets itself: its own value wins
//   process.user.additionalGids
//                             each required group the process lacks
//                             (GroupOp::required && !present), appended once,
//                             not when it is process.user.gid; the array is
//                             created when absent. With a user namespace the
//                             gid is the container's through linux.gidMappings;
//                             a group no mapping covers is not added, with a
//                             warning (not a refusal: the container may never
//                             use what needs it)
//
// Everything else is kept as it was, key order included. Editing twice adds
// nothing the second time. A path the container already mounts (or lists as
// a device) with a different source is an error naming it: the shim never
// shadows what the engine or the user asked for.
//
// The rootfs is never looked at: runc resolves mount destinations inside it
// safely (securejoin) and creates the device nodes itself.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "error.h"
#include "plan.h"

namespace ocid {

// What an edit left out or added, for the shim's log.
struct SpecEditNotes {
  // Profile variables left alone because the container sets them itself.
  std::vector<std::string> kept_env;
  // Container gids this edit appended to process.user.additionalGids.
  std::vector<uint32_t> added_gids;
  // One line per required group the container's user namespace does not map.
  std::vector<std::string> warnings;
};

// `host_root_path` is the absolute host root the plan's paths are relative
// to ("/" or, for a simulated install, its directory), as resolved by
// HostRootView. `config_json` holds config.json on entry and the edited
// config.json on success; on failure it is left unchanged. `notes`, when
// given, receives what the edit left out or added.
bool EditSpec(const Plan& plan, const std::string& host_root_path, std::string* config_json,
              Error* err, SpecEditNotes* notes = nullptr);

}  // namespace ocid
