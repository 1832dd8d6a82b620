#include "cluster.h"

#include <algorithm>
#include <map>
#include <set>

#include "cdi.h"
#include "host_dirs.h"
#include "planner.h"

namespace ocid {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// DNS-1123 subdomain: lower-case labels of [a-z0-9-], alphanumeric at both
// ends, joined by '.', 253 characters at most.
bool CheckDomain(const std::string& d, std::string* why) {
  if (d.empty() || d.size() > 253) {
    *why = "domain \"" + d + "\" must have 1 to 253 characters";
    return false;
  }
  size_t start = 0;
  while (start <= d.size()) {
    size_t dot = d.find('.', start);
    if (dot == std::string::npos) dot = d.size();
    std::string label = d.substr(start, dot - start);
    bool ok = !label.empty() && label.size() <= 63 && label.front() != '-' && label.back() != '-';
    for (char c : label) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
    if (!ok) {
      *why = "domain \"" + d + "\" must be lower-case DNS labels (a-z, 0-9, '-') joined by '.'";
      return false;
    }
    start = dot + 1;
  }
  return true;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One resource for `features` of `inv`: its plan, its delivery, its health.
// Its plan's warnings (the version lock not checked...) go to `warnings`, once.
// With `profile` set, a resource of an inventory with profiles whose
// features preload also carries the profile's variables (an unknown or
// unusable profile makes it unhealthy, saying why).
// `versions` is the version lock of `inv` as the view read it.
ClusterResource Resource(const Inventory& inv, const std::vector<std::string>& features,
                         const HostView& host, const HostNics& nics,
                         const std::string& host_path_root, const std::string& profile,
                         const VersionReport& versions, std::vector<std::string>* warnings) {
  ClusterResource r;
  r.inventory = inv.file;
  r.features = features;
  Plan plan;
  Error e;
  bool preloads = false;
  for (const auto& name : features)
    if (const Feature* f = inv.FindFeature(name); f && !f->preload.empty()) preloads = true;
  auto add_profile = [&] {
    if (profile.empty() || !inv.HasProfiles() || !preloads) return true;
    ProfileSources src = inv.Profiles(host);
    if (!ResolveProfile(
            src, profile, HostProfileReader(host), [&] { return AvailableProfiles(src, host); },
            &plan.env, &e))
      return false;
    r.profile = profile;
    return true;
  };
  if (!BuildInventoryPlan(inv, features, host, &plan, &e, &versions) || !add_profile() ||
      !DeliveryOf(plan, host_path_root, &r.delivery, &e)) {
    MarkUnhealthy(&r, e.Line());
  } else {
    r.healthy = true;
    AddDirectoriesToCreate(plan.mounts, &r.to_create);
  }
  r.met_conditions = plan.met_conditions;
  NicVerdict nic = NicsFor(inv, features, nics);
  r.nics = std::move(nic.serve);
  if (r.healthy && !nic.why.empty()) MarkUnhealthy(&r, nic.why);
  for (const auto& w : plan.warnings)
    if (std::find(warnings->begin(), warnings->end(), w) == warnings->end()) warnings->push_back(w);
  return r;
}

}  // namespace

bool CheckK8sResourceName(const std::string& name, std::string* why) {
  size_t slash = name.find('/');
  if (slash == std::string::npos || name.find('/', slash + 1) != std::string::npos) {
    *why = "\"" + name + "\" is not <domain>/<name>";
    return false;
  }
  std::string domain = name.substr(0, slash), leaf = name.substr(slash + 1);
  if (!CheckDomain(domain, why)) return false;
  for (const char* reserved : {"kubernetes.io", "k8s.io"})
    if (domain == reserved || EndsWith(domain, std::string(".") + reserved)) {
      *why = "domain \"" + domain + "\" is reserved by Kubernetes";
      return false;
    }
  bool ok = !leaf.empty() && leaf.size() <= 63 && IsAlnum(leaf.front()) && IsAlnum(leaf.back());
  for (char c : leaf) ok = ok && (IsAlnum(c) || c == '-' || c == '_' || c == '.');
  if (!ok) {
    *why = "name \"" + leaf +
           "\" must have 1 to 63 letters, digits, '-', '_' or '.', alphanumeric at both ends";
    return false;
  }
  return true;
}

void MarkUnhealthy(ClusterResource* r, const std::string& why) {
  r->healthy = false;
  r->why = why;
  r->delivery = Delivery{};
  r->to_create.clear();
}

void BuildClusterView(const InventorySet& set, const HostView& host, const HostNics& nics,
                      const std::string& host_path_root, const ClusterView* previous,
                      ClusterView* out, const std::string& profile) {
  *out = ClusterView{};
  std::set<std::string> k8s_names, nomad_names;
  // Names are first come, first served, in file-name order: a name two
  // inventories claim stays with the first, so it never changes hands
  // while pods hold it.
  auto claim = [&](std::set<std::string>& names, const std::string& name, const std::string& file,
                   const char* what) {
    if (names.insert(name).second) return true;
    out->warnings.push_back("inventory " + file + ": " + what + " \"" + name +
                            "\" is already served by another inventory; left out");
    return false;
  };

  for (const Inventory& inv : set.inventories) {
    std::string kind = CdiKindOf(inv), why;
    if (!CheckCdiKind(kind, &why)) {
      out->warnings.push_back(
          "inventory " + inv.file +
          ": serves no cluster resource: invalid CDI kind (set \"cdi_kind\"): " + why);
      continue;
    }
    // Read once per inventory: every plan of it checks the lock against
    // this reading, and its guarded resources carry it.
    VersionReport versions;
    if (inv.version_lock.configured()) {
      versions = CheckVersions(inv, host);
      out->version_locks[inv.file] = versions;
    }
    auto versions_of = [&](const ClusterResource& r) {
      return inv.version_lock.Guards(r.features) ? versions : VersionReport{};
    };
    std::string vendor = kind.substr(0, kind.find('/'));
    std::string nomad_vendor = vendor.substr(0, vendor.find('.'));
    for (const Feature& f : inv.features) {
      std::string k8s = vendor + "/" + f.name;
      if (!CheckK8sResourceName(k8s, &why)) {
        out->warnings.push_back("inventory " + inv.file + ": feature \"" + f.name +
                                "\" serves no cluster resource: " + why);
        continue;
      }
      bool k8s_ok = claim(k8s_names, k8s, inv.file, "resource");
      bool nomad_ok = claim(nomad_names, nomad_vendor + "/" + f.name, inv.file, "Nomad device");
      if (!k8s_ok && !nomad_ok) continue;
      ClusterResource r =
          Resource(inv, {f.name}, host, nics, host_path_root, profile, versions, &out->warnings);
      r.versions = versions_of(r);
      r.k8s_name = k8s_ok ? k8s : "";
      if (nomad_ok) {
        r.nomad_vendor = nomad_vendor;
        r.nomad_type = f.name;
      }
      // The CDI device of the same edits (cdi.h: "<feature>-<profile>").
      r.cdi_device = kind + "=" + f.name + (r.profile.empty() ? "" : "-" + r.profile);
      out->resources.push_back(std::move(r));
    }
    if (inv.features.size() > 1) {
      std::string type;
      for (const Feature& f : inv.features) type += f.name;
      if (!claim(nomad_names, nomad_vendor + "/" + type, inv.file, "Nomad device")) continue;
      ClusterResource r = Resource(inv, inv.driver_features, host, nics, host_path_root, profile,
                                   versions, &out->warnings);
      r.versions = versions_of(r);
      r.nomad_vendor = nomad_vendor;
      r.nomad_type = type;
      r.cdi_device = kind + "=all";
      out->resources.push_back(std::move(r));
    }
  }

  for (const BrokenInventory& b : set.broken) {
    bool kept = false;
    if (previous)
      for (const ClusterResource& p : previous->resources) {
        if (p.inventory != b.file) continue;
        bool k8s_ok = p.k8s_name.empty() || claim(k8s_names, p.k8s_name, b.file, "resource");
        bool nomad_ok =
            p.nomad_type.empty() ||
            claim(nomad_names, p.nomad_vendor + "/" + p.nomad_type, b.file, "Nomad device");
        if (!k8s_ok || !nomad_ok) continue;
        ClusterResource r = p;
        MarkUnhealthy(&r, b.error.Line());
        out->resources.push_back(std::move(r));
        kept = true;
      }
    if (!kept)
      out->warnings.push_back("inventory " + b.file +
                              " is broken and serves nothing: " + b.error.Line());
  }
}

void BuildClusterCdi(const InventorySet& set, const HostView& host,
                     const std::string& host_path_root, const std::string& cdi_dir,
                     const ClusterView* previous, ClusterView* out) {
  out->cdi_dir = cdi_dir;
  out->cdi_specs.clear();
  std::map<std::string, std::string> conflicts = CdiKindConflicts(set);
  for (const Inventory& inv : set.inventories) {
    ClusterCdiSpec c;
    c.inventory = inv.file;
    c.stem = InventoryStem(inv.file);
    c.kind = CdiKindOf(inv);
    c.spec_path = cdi_dir + "/" + CdiFileName(inv);
    CdiSpec spec;
    Error err;
    auto read = out->version_locks.find(inv.file);
    const VersionReport* versions = read == out->version_locks.end() ? nullptr : &read->second;
    if (auto it = conflicts.find(inv.file); it != conflicts.end()) {
      c.why = it->second;
    } else if (!BuildCdiSpec(inv, host, host_path_root, c.spec_path, &spec, &err, versions)) {
      c.why = err.Line();
    } else {
      c.state = ClusterCdiSpec::State::kWritten;
      c.devices = spec.devices;
      c.warnings = spec.warnings;
      c.summary = CdiSpecSummary(spec);
      c.files = CdiFilesOf(spec);
    }
    out->cdi_specs.push_back(std::move(c));
  }
  for (const BrokenInventory& b : set.broken) {
    ClusterCdiSpec c;
    if (previous)
      for (const ClusterCdiSpec& p : previous->cdi_specs)
        if (p.inventory == b.file && p.spec_path.rfind(cdi_dir + "/", 0) == 0) c = p;
    c.inventory = b.file;
    c.stem = InventoryStem(b.file);
    if (c.spec_path.empty()) c.spec_path = cdi_dir + "/oci-decorator-" + c.stem + ".json";
    c.state = ClusterCdiSpec::State::kKept;
    c.why = b.error.Line();
    out->cdi_specs.push_back(std::move(c));
  }
}

}  // namespace ocid
