#include "decision.h"

#include <fcntl.h>

#include "container_plan.h"
#include "files.h"
#include "host_dirs.h"
#include "library_dirs.h"
#include "log.h"
#include "spec_keys.h"

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

bool StateAsks(const RequestScan& scan, std::string_view bytes) {
  StateRequests s(scan.flags);
  StateRequests::Observe(&s, bytes);
  return s.Asks();
}

// Does config.json ask? *asks is false when no flag occurs in it, or runc's
// reading holds no request; true when it asks or, with a flag mentioned,
// cannot be decoded (request_reader.h: runc would refuse it). False with
// `err` when the file cannot be scanned.
bool ConfigAsks(const RequestScan& scan, const std::string& path, bool* asks, Error* err) {
  *asks = false;
  FlagScanner scanner(scan.flags);
  RequestReader reader(scan.flags, RequestReader::Document::kConfig);
  if (!ScanFileForFlags(path, &scanner, &reader, err)) return false;
  if (!scanner.mentioned()) {
    OCID_DEBUG("no activation flag of " + std::to_string(scan.files.size()) +
               " inventories mentioned (inventories not parsed)");
    return true;
  }
  RequestReader::Verdict v = reader.Finish();
  if (v == RequestReader::Verdict::kNotAsked) {
    OCID_DEBUG("an activation flag is mentioned in " + Printable(path) +
               " but not requested, as runc reads it (not parsed)");
    return true;
  }
  if (v == RequestReader::Verdict::kUnreadable)
    OCID_DEBUG(Printable(path) + " mentions an activation flag and runc could not decode it (" +
               reader.Detail() + "): parsed strictly");
  else
    OCID_DEBUG(Printable(path) + " asks: " + reader.Detail());
  *asks = true;
  return true;
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

bool LoadIfAsked(const Options&, const RequestScan& scan, bool state_asks, Container* c,
                 bool* asked, Error* err) {
  *asked = false;
  if (scan.flags.empty()) return true;
  c->config_path = c->state.bundle + "/config.json";
  if (!state_asks) {
    // Read in chunks: any size, a symlink followed as the runtime did.
    Error e;
    bool asks = false;
    if (!ConfigAsks(scan, c->config_path, &asks, &e)) {
      log::Warn("container " + Printable(c->state.id) + ": " + e.Line() +
                " (no request can be read from it: the container did not ask)");
      return true;
    }
    if (!asks) return true;
  }
  // It asks: the caps apply.
  *asked = true;
  if (!ReadFileAt(AT_FDCWD, c->config_path, kMaxConfigBytes, &c->config_bytes, err)) return false;
  ParseInventoryFiles(scan.files, &c->inventories);
  ConfigInterest interest = InterestOf(c->inventories);
  return ParseBundleConfig(c->config_bytes, c->config_path, &c->config, err, &interest);
}

bool LoadIfAsked(const Options& opts, const std::string& state_bytes, Container* c, bool* asked,
                 bool* dir_unreadable, Error* err) {
  *asked = false;
  RequestScan scan;
  if (!ScanInventories(opts, &scan, dir_unreadable, err)) return false;
  return LoadIfAsked(opts, scan, StateAsks(scan, state_bytes), c, asked, err);
}

bool CouldHaveAsked(const RequestScan& scan, bool state_asks, const std::string& bundle) {
  if (scan.flags.empty()) return false;
  if (state_asks) return true;
  // The rest of the request may be in config.json, if the state still
  // names a bundle.
  if (bundle.empty() || bundle[0] != '/' || bundle.find('\0') != std::string::npos) return true;
  Error ignored;
  bool asks = false;
  if (!ConfigAsks(scan, bundle + "/config.json", &asks, &ignored)) return true;
  return asks;
}

bool CouldHaveAsked(const Options& opts, const std::string& state_bytes) {
  RequestScan scan;
  bool dir_unreadable = false;
  Error ignored;
  // As in LoadIfAsked: without readable inventories nobody can have asked.
  if (!ScanInventories(opts, &scan, &dir_unreadable, &ignored)) return false;
  StateRequests requests(scan.flags);
  FdInput in(state_bytes, StateRequests::Observe, &requests);
  OciState st;
  std::string bundle;
  ParseOciState(&in, &st, &ignored, &bundle);
  in.Drain();
  return CouldHaveAsked(scan, requests.Asks(), bundle);
}

bool PlanFor(const Options& opts, const Container& c, bool resolve_paths,
             std::unique_ptr<HostRootView>* host, Plan* plan, Error* err) {
  if (!HostRootView::Open(opts.host_root, host, err)) return false;
  (*host)->set_resolve_paths(resolve_paths);
  // Where the image's loader looks, probed in the rootfs as the runtime
  // names it on the host (library_dirs.h: fixed candidates, by descriptor,
  // nothing read). Only a container that asked gets here; the hook's
  // executor checks later that the container's rootfs is this directory.
  const ContainerFacts facts = ContainerFactsOf(c.state, c.config);
  ContainerDecision decision;
  return PlanContainer(facts, c.inventories, **host, ProbeLibraryDirs(facts.rootfs), &decision,
                       plan, err);
}

bool CreateDirectories(const std::string& id, const HostRootView& host, Plan* plan,
                       std::vector<std::string>* lines, Error* err) {
  std::vector<std::string> created;
  if (!CreatePlannedDirectories(host.fd(), plan, &created, err)) return false;
  for (const auto& path : created) {
    log::Fields f;
    f.container_id = Printable(id);
    std::string line =
        Printable("container " + id + ": created " + path + " (root, 0755) on the host");
    log::Write(log::Level::kInfo, line, f);
    lines->push_back(std::move(line));
  }
  return true;
}

void ReportBroken(const InventorySet& set, bool activated) {
  for (const auto& b : set.broken) {
    std::string line = "ignoring " + b.error.Line();
    if (activated)
      log::Warn(line);
    else
      OCID_DEBUG(line);
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
    f.inventory += (f.inventory.empty() ? "" : ",") + InventoryStem(a.file);
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
