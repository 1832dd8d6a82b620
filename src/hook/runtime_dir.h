// Per-container state on the host: <state-dir>/<container id>/, holding the
// generated ld.so.preload. Created root-owned 0700 without following
// symlinks, removed at poststop.
#pragma once
#include <string>

#include "error.h"
#include "unique_fd.h"

namespace ocid {

constexpr const char* kDefaultStateDir = "/run/oci-decorator";

// Opens (creating if needed) the container's directory. The state dir itself
// must be a root-owned directory not writable by group or others.
bool OpenContainerDir(const std::string& state_dir, const std::string& id, UniqueFd* out,
                      Error* err);

// Removes the container's directory and its files. Missing is fine.
bool RemoveContainerDir(const std::string& state_dir, const std::string& id, Error* err);

}  // namespace ocid
