// A cluster view of one inventory that has an X3/X4-shaped entry: a
// condition whose file names a program, a directory created when it is met,
// and a group read from two files (the shape of the shipped Onload
// inventory's shrub-controller entries). Shared by the kubelet and Nomad
// front-ends' tests, which read the same view.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "cluster.h"
#include "fake_host.h"
#include "inventory.h"

namespace ocid_test {

inline const char* const kSharedDirInventory = R"({
  "version": "1", "activation_flag": "OCI_ONLOAD", "cdi_kind": "amd.com/onload",
  "driver_feature": ["onload"],
  "conditions": {"ctl": {"exists_named_in": "/sys/module/m/parameters/ctl_path"}},
  "inventory": {"onload": {
    "devices": ["onload"],
    "directories": [{"source": "/run/ctl", "optional": true, "create_if": "ctl"}],
    "groups": [{"gid_file": "/sys/module/m/parameters/client_gid",
                "mode_file": "/sys/module/m/parameters/client_mode",
                "default_mode": "0666", "optional": true}]}}
})";

// The view of that inventory on `h`, host paths under `host_path_root`.
inline ocid::ClusterView SharedDirView(const FakeHost& h, const std::string& host_path_root) {
  ocid::Inventory inv;
  ocid::Error err;
  REQUIRE(ocid::ParseInventory(kSharedDirInventory, "/etc/ocid.d/amd.json", &inv, &err));
  ocid::InventorySet set;
  set.inventories.push_back(inv);
  ocid::ClusterView v;
  ocid::BuildClusterView(set, h, {}, host_path_root, nullptr, &v);
  return v;
}

}  // namespace ocid_test
