// Plan: (decided inventories, host facts) -> Plan. No side effects; the
// only I/O is through the HostView, so tests can hand it a tree of their own
// and the `plan` command needs no root. Which inventories a container
// activates is container_plan's to decide.
//
// Targets: an entry's "target", or "target_dir" plus the file's name, or
// else its host path; except a "libraries" entry that is a file and names
// neither: each file it matches is mounted by name into every library
// directory (the planner's libraries, library_dirs.h), where the image's
// loader looks, whatever layout the host has.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "bundle_config.h"
#include "device_rule.h"
#include "env_profile.h"
#include "error.h"
#include "host_view.h"
#include "inventory.h"
#include "library_dirs.h"
#include "plan.h"
#include "version_lock.h"

namespace ocid {

// Whether a condition (inventory.h HostCondition) holds on `host`.
enum class ConditionState { kMet, kNotMet, kError };
// Evaluates `c` through `host`: kMet with *by the path that met it (for
// "exists_named_in", the path the file names), kNotMet, or kError with *err
// when a file could not be read for a reason other than its absence. A named
// file is read up to 4096 bytes; its first line, trailing whitespace
// trimmed, must be an absolute path without NUL.
ConditionState EvaluateCondition(const HostCondition& c, const HostView& host, std::string* by,
                                 Error* err);
// What one "exists_named_in" file names on `host` (EvaluateCondition's
// reading, which `check` reports): kMissing when the file is not there,
// kError with *err when it cannot be read, else kOk with *names the path
// its first line names ("" when that is no absolute path) and whether it
// exists.
HostRead ReadNamedPath(const std::string& file, const HostView& host, std::string* names,
                       bool* names_exists, Error* err);

// What a plan reads of the container it is for: the device rules the
// runtime itself enforces, which a cgroup v2 device program must keep
// (Plan::container_device_rules).
struct ContainerTarget {
  const std::vector<LinuxDevice>* devices = nullptr;      // linux.devices
  const std::vector<DeviceRule>* device_rules = nullptr;  // linux.resources.devices
};

// Builds one Plan from inventories already decided (container_plan.h
// decides): each activated inventory with its features, then its profile,
// then Finish. The first failure stops it, with `err` set; what was planned
// so far stays in the plan.
class InventoryPlanner {
 public:
  // `libraries`: where libraries go; none given means the answer for every
  // image, never a library left out. `versions`: the caller's reading of
  // the version lock, or null to read it here (BuildInventoryPlan).
  InventoryPlanner(const HostView& host, const LibraryDirs& libraries, Plan* out, Error* err,
                   const VersionReport* versions = nullptr);
  // The version lock for `features` of `inv`, then every entry of them;
  // adds one Plan::activated, asked for by `source`.
  bool Add(const Inventory& inv, const std::vector<std::string>& features,
           const std::string& source);
  // The profile `name` of `inv`, the inventory added last, chosen by `by`:
  // its variables go to Plan::env.
  bool AddProfile(const Inventory& inv, const std::string& name, const std::string& by);
  // Merges duplicates, drops mounts a directory mount already provides,
  // orders parents first and derives the device rules; for a `target`, the
  // device rules the runtime enforces as well.
  bool Finish(const ContainerTarget* target);

 private:
  bool CheckVersionLock(const Inventory& inv, const std::vector<std::string>& features);
  // The condition `name` of `inv`, evaluated once per planner; an I/O error
  // fails (err_).
  bool ConditionMet(const Inventory& inv, const std::string& name, bool* met);
  void NoteMetConditions(const Inventory& inv);
  struct ConditionResult {
    ConditionState state = ConditionState::kNotMet;
    Error error;
  };
  const ConditionResult& Condition(const Inventory& inv, const std::string& name);
  bool PlanGroup(const Inventory& inv, const Feature& f, const GroupEntry& g);
  bool MergeEnv(const EnvList& env, const std::string& from);
  bool PlanFeature(const Inventory& inv, const Feature& f);
  bool PlanEntry(const Inventory& inv, const Feature& f, const InventoryEntry& e);
  void AddMount(const Inventory& inv, const Feature& f, const InventoryEntry& e, const HostMatch& m,
                std::string target, bool library);
  void LibraryWarnings();
  bool CoveredByDirectory(const std::vector<MountOp>& done, const MountOp& m) const;

  std::map<std::string, ConditionResult> conditions_;  // by inventory file, '\n', name

  const HostView& host_;
  Plan* plan_;
  Error* err_;
  const VersionReport* versions_;
};

// The plan for `features` of one inventory, for no container in particular
// (what a CDI device carries): the same entries, alternatives, globs, merges
// and device rules as a container's plan (container_plan.h), without
// activation or config.json (so no container_device_rules). Fails on a feature the inventory does
// not have. `versions`: the version lock of `inv` as the caller read it on `host` (CheckVersions),
// for a caller planning many feature sets of one inventory (the device plugin's view and its CDI
// specs), so the library is read once, not once per plan; null reads it here, when the features are
// guarded. `libraries`: where libraries go; such a plan is for every image, so by default both
// standard directories.
bool BuildInventoryPlan(const Inventory& inv, const std::vector<std::string>& features,
                        const HostView& host, Plan* out, Error* err,
                        const VersionReport* versions = nullptr,
                        const LibraryDirs& libraries = UnseenLibraryDirs());

// What a plan asks for that hook mode cannot give: the profile's variables
// (a prestart hook cannot change the environment of the process), and a
// required group the process lacks (nor its groups). One line per activated
// profile and per such group, naming it and what to do instead.
std::vector<std::string> HookModeWarnings(const Plan& plan);

}  // namespace ocid
