#include "cdi.h"

#include <algorithm>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "delivery.h"
#include "log.h"
#include "planner.h"

namespace ocid {
namespace {

bool IsLetter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsAlnum(char c) { return IsLetter(c) || (c >= '0' && c <= '9'); }

// First character by `first`, last alphanumeric, the ones between
// alphanumeric or in `extra`.
bool CheckSegment(const std::string& s, const char* what, bool (*first)(char),
                  const std::string& extra, size_t min_len, size_t max_len,
                  std::string* why) {
  if (s.size() < min_len || s.size() > max_len) {
    *why = std::string(what) + " \"" + s + "\" must have " + std::to_string(min_len) +
           " to " + std::to_string(max_len) + " characters";
    return false;
  }
  if (!first(s[0]) || !IsAlnum(s.back())) {
    *why = std::string(what) + " \"" + s + "\" must start with a " +
           (first == IsLetter ? "letter" : "letter or digit") +
           " and end with a letter or digit";
    return false;
  }
  for (char c : s)
    if (!IsAlnum(c) && extra.find(c) == std::string::npos) {
      std::string chars;
      for (char x : extra) chars += std::string(chars.empty() ? "" : ", ") + "'" + x + "'";
      *why = std::string(what) + " \"" + s + "\" may hold only letters, digits and " + chars;
      return false;
    }
  return true;
}

// One device's containerEdits, from the plan's Delivery (delivery.h). Sets
// *host_path_used when a device node needs hostPath (cdiVersion 0.5.0).
// With a `preload_host_file`, the preload goes there (its content in
// *preload_bytes) and is mounted at /etc/ld.so.preload, not in the env.
bool ContainerEdits(const Plan& plan, const std::string& host_root,
                    const std::string& preload_host_file, nlohmann::ordered_json* edits,
                    bool* host_path_used, std::string* preload_bytes, Error* err) {
  using ordered = nlohmann::ordered_json;
  Delivery d;
  if (!DeliveryOf(plan, host_root, &d, err)) return false;
  bool preload_file = !plan.preload.empty() && !preload_host_file.empty();
  if (preload_file) {
    // DeliveryOf checked the paths (no space or ':', which ld.so splits on).
    for (const auto& p : plan.preload) *preload_bytes += p + "\n";
    d.env.erase(std::remove_if(d.env.begin(), d.env.end(),
                               [](const auto& kv) { return kv.first == "LD_PRELOAD"; }),
                d.env.end());
    d.mounts.push_back({preload_host_file, "/etc/ld.so.preload", true});
  }
  ordered e = ordered::object();
  if (!d.env.empty()) {
    ordered env = ordered::array();
    for (const auto& [k, v] : d.env) env.push_back(k + "=" + v);
    e["env"] = std::move(env);
  }
  ordered nodes = ordered::array(), mounts = ordered::array();
  for (const auto& dev : d.devices) {
    ordered n = {{"path", dev.container_path}};
    // The engine lstat()s hostPath (default: path) for type, major and
    // minor when the container is created: it must not be a symlink.
    if (dev.host_path != dev.container_path) {
      n["hostPath"] = dev.host_path;
      *host_path_used = true;
    }
    // The host node's permissions (podman 4.3 would otherwise create it
    // 0666); the type and numbers are left to the engine's lstat.
    if (uint32_t perm = dev.file_mode & 0777; perm != 0) n["fileMode"] = perm;
    // The cgroup access the plan grants, as every other mode grants it. An
    // absent "permissions" means "rwm" to a CDI runtime (SPEC.md, deviceNodes;
    // pkg/cdi/container-edits.go applies "" as "rwm"): mknod included.
    n["permissions"] = dev.permissions;
    nodes.push_back(std::move(n));
  }
  for (const auto& m : d.mounts) {
    std::vector<std::string> options = {"ro", "nosuid", "nodev", "bind"};
    if (!m.read_only) options.erase(options.begin());
    mounts.push_back({{"hostPath", m.host_path}, {"containerPath", m.container_path},
                      {"options", options}});
  }
  if (!nodes.empty()) e["deviceNodes"] = std::move(nodes);
  if (!mounts.empty()) e["mounts"] = std::move(mounts);
  *edits = std::move(e);
  return true;
}

// "<feature>-<profile>" for each feature that preloads and each profile the
// inventory offers: the feature's edits plus the profile's variables. A
// profile that does not resolve (an .opf that is not straight-line) gets no
// device, with a warning.
void AddProfileDevices(const Inventory& inv, const HostView& host, std::vector<CdiDevice>* devices,
                       std::vector<std::string>* warnings) {
  if (!inv.HasProfiles()) return;
  ProfileSources src = inv.Profiles(host);
  std::vector<std::string> names = AvailableProfiles(src, host);
  std::vector<CdiDevice> added;
  for (const auto& name : names) {
    EnvList env;
    Error e;
    if (!ResolveProfile(src, name, HostProfileReader(host), [&] { return names; }, &env, &e)) {
      warnings->push_back("profile \"" + name + "\" gets no CDI device: " + e.Line());
      continue;
    }
    for (const auto& d : *devices) {
      const Feature* f = inv.FindFeature(d.name);
      if (!f || f->preload.empty()) continue;
      CdiDevice pd;
      pd.name = d.name + "-" + name;
      std::string why;
      if (!CheckCdiDeviceName(pd.name, &why)) {
        warnings->push_back("profile \"" + name + "\" gets no CDI device: " + why);
        continue;
      }
      // A feature may already have the name ("onload-latency" beside
      // "onload" with profile "latency"), or another pair may: a spec
      // naming a device twice is refused whole by CDI runtimes. The
      // first keeps it.
      auto taken = [&](const CdiDevice& o) { return o.name == pd.name; };
      if (std::any_of(devices->begin(), devices->end(), taken) ||
          std::any_of(added.begin(), added.end(), taken)) {
        warnings->push_back("profile \"" + name + "\" of feature \"" + d.name +
                            "\" gets no CDI device: \"" + pd.name + "\" is already a device");
        continue;
      }
      pd.plan = d.plan;
      pd.plan.env = env;
      added.push_back(std::move(pd));
    }
  }
  for (auto& d : added) devices->push_back(std::move(d));
}

}  // namespace

bool CheckCdiKind(const std::string& kind, std::string* why) {
  size_t slash = kind.find('/');
  if (slash == std::string::npos) {
    *why = "\"" + kind + "\" is not <vendor>/<class> (e.g. example.com/onload)";
    return false;
  }
  return CheckSegment(kind.substr(0, slash), "CDI vendor", IsLetter, "_-.", 2, 253, why) &&
         CheckSegment(kind.substr(slash + 1), "CDI class", IsLetter, "_-", 2, 63, why);
}

bool CheckCdiDeviceName(const std::string& name, std::string* why) {
  return CheckSegment(name, "CDI device name", IsAlnum, "_-.:", 1, 253, why);
}

std::string InventoryStem(const std::string& file) {
  std::string base = file.substr(file.rfind('/') + 1);
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0)
    base.resize(base.size() - 5);
  return base;
}

std::string CdiKindOf(const Inventory& inv) {
  if (!inv.cdi_kind.empty()) return inv.cdi_kind;
  return std::string(kCdiDefaultVendor) + "/" + InventoryStem(inv.file);
}

std::string CdiFileName(const Inventory& inv) {
  return "oci-decorator-" + InventoryStem(inv.file) + ".json";
}

std::string CdiPreloadFileName(const std::string& spec_file_name, const std::string& device) {
  std::string stem = spec_file_name;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
  // The stem's '.' and '%' are percent-encoded, so the first '.' ends the
  // stem: inventory "a" with device "b.c" and inventory "a.b" with device
  // "c" would otherwise share one preload file, and one vendor's device
  // would preload the other's libraries.
  std::string name;
  for (char c : stem) {
    if (c == '.') name += "%2E";
    else if (c == '%') name += "%25";
    else name += c;
  }
  return name + "." + device + ".preload";
}

std::string CdiSpecOfPreloadFile(const std::string& preload_file_name) {
  const std::string suffix = ".preload";
  const std::string& n = preload_file_name;
  if (n.size() <= suffix.size() || n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  size_t dot = n.find('.');
  if (dot == 0 || dot + 1 >= n.size() - suffix.size()) return "";  // no stem, or no device
  std::string stem;
  for (size_t i = 0; i < dot; ++i) {
    if (n[i] != '%') {
      stem += n[i];
    } else if (n.compare(i, 3, "%2E") == 0) {
      stem += '.';
      i += 2;
    } else if (n.compare(i, 3, "%25") == 0) {
      stem += '%';
      i += 2;
    } else {
      return "";
    }
  }
  return stem + ".json";
}

bool CdiSpecJson(const std::string& kind, const std::string& spec_file_name,
                 const std::vector<CdiDevice>& devices, const std::string& host_root,
                 const std::string& spec_dir, std::string* out,
                 std::vector<CdiFileToWrite>* preload_files, Error* err) {
  using ordered = nlohmann::ordered_json;
  bool host_path_used = false;
  ordered devs = ordered::array();
  for (const auto& d : devices) {
    ordered edits;
    CdiFileToWrite pf;
    std::string host_file;
    if (!spec_dir.empty()) {
      pf.name = CdiPreloadFileName(spec_file_name, d.name);
      host_file = UnderRoot(spec_dir, "/" + pf.name);
    }
    if (!ContainerEdits(d.plan, host_root, host_file, &edits, &host_path_used, &pf.bytes, err))
      return false;
    if (!pf.bytes.empty()) preload_files->push_back(std::move(pf));
    devs.push_back({{"name", d.name}, {"containerEdits", std::move(edits)}});
  }
  ordered j;
  j["cdiVersion"] = host_path_used ? "0.5.0" : "0.3.0";
  j["kind"] = kind;
  j["devices"] = std::move(devs);
  try {
    // Strict: a host path that is not UTF-8 must fail, not be mangled.
    *out = j.dump(2) + "\n";
  } catch (const ordered::exception& e) {
    return Fail(err, "cannot render the CDI spec for " + kind, e.what());
  }
  return true;
}

namespace {

// A plan's warnings (the version lock not checked...), each once: every
// device's plan repeats its inventory's.
void AddWarnings(const Plan& plan, std::vector<std::string>* out) {
  for (const auto& w : plan.warnings)
    if (std::find(out->begin(), out->end(), w) == out->end()) out->push_back(w);
}

}  // namespace

std::string CdiSpecSummary(const CdiSpec& spec) {
  std::string names;
  for (const auto& d : spec.devices) names += (names.empty() ? "" : ", ") + d;
  return "kind " + spec.kind + ", devices " + names;
}

bool BuildCdiSpec(const Inventory& inv, const HostView& host, const std::string& host_root,
                  const std::string& spec_path, CdiSpec* out, Error* err) {
  *out = CdiSpec{};
  out->inventory = inv.file;
  out->kind = CdiKindOf(inv);
  out->file_name = CdiFileName(inv);
  std::string spec_dir;
  if (!spec_path.empty()) {
    size_t slash = spec_path.rfind('/');
    out->file_name = spec_path.substr(slash + 1);
    spec_dir = slash == 0 ? "/" : spec_path.substr(0, slash);
  }
  std::string why;
  if (!CheckCdiKind(out->kind, &why))
    return Fail(err, "inventory " + inv.file + ": invalid CDI kind (set \"cdi_kind\")", why);

  std::vector<CdiDevice> devices;
  bool all_ok = true;
  for (const auto& f : inv.features) {
    CdiDevice d;
    d.name = f.name;
    Error e;
    if (!CheckCdiDeviceName(f.name, &why)) {
      out->warnings.push_back("feature \"" + f.name + "\" gets no CDI device: " + why);
    } else if (!BuildInventoryPlan(inv, {f.name}, host, &d.plan, &e)) {
      out->warnings.push_back("no CDI device \"" + f.name + "\": " + e.Line());
      all_ok = false;
    } else {
      AddWarnings(d.plan, &out->warnings);
      devices.push_back(std::move(d));
    }
  }
  if (all_ok) {
    CdiDevice all;
    all.name = "all";
    Error e;
    if (BuildInventoryPlan(inv, inv.driver_features, host, &all.plan, &e)) {
      AddWarnings(all.plan, &out->warnings);
      devices.push_back(std::move(all));
    }
    else
      out->warnings.push_back("no CDI device \"all\": " + e.Line());
  } else {
    out->warnings.push_back("no CDI device \"all\": not every feature is available");
  }
  AddProfileDevices(inv, host, &devices, &out->warnings);
  if (devices.empty())
    return Fail(err, "inventory " + inv.file + ": no CDI device can be generated on this host");
  for (const auto& d : devices) {
    out->devices.push_back(d.name);
    if (spec_dir.empty() && !d.plan.preload.empty()) out->preload_in_env = true;
  }
  return CdiSpecJson(out->kind, out->file_name, devices, host_root, spec_dir, &out->json,
                     &out->preload_files, err);
}

std::map<std::string, std::string> CdiKindConflicts(const InventorySet& set) {
  std::map<std::string, std::string> owner, out;  // kind -> file; file -> why
  for (const Inventory& inv : set.inventories) {
    std::string kind = CdiKindOf(inv);
    auto [it, first] = owner.emplace(kind, inv.file);
    if (!first)
      out[inv.file] = "inventory " + inv.file + ": CDI kind " + kind + " is already inventory " +
                      it->second + "'s (set another \"cdi_kind\")";
  }
  return out;
}

bool IsRenderedCdiSpec(const std::string& bytes) {
  using ordered = nlohmann::ordered_json;
  ordered j = ordered::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.size() != 3) return false;
  auto it = j.begin();
  if (it.key() != "cdiVersion" || !it.value().is_string() || (++it).key() != "kind" ||
      !it.value().is_string() || (++it).key() != "devices" || !it.value().is_array())
    return false;
  try {
    return j.dump(2) + "\n" == bytes;
  } catch (const ordered::exception&) {
    return false;
  }
}

std::vector<CdiFileToWrite> CdiFilesOf(const CdiSpec& spec) {
  std::vector<CdiFileToWrite> files = spec.preload_files;
  files.push_back({spec.file_name, spec.json});
  return files;
}

int RunCdiGenerate(const Options& opts, const CdiOptions& cdi) {
  auto failed = [](const Error& e) {
    log::Error(e.Line());
    return 1;
  };
  InventorySet set;
  Error err;
  if (!LoadInventoryDir(opts.config_dir, &set, &err)) return failed(err);
  std::vector<const Inventory*> selected;
  for (const auto& inv : set.inventories)
    if (cdi.inventory.empty() || InventoryStem(inv.file) == cdi.inventory)
      selected.push_back(&inv);
  int rc = 0;
  for (const auto& b : set.broken) {
    if (!cdi.inventory.empty() && InventoryStem(b.file) != cdi.inventory) continue;
    if (cdi.inventory.empty()) {
      log::Warn("ignoring " + b.error.Line());
    } else {
      log::Error(b.error.Line());
      rc = 1;
    }
  }
  if (selected.empty()) {
    if (rc == 0)
      log::Error(cdi.inventory.empty()
                     ? "no inventories in " + opts.config_dir
                     : "no inventory \"" + cdi.inventory + "\" (" + cdi.inventory +
                           ".json) in " + opts.config_dir);
    return 1;
  }
  bool to_dir = !cdi.output_dir.empty();
  if (!to_dir && selected.size() > 1) {
    log::Error(std::to_string(selected.size()) + " inventories in " + opts.config_dir +
               ": write them with --output-dir DIR, or select one with --inventory NAME");
    return 1;
  }

  std::unique_ptr<HostRootView> host;
  if (!HostRootView::Open(opts.host_root, &host, &err)) return failed(err);
  host->set_resolve_paths(true);
  std::map<std::string, std::string> conflicts = CdiKindConflicts(set);
  for (const Inventory* inv : selected) {
    if (auto c = conflicts.find(inv->file); c != conflicts.end()) {
      rc = failed(Error{c->second, "", 0});
      continue;
    }
    std::string dest = to_dir ? cdi.output_dir + "/" + CdiFileName(*inv) : cdi.output;
    bool to_stdout = dest.empty() || dest == "-";
    // The preload files go next to the spec; the spec names them by an
    // absolute path, as the engine on this host will open them.
    std::string spec_path;
    if (!to_stdout) {
      std::error_code ec;
      spec_path = std::filesystem::absolute(dest, ec).lexically_normal().string();
      if (ec) {
        rc = failed(Error{"cannot make the output path absolute", dest, ec.value()});
        continue;
      }
    }
    std::string dir = spec_path.substr(0, spec_path.rfind('/'));
    CdiSpec spec;
    bool built = BuildCdiSpec(*inv, *host, host->root_path(), spec_path, &spec, &err);
    for (const auto& w : spec.warnings) log::Warn(inv->file + ": " + w);
    if (!built) {
      rc = failed(err);
      continue;
    }
    if (to_stdout) {
      if (spec.preload_in_env)
        log::Warn(inv->file + ": a spec on stdout preloads through env LD_PRELOAD, which "
                  "replaces a container's own LD_PRELOAD; write it with --output-dir DIR "
                  "(or --output FILE) to preload through /etc/ld.so.preload instead");
      std::fputs(spec.json.c_str(), stdout);
      std::fflush(stdout);
      continue;
    }
    bool wrote = true;
    for (const auto& f : CdiFilesOf(spec)) {
      std::string path = dir + "/" + f.name;
      if (!WriteFileAtomic(path, f.bytes, 0644, &err)) {
        rc = failed(err);
        wrote = false;
        break;
      }
    }
    if (!wrote) continue;
    log::Info("wrote " + dest + ": " + CdiSpecSummary(spec) +
              (spec.preload_files.empty()
                   ? std::string()
                   : " (and " + std::to_string(spec.preload_files.size()) +
                         " preload file(s) in " + dir + ")"));
  }
  return rc;
}

}  // namespace ocid
