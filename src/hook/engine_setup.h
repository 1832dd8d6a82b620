// `setup ENGINE`: the configuration each container engine needs to use
// oci-decorator, written as drop-ins where the engine has them and merged
// into docker's daemon.json (every other key kept, the old file backed up).
//
//   docker      daemon.json "runtimes": {NAME: {"path": <runtime shim>}}
//   containerd  a conf.d TOML drop-in registering NAME as an
//               io.containerd.runc.v2 runtime whose BinaryName is the shim,
//               for the CRI plugin, in the schema of config.toml's `version`:
//               2 (containerd 1.x, and 2.x which migrates it) names the CRI
//               plugin io.containerd.grpc.v1.cri, 3 (containerd 2.x) names it
//               io.containerd.cri.v1.runtime. containerd 2.x does not merge
//               the two schemas: mixed, it loses the drop-in's runtime or the
//               main config's CRI settings (containerd 2.1's `config dump`),
//               so the two must agree.
//               config.toml must import it (checked). For a version 2
//               config.toml that configures the CRI plugin itself, nothing
//               is written (containerd 1.6 replaces that whole section with
//               an imported file's): the lines to add are printed instead;
//               containerd 2.x merges imported tables key by key
//   crio        a crio.conf.d drop-in setting hooks_dir (and, with
//               --with-runtime, a runtime entry for the shim)
//   podman      nothing to write (hooks.d and CDI are read from default
//               directories): notes; --cdi writes the CDI specs
//
// The renderers are pure (bytes in, bytes out) so the tests need no engine;
// the writers below (Setup<Engine>, run by `setup`: setup_cmd.h) read and
// write the files (atomically, never through a symlink) and print what they
// changed. --dry-run prints and writes nothing.
#pragma once
#include <string>
#include <vector>

#include "error.h"
#include "options.h"
#include "version.h"

namespace ocid {

struct SetupOptions {
  std::string engine;  // docker, containerd, crio, podman
  std::string config;  // "" = the engine's default below
  std::string runtime_name = "oci-decorator";
  std::string runtime_path = OCID_RUNTIME_PATH;
  std::string containerd_main = "/etc/containerd/config.toml";
  std::string cdi_dir = "/etc/cdi";
  bool dry_run = false;
  bool with_runtime = false;  // crio: also register the shim
  bool cdi = false;           // podman: write CDI specs
};

constexpr const char* kDockerConfig = "/etc/docker/daemon.json";
constexpr const char* kContainerdDropIn = "/etc/containerd/conf.d/oci-decorator.toml";
constexpr const char* kCrioDropIn = "/etc/crio/crio.conf.d/50-oci-decorator.conf";
constexpr const char* kHooksDirs[] = {"/usr/share/containers/oci/hooks.d",
                                      "/etc/containers/oci/hooks.d"};

// A runtime name usable as a docker runtime and a bare TOML key.
bool CheckRuntimeName(const std::string& name, std::string* why);

struct DockerMerge {
  std::string json;  // the new daemon.json (the input when unchanged)
  bool changed = false;
  std::string old_path;  // the entry's path before, "" if none
  std::string runtimes;  // the resulting "runtimes" object, for messages
};

// Merges {"runtimes": {name: {"path": path}}} into daemon.json's bytes
// ("" or blank: no file yet). Every other key, every other runtime and any
// other key of the entry (runtimeArgs) is kept, in order. Unchanged when
// the entry already has this path. `file` names the file in errors.
bool MergeDockerRuntime(const std::string& bytes, const std::string& file, const std::string& name,
                        const std::string& path, DockerMerge* out, Error* err);

// The `version` of containerd's main config (bytes): 2 or 3; 0 when it has
// none or another (containerd reads a file without one as version 1).
int ContainerdConfigVersion(const std::string& main_config);

// The containerd drop-in for config `version` 2 or 3: the shim as a CRI
// runtime. Version 2: containerd 1.6 replaces a plugin's whole config
// section with an imported file's, so the drop-in also names runc (the
// built-in section had it) and is only safe when the main config has no CRI
// section of its own. Version 3 (containerd 2.x, which merges imported
// tables key by key): the shim's tables alone.
std::string ContainerdDropIn(const std::string& name, const std::string& shim_path,
                             int version = 2);
// The shim's runtime tables alone, to add to a main config that has one.
std::string ContainerdRuntimeTables(const std::string& name, const std::string& shim_path,
                                    int version = 2);
// Whether containerd's main config (bytes) configures the CRI plugin.
bool ContainerdHasCriSection(const std::string& main_config);

// Whether containerd's main config (bytes) has an `imports` entry matching
// `dropin` (a glob, as containerd expands them). *has_imports says whether
// it has an imports list at all.
bool ContainerdImportsCover(const std::string& main_config, const std::string& dropin,
                            bool* has_imports);

// The CRI-O drop-in: hooks_dir, and a runtime entry when shim_path is set.
std::string CrioDropIn(const std::string& name, const std::string& shim_path);

// Each engine's configuration, read, merged and written (or, with
// dry_run, shown), with the next steps printed. Each returns the exit code:
// 0, or 1 with one line logged.
int SetupDocker(const SetupOptions& s);
int SetupContainerd(const SetupOptions& s);
int SetupCrio(const SetupOptions& s);
// Podman needs nothing written: notes, the hooks.d entries found and, for
// the inventories under --config-dir, their CDI device names. (--cdi's
// specs are `cdi generate`'s: setup_cmd.cc.)
int SetupPodman(const Options& opts, const SetupOptions& s);

}  // namespace ocid
