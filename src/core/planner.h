// Decide: (state, config.json, inventories, host facts) -> Plan. No side
// effects; the only I/O is through the HostView, so tests can hand it a tree
// of their own and the `plan` command needs no root.
//
// Targets: an entry's "target", or "target_dir" plus the file's name, or
// else its host path; except a "libraries" entry that is a file and names
// neither: each file it matches is mounted by name into every library
// directory (PlanInputs::libraries, library_dirs.h), where the image's
// loader looks, whatever layout the host has.
#pragma once
#include <string>
#include <vector>

#include "bundle_config.h"
#include "error.h"
#include "host_view.h"
#include "inventory.h"
#include "library_dirs.h"
#include "oci_state.h"
#include "plan.h"
#include "version_lock.h"

namespace ocid {

struct PlanInputs {
  const OciState* state = nullptr;
  const BundleConfig* config = nullptr;
  const InventorySet* inventories = nullptr;
  const HostView* host = nullptr;
  // Where the image's loader finds libraries: the caller's probe of the
  // image (library_dirs.h), or the answer for every image.
  LibraryDirs libraries = UnseenLibraryDirs();
};

// process.user's uid, gid and additional gids as host ids, through the id
// mappings (the identity without a user namespace).
HostCredentials ProcessOnHost(const BundleConfig& cfg);

// On error, `err` names what was wrong and where (inventory file, path).
// An inventory the container did not ask for can never cause an error.
bool BuildPlan(const PlanInputs& in, Plan* out, Error* err);

// The plan for `features` of one inventory, for no container in particular
// (what a CDI device carries): the same entries, alternatives, globs, merges
// and device rules as BuildPlan, without activation or config.json (so no
// container_device_rules). Fails on a feature the inventory does not have.
// `versions`: the version lock of `inv` as the caller read it on `host`
// (CheckVersions), for a caller planning many feature sets of one inventory
// (the device plugin's view and its CDI specs), so the library is read once,
// not once per plan; null reads it here, when the features are guarded.
// `libraries`: where libraries go; such a plan is for every image, so by
// default both standard directories.
bool BuildInventoryPlan(const Inventory& inv, const std::vector<std::string>& features,
                        const HostView& host, Plan* out, Error* err,
                        const VersionReport* versions = nullptr,
                        const LibraryDirs& libraries = UnseenLibraryDirs());

// What a plan asks for that hook mode cannot give: the profile's variables
// (a prestart hook cannot change the environment of the process). One line
// per activated profile, naming it and what to do instead.
std::vector<std::string> HookModeWarnings(const Plan& plan);

}  // namespace ocid
