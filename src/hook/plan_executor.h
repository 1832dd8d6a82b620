// Carries a hook-mode Plan out for one running container: device cgroup
// rules on the host, read-only mounts and the preload file inside the
// container's mount namespace. Either all of it is applied or, on failure,
// none of it stays (plan_executor.cc says in what order, and why each step
// is safe).
#pragma once
#include "error.h"
#include "host_view.h"
#include "options.h"
#include "plan.h"

namespace ocid {

// `plan` must be active, with a pid and, when it preloads, a container id
// usable as a directory name (the hook checks these first). `host` is the
// view the plan was made through: the sources are opened through it.
bool ExecutePlan(const Options& opts, const Plan& plan, const HostRootView& host, Error* err);

}  // namespace ocid
