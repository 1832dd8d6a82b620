// The hook, in the order it works:
//   1. load: the inventories' activation flags, then the state (always read
//      to EOF, scanned for the flags as it streams past); stages with
//      nothing to do stop here, and poststop removes the state directory;
//   2. decide: if none of the flags occurs in the state or config.json
//      bytes at all, stop: the common case costs one directory scan, small
//      reads and no JSON parse of config.json (decision.h);
//   3. plan: parse config.json and build the Plan (pure);
//   4. execute it (plan_executor.h): device cgroup rules on the host,
//      mounts and the preload file in the container's mount namespace;
//   5. report: one line, applied or refused. Any failure takes back what
//      was applied and exits non-zero with one line naming what was wrong
//      and where.
#include "hook_cmd.h"

#include <memory>
#include <optional>
#include <vector>

#include "decision.h"
#include "exit_codes.h"
#include "log.h"
#include "oci_state.h"
#include "plan_executor.h"
#include "planner.h"
#include "runtime_dir.h"

namespace ocid {
namespace {

int Failed(const std::string& id, const Error& e) {
  // The id is the runtime's, but a state can hold any string.
  log::Error((id.empty() ? "" : "container " + Printable(id) + ": ") + e.Line());
  return kExitFailure;
}

// A container that asked, refused: the same line, with the decision and its
// reason as fields (journald, JSON), and the inventories when planned.
int Refused(const std::string& id, const Error& e, const std::string& stage,
            const Plan* plan = nullptr) {
  log::Fields f = plan ? DecisionFields(*plan) : log::Fields{};
  f.container_id = Printable(id);
  f.decision = "refused";
  f.reason = e.Line();
  f.stage = stage;
  log::Write(log::Level::kError, "container " + f.container_id + ": refused: " + f.reason, f);
  return kExitFailure;
}

// Step 1. The inventories come first, so that the state is scanned for
// their flags as it is read: a state of any size is read in chunks, and a
// container that did not ask is never failed by its size (oci_state.h).
// Returns the exit code when the hook is done already; otherwise c->state
// is the parsed state and *state_asks what its bytes ask.
std::optional<int> LoadState(const Options& opts, const std::string& stage, int stdin_fd,
                             RequestScan* scan, Container* c, bool* state_asks) {
  const bool apply = stage == "prestart" || stage == "createRuntime";
  Error err;
  bool dir_unreadable = false;
  bool scanned = apply && ScanInventories(opts, scan, &dir_unreadable, &err);
  StateRequests requests(scan->flags);
  FdInput in(stdin_fd, kMaxStateStreamBytes, StateRequests::Observe, &requests);
  if (!apply && stage != "poststop") {
    in.Drain();  // always to EOF: the runtime must not see EPIPE
    OCID_DEBUG("nothing to do at stage " + stage);
    return 0;
  }
  if (apply && !scanned) {
    // Without the inventories nobody can tell whether the container asked;
    // a container that did not ask must not be harmed, so an unreadable
    // config dir is a warning, not a failure.
    in.Drain();
    log::Warn(err.Line());
    return 0;
  }
  std::string bundle_seen;
  bool state_ok = ParseOciState(&in, &c->state, &err, &bundle_seen);
  in.Drain();
  *state_asks = requests.Asks();
  if (!state_ok) {
    // Even a state the hook cannot use does not fail a container that
    // cannot have asked: no inventory installed, or no activation flag in
    // the state nor in the config.json of the bundle it names. When that
    // cannot be told (no usable bundle), the container may have asked: fail.
    if (!apply || !CouldHaveAsked(*scan, *state_asks, bundle_seen)) {
      log::Warn(err.Line() + " (ignored: no inventory can have been asked for)");
      return 0;
    }
    return Failed("", err);
  }
  return std::nullopt;
}

// poststop: the container's state directory goes; a failure is a warning.
int CleanUp(const Options& opts, const std::string& id) {
  Error err;
  if (!RemoveContainerDir(opts.state_dir, id, &err))
    log::Warn("container " + Printable(id) + ": " + err.Line());
  return 0;
}

// What an active plan needs before anything is applied.
bool MayApply(const Plan& plan, bool confined, Error* err) {
  if (!confined) return Fail(err, "refusing to apply: the hook could not confine itself (seccomp)");
  if (plan.pid <= 0) return Fail(err, "OCI state has no \"pid\" (needed to apply)");
  if (!plan.preload.empty() && !IsSafeContainerId(plan.container_id))
    return Fail(err, "container id is not usable as a directory name", plan.container_id);
  return true;
}

std::string Summary(const Plan& plan) {
  std::string s;
  for (const auto& a : plan.activated) {
    if (!s.empty()) s += "; ";
    s += a.file + " (" + a.requested_by + "): features";
    for (const auto& f : a.features) s += " " + f;
  }
  size_t devices = plan.device_rules.size();
  s += "; " + std::to_string(plan.mounts.size()) + " mounts, " + std::to_string(devices) +
       " devices";
  for (const auto& p : plan.preload) s += ", preload " + p;
  return s;
}

// Step 5: the warnings the hook mode adds, then the decision.
void ReportApplied(const Plan& plan, const std::string& stage) {
  // The profile names a request of the container's choosing.
  for (const auto& w : HookModeWarnings(plan)) {
    log::Fields wf;
    wf.container_id = Printable(plan.container_id);
    log::Write(log::Level::kWarn, Printable("container " + plan.container_id + ": " + w), wf);
  }
  // Summary quotes the request, an env value of the container's choosing.
  log::Fields f = DecisionFields(plan);
  f.decision = "applied";
  f.stage = stage;
  log::Write(log::Level::kInfo,
             Printable("container " + plan.container_id + ": applied " + Summary(plan)), f);
}

}  // namespace

int RunHook(const Options& opts, const std::string& stage, int stdin_fd, bool confined) {
  // 1. Load.
  RequestScan scan;
  Container l;
  bool state_asks = false;
  if (std::optional<int> done = LoadState(opts, stage, stdin_fd, &scan, &l, &state_asks))
    return *done;
  if (stage == "poststop") return CleanUp(opts, l.state.id);

  // 2. Decide.
  Error err;
  bool asked = false;
  bool loaded = LoadIfAsked(opts, scan, state_asks, &l, &asked, &err);
  if (loaded && !asked) {
    ReportNotAsked(l.state.id, stage);
    return 0;
  }
  // It may have asked: the log sockets are opened here, in the host's mount
  // namespace, before anything enters the container's (log.h).
  log::OpenSinks();
  if (!loaded) return Refused(l.state.id, err, stage);

  // 3. Plan.
  std::unique_ptr<HostRootView> host;
  Plan plan;
  if (!PlanFor(opts, l, /*resolve_paths=*/false, &host, &plan, &err))
    return Refused(l.state.id, err, stage);
  ReportBroken(l.inventories, plan.Active());
  ReportIgnored(l.state.id, plan);
  ReportWarnings(l.state.id, plan);
  if (!plan.Active()) {
    OCID_DEBUG(Printable("container " + l.state.id + ": not activated"));
    return 0;
  }

  // 4. Execute: the directories an inventory creates (create_if) first, on
  // the host through root's writer (host_dirs.h), then the plan.
  std::vector<std::string> created;
  if (!MayApply(plan, confined, &err) ||
      !CreateDirectories(plan.container_id, *host, &plan, &created, &err) ||
      !ExecutePlan(opts, plan, *host, &err))
    return Refused(plan.container_id, err, stage, &plan);

  // 5. Report.
  ReportApplied(plan, stage);
  return 0;
}

}  // namespace ocid
