// `oci-decorator check [--json] [--binary PATH]`: reads the node (the
// inventories under --config-dir, the host under --host-root), builds the
// report (node_check.h) and prints it (check_render.h).
#pragma once
#include <string>

#include "exit_codes.h"
#include "options.h"

namespace ocid {

struct CheckOptions {
  bool json = false;
  // The oci-decorator binary the hooks.d entries and runtime registrations
  // must name, as a host path under --host-root; "" = this program.
  std::string binary;
};

// Exit codes: 0 ready, 1 not ready, 2 bad input (the config directory or
// the host root cannot be read, --binary does not exist).
constexpr int kCheckReady = kExitOk, kCheckNotReady = kExitFailure, kCheckBadInput = kExitBadInput;
int RunCheck(const Options& opts, const CheckOptions& check);

}  // namespace ocid
