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
#include "files.h"

namespace ocid {

struct OciState {
  std::string oci_version;
  std::string id;
  std::string status;
  int pid = 0;         // 0 when absent or 0 (poststop; crun sends 0)
  std::string bundle;  // absolute path of the bundle directory
  std::string root;    // crun's rootfs path as in root.path (relative to
                       // the bundle or absolute), "" if absent
  std::map<std::string, std::string> annotations;
  // Some annotations were left out (see ParseOciState): a container that
  // asks is then refused, since its activation policy cannot be checked.
  bool annotations_pruned = false;
};

// Annotations are kept in full while the state read so far is within this
// size; past it only those that can be a request ("oci-decorator/...") are.
// A state of any size can thus be read, holding little more than this.
constexpr size_t kStateAnnotationBytes = 1 << 20;

// Parses the state JSON. Requires id and bundle; pid when present must be a
// positive integer. Errors name the field.
bool ParseOciState(std::string_view bytes, OciState* out, Error* err);
// The same from a stream (the hook's stdin). `bundle_seen` receives the
// "bundle" string if one was read, even when the state as a whole is not
// usable: it still says where the container's config.json is.
bool ParseOciState(FdInput* in, OciState* out, Error* err, std::string* bundle_seen = nullptr);

// A container id used as a directory name on the host: [A-Za-z0-9_.+-],
// 1..128 chars, not "." or "..".
bool IsSafeContainerId(std::string_view id);

}  // namespace ocid
