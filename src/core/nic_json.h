// The NICs as JSON, one rendering for `check --json`'s "nics" and the
// device plugin's `resources --json` (each resource's "nics"). The keys, in
// this order: address, vendor, device, driver, interfaces, numa_node.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "nic.h"

namespace ocid {

// A JSON array with one object per NIC, in the order given.
nlohmann::ordered_json NicsJson(const std::vector<PciNic>& nics);

}  // namespace ocid
