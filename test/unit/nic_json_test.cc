// nic_json: the NICs as `check --json` and `resources --json` print them.
#include "nic_json.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

TEST_CASE("nic_json: one object per NIC, keys in their fixed order") {
  ocid::PciNic a;
  a.address = "0000:01:00.0";
  a.vendor = "0x1924";
  a.device = "0x0b03";
  a.driver = "sfc";
  a.interfaces = {"eth0", "eth1"};
  a.numa_node = 1;
  ocid::PciNic b;
  b.address = "0000:03:00.0";
  b.vendor = "0x10ee";
  CHECK(ocid::NicsJson({a, b}).dump() ==
        R"([{"address":"0000:01:00.0","vendor":"0x1924","device":"0x0b03","driver":"sfc",)"
        R"("interfaces":["eth0","eth1"],"numa_node":1},)"
        R"({"address":"0000:03:00.0","vendor":"0x10ee","device":"","driver":"",)"
        R"("interfaces":[],"numa_node":-1}])");
  CHECK(ocid::NicsJson({}).dump() == "[]");
}
