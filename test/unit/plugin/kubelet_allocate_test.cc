// The Kubernetes mode's pure half: socket names, device IDs, the device
// list and Allocate answers, from ClusterResources built by hand (no
// sockets).
#include "kubelet_allocate.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "fake_host.h"
#include "inventory.h"
#include "nic.h"
#include "shared_dir_view.h"
#include "test_tree.h"

#include "atomic_file.h"
#include "cdi_dir_keeper.h"
#include "host_view.h"

using ocid::AllocateMode;
using ocid::BuildAllocateResponse;
using ocid::ClusterResource;
using ocid::ClusterView;
using ocid::KubernetesOptions;

namespace {

ClusterResource Onload(bool healthy) {
  ClusterResource r;
  r.inventory = "/etc/oci-decorator/onload.json";
  r.features = {"onload"};
  r.k8s_name = "amd.com/onload";
  r.cdi_device = "amd.com/onload=onload";
  r.healthy = healthy;
  if (!healthy) {
    r.why = "required device /dev/onload is missing";
    return r;
  }
  ocid::DeliveredDevice d;
  d.host_path = "/host/dev/onload";
  d.container_path = "/dev/onload";
  d.major = 240;
  r.delivery.devices.push_back(d);
  // The library as a plan for every image delivers it: in both standard
  // library directories, the preload naming the first.
  r.delivery.mounts.push_back(
      {"/host/usr/lib64/libonload.so", "/usr/lib/x86_64-linux-gnu/libonload.so", true});
  r.delivery.mounts.push_back({"/host/usr/lib64/libonload.so", "/usr/lib64/libonload.so", true});
  r.delivery.env.push_back({"LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libonload.so"});
  return r;
}

v1beta1::AllocateRequest Request(const std::vector<std::vector<std::string>>& containers) {
  v1beta1::AllocateRequest req;
  for (const auto& ids : containers) {
    auto* c = req.add_container_requests();
    for (const auto& id : ids) c->add_devices_ids(id);
  }
  return req;
}

KubernetesOptions Opts(AllocateMode mode, int slots = 64) {
  KubernetesOptions k;
  k.allocate = mode;
  k.slots = slots;
  return k;
}

}  // namespace

TEST_CASE("kubelet: socket names are one safe file name per resource") {
  CHECK(ocid::SocketNameFor("amd.com/onload") == "oci-decorator-amd.com_onload.sock");
  CHECK(ocid::SocketNameFor("oci-decorator.local/rdma") ==
        "oci-decorator-oci-decorator.local_rdma.sock");
  CHECK(ocid::SocketNameFor("a/../b") == "oci-decorator-a_.._b.sock");
  CHECK(ocid::SocketNameFor("x/y z\n") == "oci-decorator-x_y_z_.sock");
}

TEST_CASE("kubelet: device IDs are <name>-<n> and parse back exactly") {
  auto ids = ocid::DeviceIds("amd.com/onload", 3);
  REQUIRE(ids.size() == 3);
  CHECK(ids[0] == "onload-0");
  CHECK(ids[2] == "onload-2");
  CHECK(ocid::IsDeviceId("amd.com/onload", 64, "onload-0"));
  CHECK(ocid::IsDeviceId("amd.com/onload", 64, "onload-63"));
  CHECK_FALSE(ocid::IsDeviceId("amd.com/onload", 64, "onload-64"));
  CHECK_FALSE(ocid::IsDeviceId("amd.com/onload", 64, "onload-07"));
  CHECK_FALSE(ocid::IsDeviceId("amd.com/onload", 64, "onload--1"));
  CHECK_FALSE(ocid::IsDeviceId("amd.com/onload", 64, "onload-"));
  CHECK_FALSE(ocid::IsDeviceId("amd.com/onload", 64, "zf-0"));
  CHECK_FALSE(ocid::IsDeviceId("amd.com/onload", 64, ""));
  CHECK_FALSE(ocid::IsDeviceId("amd.com/onload", 100000, "onload-99999999999999999999"));
  std::string nul("onload-1\0", 9);
  CHECK_FALSE(ocid::IsDeviceId("amd.com/onload", 64, nul));
  // Long names are cut so that every ID stays within the kubelet's 63.
  std::string leaf(63, 'a');
  auto long_ids = ocid::DeviceIds("x.io/" + leaf, 100000);
  CHECK(long_ids.back().size() <= 63);
  CHECK(ocid::IsDeviceId("x.io/" + leaf, 100000, long_ids.back()));
}

TEST_CASE("kubelet: the device list carries the resource's health") {
  ClusterResource good = Onload(true), bad = Onload(false);
  auto list = ocid::DeviceList("amd.com/onload", 4, &good);
  REQUIRE(list.devices_size() == 4);
  CHECK(list.devices(3).id() == "onload-3");
  CHECK(list.devices(3).health() == "Healthy");
  CHECK(ocid::DeviceList("amd.com/onload", 4, &bad).devices(0).health() == "Unhealthy");
  CHECK(ocid::DeviceList("amd.com/onload", 4, nullptr).devices(1).health() == "Unhealthy");
}

TEST_CASE("kubelet: the device list carries the NUMA nodes of the resource's NICs") {
  // A view built as the plugin builds it, its NICs read from a fake sysfs
  // tree: two on node 1, one that sysfs places on none (-1).
  ocid::test::TempTree t;
  auto nic = [&](const std::string& addr, const std::string& numa) {
    const std::string dev = "sys/devices/pci0000:00/0000:00:02.0/" + addr;
    t.File(dev + "/vendor", "0x1924\n");
    t.File(dev + "/numa_node", numa + "\n");
    t.Link("sys/bus/pci/devices/" + addr, "../../../devices/pci0000:00/0000:00:02.0/" + addr);
  };
  nic("0000:af:00.0", "1");
  nic("0000:af:00.1", "1");
  nic("0000:3b:00.0", "-1");
  std::vector<ocid::InventoryFile> raw = {{"/etc/ocid.d/onload.json",
                                           R"({
    "version": "1", "activation_flag": "OCI_ONLOAD", "cdi_kind": "amd.com/onload",
    "driver_feature": ["onload"], "needs_nic": {"pci_vendors": ["0x1924"]},
    "inventory": {"onload": {"devices": ["onload"]}}})",
                                           {}}};
  ocid::InventorySet set;
  ocid::ParseInventoryFiles(raw, &set);
  std::unique_ptr<ocid::HostRootView> files;
  ocid::Error err;
  REQUIRE_MESSAGE(ocid::HostRootView::Open(t.path(), &files, &err), err.Line());
  ocid_test::FakeHost host;
  host.Chr("/dev/onload", 240, 0);
  ClusterView view;
  ocid::BuildClusterView(set, host, ocid::ReadHostNics(*files, ocid::NicVendorsToRead(set)), "/",
                         nullptr, &view);
  const ClusterResource* r = ocid::FindK8sResource(view, "amd.com/onload");
  REQUIRE(r);
  REQUIRE(r->healthy);
  auto list = ocid::DeviceList("amd.com/onload", 3, r);
  REQUIRE(list.devices_size() == 3);
  for (const auto& d : list.devices()) {
    CHECK(d.health() == "Healthy");
    REQUIRE(d.has_topology());  // api.proto:75-100: Device.topology = 3, TopologyInfo.nodes,
                                // NUMANode.ID
    REQUIRE(d.topology().nodes_size() == 1);
    CHECK(d.topology().nodes(0).id() == 1);
  }

  // NICs on two nodes: each device lists both.
  ClusterResource two = *r;
  two.nics[0].numa_node = 0;
  auto both = ocid::DeviceList("amd.com/onload", 1, &two);
  REQUIRE(both.devices(0).topology().nodes_size() == 2);
  CHECK(both.devices(0).topology().nodes(0).id() == 0);
  CHECK(both.devices(0).topology().nodes(1).id() == 1);

  // Every numa_node -1, or no NIC needed: no topology at all.
  ClusterResource none = *r;
  for (auto& n : none.nics) n.numa_node = -1;
  CHECK_FALSE(ocid::DeviceList("amd.com/onload", 1, &none).devices(0).has_topology());
  ClusterResource plain = Onload(true);
  CHECK_FALSE(ocid::DeviceList("amd.com/onload", 1, &plain).devices(0).has_topology());
}

TEST_CASE("kubelet: FindK8sResource ignores groups without a Kubernetes name") {
  ClusterView view;
  ClusterResource group = Onload(true);
  group.k8s_name = "";
  view.resources.push_back(group);
  view.resources.push_back(Onload(true));
  CHECK(ocid::FindK8sResource(view, "amd.com/onload") == &view.resources[1]);
  CHECK(ocid::FindK8sResource(view, "") == nullptr);
  CHECK(ocid::FindK8sResource(view, "amd.com/zf") == nullptr);
}

TEST_CASE("kubelet: Allocate in each mode") {
  ClusterResource r = Onload(true);
  v1beta1::AllocateResponse out;
  auto req = Request({{"onload-1"}, {"onload-2", "onload-3"}});

  SUBCASE("both") {
    auto st = BuildAllocateResponse("amd.com/onload", &r, Opts(AllocateMode::kBoth), req, &out);
    REQUIRE(st.ok());
    REQUIRE(out.container_responses_size() == 2);
    const auto& c = out.container_responses(1);
    REQUIRE(c.cdi_devices_size() == 1);
    CHECK(c.cdi_devices(0).name() == "amd.com/onload=onload");
    REQUIRE(c.mounts_size() == 2);
    CHECK(c.mounts(0).host_path() == "/host/usr/lib64/libonload.so");
    CHECK(c.mounts(0).container_path() == "/usr/lib/x86_64-linux-gnu/libonload.so");
    CHECK(c.mounts(0).read_only());
    CHECK(c.mounts(1).host_path() == "/host/usr/lib64/libonload.so");
    CHECK(c.mounts(1).container_path() == "/usr/lib64/libonload.so");
    CHECK(c.mounts(1).read_only());
    REQUIRE(c.devices_size() == 1);
    CHECK(c.devices(0).host_path() == "/host/dev/onload");
    CHECK(c.devices(0).container_path() == "/dev/onload");
    CHECK(c.devices(0).permissions() == "rw");
    CHECK(c.envs().at("LD_PRELOAD") == "/usr/lib/x86_64-linux-gnu/libonload.so");
    CHECK(c.annotations_size() == 0);
  }
  SUBCASE("cdi") {
    REQUIRE(BuildAllocateResponse("amd.com/onload", &r, Opts(AllocateMode::kCdi), req, &out).ok());
    const auto& c = out.container_responses(0);
    CHECK(c.cdi_devices_size() == 1);
    CHECK(c.mounts_size() == 0);
    CHECK(c.devices_size() == 0);
    CHECK(c.envs_size() == 0);
  }
  SUBCASE("mounts") {
    REQUIRE(
        BuildAllocateResponse("amd.com/onload", &r, Opts(AllocateMode::kMounts), req, &out).ok());
    const auto& c = out.container_responses(0);
    CHECK(c.cdi_devices_size() == 0);
    CHECK(c.mounts_size() == 2);
    CHECK(c.devices_size() == 1);
    CHECK(c.envs_size() == 1);
  }
}

TEST_CASE("kubelet: Allocate names a CDI device only when it resolves") {
  ClusterResource r = Onload(true);
  v1beta1::AllocateResponse out;
  auto req = Request({{"onload-1"}, {"onload-2"}});
  const ocid::CdiResolution missing{false, "/var/run/cdi/oci-decorator-onload.json is missing"};
  std::string note;

  SUBCASE("both: the delivery alone, and one line saying so") {
    auto st = BuildAllocateResponse("amd.com/onload", &r, Opts(AllocateMode::kBoth), req, &out,
                                    missing, &note);
    REQUIRE(st.ok());
    REQUIRE(out.container_responses_size() == 2);
    for (const auto& c : out.container_responses()) {
      CHECK(c.cdi_devices_size() == 0);
      CHECK(c.mounts_size() == 2);
      CHECK(c.devices_size() == 1);
      CHECK(c.envs().at("LD_PRELOAD") == "/usr/lib/x86_64-linux-gnu/libonload.so");
    }
    CHECK(note ==
          "Allocate amd.com/onload: answered without CDI device amd.com/onload=onload "
          "(mounts only): /var/run/cdi/oci-decorator-onload.json is missing");
  }
  SUBCASE("cdi: FAILED_PRECONDITION naming the spec and why") {
    auto st = BuildAllocateResponse("amd.com/onload", &r, Opts(AllocateMode::kCdi), req, &out,
                                    missing, &note);
    CHECK(st.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK(st.error_message() ==
          "Allocate amd.com/onload: CDI device amd.com/onload=onload does "
          "not resolve: /var/run/cdi/oci-decorator-onload.json is missing");
    CHECK(out.container_responses_size() == 0);
  }
  SUBCASE("mounts: nothing to resolve, nothing said") {
    REQUIRE(BuildAllocateResponse("amd.com/onload", &r, Opts(AllocateMode::kMounts), req, &out,
                                  missing, &note)
                .ok());
    CHECK(out.container_responses(0).mounts_size() == 2);
    CHECK(note.empty());
  }
  SUBCASE("a spec that is there: named, nothing said") {
    for (AllocateMode m : {AllocateMode::kBoth, AllocateMode::kCdi}) {
      REQUIRE(BuildAllocateResponse("amd.com/onload", &r, Opts(m), req, &out, {}, &note).ok());
      REQUIRE(out.container_responses(1).cdi_devices_size() == 1);
      CHECK(out.container_responses(1).cdi_devices(0).name() == "amd.com/onload=onload");
      CHECK(note.empty());
    }
  }
  SUBCASE("an unhealthy resource stays FAILED_PRECONDITION for its own reason") {
    ClusterResource bad = Onload(false);
    auto st = BuildAllocateResponse("amd.com/onload", &bad, Opts(AllocateMode::kBoth), req, &out,
                                    missing, &note);
    CHECK(st.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK(st.error_message().find("/dev/onload is missing") != std::string::npos);
  }
}

TEST_CASE("kubelet: Allocate refuses what it cannot serve, with a reason") {
  ClusterResource good = Onload(true), bad = Onload(false);
  v1beta1::AllocateResponse out;
  auto opts = Opts(AllocateMode::kBoth);

  auto st =
      BuildAllocateResponse("amd.com/onload", &good, opts, Request({{"onload-1", "gpu-0"}}), &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message().find("unknown device ID \"gpu-0\"") != std::string::npos);
  CHECK(out.container_responses_size() == 0);

  st = BuildAllocateResponse("amd.com/onload", &good, opts, Request({{std::string("x\n\"y", 4)}}),
                             &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message().find('\n') == std::string::npos);

  st = BuildAllocateResponse("amd.com/onload", &good, opts, Request({}), &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  st = BuildAllocateResponse("amd.com/onload", &good, opts, Request({{}}), &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  std::vector<std::vector<std::string>> many(257, {"onload-0"});
  st = BuildAllocateResponse("amd.com/onload", &good, opts, Request(many), &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  many.pop_back();
  CHECK(BuildAllocateResponse("amd.com/onload", &good, opts, Request(many), &out).ok());
  CHECK(out.container_responses_size() == 256);
  std::vector<std::string> ids = ocid::DeviceIds("amd.com/onload", 64);
  CHECK(BuildAllocateResponse("amd.com/onload", &good, opts, Request({ids}), &out).ok());
  ids.push_back("onload-0");
  st = BuildAllocateResponse("amd.com/onload", &good, opts, Request({ids}), &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  st = BuildAllocateResponse("amd.com/onload", &bad, opts, Request({{"onload-0"}}), &out);
  CHECK(st.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(st.error_message().find("/dev/onload is missing") != std::string::npos);

  st = BuildAllocateResponse("amd.com/onload", nullptr, opts, Request({{"onload-0"}}), &out);
  CHECK(st.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_CASE("kubelet: an unknown ID is quoted through the one escaping rule, cut short") {
  ClusterResource r = Onload(true);
  auto opts = Opts(AllocateMode::kBoth);
  v1beta1::AllocateResponse out;
  // U+202E on purpose: the escaping rule's input.
  // NOLINTNEXTLINE(misc-misleading-bidirectional)
  const std::string id("a\nb\0c\xc2\x9b\xe2\x80\xae", 10);
  auto st = BuildAllocateResponse("amd.com/onload", &r, opts, Request({{id}}), &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message().find("unknown device ID \"a\\x0ab\\x00c\\xc2\\x9b\\xe2\\x80\\xae\"") !=
        std::string::npos);
  st = BuildAllocateResponse("amd.com/onload", &r, opts, Request({{std::string(200, 'x')}}), &out);
  // At most kMaxShownId bytes quoted, the marker included (error.h Printable).
  const std::string& m = st.error_message();
  size_t open = m.find("unknown device ID \"") + 19, close = m.find('"', open);
  REQUIRE(close != std::string::npos);
  CHECK(close - open <= ocid::kMaxShownId);
  CHECK(m.find("[... 143 bytes ...]") != std::string::npos);
  CHECK(m.find(std::string(61, 'x')) == std::string::npos);
}

// Issue 20, finding 11: env LD_PRELOAD replaces an image's own; with the
// CDI writer's preload file (--cdi-dir), the mounts answer mounts it at
// /etc/ld.so.preload as the CDI spec does, and sets no LD_PRELOAD.
TEST_CASE("kubelet: with a preload file, the mounts answer preloads through /etc/ld.so.preload") {
  ClusterResource r = Onload(true);
  v1beta1::AllocateResponse out;
  auto req = Request({{"onload-1"}});
  const std::string file = "/var/run/cdi/oci-decorator-onload.onload.preload";
  for (AllocateMode mode : {AllocateMode::kMounts, AllocateMode::kBoth}) {
    REQUIRE(
        BuildAllocateResponse("amd.com/onload", &r, Opts(mode), req, &out, {}, nullptr, file).ok());
    const auto& c = out.container_responses(0);
    CHECK(c.envs().count("LD_PRELOAD") == 0);
    REQUIRE(c.mounts_size() == 3);
    CHECK(c.mounts(2).container_path() == "/etc/ld.so.preload");
    CHECK(c.mounts(2).host_path() == file);
    CHECK(c.mounts(2).read_only());
    CHECK(c.devices_size() == 1);
  }
  // Without one, env LD_PRELOAD as before; cdi mode is unchanged either way.
  REQUIRE(BuildAllocateResponse("amd.com/onload", &r, Opts(AllocateMode::kMounts), req, &out, {},
                                nullptr, "")
              .ok());
  CHECK(out.container_responses(0).envs().at("LD_PRELOAD") ==
        "/usr/lib/x86_64-linux-gnu/libonload.so");
  CHECK(out.container_responses(0).mounts_size() == 2);
  REQUIRE(BuildAllocateResponse("amd.com/onload", &r, Opts(AllocateMode::kCdi), req, &out, {},
                                nullptr, file)
              .ok());
  CHECK(out.container_responses(0).mounts_size() == 0);
  // A resource that preloads nothing gets no /etc/ld.so.preload mount.
  ClusterResource zf = Onload(true);
  zf.delivery.env.clear();
  REQUIRE(BuildAllocateResponse("amd.com/onload", &zf, Opts(AllocateMode::kMounts), req, &out, {},
                                nullptr, file)
              .ok());
  CHECK(out.container_responses(0).mounts_size() == 2);
}

TEST_CASE("kubelet: PreloadFileFor names the file the CDI writer keeps, with its bytes") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.t.json",
         R"({"version": "1", "activation_flag": "OCI_T", "cdi_kind": "example.com/pre",
    "driver_feature": ["t"],
    "inventory": {"t": {"libraries": [{"source": ")" +
             (t / "host/libt.so") + R"(", "target": "/usr/lib64/libt.so"}],
                        "preload": ["/usr/lib64/libt.so"]}}})");
  t.Dir("cdi");
  // The view the watch would build, and the keeper's pass over it.
  ocid::InventorySet set;
  ocid::Error err;
  REQUIRE_MESSAGE(ocid::LoadInventoryDir(t / "conf", &set, &err), err.Line());
  std::unique_ptr<ocid::HostRootView> host;
  REQUIRE_MESSAGE(ocid::HostRootView::Open("/", &host, &err), err.Line());
  ocid::ClusterView view;
  ocid::BuildClusterView(set, *host, {}, "/", nullptr, &view);
  ocid::BuildClusterCdi(set, *host, "/", t / "cdi", nullptr, &view);
  ocid::CdiDirKeeper keeper(t / "cdi", t / "conf");
  REQUIRE(keeper.Sync(view));

  ClusterResource r;
  r.inventory = t / "conf/pre.t.json";
  r.cdi_device = "example.com/pre=t";
  r.healthy = true;
  r.delivery.env.push_back({"LD_PRELOAD", "/usr/lib64/libt.so"});
  ocid::PreloadFile f = ocid::PreloadFileFor(r, t / "cdi");
  // The stem's '.' is percent-encoded (cdi.h CdiPreloadFileName).
  CHECK(f.path == t / "cdi/oci-decorator-pre%2Et.t.preload");
  CHECK(f.name == "oci-decorator-pre%2Et.t.preload");
  CHECK(f.bytes == "/usr/lib64/libt.so\n");
  // The keeper vouches for it (its directory, the file current in it).
  std::string path;
  CHECK(keeper.PreloadFileIfCurrent(f.name, f.bytes, &path));
  CHECK(path == f.path);
  CHECK_FALSE(keeper.PreloadFileIfCurrent(f.name, "/other.so\n", &path));

  CHECK(ocid::PreloadFileFor(r, "").path.empty());
  ClusterResource two = r;
  two.cdi_device = "example.com/pre=t-latency";
  two.delivery.env = {{"LD_PRELOAD", "/a.so /b.so"}, {"EF_POLL_USEC", "100000"}};
  ocid::PreloadFile g = ocid::PreloadFileFor(two, "/run/cdi");
  CHECK(g.path == "/run/cdi/oci-decorator-pre%2Et.t-latency.preload");
  CHECK(g.bytes == "/a.so\n/b.so\n");
  ClusterResource none = r;
  none.delivery.env.clear();
  CHECK(ocid::PreloadFileFor(none, "/run/cdi").path.empty());
}

// --- an inventory's create_if directory and groups, from a view of a fake host

TEST_CASE("kubelet: the mounts answer mounts a create_if directory; groups are a log line") {
  ocid_test::FakeHost h;
  h.Chr("/dev/onload", 240, 0);
  h.Content("/sys/module/m/parameters/ctl_path", "/usr/sbin/ctl\n").File("/usr/sbin/ctl");
  h.Content("/sys/module/m/parameters/client_gid", "4242\n");
  h.Content("/sys/module/m/parameters/client_mode", "432\n");  // 0660: others get nothing
  ClusterView v = SharedDirView(h, "/host");
  const ClusterResource* r = ocid::FindK8sResource(v, "amd.com/onload");
  REQUIRE(r);
  REQUIRE(r->healthy);
  CHECK(r->delivery.additional_gids == std::vector<uint32_t>{4242});
  v1beta1::AllocateResponse out;
  REQUIRE(BuildAllocateResponse("amd.com/onload", r, Opts(AllocateMode::kMounts),
                                Request({{"onload-0"}}), &out)
              .ok());
  const auto& c = out.container_responses(0);
  bool mounted = false;
  for (const auto& m : c.mounts())
    if (m.container_path() == "/run/ctl") {
      mounted = true;
      CHECK(m.host_path() == "/host/run/ctl");
      CHECK(m.read_only());
    }
  CHECK(mounted);

  const std::string note = ocid::SupplementalGroupsNote(*r, AllocateMode::kMounts);
  CHECK(note.find("amd.com/onload: pods need securityContext.supplementalGroups: [4242]") == 0);
  // The CDI spec carries the group: nothing to say.
  CHECK(ocid::SupplementalGroupsNote(*r, AllocateMode::kCdi).empty());
  CHECK(ocid::SupplementalGroupsNote(*r, AllocateMode::kBoth).empty());
  // A mode that admits others: no group, nothing to say.
  h.Content("/sys/module/m/parameters/client_mode", "438\n");  // 0666
  ClusterView open = SharedDirView(h, "/host");
  CHECK(ocid::FindK8sResource(open, "amd.com/onload")->delivery.additional_gids.empty());
  CHECK(ocid::SupplementalGroupsNote(*ocid::FindK8sResource(open, "amd.com/onload"),
                                     AllocateMode::kMounts)
            .empty());
}
