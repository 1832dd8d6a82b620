#include "planner.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdio>

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

// The first line of a small host file, trailing whitespace trimmed.
std::string FirstLine(const std::string& bytes) {
  std::string line = bytes.substr(0, bytes.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
    line.pop_back();
  return line;
}

// A decimal number of at most 10 digits below 2^32-1, alone on its line
// (what the kernel shows of an int module parameter, or a gid).
bool ParseDecimal(const std::string& s, uint32_t* out) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v >= UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

std::string OctalMode(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

constexpr size_t kConditionFileLimit = 4096;
constexpr size_t kNumberFileLimit = 64;

}  // namespace

ConditionState EvaluateCondition(const HostCondition& c, const HostView& host, std::string* by,
                                 Error* err) {
  for (const auto& p : c.exists)
    if (host.Exists(p)) {
      *by = p;
      return ConditionState::kMet;
    }
  for (const auto& file : c.exists_named_in) {
    std::string named;
    bool exists = false;
    HostRead r = ReadNamedPath(file, host, &named, &exists, err);
    if (r == HostRead::kError) return ConditionState::kError;
    if (r == HostRead::kOk && exists) {
      *by = named;
      return ConditionState::kMet;
    }
  }
  return ConditionState::kNotMet;
}

HostRead ReadNamedPath(const std::string& file, const HostView& host, std::string* names,
                       bool* names_exists, Error* err) {
  names->clear();
  *names_exists = false;
  std::string bytes;
  HostRead r = host.Read(file, kConditionFileLimit, &bytes, err);
  if (r != HostRead::kOk) return r;
  std::string named = FirstLine(bytes);
  if (named.empty() || named[0] != '/' || named.find('\0') != std::string::npos) return r;
  *names = named;
  *names_exists = host.Exists(named);
  return r;
}

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
  NoteMetConditions(inv);
  for (const auto& name : features)
    if (!PlanFeature(inv, *inv.FindFeature(name))) return false;
  return true;
}

const InventoryPlanner::ConditionResult& InventoryPlanner::Condition(const Inventory& inv,
                                                                     const std::string& name) {
  auto [it, fresh] = conditions_.try_emplace(inv.file + "\n" + name);
  ConditionResult& r = it->second;
  if (fresh) {
    auto c = inv.conditions.find(name);
    std::string by;
    r.state = c == inv.conditions.end() ? ConditionState::kNotMet
                                        : EvaluateCondition(c->second, host_, &by, &r.error);
  }
  return r;
}

bool InventoryPlanner::ConditionMet(const Inventory& inv, const std::string& name, bool* met) {
  const ConditionResult& r = Condition(inv, name);
  if (r.state == ConditionState::kError) {
    *err_ = r.error;
    return false;
  }
  *met = r.state == ConditionState::kMet;
  return true;
}

// Plan::met_conditions: every condition of an activated inventory, whether
// or not an entry needs it now (the device plugin reports them). A read
// error here fails nothing; it fails the plan only where an entry needs the
// condition.
void InventoryPlanner::NoteMetConditions(const Inventory& inv) {
  for (const auto& [name, c] : inv.conditions) {
    if (Condition(inv, name).state != ConditionState::kMet) continue;
    auto& m = plan_->met_conditions;
    auto at = std::lower_bound(m.begin(), m.end(), name);
    if (at == m.end() || *at != name) m.insert(at, name);
  }
}

// One "groups" entry of feature `f`: its gid and mode read on the host,
// merged by gid into Plan::groups. A gid of 0 is no group; a missing
// gid_file is none when optional, else fails; a file that holds no number
// fails (the service may admit only that group).
bool InventoryPlanner::PlanGroup(const Inventory& inv, const Feature& f, const GroupEntry& g) {
  const std::string where = " (inventory " + inv.file + ", feature \"" + f.name + "\")";
  std::string bytes;
  Error read_err;
  HostRead r = host_.Read(g.gid_file, kNumberFileLimit, &bytes, &read_err);
  if (r == HostRead::kMissing) {
    if (g.optional) return true;
    return Fail(err_, "required group file not found" + where, host_.Display(g.gid_file));
  }
  if (r == HostRead::kError) return Fail(err_, read_err.Line() + where);
  GroupOp op;
  if (!ParseDecimal(FirstLine(bytes), &op.gid))
    return Fail(err_, "group file does not hold a decimal group id" + where,
                host_.Display(g.gid_file));
  if (op.gid == 0) return true;
  op.gid_file = g.gid_file;
  op.mode_file = g.mode_file;
  op.inventory = inv.file;
  op.feature = f.name;
  if (!g.mode_file.empty()) {
    bytes.clear();
    r = host_.Read(g.mode_file, kNumberFileLimit, &bytes, &read_err);
    if (r == HostRead::kError) return Fail(err_, read_err.Line() + where);
    if (r == HostRead::kOk) {
      if (!ParseDecimal(FirstLine(bytes), &op.mode) || op.mode > 07777)
        return Fail(err_, "mode file does not hold a decimal mode up to 4095 (07777)" + where,
                    host_.Display(g.mode_file));
      op.mode_known = op.mode != 0;
    }
  }
  if (!op.mode_known && g.has_default_mode) {
    op.mode = g.default_mode;
    op.mode_known = true;
  }
  op.required = !op.mode_known || (op.mode & 07) == 0;
  for (auto& have : plan_->groups)
    if (have.gid == op.gid) {
      have.required = have.required || op.required;
      return true;
    }
  plan_->groups.push_back(std::move(op));
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
  for (const auto& g : f.groups)
    if (!PlanGroup(inv, f, g)) return false;
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
    if (!e.create_if.empty()) {
      bool met = false;
      if (!ConditionMet(inv, e.create_if, &met)) return false;
      if (met) {
        // Created by the executor before it mounts (host_dirs.h).
        HostMatch m;
        m.path = e.sources[0];
        m.type = FileType::kDirectory;
        m.mode = S_IFDIR | 0755;
        AddMount(inv, f, e, m, TargetOf(e, m), false);
        plan_->mounts.back().create = true;
        return true;
      }
      what += " (condition " + e.create_if + " not met)";
    }
    if (e.optional) {
      OCID_DEBUG("optional " + e.category + " entry not found, skipped: " + what + " (" + inv.file +
                 ")");
      // Once, when two features name it.
      if (std::find(plan_->skipped.begin(), plan_->skipped.end(), what) == plan_->skipped.end())
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
    // What create_if would make root's: one others can change lets any
    // local user stand in for the service whose sockets it holds.
    if (!e.create_if.empty() && (m.mode & 022) != 0 && (m.mode & S_ISVTX) == 0) {
      std::string w = "inventory " + inv.file + ": " + host.Display(m.path) +
                      " is writable by others (mode " + OctalMode(m.mode & 07777) +
                      "): any local user could stand in for the service it serves";
      if (std::find(plan_->warnings.begin(), plan_->warnings.end(), w) == plan_->warnings.end())
        plan_->warnings.push_back(std::move(w));
    }
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
    // A directory still to be created has no identity: its source says.
    bool differ = o.create || m.create ? o.source != m.source : (o.dev != m.dev || o.ino != m.ino);
    if (o.target == m.target && differ)
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
  for (const auto& g : plan.groups) {
    if (!g.required || g.present) continue;
    const std::string gid = std::to_string(g.gid);
    std::string why = g.mode_known ? "client mode " + OctalMode(g.mode) + " admits no others"
                                   : "client mode unknown";
    out.push_back("group " + gid + " (" + g.gid_file + "; " + why +
                  ") is not among the container's groups: start it with --group-add " + gid +
                  " (docker, podman) or securityContext.supplementalGroups [" + gid +
                  "] (Kubernetes), or use the runtime shim or CDI");
  }
  return out;
}

}  // namespace ocid
