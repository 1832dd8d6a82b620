#include "engine_setup.h"

#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "cdi_names.h"
#include "exit_codes.h"
#include "inventory.h"
#include "log.h"
#include "path_text.h"

namespace ocid {
namespace {

using ordered = nlohmann::ordered_json;

constexpr size_t kMaxEngineConfigBytes = 4 << 20;

std::string TomlString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// The top-level (before any [table]) value of `key` in TOML bytes, raw
// from after '=' to the end of the value (arrays may span lines); "" when
// absent. Enough for containerd's `version` and `imports`.
std::string TopLevelTomlValue(const std::string& toml, const std::string& key) {
  size_t pos = 0;
  while (pos < toml.size()) {
    size_t eol = toml.find('\n', pos);
    if (eol == std::string::npos) eol = toml.size();
    std::string line = Trim(toml.substr(pos, eol - pos));
    size_t next = eol + 1;
    if (!line.empty() && line[0] == '[') return "";
    if (line.compare(0, key.size(), key) == 0) {
      std::string rest = Trim(line.substr(key.size()));
      if (!rest.empty() && rest[0] == '=') {
        size_t start = toml.find('=', pos) + 1;
        size_t end = eol;
        std::string value = Trim(rest.substr(1));
        if (!value.empty() && value[0] == '[') {
          end = toml.find(']', start);
          if (end == std::string::npos)
            end = toml.size();
          else
            ++end;
        }
        return toml.substr(start, end - start);
      }
    }
    pos = next;
  }
  return "";
}

std::vector<std::string> QuotedStrings(const std::string& s) {
  std::vector<std::string> out;
  for (size_t p = 0; p < s.size(); ++p) {
    char q = s[p];
    if (q == '#') {
      size_t eol = s.find('\n', p);
      if (eol == std::string::npos) break;
      p = eol;
      continue;
    }
    if (q != '"' && q != '\'') continue;
    size_t end = s.find(q, p + 1);
    if (end == std::string::npos) break;
    out.push_back(s.substr(p + 1, end - p - 1));
    p = end;
  }
  return out;
}

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

}  // namespace

int SetupDocker(const SetupOptions& s) {
  std::string file = s.config.empty() ? kDockerConfig : s.config;
  std::string old;
  bool exists = false;
  DockerMerge m;
  Error err;
  if (!ReadFileIfExists(file, kMaxEngineConfigBytes, &old, &exists, &err) ||
      !MergeDockerRuntime(old, file, s.runtime_name, s.runtime_path, &m, &err)) {
    log::Error(err.Line());
    return kExitFailure;
  }
  WarnIfMissing(s.runtime_path);
  std::string shown = "  runtime \"" + s.runtime_name + "\": path " +
                      (m.old_path.empty() ? "(none)" : m.old_path) + " -> " + s.runtime_path +
                      "\n  \"runtimes\": " + m.runtimes + "\n  (every other key kept)\n";
  if (!m.changed) {
    std::printf("docker: %s already has runtime \"%s\" with path %s: nothing to do\n", file.c_str(),
                s.runtime_name.c_str(), s.runtime_path.c_str());
  } else if (!WriteConfig("docker", file, m.json, s.dry_run, /*backup=*/true, &err, shown)) {
    log::Error(err.Line());
    return kExitFailure;
  }
  std::printf(
      "\nNext:\n"
      "  reload dockerd so it reads the runtime: systemctl reload docker (SIGHUP;\n"
      "  runtimes are reloaded live), or restart it\n"
      "  docker run --runtime=%s -e OCI_ONLOAD=all IMAGE ...\n"
      "  (the shim writes the devices into each container's config.json: durable)\n",
      s.runtime_name.c_str());
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

bool CheckRuntimeName(const std::string& name, std::string* why) {
  if (name.empty() || name.size() > 64) return *why = "must have 1 to 64 characters", false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return *why = "may hold only letters, digits, '-' and '_'", false;
  }
  return true;
}

bool MergeDockerRuntime(const std::string& bytes, const std::string& file, const std::string& name,
                        const std::string& path, DockerMerge* out, Error* err) {
  *out = DockerMerge{};
  ordered j = ordered::object();
  if (bytes.find_first_not_of(" \t\r\n") != std::string::npos) {
    try {
      j = ordered::parse(bytes);
    } catch (const ordered::parse_error& e) {
      std::string why = e.what();
      if (size_t p = why.find("] "); p != std::string::npos) why = why.substr(p + 2);
      return Fail(err, "invalid JSON in docker's daemon configuration (" + why + ")", file);
    }
    if (!j.is_object())
      return Fail(err, "docker's daemon configuration is not a JSON object", file);
  }
  ordered& runtimes = j["runtimes"];
  if (runtimes.is_null()) runtimes = ordered::object();
  if (!runtimes.is_object()) return Fail(err, "\"runtimes\" is not an object in", file);
  ordered& entry = runtimes[name];
  if (entry.is_null()) entry = ordered::object();
  if (!entry.is_object())
    return Fail(err, "\"runtimes\".\"" + name + "\" is not an object in", file);
  auto p = entry.find("path");
  if (p != entry.end() && p->is_string()) out->old_path = p->get<std::string>();
  out->changed = out->old_path != path;
  entry["path"] = path;
  try {
    out->json = out->changed ? j.dump(2) + "\n" : bytes;
    out->runtimes = runtimes.dump(2);
    // Indented to sit under "  \"runtimes\": " in messages.
    for (size_t i = 0; (i = out->runtimes.find('\n', i)) != std::string::npos; i += 3)
      out->runtimes.insert(i + 1, "  ");
  } catch (const ordered::exception& e) {
    return Fail(err, "cannot render docker's daemon configuration " + file, e.what());
  }
  return true;
}

int ContainerdConfigVersion(const std::string& main_config) {
  std::string v = Trim(TopLevelTomlValue(main_config, "version"));
  if (size_t hash = v.find('#'); hash != std::string::npos) v = Trim(v.substr(0, hash));
  if (v == "2") return 2;
  if (v == "3") return 3;
  return 0;
}

namespace {
// The CRI plugin's runtimes table in each schema: containerd 2.x split the
// CRI plugin, and its runtimes moved to io.containerd.cri.v1.runtime
// (`containerd config default` of containerd 2.1 prints that table).
std::string CriRuntimesTable(int version) {
  return version >= 3 ? "plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes."
                      : "plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.";
}
}  // namespace

std::string ContainerdRuntimeTables(const std::string& name, const std::string& shim_path,
                                    int version) {
  std::string table = CriRuntimesTable(version) + name;
  // CRI copies only the listed pod and container annotations into
  // config.json: the shim must see oci-decorator/<FLAG> requests.
  return "[" + table +
         "]\n"
         "  runtime_type = \"io.containerd.runc.v2\"\n"
         "  pod_annotations = [\"oci-decorator/*\"]\n"
         "  container_annotations = [\"oci-decorator/*\"]\n"
         "[" +
         table +
         ".options]\n"
         "  BinaryName = " +
         TomlString(shim_path) + "\n";
}

std::string ContainerdDropIn(const std::string& name, const std::string& shim_path, int version) {
  if (version >= 3)
    return "# Written by `oci-decorator setup containerd`: the oci-decorator runtime shim\n"
           "# for containerd 2.x's CRI plugin (runc's v2 shim running the oci-decorator\n"
           "# shim in place of runc). The main config.toml (version = 3) must import this\n"
           "# file; containerd 2.x merges its tables into the main config's.\n"
           "version = 3\n"
           "\n" +
           ContainerdRuntimeTables(name, shim_path, 3);
  return "# Written by `oci-decorator setup containerd`: the oci-decorator runtime shim\n"
         "# for containerd's CRI plugin (runc's v2 shim running the oci-decorator shim\n"
         "# in place of runc). The main config.toml must import this file, and must\n"
         "# not configure the CRI plugin itself: containerd replaces a plugin's whole\n"
         "# section with an imported file's. runc is named because this section\n"
         "# replaces the built-in one, which had it.\n"
         "version = 2\n"
         "\n"
         "[" +
         CriRuntimesTable(2) +
         "runc]\n"
         "  runtime_type = \"io.containerd.runc.v2\"\n"
         "\n" +
         ContainerdRuntimeTables(name, shim_path, 2);
}

bool ContainerdHasCriSection(const std::string& main_config) {
  size_t pos = 0;
  while (pos < main_config.size()) {
    size_t eol = main_config.find('\n', pos);
    if (eol == std::string::npos) eol = main_config.size();
    std::string line = Trim(main_config.substr(pos, eol - pos));
    if (line.rfind('#', 0) != 0 && (line.find("io.containerd.grpc.v1.cri") != std::string::npos ||
                                    line.find("plugins.cri") != std::string::npos))
      return true;
    pos = eol + 1;
  }
  return false;
}

bool ContainerdImportsCover(const std::string& main_config, const std::string& dropin,
                            bool* has_imports) {
  std::string value = TopLevelTomlValue(main_config, "imports");
  *has_imports = !Trim(value).empty();
  for (const std::string& pattern : QuotedStrings(value)) {
    // containerd resolves a relative import against the main config's
    // directory; the caller's drop-in path is absolute.
    if (pattern == dropin || ::fnmatch(pattern.c_str(), dropin.c_str(), FNM_PATHNAME) == 0)
      return true;
  }
  return false;
}

std::string CrioDropIn(const std::string& name, const std::string& shim_path) {
  std::string dirs;
  for (const char* d : kHooksDirs) dirs += (dirs.empty() ? "" : ", ") + TomlString(d);
  std::string s =
      "# Written by `oci-decorator setup crio`: CRI-O runs oci-decorator's hooks.d\n"
      "# entries (installed in the first directory) for every container; the hook\n"
      "# acts only for containers that ask (OCI_ONLOAD=..., or the pod annotation\n"
      "# oci-decorator/OCI_ONLOAD). hooks_dir replaces CRI-O's default list, so\n"
      "# both default directories are named.\n"
      "[crio.runtime]\n"
      "hooks_dir = [" +
      dirs + "]\n";
  if (!shim_path.empty())
    s += "\n"
         "# The runtime shim, for pods with a RuntimeClass whose handler is " +
         name +
         ".\n"
         "[crio.runtime.runtimes." +
         name +
         "]\n"
         "runtime_path = " +
         TomlString(shim_path) +
         "\n"
         "runtime_type = \"oci\"\n";
  return s;
}

}  // namespace ocid
