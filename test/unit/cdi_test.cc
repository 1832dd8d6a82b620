// CDI specs from inventories against a fake host: golden JSON, versions,
// kinds, the "all" device, features missing on the host.
#include <doctest/doctest.h>

#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cdi.h"
#include "delivery.h"
#include "fake_host.h"
#include "host_view.h"
#include "inventory.h"

using ocid::BuildCdiSpec;
using ocid::CdiSpec;
using ocid::CheckCdiDeviceName;
using ocid::CheckCdiKind;
using ocid::Error;
using ocid::FileType;
using ocid::HostMatch;
using ocid::Inventory;

using ocid_test::FakeHost;

namespace {

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

const char* kInventory = R"({
  "version": "1",
  "activation_flag": "OCI_ONLOAD",
  "driver_feature": ["onload", "zf"],
  "inventory": {
    "onload": {
      "devices": ["onload", "sfc_char"],
      "binaries": ["/usr/bin/onload", {"source": "/usr/bin/onload_extra", "optional": true}],
      "libraries": ["/usr/lib64/libonload.so*"],
      "directories": ["/usr/libexec/onload/profiles"],
      "preload": ["libonload.so"]
    },
    "zf": {"devices": ["sfc_char"], "binaries": ["/usr/bin/zf_stackdump"]}
  }
})";

Inventory Parse(const std::string& json, const std::string& file = "/etc/ocid.d/onload.json") {
  Inventory inv;
  Error err;
  REQUIRE_MESSAGE(ocid::ParseInventory(json, file, &inv, &err), err.Line());
  return inv;
}

FakeHost Host() {
  FakeHost h;
  h.Chr("/dev/onload", 240, 0)
      .Chr("/dev/sfc_char", 241, 0, 0660)
      .File("/usr/bin/onload")
      .File("/usr/bin/zf_stackdump")
      .File("/usr/lib64/libonload.so")
      .File("/usr/lib64/libonload.so.1", "/usr/lib64/libonload.so")
      .Dir("/usr/libexec/onload/profiles");
  return h;
}

CdiSpec Build(const Inventory& inv, const FakeHost& host, const std::string& root) {
  CdiSpec spec;
  Error err;
  REQUIRE_MESSAGE(BuildCdiSpec(inv, host, root, "", &spec, &err), err.Line());
  return spec;
}

const char* kGolden = R"({
  "cdiVersion": "0.5.0",
  "kind": "oci-decorator.local/onload",
  "devices": [
    {
      "name": "onload",
      "containerEdits": {
        "env": [
          "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libonload.so"
        ],
        "deviceNodes": [
          {
            "path": "/dev/onload",
            "hostPath": "/sim/dev/onload",
            "fileMode": 438,
            "permissions": "rw"
          },
          {
            "path": "/dev/sfc_char",
            "hostPath": "/sim/dev/sfc_char",
            "fileMode": 432,
            "permissions": "rw"
          }
        ],
        "mounts": [
          {
            "hostPath": "/sim/usr/bin/onload",
            "containerPath": "/usr/bin/onload",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/lib64/libonload.so",
            "containerPath": "/usr/lib/x86_64-linux-gnu/libonload.so",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/lib64/libonload.so",
            "containerPath": "/usr/lib/x86_64-linux-gnu/libonload.so.1",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/lib64/libonload.so",
            "containerPath": "/usr/lib64/libonload.so",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/lib64/libonload.so",
            "containerPath": "/usr/lib64/libonload.so.1",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/libexec/onload/profiles",
            "containerPath": "/usr/libexec/onload/profiles",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          }
        ]
      }
    },
    {
      "name": "zf",
      "containerEdits": {
        "deviceNodes": [
          {
            "path": "/dev/sfc_char",
            "hostPath": "/sim/dev/sfc_char",
            "fileMode": 432,
            "permissions": "rw"
          }
        ],
        "mounts": [
          {
            "hostPath": "/sim/usr/bin/zf_stackdump",
            "containerPath": "/usr/bin/zf_stackdump",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          }
        ]
      }
    },
    {
      "name": "all",
      "containerEdits": {
        "env": [
          "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libonload.so"
        ],
        "deviceNodes": [
          {
            "path": "/dev/onload",
            "hostPath": "/sim/dev/onload",
            "fileMode": 438,
            "permissions": "rw"
          },
          {
            "path": "/dev/sfc_char",
            "hostPath": "/sim/dev/sfc_char",
            "fileMode": 432,
            "permissions": "rw"
          }
        ],
        "mounts": [
          {
            "hostPath": "/sim/usr/bin/onload",
            "containerPath": "/usr/bin/onload",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/bin/zf_stackdump",
            "containerPath": "/usr/bin/zf_stackdump",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/lib64/libonload.so",
            "containerPath": "/usr/lib/x86_64-linux-gnu/libonload.so",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/lib64/libonload.so",
            "containerPath": "/usr/lib/x86_64-linux-gnu/libonload.so.1",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/lib64/libonload.so",
            "containerPath": "/usr/lib64/libonload.so",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/lib64/libonload.so",
            "containerPath": "/usr/lib64/libonload.so.1",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          },
          {
            "hostPath": "/sim/usr/libexec/onload/profiles",
            "containerPath": "/usr/libexec/onload/profiles",
            "options": [
              "ro",
              "nosuid",
              "nodev",
              "bind"
            ]
          }
        ]
      }
    }
  ]
}
)";

}  // namespace

TEST_CASE("cdi: golden spec for a simulated host root") {
  CdiSpec spec = Build(Parse(kInventory), Host(), "/sim");
  CHECK(spec.json == kGolden);
  CHECK(spec.kind == "oci-decorator.local/onload");
  CHECK(spec.file_name == "oci-decorator-onload.json");
  CHECK(spec.devices == std::vector<std::string>{"onload", "zf", "all"});
  CHECK(spec.warnings.empty());
}

TEST_CASE("cdi: the real host root needs no hostPath, so cdiVersion 0.3.0") {
  CdiSpec spec = Build(Parse(kInventory), Host(), "/");
  CHECK(Contains(spec.json, "\"cdiVersion\": \"0.3.0\""));
  CHECK_FALSE(Contains(spec.json, "\"hostPath\": \"/dev/"));
  CHECK(Contains(spec.json, "\"hostPath\": \"/usr/bin/onload\""));  // mounts keep theirs
}

TEST_CASE("cdi: device nodes carry no type or numbers: the engine stats the host node") {
  CdiSpec spec = Build(Parse(kInventory), Host(), "/sim");
  CHECK_FALSE(Contains(spec.json, "\"major\""));
  CHECK_FALSE(Contains(spec.json, "\"type\""));
}

TEST_CASE("cdi: LD_PRELOAD only on devices whose features preload") {
  CdiSpec spec = Build(Parse(kInventory), Host(), "/");
  size_t zf = spec.json.find("\"name\": \"zf\"");
  size_t all = spec.json.find("\"name\": \"all\"");
  REQUIRE(zf != std::string::npos);
  REQUIRE(all != std::string::npos);
  CHECK(spec.json.substr(zf, all - zf).find("LD_PRELOAD") == std::string::npos);
  CHECK(spec.json.find("LD_PRELOAD", all) != std::string::npos);
}

TEST_CASE("cdi: a feature missing on the host gets no device, and neither does all") {
  FakeHost h = Host();
  h.Remove("/usr/bin/zf_stackdump");
  CdiSpec spec = Build(Parse(kInventory), h, "/");
  CHECK(spec.devices == std::vector<std::string>{"onload"});
  REQUIRE(spec.warnings.size() == 2);
  CHECK(Contains(spec.warnings[0], "no CDI device \"zf\""));
  CHECK(Contains(spec.warnings[0], "/usr/bin/zf_stackdump"));
  CHECK(Contains(spec.warnings[1], "no CDI device \"all\""));
}

TEST_CASE("cdi: an optional entry missing is skipped silently") {
  CdiSpec spec = Build(Parse(kInventory), Host(), "/");
  CHECK_FALSE(Contains(spec.json, "onload_extra"));
  CHECK(spec.warnings.empty());
}

TEST_CASE("cdi: nothing available on the host is an error") {
  FakeHost empty;
  CdiSpec spec;
  Error err;
  CHECK_FALSE(BuildCdiSpec(Parse(kInventory), empty, "/", "", &spec, &err));
  CHECK(Contains(err.Line(), "no CDI device can be generated"));
  CHECK(spec.warnings.size() == 3);
}

TEST_CASE("cdi: kind from cdi_kind, else from the file name") {
  std::string with_kind = kInventory;
  with_kind.replace(with_kind.find("\"version\""), 0, "\"cdi_kind\": \"example.com/onload-x\", ");
  Inventory inv = Parse(with_kind);
  CHECK(inv.cdi_kind == "example.com/onload-x");
  CHECK(Build(inv, Host(), "/").kind == "example.com/onload-x");
  CHECK(ocid::CdiKindOf(Parse(kInventory, "/x/rdma.json")) == "oci-decorator.local/rdma");

  // A file name that is no CDI class: the error says to set cdi_kind.
  CdiSpec spec;
  Error err;
  CHECK_FALSE(BuildCdiSpec(Parse(kInventory, "/x/my.vendor.json"), Host(), "/", "", &spec, &err));
  CHECK(Contains(err.Line(), "cdi_kind"));
}

TEST_CASE("cdi: invalid cdi_kind makes the inventory invalid") {
  for (const char* bad : {"onload", "example.com/", "/onload", "example.com/on.load",
                          "-x.com/onload", "example.com/a", "e/onload", "example.com/a/b", ""}) {
    std::string json = kInventory;
    json.replace(json.find("\"version\""), 0, std::string("\"cdi_kind\": \"") + bad + "\", ");
    Inventory inv;
    Error err;
    CHECK_MESSAGE(!ocid::ParseInventory(json, "/x/onload.json", &inv, &err), bad);
    CHECK(Contains(err.Line(), "cdi_kind"));
  }
}

TEST_CASE("cdi: naming rules") {
  std::string why;
  CHECK(CheckCdiKind("oci-decorator.local/onload", &why));
  CHECK(CheckCdiKind("amd.com/onload", &why));
  CHECK(CheckCdiKind("vendor_x.example-1.org/class_1-b", &why));
  CHECK_FALSE(CheckCdiKind("1vendor.com/onload", &why));
  CHECK_FALSE(CheckCdiKind("vendor.com./onload", &why));
  CHECK_FALSE(CheckCdiKind("vendor.com/onload-", &why));
  CHECK_FALSE(CheckCdiKind("vendor.com/c", &why));  // podman 4.3 panics on 1 character
  CHECK(Contains(why, "2 to 63"));
  CHECK(CheckCdiDeviceName("onload", &why));
  CHECK(CheckCdiDeviceName("a", &why));
  CHECK(CheckCdiDeviceName("gpu0:mig.1", &why));
  CHECK_FALSE(CheckCdiDeviceName("_x", &why));
  CHECK_FALSE(CheckCdiDeviceName("x-", &why));
}

TEST_CASE("cdi: a feature name CDI cannot carry gets no device, all still has it") {
  std::string json = R"({"activation_flag": "OCI_X", "driver_feature": ["ok", "_odd"],
    "inventory": {"ok": {"binaries": ["/usr/bin/onload"]},
                  "_odd": {"binaries": ["/usr/bin/zf_stackdump"]}}})";
  CdiSpec spec = Build(Parse(json), Host(), "/");
  CHECK(spec.devices == std::vector<std::string>{"ok", "all"});
  REQUIRE(spec.warnings.size() == 1);
  CHECK(Contains(spec.warnings[0], "\"_odd\""));
  CHECK(Contains(spec.json, "/usr/bin/zf_stackdump"));
}

TEST_CASE("cdi: a preload path LD_PRELOAD cannot carry is refused") {
  std::string json = R"({"activation_flag": "OCI_X", "driver_feature": ["f"],
    "inventory": {"f": {"libraries": [{"source": "/usr/lib64/libonload.so", "target": "/opt/my lib/l.so"}],
                        "preload": ["/opt/my lib/l.so"]}}})";
  CdiSpec spec;
  Error err;
  CHECK_FALSE(BuildCdiSpec(Parse(json), Host(), "/", "", &spec, &err));
  CHECK(Contains(err.Line(), "LD_PRELOAD"));
}

TEST_CASE("cdi: one device per profile per feature that preloads, with the profile's env") {
  std::string json = kInventory;
  json.replace(json.find("\"activation_flag\""), 0,
               R"("profiles": {"latency": {"EF_POLL_USEC": "100000"}},
                  "profile_dir": "/usr/libexec/onload/profiles", )");
  FakeHost h = Host();
  h.Content("/usr/libexec/onload/profiles/throughput.opf", "onload_set EF_POLL_USEC 1\n")
      .Content("/usr/libexec/onload/profiles/latency-best.opf", "if [ -e /sys ]; then\n");
  CdiSpec spec = Build(Parse(json), h, "/");
  CHECK(spec.devices ==
        std::vector<std::string>{"onload", "zf", "all", "onload-latency", "onload-throughput"});
  auto j = nlohmann::json::parse(spec.json);
  CHECK(j["devices"][3]["containerEdits"]["env"] ==
        nlohmann::json::array(
            {"LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libonload.so", "EF_POLL_USEC=100000"}));
  CHECK(j["devices"][4]["containerEdits"]["env"] ==
        nlohmann::json::array(
            {"LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libonload.so", "EF_POLL_USEC=1"}));
  CHECK(j["devices"][3]["containerEdits"]["mounts"] == j["devices"][0]["containerEdits"]["mounts"]);
  REQUIRE(spec.warnings.size() == 1);
  CHECK(Contains(spec.warnings[0], "profile \"latency-best\" gets no CDI device"));
  CHECK(Contains(spec.warnings[0], "latency-best.opf:1:"));
}

TEST_CASE(
    "cdi: with a directory, a preloading device mounts its preload file at /etc/ld.so.preload") {
  std::string json = kInventory;
  json.replace(json.find("\"activation_flag\""), 0,
               R"("profiles": {"latency": {"EF_POLL_USEC": "100000"}}, )");
  CdiSpec spec;
  Error err;
  REQUIRE_MESSAGE(
      BuildCdiSpec(Parse(json), Host(), "/", "/etc/cdi/oci-decorator-onload.json", &spec, &err),
      err.Line());
  CHECK_FALSE(spec.preload_in_env);
  CHECK_FALSE(Contains(spec.json, "LD_PRELOAD"));
  auto j = nlohmann::json::parse(spec.json);
  REQUIRE(spec.devices == std::vector<std::string>{"onload", "zf", "all", "onload-latency"});
  auto preload_mount = [&](size_t i) {
    for (const auto& m : j["devices"][i]["containerEdits"]["mounts"])
      if (m["containerPath"] == "/etc/ld.so.preload") return m;
    return nlohmann::json();
  };
  CHECK(preload_mount(0) ==
        nlohmann::json({{"hostPath", "/etc/cdi/oci-decorator-onload.onload.preload"},
                        {"containerPath", "/etc/ld.so.preload"},
                        {"options", {"ro", "nosuid", "nodev", "bind"}}}));
  CHECK(preload_mount(1).is_null());  // zf preloads nothing
  CHECK(preload_mount(2)["hostPath"] == "/etc/cdi/oci-decorator-onload.all.preload");
  CHECK(preload_mount(3)["hostPath"] == "/etc/cdi/oci-decorator-onload.onload-latency.preload");
  CHECK_FALSE(j["devices"][0]["containerEdits"].contains("env"));
  // The profile device keeps the profile's variables, and only those.
  CHECK(j["devices"][3]["containerEdits"]["env"] == nlohmann::json::array({"EF_POLL_USEC=100000"}));

  // The files, preload files first and the spec last, one path a line.
  std::vector<ocid::CdiFileToWrite> files = ocid::CdiFilesOf(spec);
  REQUIRE(files.size() == 4);
  CHECK(files[0].name == "oci-decorator-onload.onload.preload");
  CHECK(files[0].bytes == "/usr/lib/x86_64-linux-gnu/libonload.so\n");
  CHECK(files[1].name == "oci-decorator-onload.all.preload");
  CHECK(files[2].name == "oci-decorator-onload.onload-latency.preload");
  CHECK(files[2].bytes == "/usr/lib/x86_64-linux-gnu/libonload.so\n");
  CHECK(files[3].name == "oci-decorator-onload.json");
  CHECK(files[3].bytes == spec.json);
}

TEST_CASE("cdi: without a directory (stdout) LD_PRELOAD stays in the env, no preload file") {
  CdiSpec spec = Build(Parse(kInventory), Host(), "/");
  CHECK(spec.preload_in_env);
  CHECK(spec.preload_files.empty());
  CHECK(Contains(spec.json, "\"LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libonload.so\""));
  CHECK_FALSE(Contains(spec.json, "/etc/ld.so.preload"));
  CHECK(ocid::CdiFilesOf(spec).size() == 1);
}

TEST_CASE("cdi: preload files are named after the spec's file, in its directory") {
  CdiSpec spec;
  Error err;
  REQUIRE(BuildCdiSpec(Parse(kInventory), Host(), "/", "/run/x/my-spec.json", &spec, &err));
  CHECK(spec.file_name == "my-spec.json");
  REQUIRE(spec.preload_files.size() == 2);
  CHECK(spec.preload_files[0].name == "my-spec.onload.preload");
  CHECK(Contains(spec.json, "\"hostPath\": \"/run/x/my-spec.onload.preload\""));
  CHECK(ocid::CdiFilesOf(spec).back().name == "my-spec.json");
}

TEST_CASE("cdi: no two specs' devices share a preload file, whatever dots their names hold") {
  using ocid::CdiPreloadFileName;
  // Inventory a.json's device "b.c" and inventory a.b.json's device "c".
  CHECK(CdiPreloadFileName("oci-decorator-a.json", "b.c") !=
        CdiPreloadFileName("oci-decorator-a.b.json", "c"));
  CHECK(CdiPreloadFileName("oci-decorator-a.b.json", "c") == "oci-decorator-a%2Eb.c.preload");
  CHECK(CdiPreloadFileName("oci-decorator-a%2Eb.json", "c") == "oci-decorator-a%252Eb.c.preload");
  // The common names are as before.
  CHECK(CdiPreloadFileName("oci-decorator-onload.json", "onload-latency") ==
        "oci-decorator-onload.onload-latency.preload");
}

TEST_CASE("cdi: a profile device never takes a feature's name: the spec names each device once") {
  // Feature "onload-latency" and feature "onload" with profile "latency"
  // both spell "onload-latency"; CDI runtimes refuse a spec naming a
  // device twice, and with it every device of the inventory.
  std::string json = R"({"activation_flag": "OCI_X", "driver_feature": ["onload", "onload-latency"],
    "profiles": {"latency": {"EF_POLL_USEC": "100000"}},
    "inventory": {"onload": {"libraries": ["/usr/lib64/libonload.so"], "preload": ["libonload.so"]},
                  "onload-latency": {"binaries": ["/usr/bin/onload"]}}})";
  CdiSpec spec = Build(Parse(json), Host(), "/");
  CHECK(spec.devices == std::vector<std::string>{"onload", "onload-latency", "all"});
  auto j = nlohmann::json::parse(spec.json);
  CHECK(j["devices"].size() == 3);
  CHECK(j["devices"][1]["containerEdits"].dump().find("EF_POLL_USEC") == std::string::npos);
  bool warned = false;
  for (const auto& w : spec.warnings)
    warned = warned || Contains(w, "\"onload-latency\" is already a device");
  CHECK(warned);
}

TEST_CASE("cdi: two inventories of one CDI kind: the second, in file-name order, is named") {
  ocid::InventorySet set;
  std::string a =
      R"({"activation_flag": "OCI_A", "cdi_kind": "amd.com/onload", "driver_feature": ["f"],
    "inventory": {"f": {"binaries": ["/usr/bin/onload"]}}})";
  std::string b = R"({"activation_flag": "OCI_B", "driver_feature": ["g"],
    "inventory": {"g": {"binaries": ["/usr/bin/onload"]}}})";
  set.inventories = {Parse(a, "/etc/ocid.d/a.json"), Parse(b, "/etc/ocid.d/b.json"),
                     Parse(a, "/etc/ocid.d/c.json")};
  auto conflicts = ocid::CdiKindConflicts(set);
  REQUIRE(conflicts.size() == 1);
  CHECK(conflicts.count("/etc/ocid.d/c.json") == 1);
  CHECK(Contains(conflicts["/etc/ocid.d/c.json"],
                 "CDI kind amd.com/onload is already inventory "
                 "/etc/ocid.d/a.json's"));
}

TEST_CASE("cdi: a preload file's name gives back its spec's, and nothing else does") {
  using ocid::CdiPreloadFileName;
  using ocid::CdiSpecOfPreloadFile;
  for (std::string spec : {"oci-decorator-onload.json", "oci-decorator-a.b.json",
                           "oci-decorator-a%b.json", "my-spec.json"})
    for (std::string dev : {"onload", "b.c", "onload-latency", "x:y"}) {
      CAPTURE(spec);
      CAPTURE(dev);
      CHECK(CdiSpecOfPreloadFile(CdiPreloadFileName(spec, dev)) == spec);
    }
  CHECK(CdiSpecOfPreloadFile("oci-decorator-onload.json") == "");
  CHECK(CdiSpecOfPreloadFile("x.preload") == "");
  CHECK(CdiSpecOfPreloadFile("x..preload") == "");
  CHECK(CdiSpecOfPreloadFile(".x.preload") == "");
  CHECK(CdiSpecOfPreloadFile("a%2Fb.x.preload") == "");
}

// ---- groups and cdiVersion (issue 30). Upstream, cncf-tags/
// container-device-interface at 05ae4b5b: specs-go/config.go:33 declares
// ContainerEdits.AdditionalGIDs `json:"additionalGids,omitempty"` "Added in
// v0.7.0"; specs-go/version.go:173-194 requiresV070 is true when any device's
// (or the spec's) AdditionalGIDs is not empty (:178, :187); :215-237
// requiresV050 is true for a device name whose first byte is a digit
// (:219-221) or a device node with a HostPath (:229-230). A spec whose
// cdiVersion is below what it needs is refused (ValidateVersion), and podman
// 4.3's CDI (v0.5.2) knows no version above 0.5.0.
namespace {

const char* kGroupInventory = R"({
  "activation_flag": "OCI_ONLOAD",
  "driver_feature": ["onload", "zf"],
  "inventory": {
    "onload": {"binaries": ["/usr/bin/onload"],
               "groups": [{"gid_file": "/sys/gid", "mode_file": "/sys/mode",
                           "default_mode": "0666", "optional": true}]},
    "zf": {"binaries": ["/usr/bin/zf_stackdump"]}
  }
})";

nlohmann::json Edits(const CdiSpec& spec, const std::string& device) {
  nlohmann::json j = nlohmann::json::parse(spec.json);
  for (const auto& d : j["devices"])
    if (d["name"] == device) return d["containerEdits"];
  FAIL("no device " << device);
  return {};
}

}  // namespace

TEST_CASE("cdi: MinimalCdiVersion") {
  ocid::CdiVersionNeeds n;
  CHECK(ocid::MinimalCdiVersion(n) == "0.3.0");
  n.digit_device_name = true;
  CHECK(ocid::MinimalCdiVersion(n) == "0.5.0");
  n.digit_device_name = false;
  n.device_host_path = true;
  CHECK(ocid::MinimalCdiVersion(n) == "0.5.0");
  n.additional_gids = true;
  CHECK(ocid::MinimalCdiVersion(n) == "0.7.0");
  n.device_host_path = false;
  CHECK(ocid::MinimalCdiVersion(n) == "0.7.0");
}

TEST_CASE("cdi: additionalGids only for a required group, and then cdiVersion 0.7.0") {
  FakeHost h = Host();
  // No group file (an Onload before 9.1): the spec is as it was.
  CdiSpec none = Build(Parse(kGroupInventory), h, "/");
  CHECK(Contains(none.json, "\"cdiVersion\": \"0.3.0\""));
  CHECK_FALSE(Contains(none.json, "additionalGids"));
  // A group others may do without (default mode 0666): not carried.
  h.Content("/sys/gid", "4242\n").Content("/sys/mode", "0\n");
  CdiSpec open = Build(Parse(kGroupInventory), h, "/");
  CHECK(open.json == none.json);
  // 0660 (sysfs shows 432): required.
  h.Content("/sys/mode", "432\n");
  CdiSpec req = Build(Parse(kGroupInventory), h, "/");
  CHECK(Contains(req.json, "\"cdiVersion\": \"0.7.0\""));
  CHECK(Edits(req, "onload")["additionalGids"] == nlohmann::json::array({4242}));
  CHECK(Edits(req, "all")["additionalGids"] == nlohmann::json::array({4242}));
  CHECK_FALSE(Edits(req, "zf").contains("additionalGids"));
  CHECK(req.warnings.empty());
  // Under a simulated root (hostPath) it is still 0.7.0.
  CHECK(Contains(Build(Parse(kGroupInventory), h, "/sim").json, "\"cdiVersion\": \"0.7.0\""));
}

TEST_CASE("cdi: a version cap below 0.7.0 leaves the groups out, with a warning") {
  FakeHost h = Host();
  h.Content("/sys/gid", "4242\n").Content("/sys/mode", "432\n");
  CdiSpec spec;
  Error err;
  REQUIRE_MESSAGE(BuildCdiSpec(Parse(kGroupInventory), h, "/", "", &spec, &err, nullptr, "0.5.0"),
                  err.Line());
  CHECK(Contains(spec.json, "\"cdiVersion\": \"0.3.0\""));
  CHECK_FALSE(Contains(spec.json, "additionalGids"));
  REQUIRE(spec.warnings.size() == 1);
  CHECK(Contains(spec.warnings[0], "group 4242 left out"));
  CHECK(Contains(spec.warnings[0], "--group-add 4242"));
  // A cap of 0.7.0 or none keeps them.
  REQUIRE(BuildCdiSpec(Parse(kGroupInventory), h, "/", "", &spec, &err, nullptr, "0.7.0"));
  CHECK(Contains(spec.json, "additionalGids"));
  // A cap the content cannot meet for other reasons (hostPath) fails.
  CHECK_FALSE(BuildCdiSpec(Parse(kInventory), Host(), "/sim", "", &spec, &err, nullptr, "0.3.0"));
  CHECK(Contains(err.Line(), "needs cdiVersion 0.5.0"));
  CHECK_FALSE(BuildCdiSpec(Parse(kInventory), Host(), "/", "", &spec, &err, nullptr, "1.0"));
  CHECK(Contains(err.Line(), "unknown CDI version"));
}

TEST_CASE("cdi: the spec names its cdiVersion and the directories its writer creates, once") {
  const std::string json = R"({"activation_flag": "OCI_X", "driver_feature": ["a", "b"],
    "conditions": {"ctl": {"exists": "/usr/sbin/ctl"}},
    "inventory": {
      "a": {"binaries": ["/usr/bin/onload"],
            "directories": [{"source": "/run/ctl", "optional": true, "create_if": "ctl"}]},
      "b": {"directories": [{"source": "/run/ctl", "optional": true, "create_if": "ctl"}]}}})";
  FakeHost h = Host();
  CdiSpec spec = Build(Parse(json), h, "/");
  CHECK(spec.cdi_version == "0.3.0");
  CHECK(spec.create.empty());  // condition not met: nothing to create, nor mounted
  CHECK_FALSE(Contains(spec.json, "/run/ctl"));
  h.File("/usr/sbin/ctl");
  spec = Build(Parse(json), h, "/sim");
  REQUIRE(spec.create.size() == 1);  // three devices mount it
  CHECK(spec.create[0].source == "/run/ctl");
  CHECK(spec.create[0].create);
  CHECK(Contains(spec.json, R"("hostPath": "/sim/run/ctl")"));
  CHECK(spec.cdi_version == "0.3.0");
  // Where it exists, it is mounted and nothing is created.
  h.Dir("/run/ctl");
  CHECK(Build(Parse(json), h, "/").create.empty());
  h.Content("/sys/gid", "4242\n").Content("/sys/mode", "432\n");
  CHECK(Build(Parse(kGroupInventory), h, "/").cdi_version == "0.7.0");
}

TEST_CASE("cdi: a device name starting with a digit needs 0.5.0") {
  std::string json = R"({"activation_flag": "OCI_X", "driver_feature": ["x3"],
    "inventory": {"x3": {"binaries": ["/usr/bin/onload"]}}})";
  CHECK(Contains(Build(Parse(json), Host(), "/").json, "\"cdiVersion\": \"0.3.0\""));
  json = R"({"activation_flag": "OCI_X", "driver_feature": ["3x"],
    "inventory": {"3x": {"binaries": ["/usr/bin/onload"]}}})";
  CdiSpec spec = Build(Parse(json), Host(), "/");
  REQUIRE(spec.devices == std::vector<std::string>{"3x", "all"});
  CHECK(Contains(spec.json, "\"cdiVersion\": \"0.5.0\""));
}

TEST_CASE("delivery: additional_gids are the required groups, sorted and unique") {
  ocid::Plan p;
  for (auto [gid, required] : std::vector<std::pair<uint32_t, bool>>{
           {4242, true}, {7, false}, {100, true}, {4242, true}}) {
    ocid::GroupOp g;
    g.gid = gid;
    g.required = required;
    p.groups.push_back(g);
  }
  ocid::Delivery d;
  Error err;
  REQUIRE(ocid::DeliveryOf(p, "/", &d, &err));
  CHECK(d.additional_gids == std::vector<uint32_t>{100, 4242});
  REQUIRE(ocid::DeliveryOf(ocid::Plan{}, "/", &d, &err));
  CHECK(d.additional_gids.empty());
}

TEST_CASE("cdi: the shipped onload.json on a host without a shrub controller: as before") {
  // The inventory without what issue 30 added (the condition, the
  // /run/onload entries, the groups and the x4-shared profile) renders the
  // spec it always did; the shipped one renders the same but for the
  // x4-shared profile's device.
  std::ifstream in(std::string(OCID_SOURCE_DIR) + "/config/onload.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string shipped = ss.str();
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(shipped);
  j.erase("conditions");
  j["profiles"].erase("x4-shared");
  for (auto& [name, f] : j["inventory"].items()) {
    f.erase("groups");
    auto& dirs = f["directories"];
    for (size_t i = dirs.size(); i-- > 0;)
      if (dirs[i].is_object() && dirs[i].contains("create_if")) dirs.erase(i);
    if (dirs.empty()) f.erase("directories");
  }
  FakeHost h;
  h.Chr("/dev/onload", 240, 0)
      .Chr("/dev/onload_epoll", 241, 0)
      .Chr("/dev/sfc_char", 242, 0)
      .File("/usr/bin/onload")
      .File("/usr/bin/onload_stackdump")
      .File("/usr/sbin/onload_tool")
      .File("/usr/bin/zf_stackdump")
      .File("/usr/bin/zf_debug")
      .File("/usr/lib64/libonload.so")
      .File("/usr/lib64/libonload_ext.so")
      .File("/usr/lib64/libonload_zf.so")
      .Dir("/usr/libexec/onload/profiles")
      .Content("/sys/module/onload/version", "9.1.0\n");
  CdiSpec before = Build(Parse(j.dump()), h, "/");
  CdiSpec now = Build(Parse(shipped), h, "/");
  CHECK(now.devices ==
        std::vector<std::string>{"onload", "zf", "all", "onload-latency", "onload-x4-shared"});
  nlohmann::ordered_json n = nlohmann::ordered_json::parse(now.json);
  auto& devs = n["devices"];
  REQUIRE(devs.back()["name"] == "onload-x4-shared");
  CHECK(devs.back()["containerEdits"]["env"].back() == "EF_SHRUB_CONTROLLER=0");
  devs.erase(devs.size() - 1);
  CHECK(n.dump(2) + "\n" == before.json);
  CHECK(Contains(now.json, "\"cdiVersion\": \"0.3.0\""));
  CHECK_FALSE(Contains(now.json, "/run/onload"));
}
