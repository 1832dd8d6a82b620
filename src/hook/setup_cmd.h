// `oci-decorator setup ENGINE`: the configuration an engine needs to use
// oci-decorator (src/engine renders it, engine_setup.h writes it); for
// podman with --cdi, also the CDI specs (`cdi generate --output-dir`).
#pragma once
#include "engine_setup.h"
#include "options.h"

namespace ocid {

// Returns the exit code: 0 done (or nothing to do), 1 a file could not be
// read or written, 2 bad input (runtime name or path, engine).
int RunSetup(const Options& opts, const SetupOptions& setup);

}  // namespace ocid
