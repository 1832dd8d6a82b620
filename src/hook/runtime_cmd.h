// `oci-decorator runtime [--runtime PATH] -- ARGS`, and the same program
// installed as oci-decorator-runtime: the runtime shim (runtime_shim.h says
// what it does and its threat model).
#pragma once
#include <string>
#include <vector>

#include "runtime_shim.h"

namespace ocid {

// The whole shim. `runtime_args` may start with --ocid-* options. Returns
// only on failure: 1 with one line on stderr (and in the runtime's --log)
// before the exec, 127 when the runtime cannot be executed.
int RunShim(const ShimOptions& cli, const std::vector<std::string>& runtime_args,
            char** saved_environ);

}  // namespace ocid
