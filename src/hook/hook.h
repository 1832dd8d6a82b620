// The hook command: load, decide, plan, execute, verify.
#pragma once
#include <string>

#include "log.h"
#include "options.h"

namespace ocid {

// Runs one hook invocation for `stage` with the state read from stdin_fd.
// Returns the process exit code; prints nothing for containers that did not
// ask (below debug).
// `confined` says whether the seccomp confinement is in force; an activated
// container is refused without it.
int RunHook(const Options& opts, const std::string& stage, int stdin_fd, bool confined);

// `plan --bundle DIR`: prints the plan as JSON to stdout. The container id is
// the bundle directory's name and there is no pid; stdin is not read,
// nothing changes and no root is needed.
int RunPlan(const Options& opts, const std::string& bundle);

}  // namespace ocid
