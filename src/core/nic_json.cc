#include "nic_json.h"

#include <nlohmann/json.hpp>

namespace ocid {

nlohmann::ordered_json NicsJson(const std::vector<PciNic>& nics) {
  using ordered = nlohmann::ordered_json;
  ordered out = ordered::array();
  for (const auto& n : nics)
    out.push_back({{"address", n.address},
                   {"vendor", n.vendor},
                   {"device", n.device},
                   {"driver", n.driver},
                   {"interfaces", n.interfaces},
                   {"numa_node", n.numa_node}});
  return out;
}

}  // namespace ocid
