// `kubernetes`, in the order it works: decide what Allocate returns (and
// warn when it names CDI devices no spec of ours resolves); refuse a
// --cdi-dir that fails the writer's rule; clear the environment; run the
// kubelet loop (kubelet_loop.h) until a signal.
#include "kubernetes_cmd.h"

#include <cstdlib>

#include "atomic_file.h"
#include "error.h"
#include "exit_codes.h"
#include "kubelet_loop.h"
#include "log.h"
#include "unique_fd.h"

namespace ocid {
namespace {

AllocateMode AllocateModeOf(const std::string& allocate) {
  if (allocate == "cdi") return AllocateMode::kCdi;
  if (allocate == "mounts") return AllocateMode::kMounts;
  return AllocateMode::kBoth;
}

}  // namespace

int RunKubernetes(const PluginOptions& opts, const KubernetesCommand& cmd) {
  // Decide what Allocate returns. A CDI name is only worth giving when a
  // spec resolves it: by default only with --cdi-dir, where the plugin
  // keeps the specs itself.
  KubernetesOptions k8s = cmd.k8s;
  std::string allocate = cmd.allocate;
  if (!allocate.empty() && allocate != "mounts" && opts.cdi_dir.empty())
    log::Warn("kubernetes: --allocate " + allocate +
              " without --cdi-dir: the CDI devices Allocate names must resolve from specs "
              "written elsewhere on this node (oci-decorator cdi generate)");
  if (allocate.empty()) allocate = opts.cdi_dir.empty() ? "mounts" : "both";
  k8s.allocate = AllocateModeOf(allocate);

  // --cdi-dir by the writer's rule (atomic_file.h OpenWriteDir, missing
  // components made 0755), before anything is served: one that others can
  // change, or reached through a link another user made, is refused here
  // with one line rather than kept (cdi_dir_keeper.h). The keeper checks it
  // again on every pass, and Allocate as it answers.
  if (!opts.cdi_dir.empty()) {
    UniqueFd dir;
    Error err;
    if (!OpenWriteDir(opts.cdi_dir, /*create=*/true, &dir, &err)) {
      bool refused = err.errnum == 0 && err.path.empty();
      err.what = std::string("kubernetes: ") + (refused ? "refusing" : "cannot use") +
                 " --cdi-dir " + opts.cdi_dir + ": " + err.what;
      return log::Failed(err, kExitFailure);
    }
  }

  // Nothing here reads the environment, but gRPC does (GRPC_TRACE,
  // GRPC_VERBOSITY, proxies, poll strategies) when it starts: whatever a
  // DaemonSet or a shell left there must not change how the plugin behaves.
  ::clearenv();

  // Serve: the view carries the specs the keeper writes.
  return RunKubeletLoop(opts, k8s);
}

}  // namespace ocid
