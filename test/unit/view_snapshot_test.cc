// The device plugin's view snapshot over a fake host: `resources` (no
// previous view, no CDI directory) and the resource watch (the previous
// view, the kubernetes mode's CDI directory) see the same resources; an
// unreadable directory keeps the last CDI specs; none_why's texts.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "cluster.h"
#include "fake_host.h"
#include "inventory.h"
#include "inventory_texts.h"
#include "view_snapshot.h"

using ocid::ClusterView;
using ocid::InventorySet;
using ocid::SnapshotView;
using ocid::ViewSources;
using ocid_test::FakeHost;
using ocid_test::LoadInventories;

namespace {

const char* kOnload = R"({
  "version": "1", "activation_flag": "OCI_ONLOAD", "cdi_kind": "amd.com/onload",
  "driver_feature": ["onload"],
  "inventory": {
    "onload": {"devices": ["onload"], "binaries": ["/usr/bin/onload"],
               "libraries": ["/usr/lib64/libonload.so*"], "preload": ["libonload.so"]}
  }
})";
const char* kRdma = R"({
  "version": "1", "activation_flag": "OCI_RDMA", "driver_feature": ["rdma"],
  "inventory": {"rdma": {"devices": ["infiniband/uverbs0"]}}
})";

FakeHost Host() {
  FakeHost h;
  h.Chr("/dev/onload", 240, 0)
      .Chr("/dev/infiniband/uverbs0", 231, 192)
      .File("/usr/bin/onload")
      .File("/usr/lib64/libonload.so");
  return h;
}

// What a kubelet or a Nomad client is told of each resource, as one string.
std::string Told(const ClusterView& v) {
  std::string d;
  for (const auto& r : v.resources) {
    d += r.inventory + ' ' + r.k8s_name + ' ' + r.nomad_vendor + '/' + r.nomad_type + ' ' +
         r.cdi_device + (r.healthy ? " healthy " : " unhealthy ") + r.why + '\n';
    for (const auto& m : r.delivery.mounts)
      d += "  m " + m.host_path + ' ' + m.container_path + '\n';
    for (const auto& x : r.delivery.devices) d += "  d " + x.host_path + '\n';
    for (const auto& [k, val] : r.delivery.env) d += "  e " + k + '=' + val + '\n';
  }
  return d;
}

ViewSources Sources(const std::string& cdi_dir) {
  ViewSources s;
  s.config_dir = "/c";
  s.host_path_root = "/host";
  s.cdi_dir = cdi_dir;
  return s;
}

}  // namespace

TEST_CASE("view snapshot: resources and the watch see the same view of one host") {
  InventorySet set = LoadInventories({{"/c/onload.json", kOnload}, {"/c/rdma.json", kRdma}});
  FakeHost host = Host();
  ocid::Error none;

  // `resources`: once, no previous view, no CDI directory.
  ClusterView once;
  SnapshotView(Sources(""), set, true, none, host, nullptr, &once);
  // The watch: a rebuild after a first one, with the kubernetes mode's CDI directory.
  ClusterView first, rebuilt;
  SnapshotView(Sources("/var/run/cdi"), set, true, none, host, nullptr, &first);
  SnapshotView(Sources("/var/run/cdi"), set, true, none, host, &first, &rebuilt);

  REQUIRE(once.resources.size() == 2);
  CHECK(Told(once) == Told(first));
  CHECK(Told(once) == Told(rebuilt));
  CHECK(once.warnings == rebuilt.warnings);
  CHECK(once.none_why.empty());
  CHECK(rebuilt.none_why.empty());
  // Only the watch's view carries CDI specs.
  CHECK(once.cdi_specs.empty());
  CHECK(once.cdi_dir.empty());
  CHECK(rebuilt.cdi_dir == "/var/run/cdi");
  CHECK(rebuilt.cdi_specs.size() == 2);
  // Host paths are named under host_path_root.
  CHECK(Told(once).find("/host/usr/bin/onload") != std::string::npos);
}

TEST_CASE("view snapshot: an unreadable directory keeps the last CDI specs") {
  InventorySet set = LoadInventories({{"/c/onload.json", kOnload}});
  FakeHost host = Host();
  ClusterView first, after;
  SnapshotView(Sources("/var/run/cdi"), set, true, ocid::Error{}, host, nullptr, &first);
  REQUIRE(first.cdi_specs.size() == 1);

  ocid::Error load_err;
  load_err.what = "cannot open";
  load_err.path = "/c";
  SnapshotView(Sources("/var/run/cdi"), InventorySet{}, false, load_err, host, &first, &after);
  CHECK(after.resources.empty());
  CHECK(after.cdi_dir == "/var/run/cdi");
  REQUIRE(after.cdi_specs.size() == 1);
  CHECK(after.cdi_specs[0].files.size() == first.cdi_specs[0].files.size());
  CHECK(after.none_why == "cannot read the inventory directory: " + load_err.Line());

  // Without a previous view there is nothing to keep.
  ClusterView alone;
  SnapshotView(Sources("/var/run/cdi"), InventorySet{}, false, load_err, host, nullptr, &alone);
  CHECK(alone.cdi_specs.empty());
}

TEST_CASE("view snapshot: why there is no resource") {
  FakeHost host = Host();
  ClusterView v;
  SnapshotView(Sources(""), InventorySet{}, true, ocid::Error{}, host, nullptr, &v);
  CHECK(v.none_why == "no inventory (*.json) in /c");

  InventorySet broken = LoadInventories({{"/c/a.json", "{"}, {"/c/b.json", "[]"}});
  REQUIRE(broken.broken.size() == 2);
  ClusterView b;
  SnapshotView(Sources(""), broken, true, ocid::Error{}, host, nullptr, &b);
  CHECK(b.none_why ==
        "inventory /c/a.json refused: " + broken.broken[0].error.Line() + " (and 1 more refused)");

  InventorySet one_broken = LoadInventories({{"/c/a.json", "{"}});
  ClusterView o;
  SnapshotView(Sources(""), one_broken, true, ocid::Error{}, host, nullptr, &o);
  CHECK(o.none_why == "inventory /c/a.json refused: " + one_broken.broken[0].error.Line());

  // The last resort: inventories that give no resource and no warning. The
  // parser lets none through (an inventory needs a driver feature, and a
  // feature is a resource or a warning), so the set is built by hand.
  InventorySet bare;
  bare.inventories.emplace_back();
  bare.inventories.back().file = "/c/bare.json";
  bare.inventories.back().activation_flag = "OCI_X";
  ClusterView e;
  SnapshotView(Sources(""), bare, true, ocid::Error{}, host, nullptr, &e);
  CHECK(e.resources.empty());
  CHECK(e.warnings.empty());
  CHECK(e.none_why == "the inventories in /c name no feature");

  // Resources: no why.
  ClusterView r;
  SnapshotView(Sources(""), LoadInventories({{"/c/rdma.json", kRdma}}), true, ocid::Error{}, host,
               nullptr, &r);
  CHECK_FALSE(r.resources.empty());
  CHECK(r.none_why.empty());
}

TEST_CASE("view snapshot: the config directory's vouch and loading") {
  CHECK_FALSE(static_cast<bool>(ocid::ConfigDirVouchFor("")));
  CHECK(static_cast<bool>(ocid::ConfigDirVouchFor("/var/lib/kubelet/device-plugins")));

  // A missing directory is an empty set, read.
  ViewSources s = Sources("");
  s.config_dir = "/nonexistent/oci-decorator-view-snapshot-test";
  InventorySet set;
  ocid::Error err;
  CHECK(ocid::LoadViewInventories(s, &set, &err));
  CHECK(set.inventories.empty());
  CHECK(set.broken.empty());
}
