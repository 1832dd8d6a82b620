// The container engines' files, for the two programs that touch them:
// `setup` (src/hook/engine_setup.h) writes them, `check`
// (src/check/engine_check.h) reads them back. This room holds what both
// need to agree on: where each engine keeps its configuration, the name
// that runs the binary as the runtime shim, and the pure readers and
// renderers of those files (bytes in, bytes out; nothing here opens a
// file). daemon.json is docker_config.h, containerd's TOML is
// containerd_config.h.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "error.h"

namespace ocid {

constexpr const char* kDockerConfig = "/etc/docker/daemon.json";
constexpr const char* kContainerdConfig = "/etc/containerd/config.toml";
constexpr const char* kContainerdDropIn = "/etc/containerd/conf.d/oci-decorator.toml";
constexpr const char* kCrioDropIn = "/etc/crio/crio.conf.d/50-oci-decorator.conf";
// podman's and CRI-O's default hooks.d directories; the package installs
// its entries in the first.
constexpr const char* kHooksDirs[] = {"/usr/share/containers/oci/hooks.d",
                                      "/etc/containers/oci/hooks.d"};

// argv[0] basename that selects shim mode (an installed symlink), and so
// the name an engine's runtime entry must give the binary.
constexpr const char* kShimProgramName = "oci-decorator-runtime";

// A runtime name usable as a docker runtime and a bare TOML key.
bool CheckRuntimeName(const std::string& name, std::string* why);

// What one hooks.d entry (OCI hooks configuration, version 1.0.0) says:
// the hook's path, its args and stages. Non-string items are skipped.
struct HooksEntryFacts {
  std::string hook_path;
  std::vector<std::string> args, stages;
};
// Reads one hooks.d entry's bytes; false, naming `file`, when it is not
// JSON or has no string hook.path.
bool ParseHooksEntry(std::string_view bytes, const std::string& file, HooksEntryFacts* out,
                     Error* err);

// The CRI-O drop-in: hooks_dir, and a runtime entry when shim_path is set.
std::string CrioDropIn(const std::string& name, const std::string& shim_path);

}  // namespace ocid
