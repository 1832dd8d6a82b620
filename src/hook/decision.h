// Load and decide for one container: shared by the hook, the runtime shim
// and `plan`, so every delivery mode activates exactly the same way.
//
//   ScanInventories  reads the inventory files and the activation flags they
//                declare, before anything the container handed over is read.
//   LoadIfAsked  decides, without parsing any JSON, whether any inventory can
//                be asked for (its activation flag occurs in the state or
//                config.json: request_scan.h); only then parses them. Nearly
//                every container stops here, whatever the size or kind of
//                its config.json.
//   PlanFor      builds the Plan through a HostRootView under --host-root.
#pragma once
#include <memory>
#include <string>

#include "bundle_config.h"
#include "error.h"
#include "host_view.h"
#include "inventory.h"
#include "log.h"
#include "oci_state.h"
#include "options.h"
#include "plan.h"
#include "request_scan.h"

namespace ocid {

struct Container {
  OciState state;            // from the runtime (hook) or the command line (shim)
  BundleConfig config;
  InventorySet inventories;
  std::string config_path;   // <bundle>/config.json
  std::string config_bytes;  // as read
};

// The inventory files and every activation flag they may declare.
struct RequestScan {
  std::vector<InventoryFile> files;
  std::vector<std::string> flags;
};

// An unreadable config directory fails with *dir_unreadable set, so callers
// can let containers that cannot have asked go on.
bool ScanInventories(const Options& opts, RequestScan* out, bool* dir_unreadable, Error* err);

// c->state must be set (bundle at least); `state_mentions` says whether a
// flag occurred in the state's bytes. On return with *asked == false, no
// inventory can be activated and nothing was parsed. A config.json that
// cannot be scanned (not a regular file, unreadable) holds no request the
// hook can see: with none in the state either, the container did not ask
// (a warning says so). Once a flag occurs, the caps apply: config.json must
// be a regular file of at most kMaxConfigBytes, not a symlink.
bool LoadIfAsked(const Options& opts, const RequestScan& scan, bool state_mentions,
                 Container* c, bool* asked, Error* err);
// The same from the state's bytes, reading the inventories first.
bool LoadIfAsked(const Options& opts, const std::string& state_bytes, Container* c,
                 bool* asked, bool* dir_unreadable, Error* err);

// For a state that could not be read or parsed: could the container still
// have asked? Decided as LoadIfAsked decides, from what can be read: false
// when no inventory declares a readable flag, or when no flag occurs in the
// state bytes nor in the config.json of the bundle the state names
// (`bundle`, as far as the state could be read); true when it cannot tell
// (no usable bundle, config.json unreadable).
bool CouldHaveAsked(const RequestScan& scan, bool state_mentions, const std::string& bundle);
// The same from the state's bytes, reading the inventories first.
bool CouldHaveAsked(const Options& opts, const std::string& state_bytes);

// What config.json parsing must keep for these inventories: their flags as
// env names and annotations, and the annotations their policies require.
ConfigInterest InterestOf(const InventorySet& set);

// Plans for a loaded container. `resolve_paths` fills each mount's resolved
// host path (needed by `plan` and by modes that hand paths to a runtime).
bool PlanFor(const Options& opts, const Container& c, bool resolve_paths,
             std::unique_ptr<HostRootView>* host, Plan* plan, Error* err);

// Logs broken inventories: a warning when something was activated, debug
// otherwise.
void ReportBroken(const InventorySet& set, bool activated);

// Logs, at debug level, that a container did not ask: the decision
// "ignored" with the reason "did not ask", so that a debug log carries a
// DECISION for every container. Costs nothing below debug.
void ReportNotAsked(const std::string& id, const std::string& stage);

// Logs, as warnings, the requests an activation policy ignored: the
// container starts without that vendor, and the operator should know why.
void ReportIgnored(const std::string& id, const Plan& plan);

// Logs the plan's warnings (a version lock not checked, or a mismatch
// allowed): the container starts, and the operator should know.
void ReportWarnings(const std::string& id, const Plan& plan);

// The container id and what was activated (inventory names, features;
// comma-separated when more than one), for a decision's log fields.
log::Fields DecisionFields(const Plan& plan);

}  // namespace ocid
