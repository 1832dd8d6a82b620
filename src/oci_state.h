// The OCI state a runtime writes on a hook's stdin.
//   runc:  {"ociVersion","id","status":"creating","pid","bundle","annotations"?}
//   crun:  the same plus "root" (root.path as written: absolute, or relative
//          to the bundle), status "created".
// poststop states carry no pid.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "error.h"

namespace ocid {

struct OciState {
  std::string oci_version;
  std::string id;
  std::string status;
  int pid = 0;            // 0 when absent or 0 (poststop; crun sends 0)
  std::string bundle;     // absolute path of the bundle directory
  std::string root;       // crun's rootfs path as in root.path (relative to
                          // the bundle or absolute), "" if absent
  std::map<std::string, std::string> annotations;
};

// Parses the state JSON. Requires id and bundle; pid when present must be a
// positive integer. Errors name the field.
bool ParseOciState(std::string_view bytes, OciState* out, Error* err);

// A container id used as a directory name on the host: [A-Za-z0-9_.+-],
// 1..128 chars, not "." or "..".
bool IsSafeContainerId(std::string_view id);

}  // namespace ocid
