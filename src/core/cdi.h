// CDI (Container Device Interface) specs from the inventories: the durable
// delivery mode for engines with CDI (podman 4.1+, CRI-O, containerd 1.7+,
// docker 25+). The engine writes devices, cgroup rules, mounts and env into
// config.json itself, so nothing can reset them behind its back.
//
// One spec per inventory, kind "<vendor>/<class>" (the inventory's
// "cdi_kind", else oci-decorator.local/<file stem>), with one device per
// feature and one named "all". Each device is BuildInventoryPlan's plan for
// its features, rendered as containerEdits:
//   deviceNodes  {path, hostPath when it differs, fileMode (the host node's
//                permission bits)}: type, major and minor are left out, so
//                the engine stats the host node when a container is created
//                (Onload's majors are dynamic);
//   mounts       {hostPath: the resolved host file, containerPath, options
//                ro,nosuid,nodev,bind};
//   mounts       for a device whose features preload something, also
//                {hostPath: <spec dir>/oci-decorator-<stem>.<device>.preload,
//                containerPath: /etc/ld.so.preload, ro,nosuid,nodev,bind}:
//                the preload file (one container path a line) is written
//                next to the spec, before it. glibc loads /etc/ld.so.preload
//                AND LD_PRELOAD, so a container's own LD_PRELOAD is kept
//                (an env LD_PRELOAD would replace it); an image's own
//                /etc/ld.so.preload is hidden (the hook merges it, CDI
//                cannot). CDI registries read only *.json and *.yaml.
//                Without a directory (a spec on stdout) the device carries
//                env LD_PRELOAD=<container paths, space separated> instead;
//   env          for a profile device, the profile's variables.
// An inventory with profiles (env_profile.h) adds, for each feature that
// preloads and each profile that resolves, a device "<feature>-<profile>"
// (onload-latency): the feature's edits plus the profile's variables. The
// engine applies a spec's env over the container's own: a variable the
// container sets itself is REPLACED (podman 4.3): the profile's EF_*, and
// LD_PRELOAD in a spec written without a directory.
//   additionalGids the plan's required groups (GroupOp::required), host gids.
// cdiVersion is the lowest that carries what is emitted (MinimalCdiVersion):
// 0.3.0; 0.5.0 when a device node needs hostPath (a --host-root other than
// /) or a device name starts with a digit; 0.7.0 with additionalGids.
// podman 4.3's CDI library accepts 0.3.0 to 0.5.0 only, and refuses a 0.7.0
// spec whole: so groups go in only when required, and a caller may cap the
// version (BuildCdiSpec's max_version), which leaves them out with a warning.
//
// A feature whose plan fails on this host (a missing required entry) gets
// no device, with a warning; "all" needs every feature. An inventory that
// yields no device at all is an error, and its spec is not written.
//
// This module renders: bytes in memory, no file written and no line logged.
// The writers are `cdi generate` (src/hook/cdi_cmd.h) and the device
// plugin's CDI keeper; the names are cdi_names.h's.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "cdi_names.h"
#include "error.h"
#include "host_view.h"
#include "inventory.h"
#include "plan.h"
#include "version_lock.h"

namespace ocid {

// What a spec's content needs of cdiVersion.
struct CdiVersionNeeds {
  bool device_host_path = false;   // a deviceNodes entry with hostPath
  bool digit_device_name = false;  // a device name starting with a digit
  bool additional_gids = false;    // containerEdits.additionalGids
};
// "0.3.0", "0.5.0" or "0.7.0": the lowest version that carries `needs`.
std::string MinimalCdiVersion(const CdiVersionNeeds& needs);

struct CdiDevice {
  std::string name;
  Plan plan;
};

// A file written with a spec, in the spec's directory.
struct CdiFileToWrite {
  std::string name;  // oci-decorator-onload.onload.preload
  std::string bytes;
};

// Renders one spec. `host_root` ("/" for the real host) prefixes every host
// path, as HostView::Display does. `spec_dir` is the absolute host
// directory the spec goes to: each preloading device's preload file goes
// there too (appended to *preload_files), mounted at /etc/ld.so.preload;
// "" = no directory: env LD_PRELOAD. Fails on a host path that is not UTF-8
// or a preload path that cannot be listed (space or ':').
bool CdiSpecJson(const std::string& kind, const std::string& spec_file_name,
                 const std::vector<CdiDevice>& devices, const std::string& host_root,
                 const std::string& spec_dir, std::string* out,
                 std::vector<CdiFileToWrite>* preload_files, Error* err);

struct CdiSpec {
  std::string inventory;  // file
  std::string kind;
  std::string file_name;              // oci-decorator-<stem>.json, or spec_path's name
  std::vector<std::string> devices;   // names, in the spec's order
  std::vector<std::string> warnings;  // devices left out, and why; plan warnings
  std::string json;
  std::string cdi_version;                    // the spec's cdiVersion ("0.3.0" ...)
  std::vector<CdiFileToWrite> preload_files;  // written in the spec's directory
  // The devices' directories to create on the host (MountOp::create), each
  // once: the engine binds a spec's mount source as it finds it, so its
  // writer makes them first (host_dirs.h).
  std::vector<MountOp> create;
  bool preload_in_env = false;  // no directory: a device preloads through env LD_PRELOAD
};

// "kind amd.com/onload, devices onload, zf, all": what a written spec holds,
// for the log lines of every writer.
std::string CdiSpecSummary(const CdiSpec& spec);

// The spec of one inventory on `host` (see the header comment), to be
// written at `spec_path`, an absolute host path ("" = stdout, no directory:
// env LD_PRELOAD). Its directory gets the preload files, named after the
// spec's file (oci-decorator-it.json -> oci-decorator-it.<device>.preload),
// and out->file_name is that file's name. `versions`: the version lock of
// `inv` as the caller already read it (planner.h BuildInventoryPlan); null
// reads it for each device that is guarded. `max_version` ("" = none, else
// "0.3.0" ... "0.7.0"): the highest cdiVersion the spec may need; a spec that
// would need 0.7.0 for its groups under a lower cap leaves them out, with a
// warning naming them; one that needs more for anything else fails.
bool BuildCdiSpec(const Inventory& inv, const HostView& host, const std::string& host_root,
                  const std::string& spec_path, CdiSpec* out, Error* err,
                  const VersionReport* versions = nullptr, const std::string& max_version = "");

// Inventories whose CDI kind an earlier one (in file-name order) already
// has, mapped to one line saying whose: two specs of one kind both name
// "all", and a CDI runtime then resolves neither. The first keeps the kind,
// as cluster resource names stay with the first (cluster.h).
std::map<std::string, std::string> CdiKindConflicts(const InventorySet& set);

// Every file to write into the spec's directory, in order: the preload
// files, then the spec (so an engine never reads a spec whose preload file
// is missing). Both `cdi generate` and the device plugin write these.
std::vector<CdiFileToWrite> CdiFilesOf(const CdiSpec& spec);

// Whether `bytes` is a spec as CdiSpecJson renders it: a JSON object of
// exactly cdiVersion, kind and devices, in that order, that renders back to
// the same bytes. A hand-written spec (or another tool's) is not one; the
// device plugin removes only these (cdi_dir_keeper.h).
bool IsRenderedCdiSpec(const std::string& bytes);

}  // namespace ocid
