#include "decision.h"

#include <fcntl.h>

#include "files.h"
#include "log.h"
#include "planner.h"

namespace ocid {
namespace {

// Could any inventory be asked for by this container? A flag that occurs
// nowhere in the state or config.json bytes cannot be in env or annotations.
bool AnyFlagMentioned(const std::vector<InventoryFile>& files, const std::string& state,
                      const std::string& config) {
  auto mentioned = [&](const std::string& flag) {
    return !flag.empty() && (config.find(flag) != std::string::npos ||
                             state.find(flag) != std::string::npos);
  };
  std::vector<std::string> flags;
  for (const auto& f : files) {
    if (f.bytes.empty()) continue;  // unreadable: nobody can ask for it
    if (!QuickActivationFlags(f.bytes, &flags)) {
      InventorySet one;
      ParseInventoryFiles({f}, &one);
      flags.clear();
      for (const auto& inv : one.inventories) flags.push_back(inv.activation_flag);
      for (const auto& b : one.broken) flags.push_back(b.activation_flag);
    }
    for (const auto& flag : flags)
      if (mentioned(flag)) return true;
  }
  return false;
}

}  // namespace

bool LoadIfAsked(const Options& opts, const std::string& state_bytes, Container* c,
                 bool* asked, bool* dir_unreadable, Error* err) {
  *asked = false;
  *dir_unreadable = false;
  std::vector<InventoryFile> files;
  if (!ReadInventoryDir(opts.config_dir, &files, err)) {
    *dir_unreadable = true;
    return false;
  }
  if (files.empty()) return true;
  c->config_path = c->state.bundle + "/config.json";
  if (!ReadFileAt(AT_FDCWD, c->config_path, kMaxConfigBytes, &c->config_bytes, err)) return false;
  if (!AnyFlagMentioned(files, state_bytes, c->config_bytes)) {
    OCID_DEBUG("no activation flag of " + std::to_string(files.size()) +
               " inventories mentioned (inventories not parsed)");
    return true;
  }
  *asked = true;
  ParseInventoryFiles(files, &c->inventories);
  return ParseBundleConfig(c->config_bytes, c->config_path, &c->config, err);
}

bool PlanFor(const Options& opts, const Container& c, bool resolve_paths,
             std::unique_ptr<HostRootView>* host, Plan* plan, Error* err) {
  if (!HostRootView::Open(opts.host_root, host, err)) return false;
  (*host)->set_resolve_paths(resolve_paths);
  PlanInputs in{&c.state, &c.config, &c.inventories, host->get()};
  return BuildPlan(in, plan, err);
}

void ReportBroken(const InventorySet& set, bool activated) {
  for (const auto& b : set.broken) {
    std::string line = "ignoring " + b.error.Line();
    if (activated) log::Warn(line);
    else OCID_DEBUG(line);
  }
}

void ReportIgnored(const std::string& id, const Plan& plan) {
  for (const auto& i : plan.ignored) log::Warn("container " + id + ": ignoring request " + i);
}

}  // namespace ocid
