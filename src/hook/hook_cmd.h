// `oci-decorator hook [STAGE]`: one OCI hook invocation, the state on
// stdin. Load, decide, plan, execute (plan_executor.h), report.
#pragma once
#include <string>

#include "options.h"

namespace ocid {

// Runs one hook invocation for `stage` with the state read from stdin_fd.
// Returns the process exit code; prints nothing for containers that did not
// ask (below debug).
// `confined` says whether the seccomp confinement is in force; an activated
// container is refused without it.
int RunHook(const Options& opts, const std::string& stage, int stdin_fd, bool confined);

}  // namespace ocid
