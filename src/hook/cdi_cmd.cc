// `cdi generate`, in the order it works: load the inventories and select
// those asked for (a broken one is a warning, or the error when it was
// named); open the host root; for each, render its spec (cdi.h), create
// the directories it mounts and creates (host_dirs.h), and write it with
// its preload files, or print it. The exit code is 1 when any
// selected inventory gave no spec or a write failed; the others are still
// written.
#include "cdi_cmd.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "cdi.h"
#include "cdi_dir.h"
#include "exit_codes.h"
#include "host_dirs.h"
#include "host_view.h"
#include "inventory.h"
#include "log.h"
#include "path_text.h"
#include "plan.h"

namespace ocid {
namespace {

// The inventories `cdi` selects, in file-name order. A broken one is
// ignored with a warning when all are asked for, and an error (*rc = 1)
// when it was named. False (with the line logged) when nothing can be
// written: no inventory selected, or several for one output.
bool SelectInventories(const Options& opts, const CdiOptions& cdi, const InventorySet& set,
                       std::vector<const Inventory*>* selected, int* rc) {
  for (const auto& inv : set.inventories)
    if (cdi.inventory.empty() || InventoryStem(inv.file) == cdi.inventory)
      selected->push_back(&inv);
  for (const auto& b : set.broken) {
    if (!cdi.inventory.empty() && InventoryStem(b.file) != cdi.inventory) continue;
    if (cdi.inventory.empty()) {
      log::Warn("ignoring " + b.error.Line());
    } else {
      log::Error(b.error.Line());
      *rc = kExitFailure;
    }
  }
  if (selected->empty()) {
    if (*rc == 0)
      log::Error(cdi.inventory.empty() ? "no inventories in " + opts.config_dir
                                       : "no inventory \"" + cdi.inventory + "\" (" +
                                             cdi.inventory + ".json) in " + opts.config_dir);
    return false;
  }
  if (cdi.output_dir.empty() && selected->size() > 1) {
    log::Error(std::to_string(selected->size()) + " inventories in " + opts.config_dir +
               ": write them with --output-dir DIR, or select one with --inventory NAME");
    return false;
  }
  return true;
}

// Where an inventory's spec goes: `dest` as given ("" or "-" = stdout) and
// the absolute path the spec names its preload files by, as the engine on
// this host will open them ("" for stdout).
struct SpecDestination {
  std::string dest, spec_path;
  bool ToStdout() const { return spec_path.empty(); }
};

bool DestinationOf(const CdiOptions& cdi, const Inventory& inv, SpecDestination* out, Error* err) {
  out->dest = cdi.output_dir.empty() ? cdi.output : cdi.output_dir + "/" + CdiFileName(inv);
  out->spec_path.clear();
  if (out->dest.empty() || out->dest == "-") return true;
  std::error_code ec;
  out->spec_path = std::filesystem::absolute(out->dest, ec).lexically_normal().string();
  if (ec) return Fail(err, "cannot make the output path absolute", out->dest, ec.value());
  return true;
}

void PrintSpec(const Inventory& inv, const CdiSpec& spec) {
  if (spec.preload_in_env)
    log::Warn(inv.file +
              ": a spec on stdout preloads through env LD_PRELOAD, which "
              "replaces a container's own LD_PRELOAD; write it with --output-dir DIR "
              "(or --output FILE) to preload through /etc/ld.so.preload instead");
  std::fputs(spec.json.c_str(), stdout);
  std::fflush(stdout);
}

// The preload files, then the spec (CdiFilesOf), each replaced atomically,
// whether or not it is current, through one CDI directory writer.
bool WriteSpec(const SpecDestination& to, const CdiSpec& spec, Error* err) {
  std::string dir = to.spec_path.substr(0, to.spec_path.rfind('/'));
  const std::vector<CdiFileToWrite> files = CdiFilesOf(spec);
  CdiDirWriter writer;
  if (!CdiDirWriter::Open(Dirname(to.spec_path), /*create=*/true, &writer, err)) {
    // The directory's own line ("directory /tmp/cdi is writable by others
    // (owner 0, mode 1777)") after the first file it was for.
    bool refused = err->errnum == 0 && err->path.empty();
    err->what = (refused ? "refusing to write " : "cannot write ") + dir + "/" +
                files.front().name + ": " + err->what;
    return false;
  }
  std::vector<std::string> written;
  if (!writer.WriteSpecFiles(files, /*always=*/true, &written, err)) return false;
  log::Info("wrote " + to.dest + ": " + CdiSpecSummary(spec) +
            (spec.preload_files.empty() ? std::string()
                                        : " (and " + std::to_string(spec.preload_files.size()) +
                                              " preload file(s) in " + dir + ")"));
  return true;
}

// The directories the spec's devices mount and create (create_if), made on
// the host before the spec is written: an engine binds a spec's mount source
// as it finds it. One line each; they stay (until a reboot, for a
// directory on a tmpfs such as /run: the package's tmpfiles.d entry makes
// /run/onload again at boot).
bool CreateSpecDirectories(const HostRootView& host, const CdiSpec& spec, Error* err) {
  Plan plan;
  plan.mounts = spec.create;
  std::vector<std::string> created;
  if (!CreatePlannedDirectories(host.fd(), &plan, &created, err)) return false;
  for (const auto& path : created) log::Info("created " + path + " (root, 0755)");
  return true;
}

// One inventory: its destination, its spec (warnings logged), then stdout
// or the files. False with *err when it gave nothing.
bool GenerateOne(const CdiOptions& cdi, const Inventory& inv, const HostRootView& host,
                 Error* err) {
  SpecDestination to;
  if (!DestinationOf(cdi, inv, &to, err)) return false;
  CdiSpec spec;
  bool built = BuildCdiSpec(inv, host, host.root_path(), to.spec_path, &spec, err,
                            /*versions=*/nullptr, cdi.max_version);
  for (const auto& w : spec.warnings) log::Warn(inv.file + ": " + w);
  if (!built) return false;
  if (cdi.max_version.empty() && spec.cdi_version == "0.7.0")
    log::Warn(inv.file + ": the spec" + (to.ToStdout() ? "" : " " + to.dest) +
              " needs cdiVersion 0.7.0 (additionalGids): an engine whose CDI library is older "
              "than 0.7 (Debian 12's podman 4.3) refuses the whole spec; --cdi-version 0.5.0 "
              "leaves the group out");
  if (to.ToStdout()) {
    for (const auto& m : spec.create)
      log::Warn(inv.file + ": the spec mounts " + m.source +
                ", missing on the host: it must exist when a container is created (write the "
                "spec with --output-dir or --output, which creates it)");
    PrintSpec(inv, spec);
    return true;
  }
  return CreateSpecDirectories(host, spec, err) && WriteSpec(to, spec, err);
}

}  // namespace

const std::vector<std::string>& CdiVersionChoices() {
  static const std::vector<std::string> kChoices = {"0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0"};
  return kChoices;
}

int RunCdiGenerate(const Options& opts, const CdiOptions& cdi) {
  // Load, and decide which inventories.
  InventorySet set;
  Error err;
  if (!LoadInventoryDir(opts.config_dir, &set, &err)) return log::Failed(err, kExitFailure);
  std::vector<const Inventory*> selected;
  int rc = 0;
  if (!SelectInventories(opts, cdi, set, &selected, &rc)) return kExitFailure;

  // The host, with resolved paths: a spec names the very files.
  std::unique_ptr<HostRootView> host;
  if (!HostRootView::Open(opts.host_root, &host, &err)) return log::Failed(err, kExitFailure);
  host->set_resolve_paths(true);

  // Plan and write each; a kind another inventory has is refused.
  std::map<std::string, std::string> conflicts = CdiKindConflicts(set);
  for (const Inventory* inv : selected) {
    if (auto c = conflicts.find(inv->file); c != conflicts.end())
      rc = log::Failed(Error{c->second, "", 0}, kExitFailure);
    else if (!GenerateOne(cdi, *inv, *host, &err))
      rc = log::Failed(err, kExitFailure);
  }
  return rc;
}

}  // namespace ocid
