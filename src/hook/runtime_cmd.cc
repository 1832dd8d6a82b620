// The runtime shim, in the order it works:
//   1. load: take its own leading --ocid-* options and resolve its settings
//      (defaults, /etc/oci-decorator/runtime.json, options);
//   2. decide: find the runtime's command the way runc parses its
//      arguments; for anything but create/run, exec the runtime at once;
//   3. create/run: load the inventories and config.json bytes; if no
//      activation flag occurs in them, exec the runtime (no JSON parsed);
//   4. plan exactly as the hook does (decision.h), edit config.json
//      (spec_editor.h) and replace it atomically;
//   5. exec the runtime with the engine's arguments, environment and umask.
// Any failure before the exec is one line on stderr and in the runtime's
// --log file (where containerd looks for the reason a create failed), exit 1;
// config.json is then unchanged.
#include "runtime_cmd.h"

#include <utility>

#include "log.h"
#include "version.h"

namespace ocid {

int RunShim(const ShimOptions& cli, const std::vector<std::string>& runtime_args,
            char** saved_environ) {
  // Under containerd the runtime's stderr during `create` is the container's:
  // only errors go there, the rest to the log files.
  log::SetStderrLevel(log::Level::kError);

  // 1. Load.
  ShimOptions opts = cli;
  std::vector<std::string> args = runtime_args;
  Error err;
  bool took = TakeShimOptions(&args, &opts, &err);
  RuntimeShim shim(std::move(args), saved_environ, opts.umask);
  if (!took || !ResolveShimSettings(opts, OCID_DEFAULT_SHIM_CONFIG, shim.settings(), &err))
    return shim.Failed(err);

  // 2. Decide: only a create may need an edit.
  if (!shim.Creates()) return shim.Exec();

  // 3, 4. Load, plan and edit, for a container that asks.
  shim.InitLogging();
  if (!shim.EditIfAsked(&err)) return shim.Failed(err);

  // 5. Exec.
  return shim.Exec();
}

}  // namespace ocid
