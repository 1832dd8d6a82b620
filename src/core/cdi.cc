#include "cdi.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "delivery.h"
#include "host_dirs.h"
#include "planner.h"

namespace ocid {
namespace {

// One device's containerEdits, from the plan's Delivery (delivery.h). Sets
// what it needs of cdiVersion in *needs.
// With a `preload_host_file`, the preload goes there (its content in
// *preload_bytes) and is mounted at /etc/ld.so.preload, not in the env.
bool ContainerEdits(const Plan& plan, const std::string& host_root,
                    const std::string& preload_host_file, nlohmann::ordered_json* edits,
                    CdiVersionNeeds* needs, std::string* preload_bytes, Error* err) {
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
      needs->device_host_path = true;
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
    mounts.push_back(
        {{"hostPath", m.host_path}, {"containerPath", m.container_path}, {"options", options}});
  }
  if (!nodes.empty()) e["deviceNodes"] = std::move(nodes);
  if (!mounts.empty()) e["mounts"] = std::move(mounts);
  // Host gids: a spec knows no user namespace. The engine adds each to the
  // process's additionalGids (CDI SPEC.md, "additionalGids").
  if (!d.additional_gids.empty()) {
    e["additionalGids"] = d.additional_gids;
    needs->additional_gids = true;
  }
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
    if (!ResolveProfile(
            src, name, HostProfileReader(host), [&] { return names; }, &env, &e)) {
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

std::string MinimalCdiVersion(const CdiVersionNeeds& needs) {
  if (needs.additional_gids) return "0.7.0";
  if (needs.device_host_path || needs.digit_device_name) return "0.5.0";
  return "0.3.0";
}

bool CdiSpecJson(const std::string& kind, const std::string& spec_file_name,
                 const std::vector<CdiDevice>& devices, const std::string& host_root,
                 const std::string& spec_dir, std::string* out,
                 std::vector<CdiFileToWrite>* preload_files, Error* err) {
  using ordered = nlohmann::ordered_json;
  CdiVersionNeeds needs;
  ordered devs = ordered::array();
  for (const auto& d : devices) {
    ordered edits;
    CdiFileToWrite pf;
    std::string host_file;
    if (!spec_dir.empty()) {
      pf.name = CdiPreloadFileName(spec_file_name, d.name);
      host_file = UnderRoot(spec_dir, "/" + pf.name);
    }
    if (!ContainerEdits(d.plan, host_root, host_file, &edits, &needs, &pf.bytes, err)) return false;
    if (!d.name.empty() && d.name[0] >= '0' && d.name[0] <= '9') needs.digit_device_name = true;
    if (!pf.bytes.empty()) preload_files->push_back(std::move(pf));
    devs.push_back({{"name", d.name}, {"containerEdits", std::move(edits)}});
  }
  ordered j;
  j["cdiVersion"] = MinimalCdiVersion(needs);
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

namespace {

// "0.5.0" -> 500, the versions this module emits; -1 for anything else.
int CdiVersionNumber(const std::string& v) {
  for (const char* known : {"0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0"})
    if (v == known) return (known[2] - '0') * 100;
  return -1;
}

// Under a cap below 0.7.0, the devices' groups stay out of the spec: one
// warning naming them and what to do instead.
void DropGroupsOverCap(const std::string& max_version, std::vector<CdiDevice>* devices,
                       std::vector<std::string>* warnings) {
  std::vector<uint32_t> dropped;
  for (auto& d : *devices)
    for (auto& g : d.plan.groups)
      if (g.required) {
        if (std::find(dropped.begin(), dropped.end(), g.gid) == dropped.end())
          dropped.push_back(g.gid);
        g.required = false;
      }
  if (dropped.empty()) return;
  std::string gids, adds;
  for (uint32_t g : dropped) {
    gids += (gids.empty() ? "" : ", ") + std::to_string(g);
    adds += " --group-add " + std::to_string(g);
  }
  warnings->push_back("cdiVersion " + max_version + " cannot carry additionalGids (0.7.0): group " +
                      gids + " left out of the spec; start containers with" + adds);
}

}  // namespace

bool BuildCdiSpec(const Inventory& inv, const HostView& host, const std::string& host_root,
                  const std::string& spec_path, CdiSpec* out, Error* err,
                  const VersionReport* versions, const std::string& max_version) {
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
  const int cap = max_version.empty() ? CdiVersionNumber("0.7.0") : CdiVersionNumber(max_version);
  if (cap < 0) return Fail(err, "unknown CDI version \"" + max_version + "\" (0.3.0 to 0.7.0)");

  std::vector<CdiDevice> devices;
  bool all_ok = true;
  for (const auto& f : inv.features) {
    CdiDevice d;
    d.name = f.name;
    Error e;
    if (!CheckCdiDeviceName(f.name, &why)) {
      out->warnings.push_back("feature \"" + f.name + "\" gets no CDI device: " + why);
    } else if (!BuildInventoryPlan(inv, {f.name}, host, &d.plan, &e, versions)) {
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
    if (BuildInventoryPlan(inv, inv.driver_features, host, &all.plan, &e, versions)) {
      AddWarnings(all.plan, &out->warnings);
      devices.push_back(std::move(all));
    } else
      out->warnings.push_back("no CDI device \"all\": " + e.Line());
  } else {
    out->warnings.push_back("no CDI device \"all\": not every feature is available");
  }
  AddProfileDevices(inv, host, &devices, &out->warnings);
  if (devices.empty())
    return Fail(err, "inventory " + inv.file + ": no CDI device can be generated on this host");
  if (cap < CdiVersionNumber("0.7.0")) DropGroupsOverCap(max_version, &devices, &out->warnings);
  for (const auto& d : devices) {
    out->devices.push_back(d.name);
    if (spec_dir.empty() && !d.plan.preload.empty()) out->preload_in_env = true;
    AddDirectoriesToCreate(d.plan.mounts, &out->create);
  }
  if (!CdiSpecJson(out->kind, out->file_name, devices, host_root, spec_dir, &out->json,
                   &out->preload_files, err))
    return false;
  // The version the content needs, against the cap.
  std::string need = nlohmann::json::parse(out->json).at("cdiVersion").get<std::string>();
  out->cdi_version = need;
  if (CdiVersionNumber(need) > cap)
    return Fail(err, "inventory " + inv.file + ": the CDI spec needs cdiVersion " + need +
                         " (a device node's hostPath under a --host-root, or a device name "
                         "starting with a digit), above " +
                         max_version);
  return true;
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

}  // namespace ocid
