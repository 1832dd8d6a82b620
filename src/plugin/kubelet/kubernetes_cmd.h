// `oci-decorator-device-plugin kubernetes`: serve the inventories' features
// to the kubelet (the device plugin API v1beta1) until SIGTERM or SIGINT.
// The loop is kubelet_loop.h's.
#pragma once
#include <string>

#include "plugin_options.h"

namespace ocid {

struct KubernetesCommand {
  KubernetesOptions k8s;
  // --allocate as given: cdi, mounts, both; "" = both with --cdi-dir,
  // mounts without.
  std::string allocate;
};

// Returns the exit code.
int RunKubernetes(const PluginOptions& opts, const KubernetesCommand& cmd);

}  // namespace ocid
