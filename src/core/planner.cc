#include "planner.h"

#include <sys/sysmacros.h>

#include <algorithm>

#include "device_program.h"
#include "log.h"
#include "path_text.h"
#include "version_lock.h"

namespace ocid {
namespace {

std::string JoinAlternatives(const HostView& host, const InventoryEntry& e) {
  std::string s;
  for (const auto& alt : e.sources) {
    if (!s.empty()) s += " or ";
    s += host.Display(e.kind == EntryKind::kDevice ? "/dev/" + alt : alt);
  }
  return s;
}

// A library the planner places: category "libraries", a file, and no
// target of the inventory's choosing. Goes by name into the library
// directories rather than to its host path, which only a loader of the
// host's own layout would search.
bool IntoLibraryDirs(const InventoryEntry& e) {
  return e.category == "libraries" && e.kind == EntryKind::kFile && e.target.empty() &&
         e.target_dir.empty();
}

bool TypeFits(EntryKind kind, FileType t) {
  switch (kind) {
    case EntryKind::kDevice: return t == FileType::kCharDevice || t == FileType::kBlockDevice;
    case EntryKind::kFile: return t == FileType::kRegular;
    case EntryKind::kDirectory: return t == FileType::kDirectory;
  }
  return false;
}

const char* Expected(EntryKind kind) {
  switch (kind) {
    case EntryKind::kDevice: return "a device node";
    case EntryKind::kFile: return "a regular file";
    case EntryKind::kDirectory: return "a directory";
  }
  return "";
}

constexpr const char* kSameLibraryName =
    ": libraries go by file name into the image's library directory, where only one file of "
    "a name fits (give one entry a \"target_dir\")";

// A file entry's place in the container: its "target", its "target_dir"
// plus the file's name, or its host path.
std::string TargetOf(const InventoryEntry& e, const HostMatch& m) {
  if (!e.target.empty()) return e.target;
  if (!e.target_dir.empty()) return e.target_dir + "/" + Basename(m.path);
  return m.path;
}

}  // namespace

InventoryPlanner::InventoryPlanner(const HostView& host, const LibraryDirs& libraries, Plan* out,
                                   Error* err, const VersionReport* versions)
    : host_(host), plan_(out), err_(err), versions_(versions) {
  plan_->library_dirs = libraries.dirs.empty() ? UnseenLibraryDirs() : libraries;
}

bool InventoryPlanner::Add(const Inventory& inv, const std::vector<std::string>& features,
                           const std::string& source) {
  if (!CheckVersionLock(inv, features)) return false;
  plan_->activated.push_back(
      ActivatedInventory{inv.file, inv.activation_flag, features, source, "", ""});
  for (const auto& name : features)
    if (!PlanFeature(inv, *inv.FindFeature(name))) return false;
  return true;
}

bool InventoryPlanner::AddProfile(const Inventory& inv, const std::string& name,
                                  const std::string& by) {
  ProfileSources src = inv.Profiles(host_);
  EnvList env;
  if (!ResolveProfile(
          src, name, HostProfileReader(host_), [&] { return AvailableProfiles(src, host_); }, &env,
          err_))
    return false;
  plan_->activated.back().profile = name;
  plan_->activated.back().profile_by = by;
  return MergeEnv(env, inv.file + " profile " + name);
}

// The version lock (version_lock.h), for the features asked of `inv`: a
// mismatch it enforces fails the plan; unknown, or a mismatch it allows,
// is a warning. Runs only for an inventory that was asked for.
bool InventoryPlanner::CheckVersionLock(const Inventory& inv,
                                        const std::vector<std::string>& features) {
  if (!inv.version_lock.Guards(features)) return true;
  VersionReport r = versions_ ? *versions_ : CheckVersions(inv, host_);
  const std::string prefix = "inventory " + inv.file + ": ";
  switch (r.state) {
    case VersionState::kMatch:
    case VersionState::kNotConfigured: return true;
    case VersionState::kMismatch:
      if (inv.version_lock.enforce)
        return Fail(err_, prefix + r.why + "; refusing (set \"enforce\": false to allow)");
      plan_->warnings.push_back(prefix + r.why + "; allowed (\"enforce\" is false)");
      return true;
    case VersionState::kUnknown:
      plan_->warnings.push_back(prefix + r.why + "; not checked");
      return true;
  }
  return true;
}

bool InventoryPlanner::MergeEnv(const EnvList& env, const std::string& from) {
  for (const auto& [k, v] : env) {
    auto same = std::find_if(plan_->env.begin(), plan_->env.end(),
                             [&k = k](const auto& e) { return e.first == k; });
    if (same == plan_->env.end())
      plan_->env.emplace_back(k, v);
    else if (same->second != v)
      return Fail(err_, "two profiles set " + k + " differently: " + same->second + " and " + v +
                            " (" + from + ")");
  }
  return true;
}

bool InventoryPlanner::PlanFeature(const Inventory& inv, const Feature& f) {
  size_t first = plan_->mounts.size();
  for (const auto& e : f.entries)
    if (!PlanEntry(inv, f, e)) return false;
  for (const auto& p : f.preload) {
    std::string found;
    for (size_t i = first; i < plan_->mounts.size(); ++i) {
      const MountOp& m = plan_->mounts[i];
      if (m.type == FileType::kRegular && (p[0] == '/' ? m.target == p : Basename(m.target) == p)) {
        found = m.target;
        break;
      }
    }
    if (found.empty())
      return Fail(err_, "inventory " + inv.file + ": preload \"" + p +
                            "\" is not one of the files feature \"" + f.name + "\" mounts");
    if (std::find(plan_->preload.begin(), plan_->preload.end(), found) == plan_->preload.end())
      plan_->preload.push_back(found);
  }
  return true;
}

bool InventoryPlanner::PlanEntry(const Inventory& inv, const Feature& f, const InventoryEntry& e) {
  const HostView& host = host_;
  std::vector<HostMatch> matches;
  for (const auto& alt : e.sources) {
    std::string pattern = e.kind == EntryKind::kDevice ? "/dev/" + alt : alt;
    if (!host.Match(pattern, &matches, err_)) return false;
    if (!matches.empty()) break;
  }
  if (matches.empty()) {
    std::string what = JoinAlternatives(host, e);
    if (e.optional) {
      OCID_DEBUG("optional " + e.category + " entry not found, skipped: " + what + " (" + inv.file +
                 ")");
      plan_->skipped.push_back(what);
      return true;
    }
    return Fail(err_,
                "required " + e.category + " entry of feature \"" + f.name +
                    "\" not found on the host (inventory " + inv.file + ")",
                what);
  }
  for (const auto& m : matches) {
    if (!TypeFits(e.kind, m.type))
      return Fail(err_,
                  std::string("host path is a ") + FileTypeName(m.type) + ", expected " +
                      Expected(e.kind) + " (inventory " + inv.file + ")",
                  host.Display(m.path));
    if (!IntoLibraryDirs(e)) {
      AddMount(inv, f, e, m, TargetOf(e, m), false);
      continue;
    }
    // One mount per directory, in the directories' order: a preload by
    // name takes the first.
    for (const auto& dir : plan_->library_dirs.dirs)
      AddMount(inv, f, e, m, dir + "/" + Basename(m.path), true);
  }
  return true;
}

void InventoryPlanner::AddMount(const Inventory& inv, const Feature& f, const InventoryEntry& e,
                                const HostMatch& m, std::string target, bool library) {
  MountOp op;
  op.type = m.type;
  op.source = m.path;
  op.resolved = m.resolved;
  op.target = std::move(target);
  op.library = library;
  op.nodev = e.kind != EntryKind::kDevice;
  op.rdev = m.rdev;
  op.mode = m.mode;
  op.uid = m.uid;
  op.gid = m.gid;
  op.dev = m.dev;
  op.ino = m.ino;
  op.inventory = inv.file;
  op.feature = f.name;
  plan_->mounts.push_back(std::move(op));
}

// What the plan says about the library directories it mounts into, once
// per inventory that has such a library: the image has no glibc to load
// them, or the image could not be looked at.
void InventoryPlanner::LibraryWarnings() {
  const LibraryDirs& d = plan_->library_dirs;
  if (!d.no_glibc && d.probe_error.empty()) return;
  std::vector<std::string> files;
  for (const auto& m : plan_->mounts)
    if (m.library && std::find(files.begin(), files.end(), m.inventory) == files.end())
      files.push_back(m.inventory);
  const std::string where = JoinDirs(d.dirs);
  for (const auto& file : files) {
    if (d.no_glibc)
      plan_->warnings.push_back("inventory " + file + ": the image has no glibc (no libc.so.6 in " +
                                JoinDirs(LibcCandidates()) + "): its libraries are mounted in " +
                                where + " but only a dynamically linked glibc program loads them");
    else
      plan_->warnings.push_back("inventory " + file + ": " + d.probe_error +
                                "; its libraries are mounted in " + where +
                                ", where Debian/Ubuntu and RHEL/Fedora/SUSE images look");
  }
}

// Merges duplicates, drops mounts a directory mount already provides,
// orders parents first and derives the device rules.
bool InventoryPlanner::Finish(const ContainerTarget* target) {
  std::vector<MountOp>& ms = plan_->mounts;
  std::stable_sort(ms.begin(), ms.end(),
                   [](const MountOp& a, const MountOp& b) { return a.target < b.target; });
  // Conflicts first, over every entry: whether one of them would later be
  // dropped as covered by a directory must not hide a conflict.
  for (size_t i = 1; i < ms.size(); ++i) {
    const MountOp& o = ms[i - 1];
    const MountOp& m = ms[i];
    if (o.target == m.target && (o.dev != m.dev || o.ino != m.ino))
      return Fail(err_,
                  "two inventory entries want the same container path with "
                  "different sources: " +
                      o.source + " (" + o.inventory + ") and " + m.source + " (" + m.inventory +
                      ")" + (o.library && m.library ? kSameLibraryName : ""),
                  m.target);
  }
  std::vector<MountOp> out;
  for (auto& m : ms) {
    if (!out.empty() && out.back().target == m.target) continue;  // same file
    if (CoveredByDirectory(out, m)) continue;
    out.push_back(std::move(m));
  }
  ms = std::move(out);
  LibraryWarnings();
  for (const auto& m : ms) {
    if (m.type != FileType::kCharDevice && m.type != FileType::kBlockDevice) continue;
    DeviceRule r;
    r.type = m.type == FileType::kCharDevice ? 'c' : 'b';
    r.major = static_cast<int64_t>(major(m.rdev));
    r.minor = static_cast<int64_t>(minor(m.rdev));
    r.access = kGrantedDeviceAccess;
    if (std::find(plan_->device_rules.begin(), plan_->device_rules.end(), r) ==
        plan_->device_rules.end())
      plan_->device_rules.push_back(r);
  }
  if (!plan_->device_rules.empty() && target) {
    std::vector<std::string> paths;
    for (const auto& d : *target->devices) paths.push_back(d.path);
    plan_->container_device_rules = RuncDeviceRules(*target->device_rules, paths);
  }
  return true;
}

bool InventoryPlanner::CoveredByDirectory(const std::vector<MountOp>& done,
                                          const MountOp& m) const {
  for (const auto& d : done) {
    if (d.type != FileType::kDirectory) continue;
    const std::string prefix = d.target + "/";
    if (m.target.rfind(prefix, 0) != 0) continue;
    std::string suffix = m.target.substr(d.target.size());
    // Same file at the same relative place: the directory mount shows it.
    // (Rare, so resolved paths are looked up here when the view left them out.)
    std::string mr = m.resolved.empty() ? host_.Resolve(m.source) : m.resolved;
    std::string dr = d.resolved.empty() ? host_.Resolve(d.source) : d.resolved;
    if (!mr.empty() && mr == dr + suffix) return true;
  }
  return false;
}

bool BuildInventoryPlan(const Inventory& inv, const std::vector<std::string>& features,
                        const HostView& host, Plan* out, Error* err, const VersionReport* versions,
                        const LibraryDirs& libraries) {
  *out = Plan{};
  InventoryPlanner p(host, libraries, out, err, versions);
  for (const auto& name : features)
    if (!inv.FindFeature(name))
      return Fail(err, "inventory " + inv.file + " has no feature \"" + name + "\"");
  return p.Add(inv, features, "inventory plan") && p.Finish(nullptr);
}

std::vector<std::string> HookModeWarnings(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& a : plan.activated) {
    if (a.profile.empty()) continue;
    std::string vars;
    for (const auto& [k, v] : plan.env) vars += (vars.empty() ? "" : " ") + k + "=" + v;
    out.push_back("profile \"" + a.profile + "\" (" + a.profile_by +
                  ") not applied: a hook cannot change the container's environment; use the "
                  "runtime shim or CDI, or set these in the container: " +
                  vars);
  }
  return out;
}

}  // namespace ocid
