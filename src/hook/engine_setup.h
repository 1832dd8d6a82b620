// `setup ENGINE`: the configuration each container engine needs to use
// oci-decorator, written as drop-ins where the engine has them and merged
// into docker's daemon.json (every other key kept, the old file backed up).
//
//   docker      daemon.json "runtimes": {NAME: {"path": <runtime shim>}}; with
//               --default-runtime also "default-runtime": NAME, so that a
//               plain `docker run -e OCI_ONLOAD=all` reaches the shim
//               (--wrap-default: over an operator's own default, which the
//               shim then runs); --no-default-runtime gives the default back
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
// The paths, the daemon.json merge and the renderers are the engine room's
// (src/engine: engine_files.h, docker_config.h, containerd_config.h), pure,
// bytes in and bytes out, so the tests need no engine and `check` reads
// with the same code. The writers below (Setup<Engine>, run by `setup`:
// setup_cmd.h) read and write the files (atomically, never through a
// symlink) and print what they changed. --dry-run prints and writes nothing.
#pragma once
#include <string>

#include "containerd_config.h"
#include "docker_config.h"
#include "engine_files.h"
#include "options.h"
#include "version.h"

namespace ocid {

struct SetupOptions {
  std::string engine;  // docker, containerd, crio, podman
  std::string config;  // "" = the engine's default (engine_files.h)
  std::string runtime_name = "oci-decorator";
  std::string runtime_path = OCID_RUNTIME_PATH;
  std::string containerd_main = kContainerdConfig;
  std::string cdi_dir = "/etc/cdi";
  bool dry_run = false;
  bool with_runtime = false;  // crio: also register the shim
  bool cdi = false;           // podman: write CDI specs
  std::string cdi_version;    // podman --cdi: cdi generate's --cdi-version ("" = no cap)
  // docker: --default-runtime (kSet), --no-default-runtime (kUnset).
  DockerDefault docker_default = DockerDefault::kLeave;
  bool wrap_default = false;  // docker: --wrap-default
};

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
