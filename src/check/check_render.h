// `check` output: a table for people and JSON for monitoring, from one
// CheckReport (node_check.h). The JSON schema (version 1) is documented in
// oci-decorator(8); a change to a field's meaning needs a new version.
#pragma once
#include <string>

#include "node_check.h"

namespace ocid {

// Aligned columns STATE CHECK SUBJECT DETAIL, OK/INFO/WARN/FAIL, the reason
// on the same line; a READY / NOT READY verdict at the end with every reason.
std::string CheckTable(const CheckReport& r);

// One JSON object, newline-terminated.
std::string CheckJson(const CheckReport& r);

}  // namespace ocid
