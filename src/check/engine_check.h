// Which delivery modes are set up on this node, for `check`: the reading
// side of engine_setup.h. Looks, under --host-root (HostView), at
//   hooks.d   kHooksDirs/*.json whose hook.path is this binary and whose
//             args run `hook` (podman, CRI-O);
//   docker    daemon.json "runtimes" entries whose path is this binary
//             under the name oci-decorator-runtime (the name selects shim
//             mode);
//   containerd  BinaryName lines in the drop-in `setup containerd` writes
//             (counted only when config.toml imports it) and in config.toml.
// "This binary" is compared by st_dev and st_ino after following symlinks
// inside the host root, so /usr/bin/oci-decorator-runtime (a link to the
// hook) counts. CDI specs are per inventory: node_check.h compares them.
#pragma once
#include <string>
#include <string_view>

#include "host_view.h"
#include "node_facts.h"

namespace ocid {

// Pure: one hooks.d entry's bytes. `is_self` says whether a host path is
// this binary.
struct HooksEntryFacts {
  std::string hook_path;
  std::vector<std::string> args, stages;
};
bool ParseHooksEntry(std::string_view bytes, const std::string& file, HooksEntryFacts* out,
                     Error* err);

// Pure: daemon.json's "runtimes" as (name, path) pairs.
bool ParseDockerRuntimes(std::string_view bytes, const std::string& file,
                         std::vector<std::pair<std::string, std::string>>* out, Error* err);

// Pure: every BinaryName = "..." value in a containerd TOML file.
std::vector<std::string> ContainerdBinaryNames(const std::string& toml);

// Gathers the above under the host root. `self` identifies this binary.
void ReadEngineSetup(const HostView& host, const FileIdentity& self, EngineSetup* out);

}  // namespace ocid
