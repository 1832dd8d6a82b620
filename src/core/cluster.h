// Cluster resources: every inventory feature as something a scheduler can
// count and hand out (a kubelet extended resource, a Nomad device group),
// decided from the same inventories and plans as the hook and CDI. Pure:
// the only I/O is the HostView, so it is tested on trees of files.
//
// Naming. A resource's vendor is the CDI vendor of its inventory (cdi_kind
// "amd.com/onload" -> "amd.com"; without cdi_kind, "oci-decorator.local").
//   Kubernetes: "<vendor>/<feature>"                 amd.com/onload, amd.com/zf
//   Nomad:      vendor = CDI vendor up to its first '.', type = feature:
//               amd/onload, amd/zf; an inventory with several features also
//               gets one group of all of them, named by their names joined
//               (amd/onloadzf), as nomad-onload's device types are.
//   CDI:        "<cdi_kind>=<feature>" (the device `cdi generate` writes;
//               "<cdi_kind>=all" for a group of every feature).
//
// Health: a resource is healthy when its plan builds on this host: every
// required entry exists and device nodes are character or block devices;
// and, when the inventory's "needs_nic" names one of its features, a NIC of
// those PCI vendors is there (nic.h, NicsFor: the line `check` prints too).
// The NICs that serve it are kept with it: the kubelet's NUMA topology and
// Nomad's attributes are theirs.
// A broken inventory keeps the resources it had (from `previous`), all
// unhealthy with its error, so a kubelet keeps counting them as allocated
// instead of forgetting them; its neighbours are not affected.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "cdi.h"
#include "delivery.h"
#include "host_view.h"
#include "inventory.h"
#include "nic.h"
#include "version_lock.h"

namespace ocid {

struct ClusterResource {
  std::string inventory;              // file it comes from
  std::vector<std::string> features;  // one, or all of them (Nomad group)
  std::string k8s_name;               // "amd.com/onload"; "" for a group
  std::string nomad_vendor;           // "amd"
  std::string nomad_type;             // "onload", "onloadzf"
  std::string cdi_device;             // "amd.com/onload=onload", "...=onload-latency"
  std::string profile;                // the profile its delivery carries, "" = none
  bool healthy = false;
  std::string why;           // one line, when unhealthy
  Delivery delivery;         // when healthy
  std::vector<PciNic> nics;  // the NICs that serve it (its features need one)
  VersionReport versions;    // the version lock's reading, when it guards these
                             // features (state kNotConfigured: none)
  // The inventory's conditions met on this host (Plan::met_conditions),
  // sorted: Nomad's "conditions" attribute.
  std::vector<std::string> met_conditions;
  // The plan's directories to create ("create_if", MountOp::create): what
  // a plugin that runs as root on the host makes before it hands them out
  // (host_dirs.h). Empty when unhealthy.
  std::vector<MountOp> to_create;
};

// Makes `r` unhealthy for `why`: nothing of it is handed out (no delivery)
// and nothing is created for it.
void MarkUnhealthy(ClusterResource* r, const std::string& why);

// The CDI spec one inventory yields in a CDI directory (the device plugin's
// --cdi-dir), or why it yields none.
struct ClusterCdiSpec {
  enum class State {
    kWritten,  // `files` are the spec and its preload files
    kNone,     // no spec (a kind another inventory has, no device on this
               // host): one it had must go; `why` says why
    kKept,     // a broken inventory: the previous view's files (maybe none)
  };
  std::string inventory;  // file
  std::string stem;       // InventoryStem: its files are oci-decorator-<stem>...
  std::string kind;       // its CDI kind ("" when unknown: broken, never built)
  State state = State::kNone;
  std::string why;                    // one line, for kNone and kKept
  std::string spec_path;              // <dir>/oci-decorator-<stem>.json
  std::vector<std::string> devices;   // device names in the spec, in order
  std::vector<std::string> warnings;  // devices left out, and why
  std::string summary;                // CdiSpecSummary, for the log
  std::vector<CdiFileToWrite> files;  // CdiFilesOf: preload files, then the spec
};

struct ClusterView {
  std::vector<ClusterResource> resources;  // by inventory file, declared order
  std::vector<std::string> warnings;       // features left out, and why; plan warnings
  // When `resources` is empty, why (the device plugin's watch says: the
  // directory unreadable, no inventory, each refused): its readiness.
  std::string none_why;
  // The version lock of each inventory that has one, by file, as this view
  // read it: once per inventory, whatever the number of its features; every
  // plan of the view, and of its CDI specs (BuildClusterCdi), uses it.
  std::map<std::string, VersionReport> version_locks;
  // With a CDI directory (BuildClusterCdi): every inventory's spec in it,
  // loaded ones in file-name order, then broken ones. `cdi_dir` empty: none.
  std::string cdi_dir;
  std::vector<ClusterCdiSpec> cdi_specs;
};

// Checks a Kubernetes extended resource name: "<domain>/<name>", the domain
// a DNS subdomain outside kubernetes.io and k8s.io, the name a qualified
// name (63 characters at most, alphanumeric at both ends, '-', '_', '.').
bool CheckK8sResourceName(const std::string& name, std::string* why);

// Profiles: the plugin cannot see a pod's environment, so `profile` (the
// plugin's --profile, the Nomad config's "profile") applies to every
// resource whose inventory has profiles and whose features preload: its
// delivery carries the profile's variables, its CDI device is the profile's
// ("amd.com/onload=onload-latency"). A profile that does not resolve makes
// those resources unhealthy, saying why.
// Builds the view of `set` on `host`, whose NICs are `nics` (read once by
// the caller: ReadHostNics, nic.h); host paths in deliveries are
// named under `host_path_root`. `previous` (may be null) is the last view,
// which keeps a now broken inventory's resources (unhealthy).
void BuildClusterView(const InventorySet& set, const HostView& host, const HostNics& nics,
                      const std::string& host_path_root, const ClusterView* previous,
                      ClusterView* out, const std::string& profile = "");

// Adds to `out` (built by BuildClusterView from the same `set` and `host`,
// whose version lock readings it plans with: ClusterView::version_locks)
// each inventory's CDI spec as it belongs in `cdi_dir`, the absolute host
// directory the specs go to (cdi.h BuildCdiSpec, host paths named under
// `host_path_root`, the preload files named under `cdi_dir`):
// - a loaded inventory whose CDI kind an earlier one has (CdiKindConflicts)
//   or that yields no spec on this host (no device builds) gets kNone, why;
// - a broken inventory keeps what `previous` had for it (kKept; no files
//   when it had none), so pods that got its devices keep starting while
//   the operator fixes the file.
void BuildClusterCdi(const InventorySet& set, const HostView& host,
                     const std::string& host_path_root, const std::string& cdi_dir,
                     const ClusterView* previous, ClusterView* out);

}  // namespace ocid
