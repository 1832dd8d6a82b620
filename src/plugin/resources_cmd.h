// `oci-decorator-device-plugin resources`: what the plugin would advertise
// on this node, once, without serving anything: each resource's names,
// health and (with --json) delivery. For operators asking "why is
// amd.com/onload unhealthy here?" and for tests.
#pragma once
#include "plugin_options.h"

namespace ocid {

// Returns 0 when every resource is healthy, 1 when some are not or there
// are none, 2 when the host root cannot be opened.
int RunResources(const PluginOptions& opts, bool json);

}  // namespace ocid
