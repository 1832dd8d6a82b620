// `kubernetes`, in the order it works: decide what Allocate returns (and
// warn when it names CDI devices no spec of ours resolves); clear the
// environment; run the kubelet loop (kubelet_loop.h) until a signal.
#include "kubernetes_cmd.h"

#include <cstdlib>

#include "kubelet_loop.h"
#include "log.h"

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
  if (!allocate.empty() && allocate != "mounts" && k8s.cdi_dir.empty())
    log::Warn("kubernetes: --allocate " + allocate +
              " without --cdi-dir: the CDI devices Allocate names must resolve from specs "
              "written elsewhere on this node (oci-decorator cdi generate)");
  if (allocate.empty()) allocate = k8s.cdi_dir.empty() ? "mounts" : "both";
  k8s.allocate = AllocateModeOf(allocate);

  // Nothing here reads the environment, but gRPC does (GRPC_TRACE,
  // GRPC_VERBOSITY, proxies, poll strategies) when it starts: whatever a
  // DaemonSet or a shell left there must not change how the plugin behaves.
  ::clearenv();

  // Serve: the view carries the specs the keeper writes.
  PluginOptions with_cdi = opts;
  with_cdi.cdi_dir = k8s.cdi_dir;
  with_cdi.kubelet_volumes_of = k8s.kubelet_dir;
  return RunKubeletLoop(with_cdi, k8s);
}

}  // namespace ocid
