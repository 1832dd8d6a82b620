#include "node_check.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdio>

#include "cdi.h"
#include "delivery.h"
#include "dir_trust.h"
#include "host_dirs.h"
#include "library_dirs.h"
#include "planner.h"

namespace ocid {
namespace {

std::string Octal(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

void Worsen(CheckState* s, CheckState to) { *s = std::max(*s, to); }

// What a process in the container that is neither the file's owner nor in
// its group cannot do with it (containers mostly run as other users).
std::string PermissionProblem(const std::string& category, const CheckedFile& f) {
  const std::string who = " (mode " + Octal(f.mode) + ", owner " + std::to_string(f.uid) + ":" +
                          std::to_string(f.gid) + ")";
  switch (f.type) {
    case FileType::kCharDevice:
    case FileType::kBlockDevice:
      if ((f.mode & 0006) != 0006) return "only its owner or group can open it read-write" + who;
      return "";
    case FileType::kDirectory:
      if ((f.mode & 0005) != 0005) return "only its owner or group can list and enter it" + who;
      return "";
    case FileType::kRegular:
      if (!(f.mode & 0004)) return "only its owner or group can read it" + who;
      if (category == "binaries" && !(f.mode & 0001))
        return "only its owner or group can execute it" + who;
      return "";
    case FileType::kOther: return "";
  }
  return "";
}

// `inv` with `f` as its only feature, which is its driver: the planner on
// one entry or one group alone, with the conditions a "create_if" names.
Inventory OneFeature(const Inventory& inv, Feature f) {
  Inventory one;
  one.file = inv.file;
  one.activation_flag = inv.activation_flag;
  one.driver_features = {f.name};
  one.features = {std::move(f)};
  one.conditions = inv.conditions;
  return one;
}

EntryCheck CheckEntry(const Inventory& inv, const Feature& f, const InventoryEntry& e,
                      const HostView& host) {
  EntryCheck c;
  c.category = e.category;
  c.optional = e.optional;
  c.create_if = e.create_if;
  for (const auto& alt : e.sources)
    c.tried.push_back(host.Display(e.kind == EntryKind::kDevice ? "/dev/" + alt : alt));
  // The planner on this entry alone: the same matching, alternatives and
  // type checks as the real plan, and an error naming what was tried.
  Inventory one = OneFeature(inv, Feature{f.name, {e}, {}});
  Plan plan;
  Error err;
  if (!BuildInventoryPlan(one, {f.name}, host, &plan, &err)) {
    c.state = CheckState::kFail;
    c.reason = err.Line();
    return c;
  }
  if (!plan.skipped.empty()) {
    c.state = CheckState::kInfo;
    c.reason = "optional, not found on the host: " + plan.skipped.front();
  }
  for (const auto& m : plan.mounts) {
    if (m.create) {
      // Nothing on the host yet: the executors make it.
      c.create = true;
      c.state = CheckState::kInfo;
      c.reason = host.Display(m.source) +
                 " will be created (root, 0755) when a container asks: " + "condition " +
                 e.create_if + " is met";
      continue;
    }
    CheckedFile file;
    file.path = host.Display(m.source);
    file.resolved = m.resolved.empty() ? "" : host.Display(m.resolved);
    file.type = m.type;
    file.major = major(m.rdev);
    file.minor = minor(m.rdev);
    file.mode = m.mode & 07777;
    file.uid = m.uid;
    file.gid = m.gid;
    file.problem = PermissionProblem(e.category, file);
    // What "create_if" would make root's 0755: one others can change lets
    // any local user stand in for the service whose sockets it holds.
    if (file.problem.empty() && !e.create_if.empty() && file.type == FileType::kDirectory &&
        (file.mode & 022) != 0 && (file.mode & S_ISVTX) == 0)
      file.problem = "writable by group or others (mode " + Octal(file.mode) +
                     "): any local user could stand in for the service it serves";
    if (!file.problem.empty()) {
      Worsen(&c.state, CheckState::kWarn);
      if (c.reason.empty()) c.reason = file.path + ": " + file.problem;
    }
    c.files.push_back(std::move(file));
  }
  return c;
}

FeatureCheck CheckFeature(const Inventory& inv, const Feature& f, const HostView& host,
                          const HostNics& nics) {
  FeatureCheck c;
  c.name = f.name;
  Plan plan;
  Error err;
  c.plan_ok = BuildInventoryPlan(inv, {f.name}, host, &plan, &err);
  if (c.plan_ok) {
    c.mounts = plan.mounts.size();
    c.devices = plan.device_rules.size();
  } else {
    c.state = CheckState::kFail;
    c.reasons.push_back(err.Line());
  }
  for (const auto& e : f.entries) {
    EntryCheck ec = CheckEntry(inv, f, e, host);
    // A failing entry is already the plan's reason when it is the first;
    // the others are named here too.
    if (ec.state == CheckState::kFail) {
      Worsen(&c.state, CheckState::kFail);
      if (std::find(c.reasons.begin(), c.reasons.end(), ec.reason) == c.reasons.end())
        c.reasons.push_back(ec.reason);
    } else if (ec.state == CheckState::kWarn) {
      Worsen(&c.state, CheckState::kWarn);
      c.warnings.push_back(ec.reason);
    }
    c.entries.push_back(std::move(ec));
  }
  // The plugin's own decision (cluster.h): the same line.
  NicVerdict nic = NicsFor(inv, {f.name}, nics);
  c.needs_nic = nic.needed;
  if (!nic.why.empty()) {
    Worsen(&c.state, CheckState::kFail);
    c.reasons.push_back(nic.why);
  }
  return c;
}

// The inventory's conditions: met or not, by what, and what each named
// file names; a named path that is not there is a node that fails every
// container relying on the condition, which the inventory's description
// explains in the vendor's words.
std::vector<ConditionCheck> CheckConditions(const Inventory& inv, const HostView& host,
                                            const std::string& host_root) {
  std::vector<ConditionCheck> out;
  for (const auto& [name, hc] : inv.conditions) {
    ConditionCheck c;
    c.name = name;
    c.description = hc.description;
    for (const auto& p : hc.exists) c.tried.push_back(host.Display(p));
    std::string by;
    Error err;
    ConditionState state = EvaluateCondition(hc, host, &by, &err);
    const NamedPathCheck* dangling = nullptr;
    const NamedPathCheck* nameless = nullptr;
    for (const auto& file : hc.exists_named_in) {
      NamedPathCheck n;
      n.file = host.Display(file);
      Error read_err;
      n.exists = ReadNamedPath(file, host, &n.names, &n.names_exists, &read_err) == HostRead::kOk;
      c.named_in.push_back(std::move(n));
    }
    for (const auto& n : c.named_in) {
      if (n.exists && !n.names.empty() && !n.names_exists && !dangling) dangling = &n;
      if (n.exists && n.names.empty() && !nameless) nameless = &n;
    }
    const std::string hint = hc.description.empty() ? "" : " (" + hc.description + ")";
    if (state == ConditionState::kMet) {
      c.met = true;
      c.by = host.Display(by);
      c.state = CheckState::kOk;
      c.why = "met: " + c.by + " exists";
    } else if (state == ConditionState::kError) {
      c.state = CheckState::kWarn;
      c.why = "cannot tell: " + err.Line() + ": a container that needs it fails";
    } else if (dangling) {
      c.state = CheckState::kWarn;
      c.why = dangling->file + " names " + dangling->names + ", which does not exist under " +
              host_root + ": every container that uses " + name + " fails" + hint;
    } else if (nameless) {
      c.state = CheckState::kWarn;
      c.why = nameless->file + " names no absolute path: every container that uses " + name +
              " fails" + hint;
    } else {
      c.state = CheckState::kInfo;
      c.why = "not met: nothing it names is on this host" + hint;
    }
    out.push_back(std::move(c));
  }
  return out;
}

// Each feature's groups, read by the planner itself on a feature holding
// that group alone: the same numbers, the same refusals.
std::vector<GroupCheck> CheckGroups(const Inventory& inv, const HostView& host) {
  std::vector<GroupCheck> out;
  for (const auto& f : inv.features)
    for (const auto& g : f.groups) {
      GroupCheck c;
      c.feature = f.name;
      c.gid_file = host.Display(g.gid_file);
      c.mode_file = g.mode_file.empty() ? "" : host.Display(g.mode_file);
      Inventory one = OneFeature(inv, Feature{f.name, {}, {}, {g}});
      Plan plan;
      Error err;
      if (!BuildInventoryPlan(one, {f.name}, host, &plan, &err)) {
        c.state = CheckState::kFail;
        c.why = err.Line();
      } else if (plan.groups.empty() && !host.Exists(g.gid_file)) {
        c.state = CheckState::kInfo;
        c.why = "optional, not on this host: no group";
      } else if (plan.groups.empty()) {
        c.gid_known = true;
        c.state = CheckState::kInfo;
        c.why = "group id 0: none";
      } else {
        const GroupOp& op = plan.groups.front();
        c.gid_known = true;
        c.gid = op.gid;
        c.mode_known = op.mode_known;
        c.mode = op.mode;
        c.required = op.required;
        const std::string gid = std::to_string(op.gid);
        if (op.required) {
          c.state = CheckState::kWarn;
          c.why = "required: the clients' mode " +
                  (op.mode_known ? Octal(op.mode) + " gives others nothing" : "is unknown") +
                  "; hook-mode containers need --group-add " + gid +
                  " (docker, podman) or securityContext.supplementalGroups: [" + gid +
                  "] (Kubernetes); the runtime shim and CDI add it";
        } else {
          c.state = CheckState::kInfo;
          c.why = "the clients' mode " + Octal(op.mode) +
                  " admits others: no container needs group " + gid;
        }
      }
      out.push_back(std::move(c));
    }
  return out;
}

// The version lock's verdict on the features it guards.
void CheckVersion(const Inventory& inv, const HostView& host, InventoryCheck* ic) {
  const VersionLock& lock = inv.version_lock;
  ic->version = CheckVersions(inv, host);
  ic->version_enforced = lock.enforce;
  switch (ic->version.state) {
    case VersionState::kNotConfigured: return;
    case VersionState::kMatch: ic->version_state = CheckState::kOk; break;
    case VersionState::kMismatch:
      ic->version_state = lock.enforce ? CheckState::kFail : CheckState::kWarn;
      break;
    case VersionState::kUnknown: ic->version_state = CheckState::kWarn; break;
  }
  for (auto& f : ic->features) {
    if (!lock.Guards({f.name})) continue;
    ic->version_features.push_back(f.name);
    if (ic->version_state == CheckState::kOk) continue;
    Worsen(&f.state, ic->version_state);
    // The planner refuses an enforced mismatch itself: its line already
    // says it when the plan failed on it.
    bool said = false;
    for (const auto& why : f.reasons) said = said || why.find(ic->version.why) != std::string::npos;
    // Only an enforced mismatch stops a container; the rest is a warning.
    std::vector<std::string>* to =
        ic->version_state == CheckState::kFail ? &f.reasons : &f.warnings;
    if (!said)
      to->push_back(ic->version.why +
                    (ic->version.state == VersionState::kMismatch
                         ? (lock.enforce ? " (enforced: refused)" : " (not enforced: allowed)")
                         : ""));
  }
}

// Why the preload files `spec` writes in `dir` are not all there with
// their content ("" when they are).
std::string PreloadFilesProblem(const CdiSpec& spec, const std::string& dir,
                                const NodeFacts& node) {
  for (const auto& want : spec.preload_files) {
    const CdiFile* have = nullptr;
    for (const auto& f : node.cdi_preload_files)
      if (f.dir == dir && f.name == want.name) have = &f;
    const std::string path = dir + "/" + want.name;
    if (!have)
      return "its preload file " + path + " is missing: run `oci-decorator cdi generate` again";
    if (!have->error.empty()) return "its preload file is unreadable: " + have->error.Line();
    if (have->bytes != want.bytes)
      return "its preload file " + path +
             " differs from what `oci-decorator cdi generate` writes now: run it again";
  }
  return "";
}

// Why a spec of ours in `dir` (or one of its preload files) is not safe as
// it is: a file others can write or someone else owns, a CDI directory
// others can change (through a link it is reached by, or one of its real
// ancestors): root's writer's rule on root's writer's walk (dir_trust.h),
// so the reason is the writer's own. "" when safe.
std::string UnsafeCdiProblem(const CdiFile& spec, const std::vector<std::string>& preload_names,
                             const NodeFacts& node) {
  for (const auto& d : node.cdi_dirs) {
    if (d.dir != spec.dir) continue;
    if (std::string why = UnsafeStepsReason(d.steps); !why.empty())
      return why + ": others can replace its specs";
  }
  std::string why = UnsafeFileReason(spec.dir + "/" + spec.name, spec.owner.uid, spec.owner.mode);
  if (!why.empty()) return why;
  for (const auto& name : preload_names)
    for (const auto& f : node.cdi_preload_files)
      if (f.dir == spec.dir && f.name == name && f.error.empty()) {
        why = UnsafeFileReason(f.dir + "/" + f.name, f.owner.uid, f.owner.mode);
        if (!why.empty()) return "its preload file " + why;
      }
  return "";
}

// The directories the inventory's plans would create ("create_if"): a
// spec mounts them as they are, and an engine does not create a missing
// mount source, so a spec naming one fails every container given it.
std::vector<std::string> DirectoriesToCreate(const Inventory& inv, const HostView& host) {
  std::vector<MountOp> create;
  for (const auto& f : inv.features) {
    Plan plan;
    Error err;
    if (BuildInventoryPlan(inv, {f.name}, host, &plan, &err))
      AddDirectoriesToCreate(plan.mounts, &create);
  }
  std::vector<std::string> out;
  out.reserve(create.size());
  for (const auto& m : create) out.push_back(host.Display(m.source));
  return out;
}

void CheckCdi(const Inventory& inv, const HostView& host, const std::string& host_root,
              const NodeFacts& node, std::vector<bool>* used, InventoryCheck* out) {
  const std::string name = CdiFileName(inv);
  const std::vector<std::string> to_create = DirectoriesToCreate(inv, host);
  for (size_t i = 0; i < node.cdi_files.size(); ++i) {
    const CdiFile& f = node.cdi_files[i];
    if (f.name != name) continue;
    (*used)[i] = true;
    // What `cdi generate --output-dir <this dir>` writes: its preload files
    // named under the directory as the host names it (under --host-root).
    CdiSpec spec;
    Error err;
    bool built =
        BuildCdiSpec(inv, host, host_root, UnderRoot(host_root, f.dir + "/" + f.name), &spec, &err);
    CdiCheck c;
    c.path = f.dir + "/" + f.name;
    c.inventory = inv.file;
    std::string problem;
    std::vector<std::string> preload_names;
    for (const auto& p : spec.preload_files) preload_names.push_back(p.name);
    if (!f.error.empty()) {
      c.state = "unreadable";
      c.reason = f.error.Line();
    } else if (problem = UnsafeCdiProblem(f, preload_names, node); !problem.empty()) {
      c.state = "unsafe";
      c.reason = problem;
    } else if (!built) {
      c.state = "stale";
      c.reason = "`oci-decorator cdi generate` writes no spec now: " + err.Line();
    } else if (f.bytes != spec.json) {
      c.state = "stale";
      c.reason = "differs from what `oci-decorator cdi generate` writes now: run it again";
    } else if (problem = PreloadFilesProblem(spec, f.dir, node); !problem.empty()) {
      c.state = "stale";
      c.reason = problem;
    } else if (!to_create.empty()) {
      // What `cdi generate` writes now, but /run is a tmpfs: what it made
      // there is gone after a reboot.
      c.state = "missing_source";
      c.reason =
          "it mounts " + to_create.front() +
          (to_create.size() > 1 ? " (and " + std::to_string(to_create.size() - 1) + " more)" : "") +
          ", which does not exist: every container given its devices fails to start (run "
          "`oci-decorator cdi generate` or `systemd-tmpfiles --create` to create it)";
    } else {
      c.state = "current";
    }
    out->cdi.push_back(std::move(c));
  }
}

// Where each delivery mode puts libraries: the modes that see the image
// use the directory of its libc.so.6; those that answer for every image,
// both standard directories.
std::vector<LibraryPlacement> LibraryPlacements() {
  const LibraryDirs unseen = UnseenLibraryDirs();
  const std::string seen_why =
      "the directory of the image's libc.so.6, the first of these that has it; an image "
      "without one gets " +
      JoinDirs(unseen.dirs);
  std::vector<LibraryPlacement> out;
  for (const char* mode : {"hook", "runtime_shim"})
    out.push_back({mode, true, LibcCandidates(), seen_why});
  for (const char* mode : {"cdi", "device_plugin"})
    out.push_back({mode, false, unseen.dirs, unseen.why});
  return out;
}

}  // namespace

const char* CheckStateName(CheckState s) {
  switch (s) {
    case CheckState::kOk: return "ok";
    case CheckState::kInfo: return "info";
    case CheckState::kWarn: return "warn";
    case CheckState::kFail: return "fail";
  }
  return "fail";
}

CheckReport BuildCheckReport(const std::string& config_dir, const InventorySet& set,
                             const HostView& host, const std::string& host_root,
                             const NodeFacts& node) {
  CheckReport r;
  r.config_dir = config_dir;
  r.host_root = host_root;
  r.node = node;
  for (const auto& h : node.engines.hooks) r.engine_set_up = r.engine_set_up || h.ours;
  for (const auto& e : node.engines.runtimes) r.engine_set_up = r.engine_set_up || e.ours;
  r.library_dirs = LibraryPlacements();

  std::vector<bool> used(node.cdi_files.size(), false);
  const HostNics nics{node.nics, node.nic_error};
  for (const auto& inv : set.inventories) {
    InventoryCheck ic;
    ic.file = inv.file;
    ic.activation_flag = inv.activation_flag;
    for (const auto& f : inv.features) ic.features.push_back(CheckFeature(inv, f, host, nics));
    CheckVersion(inv, host, &ic);
    ic.conditions = CheckConditions(inv, host, host_root);
    ic.groups = CheckGroups(inv, host);
    // Warnings; a group that fails is its feature's plan failing already.
    for (const auto& c : ic.conditions)
      Worsen(&ic.state, c.state == CheckState::kInfo ? CheckState::kOk : c.state);
    for (const auto& g : ic.groups)
      Worsen(&ic.state, g.state == CheckState::kInfo ? CheckState::kOk : g.state);
    for (const auto& fc : ic.features) {
      Worsen(&ic.state, fc.state == CheckState::kInfo ? CheckState::kOk : fc.state);
      if (fc.state == CheckState::kFail)
        for (const auto& why : fc.reasons) ic.reasons.push_back("feature " + fc.name + ": " + why);
    }
    CheckCdi(inv, host, host_root, node, &used, &ic);
    bool cdi_current = false;
    for (const auto& c : ic.cdi) {
      if (c.state == "current") {
        cdi_current = true;
      } else if (c.state == "unsafe") {
        // Engines read it as it is: whoever can change it decides what
        // every container given these devices preloads.
        Worsen(&ic.state, CheckState::kFail);
        ic.reasons.push_back("CDI spec " + c.path + " is unsafe: " + c.reason);
      } else if (c.state == "missing_source") {
        Worsen(&ic.state, CheckState::kFail);
        ic.reasons.push_back("CDI spec " + c.path + ": " + c.reason);
      } else {
        Worsen(&ic.state, CheckState::kWarn);
      }
    }
    ic.delivered = r.engine_set_up || cdi_current;
    if (!ic.delivered) {
      ic.state = CheckState::kFail;
      ic.reasons.push_back(
          "no delivery mode is set up: no hooks.d entry runs this binary, no engine has it as "
          "its runtime, and no current CDI spec (run `oci-decorator setup ENGINE` or "
          "`oci-decorator cdi generate --output-dir /etc/cdi`)");
    }
    r.inventories.push_back(std::move(ic));
  }
  for (const auto& b : set.broken) {
    InventoryCheck ic;
    ic.file = b.file;
    ic.activation_flag = b.activation_flag;
    ic.loaded = false;
    ic.error = b.error.Line();
    ic.state = CheckState::kFail;
    ic.reasons.push_back(ic.error);
    r.inventories.push_back(std::move(ic));
  }
  std::sort(r.inventories.begin(), r.inventories.end(),
            [](const InventoryCheck& a, const InventoryCheck& b) { return a.file < b.file; });
  for (size_t i = 0; i < node.cdi_files.size(); ++i) {
    if (used[i]) continue;
    const CdiFile& f = node.cdi_files[i];
    r.orphan_cdi.push_back(
        CdiCheck{f.dir + "/" + f.name, "", "orphan",
                 "no inventory in " + config_dir + " writes it; engines still serve its devices"});
  }

  if (r.inventories.empty()) r.reasons.push_back("no inventories in " + config_dir);
  if (const DockerDefaultRuntime& d = node.engines.docker_default; !d.problem.empty())
    r.reasons.push_back("docker's default runtime " + d.name +
                        " is the runtime shim, which would fail every container: " + d.problem);
  for (const auto& ic : r.inventories)
    for (const auto& why : ic.reasons) r.reasons.push_back(ic.file + ": " + why);
  r.ready = r.reasons.empty();
  return r;
}

}  // namespace ocid
