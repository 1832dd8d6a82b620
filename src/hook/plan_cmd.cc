// `plan`, in the order it works: load the bundle's config.json and the
// inventories; decide and plan as the hook does (decision.h), but always
// parsing everything, with resolved host paths: it is for people; report
// the warnings the hook would log, and print the plan. A config.json the
// hook would never parse, for a container that cannot ask, plans nothing.
#include "plan_cmd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>

#include "decision.h"
#include "exit_codes.h"
#include "files.h"
#include "log.h"
#include "plan_json.h"
#include "planner.h"

namespace ocid {
namespace {

// The container a bundle directory stands for: an absolute bundle path,
// the id its name, config.json in it.
bool BundleContainer(const std::string& bundle, Container* c, Error* err) {
  std::string b = bundle;
  while (b.size() > 1 && b.back() == '/') b.pop_back();
  if (b.empty() || b[0] != '/') {
    char cwd[4096];
    if (!::getcwd(cwd, sizeof cwd)) return Fail(err, "cannot get cwd", "", errno);
    b = std::string(cwd) + "/" + b;
  }
  c->state.bundle = b;
  c->state.id = b.substr(b.rfind('/') + 1);
  c->config_path = b + "/config.json";
  return true;
}

// A config.json the hook would not parse: for a container that does not
// ask, as runc reads config.json, the plan is to do nothing (decision.h).
// False when the container could have asked: then it is the error.
bool CannotAsk(const Options& opts, const Container& c) {
  RequestScan scan;
  bool dir_unreadable = false;
  Error ignored;
  return ScanInventories(opts, &scan, &dir_unreadable, &ignored) &&
         !CouldHaveAsked(scan, false, c.state.bundle);
}

int Print(const Plan& plan) {
  std::fputs(PlanToJson(plan).c_str(), stdout);
  return 0;
}

}  // namespace

int RunPlan(const Options& opts, const std::string& bundle) {
  // Load: the bundle's config.json, parsed whole.
  Container l;
  Error err;
  if (!BundleContainer(bundle, &l, &err)) return log::Failed(err, kExitFailure);
  Plan plan;
  if (!ReadFileAt(AT_FDCWD, l.config_path, kMaxConfigBytes, &l.config_bytes, &err) ||
      !ParseBundleConfig(l.config_bytes, l.config_path, &l.config, &err)) {
    if (!CannotAsk(opts, l)) return log::Failed(err, kExitFailure);
    log::Warn(err.Line() + " (not needed: the container does not ask, as runc reads it)");
    plan.container_id = l.state.id;
    return Print(plan);
  }

  // Decide and plan, as the hook would.
  std::unique_ptr<HostRootView> host;
  if (!LoadInventoryDir(opts.config_dir, &l.inventories, &err) ||
      !PlanFor(opts, l, /*resolve_paths=*/true, &host, &plan, &err))
    return log::Failed(err, kExitFailure);

  // Report what the hook would warn about (and what hook mode cannot do),
  // then the plan.
  for (const auto& broken : l.inventories.broken) log::Warn("ignoring " + broken.error.Line());
  for (auto& w : HookModeWarnings(plan)) plan.warnings.push_back(std::move(w));
  for (const auto& w : plan.warnings) log::Warn(w);
  return Print(plan);
}

}  // namespace ocid
