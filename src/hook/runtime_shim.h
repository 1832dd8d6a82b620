// The runtime shim: registered with docker or containerd in place of runc,
// it edits the bundle's config.json on `create` (and `run`) for containers
// that ask for a vendor, then execs the real runtime with the arguments
// untouched. Every other command, and every container that did not ask,
// goes straight to the runtime without config.json or any inventory being
// parsed (only /etc/oci-decorator/runtime.json, when it exists).
//
//   oci-decorator-runtime [--ocid-* options] <runtime arguments>
//   oci-decorator runtime [--runtime PATH] -- <runtime arguments>
//
// Leading --ocid-* options are the shim's own and are not passed on (docker
// places daemon.json "runtimeArgs" before its own arguments):
//   --ocid-runtime PATH  --ocid-config-dir DIR  --ocid-host-root DIR
//   --ocid-config FILE   --ocid-log-level LEVEL --ocid-log-file FILE
// each also as --ocid-NAME=VALUE.
//
// Threat model: the shim runs as root with the engine's arguments and the
// container's config.json. It execs nothing but the configured runtime (an
// absolute path), never reads the rootfs, and writes only the bundle's
// config.json (atomically, never through a symlink) and lines in the
// runtime's own --log file.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "error.h"
#include "shim_config.h"

namespace ocid {

// argv[0] basename that selects shim mode (an installed symlink).
constexpr const char* kShimProgramName = "oci-decorator-runtime";
bool IsShimProgramName(const char* argv0);

// Settings given explicitly (command line, --ocid-* options); unset ones come
// from the config file or the defaults.
struct ShimOptions {
  std::optional<std::string> config_file;
  std::optional<std::string> runtime, config_dir, host_root, log_level, log_file, log_target,
      log_format;
  mode_t umask = 022;  // the engine's umask, given back to the runtime
};

// Moves the leading --ocid-* options out of `args` into *opts. Stops at the
// first argument that is not one. An unknown --ocid- option or a missing
// value is an error.
bool TakeShimOptions(std::vector<std::string>* args, ShimOptions* opts, Error* err);

// Defaults, then the config file (opts.config_file, else `default_file`,
// which may be absent), then opts; validated.
bool ResolveShimSettings(const ShimOptions& opts, const std::string& default_file,
                         ShimSettings* out, Error* err);

// What the runtime is asked to do, read the way runc 1.1 reads its
// arguments (urfave/cli: global flags, the command, then its flags and
// positionals in any order; -x, --x, -x=v, --x=v).
struct RuntimeInvocation {
  std::string command;       // "create", "start", ...; "" when there is none
  std::string bundle;        // create/run: --bundle/-b as given ("" = cwd)
  std::string container_id;  // create/run: the positional argument
  std::string log_file;      // global --log ("" = none)
  std::string log_format;    // global --log-format ("" = text)

  // Does this invocation create a container (and so may need an edit)?
  bool Creates() const { return command == "create" || command == "run"; }
};
RuntimeInvocation ParseRuntimeArgs(const std::vector<std::string>& args);

// The whole shim. `runtime_args` may start with --ocid-* options. Returns
// only on failure: 1 with one line on stderr (and in the runtime's --log)
// before the exec, 127 when the runtime cannot be executed.
int RunShim(const ShimOptions& opts, const std::vector<std::string>& runtime_args,
            char** saved_environ);

}  // namespace ocid
