// `oci-decorator cdi generate`: the CDI specs of the inventories under
// --config-dir, built on the host under --host-root (cdi.h renders them)
// and written here: atomically, each spec after its preload files, or one
// spec to stdout.
#pragma once
#include <string>

#include "options.h"

namespace ocid {

struct CdiOptions {
  std::string inventory;   // file stem to select; "" = all
  std::string output;      // file, or "-" for stdout; needs one inventory
  std::string output_dir;  // writes <dir>/oci-decorator-<stem>.json
                           // (and its .preload files)
};

// `cdi generate`: loads the inventories under --config-dir, builds their
// specs under --host-root and writes them (atomically). With neither output
// option, one spec goes to stdout. Returns the exit code: 1 if a selected
// inventory is broken or yields no spec, or a write fails.
int RunCdiGenerate(const Options& opts, const CdiOptions& cdi);

}  // namespace ocid
