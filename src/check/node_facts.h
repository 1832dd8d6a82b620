// What `check` reads about the node itself, through the HostView (rooted at
// --host-root, so tests hand it fake sysfs trees): the cgroup layout and the
// CDI spec files, and the engines' setup as gathered by engine_check. The
// NICs are read by nic.h (the device plugin reads them too). Parsers take
// bytes; the Read* functions only fetch them.
#pragma once
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "error.h"
#include "host_view.h"
#include "kernel_features.h"
#include "nic.h"

namespace ocid {

// The cgroup layout of the host, from <host-root>/sys/fs/cgroup:
//   v2      cgroup.controllers at the top (the unified hierarchy alone);
//   hybrid  v1 controllers, and cgroup2 at unified/ (cgroup.controllers there);
//   v1      a devices/ hierarchy and no cgroup2;
//   unknown none of these (not mounted, or not visible under --host-root).
// The hook decides per container (device_cgroup.h); on hybrid hosts it
// uses the v1 devices controller, as the runtimes do.
enum class CgroupLayout { kUnknown, kV1, kHybrid, kV2 };
const char* CgroupLayoutName(CgroupLayout l);
CgroupLayout ReadCgroupLayout(const HostView& host);

// The CDI directories engines read: static, then dynamic.
constexpr const char* kCdiDirs[] = {"/etc/cdi", "/var/run/cdi"};

// A spec file of ours (oci-decorator-*.json) in a CDI directory.
struct CdiFile {
  std::string dir;   // host path, e.g. /etc/cdi
  std::string name;  // oci-decorator-onload.json
  std::string bytes;
  Error error;      // set when it could not be read
  FileOwner owner;  // its owner and mode
};
// A CDI directory that exists, and who can change it: the steps of root's
// writer's walk to it under the host root (HostView::DirSteps, dir_trust.h):
// the links it follows, the directory it reaches (/var/run/cdi is /run/cdi),
// and that directory's real ancestors, walked up by "..".
struct CdiDir {
  std::string dir;
  std::vector<DirStep> steps;
};
bool ReadCdiDirs(const HostView& host, std::vector<CdiDir>* out, Error* err);
constexpr size_t kMaxCdiSpecBytes = 4 << 20;
bool ReadCdiFiles(const HostView& host, std::vector<CdiFile>* out, Error* err);
// The preload files written with our specs (oci-decorator-*.preload: cdi.h).
bool ReadCdiPreloadFiles(const HostView& host, std::vector<CdiFile>* out, Error* err);

// Delivery modes set up for engines (gathered by engine_check.h, which
// knows the engines' files; here so the report can take them as input).
// A hooks.d entry (podman, CRI-O) that runs oci-decorator.
struct HooksEntry {
  std::string file;       // host path of the entry
  std::string hook_path;  // its hook.path
  std::vector<std::string> stages;
  bool ours = false;    // names this binary, runs `hook`, at prestart/createRuntime
  std::string problem;  // why it is not (or could not be read)
};

// The runtime shim registered with an engine.
struct RuntimeEntry {
  std::string engine;   // "docker" or "containerd"
  std::string file;     // host path of the file registering it
  std::string name;     // docker: the runtime's name ("" for containerd)
  std::string path;     // the binary it names
  bool ours = false;    // that binary is this one, run as oci-decorator-runtime,
                        // from a file the engine reads
  std::string problem;  // why not
};

// The runtime a plain `docker run` uses, as daemon.json names it.
struct DockerDefaultRuntime {
  bool read = false;      // daemon.json was read (absent or blank counts: runc)
  std::string name;       // "runc" when daemon.json names none
  bool shim = false;      // it is a runtime entry of ours (RuntimeEntry::ours)
  std::string shim_runs;  // the shim's --ocid-runtime in its runtimeArgs, "" = its default
  // Why the shim, as docker's default, would fail every container: its
  // settings (runtimeArgs, runtime.json) cannot be used, or the runtime it
  // runs does not exist on the host. "" = none found.
  std::string problem;
};

struct EngineSetup {
  std::vector<HooksEntry> hooks;
  std::vector<RuntimeEntry> runtimes;
  DockerDefaultRuntime docker_default;
  std::vector<std::string> warnings;  // engine files that could not be read or parsed
};

// Everything `check` knows about the node besides the inventories.
struct NodeFacts {
  std::vector<PciNic> nics;
  std::string nic_error;  // sysfs could not be listed
  std::vector<std::string> nic_vendors{std::begin(kOnloadNicVendors),
                                       std::end(kOnloadNicVendors)};  // the vendors looked for
  CgroupLayout cgroup = CgroupLayout::kUnknown;
  kernel::Interfaces kernel;
  EngineSetup engines;
  std::vector<CdiFile> cdi_files;
  std::vector<CdiFile> cdi_preload_files;
  std::vector<CdiDir> cdi_dirs;
  std::string cdi_error;  // a CDI directory could not be listed
};

}  // namespace ocid
