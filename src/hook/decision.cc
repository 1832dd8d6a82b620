#include "decision.h"

#include <fcntl.h>

#include <nlohmann/json.hpp>

#include "activation.h"
#include "files.h"
#include "log.h"
#include "planner.h"

namespace ocid {
namespace {

// Every activation flag the inventory files may declare: found by the quick
// scan, or by parsing a file the scan cannot read.
std::vector<std::string> DeclaredFlags(const std::vector<InventoryFile>& files) {
  std::vector<std::string> all, flags;
  for (const auto& f : files) {
    if (f.bytes.empty()) continue;  // unreadable: nobody can ask for it
    if (!QuickActivationFlags(f.bytes, &flags)) {
      InventorySet one;
      ParseInventoryFiles({f}, &one);
      flags.clear();
      for (const auto& inv : one.inventories) flags.push_back(inv.activation_flag);
      for (const auto& b : one.broken) flags.push_back(b.activation_flag);
    }
    for (auto& flag : flags)
      if (!flag.empty()) all.push_back(std::move(flag));
    flags.clear();
  }
  return all;
}

// An inventory's name, as `cdi generate --inventory` takes it: its file
// name without the directory and ".json".
std::string InventoryName(const std::string& file) {
  std::string name = file.substr(file.rfind('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
    name.resize(name.size() - 5);
  return name;
}

bool BytesMention(const RequestScan& scan, std::string_view bytes) {
  FlagScanner s(scan.flags);
  s.Feed(bytes);
  return s.mentioned();
}

}  // namespace

bool ScanInventories(const Options& opts, RequestScan* out, bool* dir_unreadable, Error* err) {
  *dir_unreadable = false;
  if (!ReadInventoryDir(opts.config_dir, &out->files, err)) {
    *dir_unreadable = true;
    return false;
  }
  out->flags = DeclaredFlags(out->files);
  return true;
}

bool LoadIfAsked(const Options&, const RequestScan& scan, bool state_mentions,
                 Container* c, bool* asked, Error* err) {
  *asked = false;
  if (scan.flags.empty()) return true;
  c->config_path = c->state.bundle + "/config.json";
  bool mentioned = state_mentions;
  if (!mentioned) {
    // Scanned in chunks: any size, a symlink followed as the runtime did.
    FlagScanner scanner(scan.flags);
    Error e;
    if (!ScanFileForFlags(c->config_path, &scanner, &e)) {
      log::Warn("container " + Printable(c->state.id) + ": " + e.Line() +
                " (no request can be read from it: the container did not ask)");
      return true;
    }
    mentioned = scanner.mentioned();
  }
  if (!mentioned) {
    OCID_DEBUG("no activation flag of " + std::to_string(scan.files.size()) +
               " inventories mentioned (inventories not parsed)");
    return true;
  }
  // A flag occurs: the container may have asked, and the caps apply.
  *asked = true;
  if (!ReadFileAt(AT_FDCWD, c->config_path, kMaxConfigBytes, &c->config_bytes, err)) return false;
  ParseInventoryFiles(scan.files, &c->inventories);
  ConfigInterest interest = InterestOf(c->inventories);
  return ParseBundleConfig(c->config_bytes, c->config_path, &c->config, err, &interest);
}

bool LoadIfAsked(const Options& opts, const std::string& state_bytes, Container* c,
                 bool* asked, bool* dir_unreadable, Error* err) {
  *asked = false;
  RequestScan scan;
  if (!ScanInventories(opts, &scan, dir_unreadable, err)) return false;
  return LoadIfAsked(opts, scan, BytesMention(scan, state_bytes), c, asked, err);
}

bool CouldHaveAsked(const RequestScan& scan, bool state_mentions, const std::string& bundle) {
  if (scan.flags.empty()) return false;
  if (state_mentions) return true;
  // The rest of the request may be in config.json, if the state still
  // names a bundle.
  if (bundle.empty() || bundle[0] != '/' || bundle.find('\0') != std::string::npos) return true;
  FlagScanner scanner(scan.flags);
  Error ignored;
  if (!ScanFileForFlags(bundle + "/config.json", &scanner, &ignored)) return true;
  return scanner.mentioned();
}

bool CouldHaveAsked(const Options& opts, const std::string& state_bytes) {
  RequestScan scan;
  bool dir_unreadable = false;
  Error ignored;
  // As in LoadIfAsked: without readable inventories nobody can have asked.
  if (!ScanInventories(opts, &scan, &dir_unreadable, &ignored)) return false;
  FlagScanner scanner(scan.flags);
  FdInput in(state_bytes, FlagScanner::Observe, &scanner);
  OciState st;
  std::string bundle;
  ParseOciState(&in, &st, &ignored, &bundle);
  return CouldHaveAsked(scan, scanner.mentioned(), bundle);
}

ConfigInterest InterestOf(const InventorySet& set) {
  ConfigInterest in;
  auto flag = [&in](const std::string& f) {
    if (f.empty()) return;
    in.env_names.insert(f);
    in.annotation_keys.insert(std::string(kAnnotationPrefix) + f);
  };
  for (const auto& inv : set.inventories) {
    flag(inv.activation_flag);
    if (inv.HasProfiles()) flag(inv.activation_flag + "_PROFILE");
    for (const auto& [k, v] : inv.policy.require_annotations) in.annotation_keys.insert(k);
  }
  for (const auto& b : set.broken) flag(b.activation_flag);
  return in;
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

void ReportNotAsked(const std::string& id, const std::string& stage) {
  if (!log::Enabled(log::Level::kDebug)) return;
  log::Fields f{Printable(id), "", "", "ignored", "did not ask", stage};
  log::Write(log::Level::kDebug, Printable("container " + id + ": ignored: did not ask"), f);
}

void ReportIgnored(const std::string& id, const Plan& plan) {
  // The request quotes an env value or annotation of the container's choosing.
  for (const auto& i : plan.ignored) {
    log::Fields f{Printable(id), "", "", "ignored", Printable(i), ""};
    log::Write(log::Level::kWarn, Printable("container " + id + ": ignored: request " + i), f);
  }
}

log::Fields DecisionFields(const Plan& plan) {
  log::Fields f;
  f.container_id = Printable(plan.container_id);
  for (const auto& a : plan.activated) {
    f.inventory += (f.inventory.empty() ? "" : ",") + InventoryName(a.file);
    for (const auto& feature : a.features) f.feature += (f.feature.empty() ? "" : ",") + feature;
  }
  return f;
}

void ReportWarnings(const std::string& id, const Plan& plan) {
  for (const auto& w : plan.warnings) {
    log::Fields f;
    f.container_id = Printable(id);
    log::Write(log::Level::kWarn, Printable("container " + id + ": " + w), f);
  }
}

}  // namespace ocid
