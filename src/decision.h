// Load and decide for one container: shared by the hook, the runtime shim
// and `plan`, so every delivery mode activates exactly the same way.
//
//   LoadIfAsked  reads the inventories and config.json and decides, without
//                parsing any JSON, whether any inventory can be asked for
//                (its activation flag occurs in the state or config.json);
//                only then parses them. Nearly every container stops here.
//   PlanFor      builds the Plan through a HostRootView under --host-root.
#pragma once
#include <memory>
#include <string>

#include "bundle_config.h"
#include "error.h"
#include "host_view.h"
#include "inventory.h"
#include "oci_state.h"
#include "options.h"
#include "plan.h"

namespace ocid {

struct Container {
  OciState state;            // from the runtime (hook) or the command line (shim)
  BundleConfig config;
  InventorySet inventories;
  std::string config_path;   // <bundle>/config.json
  std::string config_bytes;  // as read
};

// c->state must be set (bundle at least). On return with *asked == false,
// no inventory can be activated and nothing was parsed. An unreadable
// config directory is reported with *dir_unreadable set, so callers can
// let containers that cannot have asked go on.
bool LoadIfAsked(const Options& opts, const std::string& state_bytes, Container* c,
                 bool* asked, bool* dir_unreadable, Error* err);

// For a state that could not be read or parsed: could the container still
// have asked? Decided as LoadIfAsked decides, from what can be read: false
// when no inventory declares a readable flag, or when no flag occurs in the
// state bytes nor in the config.json of the bundle the state names; true
// when it cannot tell (no usable bundle, config.json unreadable).
bool CouldHaveAsked(const Options& opts, const std::string& state_bytes);

// Plans for a loaded container. `resolve_paths` fills each mount's resolved
// host path (needed by `plan` and by modes that hand paths to a runtime).
bool PlanFor(const Options& opts, const Container& c, bool resolve_paths,
             std::unique_ptr<HostRootView>* host, Plan* plan, Error* err);

// Logs broken inventories: a warning when something was activated, debug
// otherwise.
void ReportBroken(const InventorySet& set, bool activated);

// Logs, as warnings, the requests an activation policy ignored: the
// container starts without that vendor, and the operator should know why.
void ReportIgnored(const std::string& id, const Plan& plan);

}  // namespace ocid
