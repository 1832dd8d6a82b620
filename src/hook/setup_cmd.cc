// `setup`, in the order it works: check the names it will write (the
// runtime's name and path); write the engine's configuration
// (engine_setup.h); for podman with --cdi, write the CDI specs as `cdi
// generate --output-dir` does (or, with --dry-run, say so).
#include "setup_cmd.h"

#include <cstdio>
#include <string>

#include "cdi_cmd.h"
#include "exit_codes.h"
#include "log.h"

namespace ocid {
namespace {

bool CheckNames(const SetupOptions& setup) {
  std::string why;
  if (!CheckRuntimeName(setup.runtime_name, &why)) {
    log::Error("invalid --runtime-name \"" + setup.runtime_name + "\": " + why);
    return false;
  }
  if (setup.runtime_path.empty() || setup.runtime_path[0] != '/') {
    log::Error("--runtime-path must be an absolute path: " + setup.runtime_path);
    return false;
  }
  if (setup.engine != "docker" &&
      (setup.docker_default != DockerDefault::kLeave || setup.wrap_default)) {
    log::Error(
        "--default-runtime, --no-default-runtime and --wrap-default are docker's only, not " +
        setup.engine + "'s");
    return false;
  }
  return true;
}

// podman --cdi: the specs, into --cdi-dir.
int PodmanCdi(const Options& opts, const SetupOptions& setup) {
  if (setup.dry_run) {
    std::string version = setup.cdi_version.empty() ? "" : " --cdi-version " + setup.cdi_version;
    std::printf("\npodman: would run `oci-decorator cdi generate --output-dir %s%s` (dry run)\n",
                setup.cdi_dir.c_str(), version.c_str());
    return 0;
  }
  CdiOptions cdi;
  cdi.output_dir = setup.cdi_dir;
  cdi.max_version = setup.cdi_version;
  return RunCdiGenerate(opts, cdi);
}

}  // namespace

int RunSetup(const Options& opts, const SetupOptions& setup) {
  if (!CheckNames(setup)) return kExitBadInput;
  if (setup.engine == "docker") return SetupDocker(setup);
  if (setup.engine == "containerd") return SetupContainerd(setup);
  if (setup.engine == "crio" || setup.engine == "cri-o") return SetupCrio(setup);
  if (setup.engine == "podman") {
    int rc = SetupPodman(opts, setup);
    return rc == 0 && setup.cdi ? PodmanCdi(opts, setup) : rc;
  }
  log::Error("unknown engine \"" + setup.engine + "\" (docker, containerd, crio or podman)");
  return kExitBadInput;
}

}  // namespace ocid
