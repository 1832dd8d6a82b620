// `oci-decorator-device-plugin kubernetes`: the kubelet device plugin API
// v1beta1 (proto/deviceplugin/v1beta1/api.proto), one resource per feature
// (kubelet_allocate.h has the protocol decisions).
#pragma once
#include "plugin_options.h"

namespace ocid {

// Serves until SIGTERM or SIGINT; returns the exit code.
int RunKubernetes(const PluginOptions& opts, const KubernetesOptions& k8s);

}  // namespace ocid
