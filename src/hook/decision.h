// Load and decide for one container: shared by the hook, the runtime shim
// and `plan`, so every delivery mode activates exactly the same way.
//
//   ScanInventories  reads the inventory files and the activation flags they
//                declare, before anything the container handed over is read.
//   LoadIfAsked  decides whether any inventory is asked for: nearly every
//                container stops at the raw-byte scan (no activation flag
//                occurs in the state or config.json: request_scan.h); where
//                one occurs, the streaming request reader decides as runc
//                reads the document (request_reader.h). Only a container
//                that asks meets the caps and the strict parse, so one that
//                did not ask is never failed by its config.json's size or
//                bytes.
//   PlanFor      builds the Plan through a HostRootView under --host-root,
//                with the library directories of the container's image
//                (library_dirs.h: the directory of its libc.so.6): the
//                container's facts planned by PlanContainer (container_plan.h).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bundle_config.h"
#include "error.h"
#include "host_view.h"
#include "inventory.h"
#include "log.h"
#include "oci_state.h"
#include "options.h"
#include "plan.h"
#include "request_reader.h"
#include "request_scan.h"

namespace ocid {

struct Container {
  OciState state;  // from the runtime (hook) or the command line (shim)
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

// The state's bytes as they stream past (an FdInput observer): the flag
// scan and the request reader together. Asks() is true when the state's
// annotations ask, or a flag occurs and the state cannot be read to tell.
class StateRequests {
 public:
  explicit StateRequests(const std::vector<std::string>& flags)
      : scanner_(flags), reader_(flags, RequestReader::Document::kState) {}
  static void Observe(void* self, std::string_view chunk) {
    auto* s = static_cast<StateRequests*>(self);
    s->scanner_.Feed(chunk);
    s->reader_.Feed(chunk);
  }
  bool Asks() const {
    return scanner_.mentioned() && reader_.Finish() != RequestReader::Verdict::kNotAsked;
  }

 private:
  FlagScanner scanner_;
  RequestReader reader_;
};

// c->state must be set (bundle at least); `state_asks` is StateRequests'
// Asks(). On return with *asked == false, no inventory can be activated and
// nothing was parsed. A config.json that cannot be scanned (not a regular
// file, unreadable) holds no request the hook can see: with none in the
// state either, the container did not ask (a warning says so). Once it
// asks, the caps apply: config.json must be a regular file of at most
// kMaxConfigBytes, not a symlink, and parse strictly.
bool LoadIfAsked(const Options& opts, const RequestScan& scan, bool state_asks, Container* c,
                 bool* asked, Error* err);
// The same from the state's bytes, reading the inventories first.
bool LoadIfAsked(const Options& opts, const std::string& state_bytes, Container* c, bool* asked,
                 bool* dir_unreadable, Error* err);

// For a state that could not be read or parsed: could the container still
// have asked? Decided as LoadIfAsked decides, from what can be read: false
// when no inventory declares a readable flag, or when neither the state
// nor the config.json of the bundle the state names (`bundle`, as far as
// the state could be read) asks; true when it cannot tell (no usable
// bundle, config.json unreadable).
bool CouldHaveAsked(const RequestScan& scan, bool state_asks, const std::string& bundle);
// The same from the state's bytes, reading the inventories first.
bool CouldHaveAsked(const Options& opts, const std::string& state_bytes);

// Plans for a loaded container. `resolve_paths` fills each mount's resolved
// host path (needed by `plan` and by modes that hand paths to a runtime).
bool PlanFor(const Options& opts, const Container& c, bool resolve_paths,
             std::unique_ptr<HostRootView>* host, Plan* plan, Error* err);

// The first step of carrying a plan out (the hook, the runtime shim):
// its create_if directories made on the host under `host`'s root through
// root's writer (host_dirs.h), one info line each, also appended to *lines
// (the shim copies them into the runtime's log).
bool CreateDirectories(const std::string& id, const HostRootView& host, Plan* plan,
                       std::vector<std::string>* lines, Error* err);

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
