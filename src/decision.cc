#include "decision.h"

#include <fcntl.h>

#include <nlohmann/json.hpp>

#include "files.h"
#include "log.h"
#include "planner.h"

namespace ocid {
namespace {

// Does `pred` hold for any activation flag the inventory files declare?
template <typename Pred>
bool AnyFlag(const std::vector<InventoryFile>& files, Pred pred) {
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
      if (pred(flag)) return true;
  }
  return false;
}

// Do the bytes spell a character a flag name can hold (letter, digit, '_')
// as a JSON escape, \u00XX? A flag written so ("OCI\u005fONLOAD") is not
// found literally, yet is the same string once parsed. Encoders escape
// only <, >, &, controls and the like, so real files take the fast path.
bool EscapesFlagCharacter(const std::string& bytes) {
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t p = bytes.find("\\u00"); p != std::string::npos && p + 6 <= bytes.size();
       p = bytes.find("\\u00", p + 1)) {
    int hi = hex(bytes[p + 4]), lo = hex(bytes[p + 5]);
    if (hi < 0 || lo < 0) continue;
    char c = static_cast<char>(hi * 16 + lo);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')
      return true;
  }
  return false;
}

// Could any inventory be asked for by this container? A flag that occurs
// nowhere in the state or config.json bytes, not even escaped, cannot be
// in env or annotations.
bool AnyFlagMentioned(const std::vector<InventoryFile>& files, const std::string& state,
                      const std::string& config) {
  const bool escaped = EscapesFlagCharacter(config) || EscapesFlagCharacter(state);
  return AnyFlag(files, [&](const std::string& flag) {
    return !flag.empty() && (escaped || config.find(flag) != std::string::npos ||
                             state.find(flag) != std::string::npos);
  });
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

bool CouldHaveAsked(const Options& opts, const std::string& state_bytes) {
  std::vector<InventoryFile> files;
  Error ignored;
  // As in LoadIfAsked: without readable inventories nobody can have asked.
  if (!ReadInventoryDir(opts.config_dir, &files, &ignored)) return false;
  if (!AnyFlag(files, [](const std::string& flag) { return !flag.empty(); })) return false;
  if (AnyFlagMentioned(files, state_bytes, "")) return true;
  // The rest of the request may be in config.json, if the state still
  // names a bundle.
  nlohmann::json j = nlohmann::json::parse(state_bytes, nullptr, false);
  std::string bundle;
  if (j.is_object())
    if (auto it = j.find("bundle"); it != j.end() && it->is_string()) bundle = it->get<std::string>();
  if (bundle.empty() || bundle[0] != '/' || bundle.find('\0') != std::string::npos) return true;
  std::string config;
  if (!ReadFileAt(AT_FDCWD, bundle + "/config.json", kMaxConfigBytes, &config, &ignored))
    return true;
  return AnyFlagMentioned(files, state_bytes, config);
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
  // The request quotes an env value or annotation of the container's choosing.
  for (const auto& i : plan.ignored)
    log::Warn(Printable("container " + id + ": ignoring request " + i));
}

}  // namespace ocid
