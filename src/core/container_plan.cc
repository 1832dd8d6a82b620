#include "container_plan.h"

#include <algorithm>

#include "planner.h"

namespace ocid {
namespace {

// Every flag an inventory of the set declares, the broken ones last.
std::vector<std::string> AllFlags(const InventorySet& set) {
  std::vector<std::string> flags;
  for (const auto& inv : set.inventories) flags.push_back(inv.activation_flag);
  for (const auto& b : set.broken) flags.push_back(b.activation_flag);
  return flags;
}

bool AsksAnywhere(const ContainerFacts& c, const std::string& flag) {
  // ContainerFactsOf put the state's requests into annotations_anywhere.
  static const std::map<std::string, std::string> kNone;
  return AsksForAnywhere(flag, c.env_anywhere, c.annotations_anywhere, kNone);
}

// Before any inventory is decided. Where runtimes would read config.json
// differently (spec_keys.h), a container that any reading shows asking is
// refused; one that no reading shows asking is left alone (*left_alone).
// A broken inventory the container asks for fails with its own error.
bool CheckRequests(const ContainerFacts& c, const InventorySet& set, bool* left_alone, Error* err) {
  *left_alone = false;
  if (!c.ambiguity.empty()) {
    for (const auto& flag : AllFlags(set))
      if (AsksAnywhere(c, flag))
        return Fail(err, "config.json is ambiguous: " + c.ambiguity +
                             "; runc and crun could apply different settings than the hook "
                             "checks, so a container asking for " +
                             flag + " is refused");
    *left_alone = true;
    return true;
  }
  for (const auto& b : set.broken)
    if (AsksFor(b.activation_flag, c.env, c.annotations)) {
      *err = b.error;
      return false;
    }
  return true;
}

// Activation of one inventory, and its policy. A request the policy ignores
// goes to *ignored.
bool DecideInventory(const ContainerFacts& c, const Inventory& inv, InventoryDecision* d,
                     std::vector<std::string>* ignored, Error* err) {
  Activation& a = d->activation;
  if (!DecideActivation(inv, c.env, c.annotations, &a, err)) return false;
  if (!a.ignored.empty()) ignored->push_back(a.ignored);
  return CheckPolicy(inv, a, c.sys_admin_sets, c.device_rules, c.annotations, err);
}

// The profile a container that activated `inv` names with <flag>_PROFILE
// (env) or oci-decorator/<flag>_PROFILE (annotation), from the sources its
// activation policy accepts; both may name it, not differently. A source
// the policy does not accept goes to *ignored.
bool ChooseProfile(const ContainerFacts& c, const Inventory& inv, InventoryDecision* d,
                   std::vector<std::string>* ignored, Error* err) {
  for (const auto& s : NamedValue(inv.activation_flag + "_PROFILE", c.env, c.annotations)) {
    if (IsOffValue(s.value)) continue;
    if (!(s.from_env ? inv.policy.accept_env : inv.policy.accept_annotation)) {
      ignored->push_back(s.what + " (" + inv.file + " does not accept this source)");
      continue;
    }
    if (!d->profile.empty() && d->profile != s.value)
      return Fail(err, "the container names two profiles for " + inv.activation_flag + ": " +
                           d->profile_by + " and " + s.what);
    d->profile = s.value;
    d->profile_by = s.what;
  }
  return true;
}

bool CheckPruned(const ContainerFacts& c, bool active, Error* err) {
  if (active && c.annotations_pruned)
    return Fail(err, "OCI state: annotations over " + std::to_string(kStateAnnotationBytes) +
                         " bytes, which a container that asks must stay within (its "
                         "activation policy reads them)");
  return true;
}

// Plan::groups the container's process already has, as a host gid.
void MarkPresentGroups(Plan* plan) {
  const HostCredentials& p = plan->process;
  for (auto& g : plan->groups)
    g.present =
        g.gid == p.gid || std::find(p.groups.begin(), p.groups.end(), g.gid) != p.groups.end();
}

void SetVerdict(ContainerDecision* d) {
  d->verdict = d->ignored.empty() ? ContainerVerdict::kNotAsked : ContainerVerdict::kIgnored;
  for (const auto& i : d->by_inventory)
    if (i.activation.active) d->verdict = ContainerVerdict::kActivated;
}

bool Plan1(const ContainerFacts& c, const InventorySet& set, const HostView& host,
           const LibraryDirs& libraries, ContainerDecision* decision, Plan* plan, Error* err) {
  InventoryPlanner planner(host, libraries, plan, err);
  plan->container_id = c.id;
  plan->pid = c.pid;
  plan->rootfs = c.rootfs;
  plan->process = ProcessOnHost(c);
  const ContainerTarget target{&c.devices, &c.device_rules};
  bool left_alone = false;
  if (!CheckRequests(c, set, &left_alone, err)) return false;
  if (left_alone) return planner.Finish(&target);
  for (const auto& inv : set.inventories) {
    InventoryDecision& d = decision->by_inventory.emplace_back();
    if (!DecideInventory(c, inv, &d, &plan->ignored, err)) return false;
    if (!d.activation.active) continue;
    if (!planner.Add(inv, d.activation.features, d.activation.source)) return false;
    if (!inv.HasProfiles()) continue;
    if (!ChooseProfile(c, inv, &d, &plan->ignored, err)) return false;
    if (!d.profile.empty() && !planner.AddProfile(inv, d.profile, d.profile_by)) return false;
  }
  if (!CheckPruned(c, plan->Active(), err)) return false;
  if (!planner.Finish(&target)) return false;
  MarkPresentGroups(plan);
  return true;
}

}  // namespace

ContainerFacts ContainerFactsOf(const OciState& state, const BundleConfig& config) {
  ContainerFacts c;
  c.id = state.id;
  c.pid = state.pid;
  c.env = config.env;
  c.annotations = config.annotations;
  for (const auto& [k, v] : state.annotations) c.annotations.emplace(k, v);
  c.annotations_pruned = state.annotations_pruned;
  c.uid = config.uid;
  c.gid = config.gid;
  c.additional_gids = config.additional_gids;
  c.namespaces = config.namespaces;
  c.uid_mappings = config.uid_mappings;
  c.gid_mappings = config.gid_mappings;
  c.devices = config.devices;
  c.device_rules = config.device_rules;
  c.sys_admin_sets = config.sys_admin_sets;
  c.rootfs = RootfsPath(state.bundle, state.root, config.root_path);
  c.ambiguity = config.ambiguity;
  c.env_anywhere = config.env_anywhere;
  c.annotations_anywhere = config.annotations_anywhere;
  // The state's requests count in every reading of config.json.
  for (const auto& [k, v] : state.annotations)
    if (k.rfind(kAnnotationPrefix, 0) == 0) c.annotations_anywhere.emplace_back(k, v);
  return c;
}

namespace {

HostCredentials OnHost(bool user_namespace, uint32_t uid, uint32_t gid,
                       const std::vector<uint32_t>& additional_gids,
                       const std::vector<IdMapping>& uid_mappings,
                       const std::vector<IdMapping>& gid_mappings) {
  // A joined user namespace has no mappings in config.json: its ids are
  // unknown here, so they count as no one's (only "other" may read).
  auto map = [&](const std::vector<IdMapping>& m, uint32_t id) {
    uint32_t host = HostCredentials::kUnmapped;
    if (user_namespace && m.empty()) return host;
    if (!MapToHost(m, id, &host)) host = HostCredentials::kUnmapped;
    return host;
  };
  HostCredentials c;
  c.uid = map(uid_mappings, uid);
  c.gid = map(gid_mappings, gid);
  for (uint32_t g : additional_gids)
    if (uint32_t h = map(gid_mappings, g); h != HostCredentials::kUnmapped) c.groups.push_back(h);
  return c;
}

}  // namespace

HostCredentials ProcessOnHost(const ContainerFacts& c) {
  bool user_namespace = false;
  for (const auto& n : c.namespaces)
    if (n.type == "user") user_namespace = true;
  return OnHost(user_namespace, c.uid, c.gid, c.additional_gids, c.uid_mappings, c.gid_mappings);
}

HostCredentials ProcessOnHost(const BundleConfig& cfg) {
  return OnHost(cfg.HasUserNamespace(), cfg.uid, cfg.gid, cfg.additional_gids, cfg.uid_mappings,
                cfg.gid_mappings);
}

bool AsksAny(const ContainerFacts& c, const InventorySet& set) {
  for (const auto& flag : AllFlags(set))
    if (c.ambiguity.empty() ? AsksFor(flag, c.env, c.annotations) : AsksAnywhere(c, flag))
      return true;
  return false;
}

bool DecideContainer(const ContainerFacts& c, const InventorySet& set, ContainerDecision* out,
                     Error* err) {
  *out = ContainerDecision{};
  bool left_alone = false;
  bool ok = CheckRequests(c, set, &left_alone, err);
  bool active = false;
  if (ok && !left_alone)
    for (const auto& inv : set.inventories) {
      InventoryDecision& d = out->by_inventory.emplace_back();
      ok = DecideInventory(c, inv, &d, &out->ignored, err) &&
           (!d.activation.active || !inv.HasProfiles() ||
            ChooseProfile(c, inv, &d, &out->ignored, err));
      if (!ok) break;
      active = active || d.activation.active;
    }
  ok = ok && CheckPruned(c, active, err);
  SetVerdict(out);
  return ok;
}

bool PlanContainer(const ContainerFacts& c, const InventorySet& set, const HostView& host,
                   const LibraryDirs& libraries, ContainerDecision* decision, Plan* plan,
                   Error* err) {
  *decision = ContainerDecision{};
  *plan = Plan{};
  bool ok = Plan1(c, set, host, libraries, decision, plan, err);
  decision->ignored = plan->ignored;
  SetVerdict(decision);
  return ok;
}

ConfigInterest InterestOf(const InventorySet& set) {
  ConfigInterest in;
  auto flag = [&in](const std::string& f) {
    if (f.empty()) return;
    in.env_names.insert(f);
    in.annotation_keys.insert(std::string(kAnnotationPrefix) + f);
  };
  for (const auto& inv : set.inventories) {
    flag(inv.activation_flag);
    if (inv.HasProfiles()) flag(inv.activation_flag + "_PROFILE");
    for (const auto& [k, v] : inv.policy.require_annotations) in.annotation_keys.insert(k);
  }
  for (const auto& b : set.broken) flag(b.activation_flag);
  return in;
}

bool BuildPlan(const PlanInputs& in, Plan* out, Error* err) {
  ContainerDecision decision;
  return PlanContainer(ContainerFactsOf(*in.state, *in.config), *in.inventories, *in.host,
                       in.libraries, &decision, out, err);
}

}  // namespace ocid
