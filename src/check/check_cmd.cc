// `check`, in the order it works: load the inventories, open the host root
// (one HostView for the planner and the small reads), gather the node's
// facts, build the report, print it, exit with the verdict.
#include "check_cmd.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <utility>

#include "check_render.h"
#include "engine_check.h"
#include "host_view.h"
#include "inventory.h"
#include "log.h"
#include "node_check.h"

namespace ocid {
namespace {

bool SelfIdentity(const HostView& host, const CheckOptions& check, FileIdentity* self, Error* err) {
  if (!check.binary.empty()) {
    if (host.Identity(check.binary, self, err) == HostRead::kOk) return true;
    if (err->empty()) *err = Error{"--binary does not exist", host.Display(check.binary)};
    return false;
  }
  struct stat st;
  if (::stat("/proc/self/exe", &st) != 0) return Fail(err, "cannot stat", "/proc/self/exe", errno);
  self->dev = st.st_dev;
  self->ino = st.st_ino;
  return true;
}

}  // namespace

int RunCheck(const Options& opts, const CheckOptions& check) {
  InventorySet set;
  Error err;
  if (!LoadInventoryDir(opts.config_dir, &set, &err)) return log::Failed(err, kCheckBadInput);
  std::unique_ptr<HostRootView> host;
  if (!HostRootView::Open(opts.host_root, &host, &err)) return log::Failed(err, kCheckBadInput);
  host->set_resolve_paths(true);  // as `cdi generate` does: specs name resolved files
  FileIdentity self;
  if (!SelfIdentity(*host, check, &self, &err)) return log::Failed(err, kCheckBadInput);

  NodeFacts node;
  node.nic_vendors = NicVendorsToRead(set);
  HostNics nics = ReadHostNics(*host, node.nic_vendors);
  node.nics = std::move(nics.nics);
  node.nic_error = std::move(nics.error);
  node.cgroup = ReadCgroupLayout(*host);
  node.kernel = kernel::Probe();
  ReadEngineSetup(*host, self, &node.engines);
  if (!ReadCdiFiles(*host, &node.cdi_files, &err) ||
      !ReadCdiPreloadFiles(*host, &node.cdi_preload_files, &err) ||
      !ReadCdiDirs(*host, &node.cdi_dirs, &err))
    node.cdi_error = err.Line();

  CheckReport report = BuildCheckReport(opts.config_dir, set, *host, host->root_path(), node);
  std::string out = check.json ? CheckJson(report) : CheckTable(report);
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  return report.ready ? kCheckReady : kCheckNotReady;
}

}  // namespace ocid
