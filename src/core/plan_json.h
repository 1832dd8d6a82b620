#pragma once
#include <string>

#include "plan.h"

namespace ocid {

// The plan as pretty JSON, the output of `oci-decorator plan`: every string
// shown by the one escaping rule (error.h PrintableJson), as JSON escapes.
std::string PlanToJson(const Plan& plan);

}  // namespace ocid
