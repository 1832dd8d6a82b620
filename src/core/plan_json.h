#pragma once
#include <string>

#include "plan.h"

namespace ocid {

// The plan as pretty JSON, the output of `oci-decorator plan`.
std::string PlanToJson(const Plan& plan);

}  // namespace ocid
