// Directories a plan creates on the host before it mounts them: an
// inventory's "create_if" entry whose directory is missing and whose
// condition is met (planner.h, MountOp::create). Onload's shrub controller
// directory, /run/onload, is the one shipped.
//
// Root's writer makes them (SECURITY.md 2.9): the walk from the host root's
// fd and the rule of dir_trust.h (WalkDir with create, UnsafeStepsReason),
// each missing component made 0755 with mkdirat from its parent's fd
// whatever the umask, owned by root. A directory that would sit below one
// others can change is refused with the rule's own line, and nothing is
// made there. A directory that appeared meanwhile (a controller was faster)
// is taken as it is, after the same rule. Nothing created is taken back on
// a later failure: an empty root 0755 directory is what the service itself
// leaves, and removing it could race the service filling it.
//
// The callers are the executors (the hook, the runtime shim, `cdi generate`,
// the device plugin in Nomad mode), only for a container or a spec that
// asks; `plan` and `check` never create. This module logs nothing.
#pragma once
#include <string>
#include <vector>

#include "error.h"
#include "plan.h"

namespace ocid {

// Creates each MountOp of `plan` with `create` (root, 0755, missing parents
// too) under the host root `root_fd` (an fd of the host root directory, "/"
// or --host-root) through the writer's walk and rule, then fills in its
// identity (dev, ino, mode, uid, gid; resolved = the directory the walk
// reached, within the host root) so the executors verify it as any planned
// source; `create` stays set. Appends to *created the host paths (as
// planned) that did not exist before. The first refusal or error stops it,
// with `err` naming the directory and the inventory.
bool CreatePlannedDirectories(int root_fd, Plan* plan, std::vector<std::string>* created,
                              Error* err);

// Appends to *out each MountOp of `mounts` with `create` whose source *out
// does not hold yet: the directories several plans create (a CDI spec's
// devices, a view's resources), each once.
void AddDirectoriesToCreate(const std::vector<MountOp>& mounts, std::vector<MountOp>* out);

}  // namespace ocid
