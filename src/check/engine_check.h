// Which delivery modes are set up on this node, for `check`: the reading
// side of `setup` (src/hook/engine_setup.h), over the same engine files
// (src/engine). Looks, under --host-root (HostView), at
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
#include "containerd_config.h"
#include "docker_config.h"
#include "engine_files.h"
#include "host_view.h"
#include "node_facts.h"
#include "shim_config.h"

namespace ocid {

// Reads the engines' files under the host root with the engine room's
// parsers (ParseHooksEntry, ParseDockerRuntimes, ContainerdBinaryNames,
// ContainerdImportsCover), into *out. `self` identifies this binary.
void ReadEngineSetup(const HostView& host, const FileIdentity& self, EngineSetup* out);

}  // namespace ocid
