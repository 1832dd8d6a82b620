// `oci-decorator cdi generate`: the CDI specs of the inventories under
// --config-dir, built on the host under --host-root (cdi.h renders them)
// and written here: atomically, each spec after its preload files, or one
// spec to stdout. Before a spec is written to a file, the directories its
// devices create (create_if: Onload's /run/onload) are made on the host
// through root's writer (host_dirs.h), since the engine binds a mount
// source as it finds it; a refusal writes nothing of that spec.
#pragma once
#include <string>
#include <vector>

#include "options.h"

namespace ocid {

struct CdiOptions {
  std::string inventory;   // file stem to select; "" = all
  std::string output;      // file, or "-" for stdout; needs one inventory
  std::string output_dir;  // writes <dir>/oci-decorator-<stem>.json
                           // (and its .preload files)
  // --cdi-version: the highest cdiVersion a spec may need ("0.3.0" to
  // "0.7.0"; "" = no cap). Under 0.7.0 a spec leaves its additionalGids out
  // (BuildCdiSpec), with a warning.
  std::string max_version;
};

// The cdiVersion values --cdi-version accepts: those the renderer knows.
const std::vector<std::string>& CdiVersionChoices();

// `cdi generate`: loads the inventories under --config-dir, builds their
// specs under --host-root and writes them (atomically). With neither output
// option, one spec goes to stdout. Returns the exit code: 1 if a selected
// inventory is broken or yields no spec, or a write fails.
int RunCdiGenerate(const Options& opts, const CdiOptions& cdi);

}  // namespace ocid
