#include "kubelet_plugin.h"

#include "log.h"

namespace ocid {

int RunKubernetes(const PluginOptions&, const KubernetesOptions&) {
  log::Error("kubernetes: not built yet");
  return 2;
}

}  // namespace ocid
