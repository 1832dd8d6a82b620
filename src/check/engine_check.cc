#include "engine_check.h"

#include "path_text.h"

namespace ocid {
namespace {

constexpr size_t kMaxEngineFileBytes = 4 << 20;

// Whether `path` (a host path) is this binary, and why not.
bool IsSelf(const HostView& host, const FileIdentity& self, const std::string& path,
            std::string* why) {
  if (path.empty() || path[0] != '/') {
    *why = "\"" + path + "\" is not an absolute path";
    return false;
  }
  FileIdentity id;
  Error err;
  switch (host.Identity(path, &id, &err)) {
    case HostRead::kMissing: *why = host.Display(path) + " does not exist"; return false;
    case HostRead::kError: *why = err.Line(); return false;
    case HostRead::kOk: break;
  }
  if (!(id == self)) {
    *why = host.Display(path) + " is not this oci-decorator binary";
    return false;
  }
  return true;
}

void ReadHooks(const HostView& host, const FileIdentity& self, EngineSetup* out) {
  for (const char* dir : kHooksDirs) {
    std::vector<std::string> names;
    Error err;
    HostRead r = host.List(dir, &names, &err);
    if (r == HostRead::kError) out->warnings.push_back(err.Line());
    if (r != HostRead::kOk) continue;
    for (const auto& n : names) {
      if (n.size() < 5 || n.compare(n.size() - 5, 5, ".json") != 0) continue;
      const std::string file = std::string(dir) + "/" + n;
      std::string bytes;
      HooksEntryFacts f;
      if (host.Read(file, kMaxEngineFileBytes, &bytes, &err) != HostRead::kOk ||
          !ParseHooksEntry(bytes, host.Display(file), &f, &err)) {
        // Another vendor's broken entry is none of our business; ours is.
        if (n.find("oci-decorator") != std::string::npos) out->warnings.push_back(err.Line());
        continue;
      }
      HooksEntry e;
      e.file = file;
      e.hook_path = f.hook_path;
      e.stages = f.stages;
      std::string why;
      bool self_path = IsSelf(host, self, f.hook_path, &why);
      // Only entries that are, or look like, ours are reported.
      if (!self_path && Basename(f.hook_path) != "oci-decorator") continue;
      bool runs_hook = false;
      for (size_t i = 1; i < f.args.size(); ++i) runs_hook = runs_hook || f.args[i] == "hook";
      bool applies = false;
      for (const auto& s : f.stages) applies = applies || s == "prestart" || s == "createRuntime";
      if (!self_path)
        e.problem = why;
      else if (!runs_hook)
        e.problem = "its args do not run `hook`";
      else if (!applies)
        e.problem = "no prestart or createRuntime stage (cleanup only)";
      e.ours = e.problem.empty();
      out->hooks.push_back(std::move(e));
    }
  }
}

void AddRuntime(const HostView& host, const FileIdentity& self, RuntimeEntry e,
                const std::string& inactive, EngineSetup* out) {
  std::string why;
  bool self_path = IsSelf(host, self, e.path, &why);
  if (!self_path && Basename(e.path) != kShimProgramName) return;  // someone else's runtime
  if (!self_path)
    e.problem = why;
  else if (Basename(e.path) != kShimProgramName)
    e.problem = "names this binary as " + Basename(e.path) + ", not " + kShimProgramName +
                " (the name that runs it as the runtime shim)";
  else
    e.problem = inactive;
  e.ours = e.problem.empty();
  out->runtimes.push_back(std::move(e));
}

// What the shim, started by docker with `args` before its own, would make
// of its settings, read as it reads them (ResolveShimSettings) but under the
// host root: "" when it could run, else why every container would fail.
std::string ShimSettingsProblem(const HostView& host, const std::vector<std::string>& args) {
  std::vector<std::string> rest = args;
  ShimOptions opts;
  ShimSettings settings;
  Error err;
  if (!TakeShimOptions(&rest, &opts, &err)) return "its runtimeArgs: " + err.Line();
  const std::string file = opts.config_file.value_or(OCID_DEFAULT_SHIM_CONFIG);
  std::string bytes;
  HostRead r = host.Read(file, kMaxEngineFileBytes, &bytes, &err);
  if (r == HostRead::kMissing && opts.config_file)
    return "its settings file " + host.Display(file) + " does not exist";
  if (r == HostRead::kError) return err.Line();
  if (r == HostRead::kOk && !ParseShimConfig(bytes, host.Display(file), &settings, &err))
    return err.Line();
  if (!ApplyShimOptions(opts, &settings, &err)) return err.Line();
  if (!host.Exists(settings.runtime))
    return "the runtime it runs, " + host.Display(settings.runtime) + ", does not exist";
  return "";
}

void ReadDocker(const HostView& host, const FileIdentity& self, EngineSetup* out) {
  std::string bytes;
  Error err;
  HostRead r = host.Read(kDockerConfig, kMaxEngineFileBytes, &bytes, &err);
  DockerDaemon daemon;
  if (r == HostRead::kOk && !ParseDockerDaemon(bytes, host.Display(kDockerConfig), &daemon, &err))
    r = HostRead::kError;
  if (r == HostRead::kError) {
    out->warnings.push_back(err.Line());
    return;
  }
  DockerDefaultRuntime& d = out->docker_default;
  d.read = true;
  d.name = daemon.default_runtime.empty() ? kDockerStockRuntime : daemon.default_runtime;
  for (const auto& rt : daemon.runtimes) {
    RuntimeEntry e;
    e.engine = "docker";
    e.file = kDockerConfig;
    e.name = rt.name;
    e.path = rt.path;
    AddRuntime(host, self, std::move(e), "", out);
    if (rt.name == d.name && out->runtimes.back().ours) {
      d.shim = true;
      d.shim_runs = ShimRuntimeOf(rt.args);
      d.problem = ShimSettingsProblem(host, rt.args);
    }
  }
}

void ReadContainerd(const HostView& host, const FileIdentity& self, EngineSetup* out) {
  const std::string main_config = kContainerdConfig;
  std::string main_bytes, dropin_bytes;
  Error err;
  HostRead rm = host.Read(main_config, kMaxEngineFileBytes, &main_bytes, &err);
  if (rm == HostRead::kError) out->warnings.push_back(err.Line());
  HostRead rd = host.Read(kContainerdDropIn, kMaxEngineFileBytes, &dropin_bytes, &err);
  if (rd == HostRead::kError) out->warnings.push_back(err.Line());
  bool has_imports = false;
  bool imported =
      rm == HostRead::kOk && ContainerdImportsCover(main_bytes, kContainerdDropIn, &has_imports);
  auto add = [&](const std::string& file, const std::string& bytes, const std::string& inactive) {
    for (const auto& path : ContainerdBinaryNames(bytes)) {
      RuntimeEntry e;
      e.engine = "containerd";
      e.file = file;
      e.path = path;
      AddRuntime(host, self, std::move(e), inactive, out);
    }
  };
  if (rm == HostRead::kOk) add(main_config, main_bytes, "");
  if (rd == HostRead::kOk)
    add(kContainerdDropIn, dropin_bytes,
        imported ? "" : host.Display(main_config) + " does not import it");
}

}  // namespace

void ReadEngineSetup(const HostView& host, const FileIdentity& self, EngineSetup* out) {
  *out = EngineSetup{};
  ReadHooks(host, self, out);
  ReadDocker(host, self, out);
  ReadContainerd(host, self, out);
}

}  // namespace ocid
