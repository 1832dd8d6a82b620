#include "engine_setup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "atomic_file.h"
#include "cdi_names.h"
#include "exit_codes.h"
#include "inventory.h"
#include "log.h"
#include "path_text.h"
#include "runtime_shim.h"

namespace ocid {
namespace {

constexpr size_t kMaxEngineConfigBytes = 4 << 20;

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// Writes `content` to `file` unless it already holds it; prints what it
// did. Backs the old file up first when `backup` is set.
bool WriteConfig(const std::string& engine, const std::string& file, const std::string& content,
                 bool dry_run, bool backup, Error* err, const std::string& shown = "") {
  const std::string& show = shown.empty() ? content : shown;
  std::string old;
  bool exists = false;
  if (!ReadFileIfExists(file, kMaxEngineConfigBytes, &old, &exists, err)) return false;
  // Root-owned, 0644 (SECURITY.md 2.9); an operator's narrower mode (a
  // daemon.json kept 0600) stays narrow. The right bytes under another
  // owner or a wider mode are written again.
  struct stat st;
  mode_t mode = exists && ::lstat(file.c_str(), &st) == 0 ? (st.st_mode & 0644) : 0644;
  if (exists && old == content && FileIsCurrent(file, content, mode)) {
    std::printf("%s: %s is up to date: nothing to do\n", engine.c_str(), file.c_str());
    return true;
  }
  if (dry_run) {
    std::printf("%s: would %s %s (dry run: nothing written):\n%s", engine.c_str(),
                exists ? "update" : "create", file.c_str(), show.c_str());
    return true;
  }
  std::string saved;
  if (exists && backup && !WriteBackup(file, old, &saved, err)) return false;
  if (!WriteFileAtomic(file, content, mode, err)) return false;
  std::printf("%s: %s %s%s:\n%s", engine.c_str(), exists ? "updated" : "created", file.c_str(),
              saved.empty() ? "" : (" (old file backed up to " + saved + ")").c_str(),
              show.c_str());
  return true;
}

void WarnIfMissing(const std::string& shim) {
  if (!Exists(shim))
    log::Warn("the runtime shim " + shim +
              " does not exist (yet): install oci-decorator, or pass --runtime-path");
}

// As docker's default runtime the shim starts every container: settings it
// cannot resolve, or a runtime it cannot exec, would fail them all. Checked
// with the shim's own reader, on the "runtimeArgs" daemon.json gives it.
bool CheckShimCanServeAll(const std::string& json, const std::string& file, const std::string& name,
                          Error* err) {
  DockerDaemon d;
  if (!ParseDockerDaemon(json, file, &d, err)) return false;
  std::vector<std::string> args;
  for (const auto& r : d.runtimes)
    if (r.name == name) args = r.args;
  ShimOptions opts;
  ShimSettings settings;
  Error why;
  if (!TakeShimOptions(&args, &opts, &why) ||
      !ResolveShimSettings(opts, OCID_DEFAULT_SHIM_CONFIG, &settings, &why))
    return Fail(err,
                "--default-runtime: the runtime shim's settings cannot be used, and as docker's "
                "default runtime it would fail every container: " +
                    why.Line());
  if (::access(settings.runtime.c_str(), X_OK) != 0)
    return Fail(err,
                "--default-runtime: the runtime shim would run " + settings.runtime +
                    ", which cannot be executed, and as docker's default runtime it would fail "
                    "every container",
                "", errno);
  return true;
}

}  // namespace

int SetupDocker(const SetupOptions& s) {
  std::string file = s.config.empty() ? kDockerConfig : s.config;
  std::string old;
  bool exists = false;
  DockerSetupRequest req;
  req.name = s.runtime_name;
  req.path = s.runtime_path;
  req.default_runtime = s.docker_default;
  req.wrap_default = s.wrap_default;
  DockerMerge m;
  Error err;
  if (!ReadFileIfExists(file, kMaxEngineConfigBytes, &old, &exists, &err) ||
      !MergeDockerSetup(old, file, req, &m, &err)) {
    log::Error(err.Line());
    return kExitFailure;
  }
  WarnIfMissing(s.runtime_path);
  if (m.new_default == s.runtime_name &&
      !CheckShimCanServeAll(m.json, file, s.runtime_name, &err)) {
    log::Error(err.Line());
    return kExitFailure;
  }
  auto shown_default = [](const std::string& d) {
    return d.empty() ? std::string("(none: runc)") : "\"" + d + "\"";
  };
  std::string shown = "  runtime \"" + s.runtime_name + "\": path " +
                      (m.old_path == s.runtime_path ? s.runtime_path + " (as before)"
                                                    : (m.old_path.empty() ? "(none)" : m.old_path) +
                                                          " -> " + s.runtime_path) +
                      "\n";
  if (m.old_default != m.new_default)
    shown += "  \"default-runtime\": " + shown_default(m.old_default) + " -> " +
             shown_default(m.new_default) + "\n";
  if (!m.wrapped.empty())
    shown += s.docker_default == DockerDefault::kSet
                 ? "  the shim runs \"" + m.wrapped + "\"'s binary (" + kShimRuntimeArg +
                       " in \"runtimeArgs\")\n"
                 : "  \"" + m.wrapped + "\" is the default again (" + kShimRuntimeArg +
                       " removed from \"runtimeArgs\")\n";
  shown += "  \"runtimes\": " + m.runtimes + "\n  (every other key kept)\n";
  if (!m.changed) {
    std::printf("docker: %s already has runtime \"%s\" with path %s", file.c_str(),
                s.runtime_name.c_str(), s.runtime_path.c_str());
    if (s.docker_default != DockerDefault::kLeave)
      std::printf(" and default runtime %s", shown_default(m.new_default).c_str());
    std::printf(": nothing to do\n");
  } else if (!WriteConfig("docker", file, m.json, s.dry_run, /*backup=*/true, &err, shown)) {
    log::Error(err.Line());
    return kExitFailure;
  }
  bool is_default = m.new_default == s.runtime_name;
  std::printf(
      "\nNext:\n"
      "  reload dockerd so it reads the change: systemctl reload docker (SIGHUP;\n"
      "  runtimes and the default runtime are reloaded live), or restart it\n");
  if (is_default)
    std::printf(
        "  docker run -e OCI_ONLOAD=all IMAGE ...\n"
        "  (every container now starts through the shim; those that do not ask go\n"
        "  straight to the runtime; a dockerd started with --default-runtime on its\n"
        "  command line refuses a daemon.json that also sets it)\n");
  else
    std::printf("  docker run --runtime=%s -e OCI_ONLOAD=all IMAGE ...\n", s.runtime_name.c_str());
  std::printf("  (the shim writes the devices into each container's config.json: durable)\n");
  return 0;
}

int SetupContainerd(const SetupOptions& s) {
  std::string file = s.config.empty() ? kContainerdDropIn : s.config;
  Error err;
  std::string main;
  bool exists = false, has_imports = false;
  if (!ReadFileIfExists(s.containerd_main, kMaxEngineConfigBytes, &main, &exists, &err)) {
    log::Error(err.Line());
    return kExitFailure;
  }
  WarnIfMissing(s.runtime_path);
  // The drop-in speaks the main config's schema: containerd 2.x does not
  // merge tables of the two (it loses the drop-in's or the main config's). No main config (or no
  // version in it): version 2, which containerd 1.x reads and 2.x migrates.
  int version = exists ? ContainerdConfigVersion(main) : 0;
  int dropin_version = version == 3 ? 3 : 2;
  // containerd 1.6 replaces a plugin's whole section with an imported
  // file's: a drop-in would silently drop every CRI setting of the main
  // config (sandbox_image, runc's SystemdCgroup, ...). Say what to add.
  // A version 3 config is containerd 2.x's, which merges key by key.
  if (exists && dropin_version == 2 && ContainerdHasCriSection(main)) {
    std::printf(
        "containerd: %s configures the CRI plugin, and containerd replaces a plugin's\n"
        "whole section with an imported file's: a drop-in would drop those settings.\n"
        "Nothing written. Add these lines to %s instead, then restart containerd:\n\n%s",
        s.containerd_main.c_str(), s.containerd_main.c_str(),
        ContainerdRuntimeTables(s.runtime_name, s.runtime_path).c_str());
    return kExitFailure;
  }
  if (!WriteConfig("containerd", file,
                   ContainerdDropIn(s.runtime_name, s.runtime_path, dropin_version), s.dry_run,
                   /*backup=*/false, &err)) {
    log::Error(err.Line());
    return kExitFailure;
  }
  std::string glob = Dirname(file) + "/*.toml";
  std::printf("\n");
  if (!exists) {
    std::printf(
        "containerd: %s does not exist: containerd then runs on built-in defaults and\n"
        "reads no drop-in. Create it with at least:\n"
        "  version = 2\n  imports = [%s]\n"
        "(containerd 2.x: `containerd config default` prints a version 3 config; add the\n"
        "imports line to it and run this again to get a version 3 drop-in)\n",
        s.containerd_main.c_str(), TomlString(glob).c_str());
  } else if (ContainerdImportsCover(main, file, &has_imports)) {
    std::printf("containerd: %s imports %s: ok\n", s.containerd_main.c_str(), file.c_str());
  } else {
    std::printf("containerd: %s does not import %s: %s\n", s.containerd_main.c_str(), file.c_str(),
                has_imports
                    ? ("add " + TomlString(glob) + " to its top-level `imports` list").c_str()
                    : ("add at its top: imports = [" + TomlString(glob) + "]").c_str());
  }
  if (exists && version == 0)
    std::printf(
        "containerd: %s has no `version = 2` or `version = 3`: the drop-in is a "
        "version 2 config\n",
        s.containerd_main.c_str());
  else if (exists)
    std::printf("containerd: %s is a version %d config: so is the drop-in\n",
                s.containerd_main.c_str(), version);
  std::printf(
      "\nNext:\n"
      "  restart containerd\n"
      "  Kubernetes (CRI): a RuntimeClass with handler: %s, and pods with the\n"
      "  annotation oci-decorator/OCI_ONLOAD: all (or OCI_ONLOAD=all in their env)\n"
      "  ctr: ctr run --runc-binary %s --env OCI_ONLOAD=all IMAGE ID\n",
      s.runtime_name.c_str(), s.runtime_path.c_str());
  return 0;
}

int SetupCrio(const SetupOptions& s) {
  std::string file = s.config.empty() ? kCrioDropIn : s.config;
  Error err;
  if (s.with_runtime) WarnIfMissing(s.runtime_path);
  if (!WriteConfig("crio", file, CrioDropIn(s.runtime_name, s.with_runtime ? s.runtime_path : ""),
                   s.dry_run, /*backup=*/false, &err)) {
    log::Error(err.Line());
    return kExitFailure;
  }
  std::printf(
      "\nNext:\n"
      "  restart crio\n"
      "  pods ask with the annotation oci-decorator/OCI_ONLOAD: all (CRI-O passes pod\n"
      "  annotations to the hook), or OCI_ONLOAD=all in a container's env\n"
      "  CDI (durable, CRI-O 1.23+): oci-decorator cdi generate --output-dir /etc/cdi\n");
  if (s.with_runtime)
    std::printf("  runtime shim: a RuntimeClass with handler: %s\n", s.runtime_name.c_str());
  return 0;
}

int SetupPodman(const Options& opts, const SetupOptions& s) {
  std::printf(
      "podman: nothing to configure; it reads hooks.d and CDI specs from default directories.\n");
  for (const char* dir : kHooksDirs)
    for (const char* stage : {"prestart", "poststop"}) {
      std::string entry = std::string(dir) + "/oci-decorator-" + stage + ".json";
      if (Exists(entry)) std::printf("  hooks.d entry found: %s\n", entry.c_str());
    }
  std::string first = std::string(kHooksDirs[0]) + "/oci-decorator-prestart.json";
  if (!Exists(first) && !Exists(std::string(kHooksDirs[1]) + "/oci-decorator-prestart.json"))
    std::printf("  no oci-decorator hooks.d entry in %s or %s: install the package\n",
                kHooksDirs[0], kHooksDirs[1]);
  std::printf(
      "\nHook mode:  podman run -e OCI_ONLOAD=all IMAGE ...   (--hooks-dir DIR names a\n"
      "            directory; the hook writes the device cgroup rules behind podman's\n"
      "            back, where systemd's daemon-reload can reset them)\n"
      "CDI mode:   the devices go into config.json (durable):\n"
      "            oci-decorator cdi generate --output-dir %s\n"
      "            (again after every upgrade of a vendor stack: file names change)\n",
      s.cdi_dir.c_str());
  InventorySet set;
  Error err;
  if (LoadInventoryDir(opts.config_dir, &set, &err))
    for (const auto& inv : set.inventories)
      std::printf("            podman run --device %s=all IMAGE ...   (or =%s)\n",
                  CdiKindOf(inv).c_str(), Join(inv.driver_features, ", =").c_str());
  std::printf(
      "            podman reads specs from /etc/cdi and /var/run/cdi (the latter wins;\n"
      "            two files in one directory defining the same device disable it)\n");
  return 0;
}

}  // namespace ocid
