// The runtime shim's parts (its command is runtime_cmd.h). Registered with
// docker or containerd in place of runc, the shim edits the bundle's config.json on `create` (and
// `run`) for containers that ask for a vendor, then execs the real runtime with the arguments
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
// config.json (atomically, never through a symlink), lines in the
// runtime's own --log file and, for a container that asks, an inventory's
// create_if directory on the host (root, 0755, through root's writer:
// host_dirs.h), as the hook does.
#pragma once
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "error.h"
#include "shim_config.h"

namespace ocid {

// Whether argv[0]'s basename is kShimProgramName (engine_files.h), which
// selects shim mode.
bool IsShimProgramName(const char* argv0);

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

// One shim invocation: the engine's runtime arguments (without the
// shim's own options), its environment and umask, and the settings. The
// steps are runtime_cmd.cc's.
class RuntimeShim {
 public:
  RuntimeShim(std::vector<std::string> args, char** env, mode_t mask);
  ~RuntimeShim();
  ShimSettings* settings();
  // Whether the runtime is asked to create a container (create or run, with
  // an id): only then may config.json need an edit.
  bool Creates() const;
  // The log, as the settings say (log_setup.h); a warning goes to the
  // runtime's --log file.
  void InitLogging();
  // Loads, decides and plans as the hook does (decision.h); for a container
  // that asks, edits config.json (spec_editor.h) and replaces it atomically.
  bool EditIfAsked(Error* err);
  // Execs the runtime with the engine's arguments, environment and umask;
  // returns only on failure (127, one line logged).
  int Exec();
  // One line on stderr and in the runtime's --log; returns 1.
  int Failed(const Error& e);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ocid
