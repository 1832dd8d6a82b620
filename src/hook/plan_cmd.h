// `oci-decorator plan --bundle DIR`: what the hook would do for a bundle,
// printed as JSON (plan_json.h). Nothing changes and no root is needed.
#pragma once
#include <string>

#include "options.h"

namespace ocid {

// Prints the plan as JSON to stdout. The container id is the bundle
// directory's name and there is no pid; stdin is not read. Returns the
// exit code: 0, or 1 with one line logged.
int RunPlan(const Options& opts, const std::string& bundle);

}  // namespace ocid
