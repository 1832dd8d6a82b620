// `oci-decorator-device-plugin nomad`: a Nomad external device plugin
// (HashiCorp go-plugin over gRPC), one device group per feature.
#pragma once
#include "plugin_options.h"

namespace ocid {

// Serves until Nomad shuts it down; returns the exit code.
int RunNomad(const PluginOptions& opts);

}  // namespace ocid
