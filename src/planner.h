// Decide: (state, config.json, inventories, host facts) -> Plan. No side
// effects; the only I/O is through the HostView, so tests can hand it a tree
// of their own and the `plan` command needs no root.
#pragma once
#include "bundle_config.h"
#include "error.h"
#include "host_view.h"
#include "inventory.h"
#include "oci_state.h"
#include "plan.h"

namespace ocid {

struct PlanInputs {
  const OciState* state = nullptr;
  const BundleConfig* config = nullptr;
  const InventorySet* inventories = nullptr;
  const HostView* host = nullptr;
};

// On error, `err` names what was wrong and where (inventory file, path).
// An inventory the container did not ask for can never cause an error.
bool BuildPlan(const PlanInputs& in, Plan* out, Error* err);

}  // namespace ocid
