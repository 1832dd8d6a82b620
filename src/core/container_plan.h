// One container, decided and planned: the entry every front-end shares.
// The hook, the runtime shim and `plan` (through decision.h) turn what they
// know of a container into ContainerFacts, and so will the NRI plugin, from
// the runtime's request with no rootfs: the same facts get the same
// decision and the same Plan, whoever asks.
//
//   ContainerFacts   what a front-end knows of one container: its id, its
//                    requests (env, annotations), who its process is, its
//                    devices and privileges, and its rootfs when it has one.
//   AsksAny          the cheap "no": no activation flag is set to anything
//                    but an off value, so nothing can be activated or refused.
//   DecideContainer  which inventories are activated, for which features and
//                    profile, and which requests a policy ignored. Pure.
//   PlanContainer    the decision, and the Plan for it on `host`.
//
// The layering is activation (does it ask) <- planner (the plan of decided
// inventories) <- container_plan.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "activation.h"
#include "bundle_config.h"
#include "error.h"
#include "host_view.h"
#include "inventory.h"
#include "library_dirs.h"
#include "oci_state.h"
#include "plan.h"
#include "preload.h"
#include "spec_keys.h"

namespace ocid {

struct ContainerFacts {
  std::string id;
  int pid = 0;                   // 0: none (the shim, `plan`, a container not yet started)
  std::vector<std::string> env;  // "NAME=value"; the last occurrence wins (LookupEnv)
  // config.json's annotations, then those of the state that config.json does
  // not set (a front-end without config.json: the pod's and the container's).
  std::map<std::string, std::string> annotations;
  // Some annotations were left out: a container that asks is then refused,
  // since its activation policy cannot be checked (OciState).
  bool annotations_pruned = false;
  // process.user, as seen inside the container, and the user namespace
  // that maps it to the host (ProcessOnHost).
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> additional_gids;
  std::vector<NamespaceEntry> namespaces;
  std::vector<IdMapping> uid_mappings;
  std::vector<IdMapping> gid_mappings;
  // What the runtime's own device rules are made of (Plan's
  // container_device_rules), and what makes the container privileged for an
  // activation policy (PrivilegedReason).
  std::vector<LinuxDevice> devices;
  std::vector<DeviceRule> device_rules;
  std::vector<std::string> sys_admin_sets;
  std::string rootfs;  // absolute host path; "" when not seen
  // Where readings of config.json disagree ("" when nowhere), and every
  // request any reading could hold (BundleConfig), the state's
  // oci-decorator/ annotations included.
  std::string ambiguity;
  std::vector<std::string> env_anywhere;
  std::vector<std::pair<std::string, std::string>> annotations_anywhere;
};

// The facts of a container a runtime hands over: its state and config.json.
ContainerFacts ContainerFactsOf(const OciState& state, const BundleConfig& config);

// The process as the host sees it: process.user's uid, gid and additional
// gids through the id mappings (the identity without a user namespace).
HostCredentials ProcessOnHost(const ContainerFacts& c);
HostCredentials ProcessOnHost(const BundleConfig& cfg);

// Does the container ask for any inventory of `set`, broken ones included:
// an activation flag set to a value that is not off, in env or annotation
// (with an ambiguous config.json, in any reading). False means
// DecideContainer says kNotAsked and fails nothing, whatever the policies.
bool AsksAny(const ContainerFacts& c, const InventorySet& set);

enum class ContainerVerdict {
  kNotAsked,   // nothing activated, no request ignored
  kIgnored,    // nothing activated, but a policy ignored a request
  kActivated,  // at least one inventory activated
};

struct InventoryDecision {
  Activation activation;
  std::string profile;     // the profile the container names, "" for none
  std::string profile_by;  // which request named it ("env OCI_ONLOAD_PROFILE=latency")
};

struct ContainerDecision {
  ContainerVerdict verdict = ContainerVerdict::kNotAsked;
  // One per inventory of the set, in its order, as far as the decision went.
  std::vector<InventoryDecision> by_inventory;
  std::vector<std::string> ignored;  // requests a policy ignored (Plan::ignored)
};

// Decides without the host: an ambiguous config.json that any reading shows
// asking, a broken inventory asked for, an unknown feature, a policy's
// refusal, two profiles named, or pruned annotations of a container that
// asks, each fail with `err`.
bool DecideContainer(const ContainerFacts& c, const InventorySet& set, ContainerDecision* out,
                     Error* err);

// Decides as DecideContainer, and plans each activated inventory on `host`
// as soon as it is decided, so the first failure, of deciding or of
// planning, in the order of the inventories is the one reported.
// `libraries`: where the image's loader finds libraries (library_dirs.h).
// An inventory the container did not ask for can never cause an error.
bool PlanContainer(const ContainerFacts& c, const InventorySet& set, const HostView& host,
                   const LibraryDirs& libraries, ContainerDecision* decision, Plan* plan,
                   Error* err);

// What config.json parsing must keep for these inventories: their flags as
// env names and annotations, and the annotations their policies require.
ConfigInterest InterestOf(const InventorySet& set);

// A container as a runtime hands it over, for the tests and tools that
// start from a state and a config.json.
struct PlanInputs {
  const OciState* state = nullptr;
  const BundleConfig* config = nullptr;
  const InventorySet* inventories = nullptr;
  const HostView* host = nullptr;
  // Where the image's loader finds libraries: the caller's probe of the
  // image (library_dirs.h), or the answer for every image.
  LibraryDirs libraries = UnseenLibraryDirs();
};

// PlanContainer over ContainerFactsOf(*in.state, *in.config).
bool BuildPlan(const PlanInputs& in, Plan* out, Error* err);

}  // namespace ocid
