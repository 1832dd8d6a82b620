// Inventory parsing: the seed format, the shipped files, every extension and
// every rejection; LoadInventoryDir on a real temporary directory.
#include <doctest/doctest.h>

#include "test_tree.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "inventory.h"
#include "nic.h"

using ocid::EntryKind;
using ocid::Error;
using ocid::Feature;
using ocid::Inventory;
using ocid::InventoryEntry;
using ocid::InventorySet;
using ocid::LoadInventoryDir;
using ocid::ParseInventory;

namespace {

// Verbatim from /work/shared/seeds/oci-decorator-notes.md (the NVIDIA POC).
const char kSeedNvidia[] = R"seed({
    "version": "396.26",
    "log_level": "LOG_DEBUG",
    "activation_flag": "OCI_NVIDIA",
    "driver_feature": ["compute", "utility"],

    "inventory": {
        "compute": {
            "devices": ["nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"],
            "binaries": ["/usr/bin/nvidia-cuda-mps-control", "/usr/bin/nvidia-cuda-ms-server"],
            "libraries": ["/usr/lib64/nvidia/libcuda.so",
                          "/usr/lib64/nvidia/libcuda.so.396.26",
                          "/usr/lib64/nvidia/libnvidia-opencl.so.396.26",
                          "/usr/lib64/nvidia/libnvidia-ptxjitcompiler.so.396.26",
                          "/usr/lib64/nvidia/libnvidia-fatbinaryloader.so.396.26",
                          "/usr/lib64/nvidia/libnvidia-compiler.so.396.26"],
            "directories": ["/usr/lib64/nvidia"],
            "miscellaneous": ["/etc/ld.so.conf.d/nvidia-lib64.conf"] 
        },
        "utility": {
            "devices": ["nvidia0", "nvidiactl"],
            "binaries": ["/usr/bin/nvidia-smi", "/usr/bin/nvidia-debugdump", "/usr/bin/nvidia-presistenced"],
            "libraries": ["/usr/lib64/nvidia/libnvidia-ml.so.396.26",
                          "/usr/lib64/nvidia/libnvidia-ml.so",
                          "/usr/lib64/nvidia/libnvidia-cfg.so.396.26"],
            "directories": ["/usr/lib64/nvidia"],
            "miscellaneous": ["/etc/ld.so.conf.d/nvidia-lib64.conf"] 
        }
    }
}
)seed";

// Verbatim from /work/shared/seeds/oci-decorator-notes.md (the Solarflare POC).
const char kSeedSolarflare[] = R"seed({
    "version": "201805",
    "log_level": "LOG_DEBUG",
    "activation_flag": "OCI_SOLARFLARE",
    "driver_feature": ["onload"],

    "inventory": {
        "onload": {
            "devices": ["onload", "onload_epoll", "sfc_char"],
            "binaries": ["/usr/bin/onload", "/usr/bin/sfnt-pingpong", "/usr/sbin/onload_tool", "/usr/lib64/libonload.so"],
            "libraries": ["/usr/lib64/libonload_ext.so",
                          "/usr/lib64/libonload_ext.so.1.1.0",
                          "/usr/lib64/libonload_zf.so",
                          "/usr/lib64/libonload_zf.so.1.1.1",
                          "/usr/lib64/libonload_zf_static.a",
                          "/usr/lib64/libsfcaffinity.so"],
            "directories": ["/usr/libexec/onload", "/usr/libexec/onload/profiles", "/usr/libexec/onload/apps"],
            "miscellaneous": ["/usr/libexec/onload/profiles/latency.opf", "/usr/libexec/onload/profiles/latency-best.opf"]
        }
    }
}
)seed";

const std::string kFile = "/etc/oci-decorator/oci-decorator.d/test.json";

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

std::string ReadSource(const std::string& rel) {
  std::ifstream in(std::string(OCID_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t CountCategory(const Feature& f, const std::string& category) {
  return static_cast<size_t>(
      std::count_if(f.entries.begin(), f.entries.end(),
                    [&](const InventoryEntry& e) { return e.category == category; }));
}

std::vector<const InventoryEntry*> Entries(const Feature& f, const std::string& category) {
  std::vector<const InventoryEntry*> out;
  for (const auto& e : f.entries)
    if (e.category == category) out.push_back(&e);
  return out;
}

// A minimal inventory with one feature "f" whose body is `feature`.
std::string WithFeature(const std::string& feature) {
  return R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":)" + feature + "}}";
}

Inventory MustParse(const std::string& json, const std::string& file = kFile) {
  Inventory inv;
  Error err;
  bool ok = ParseInventory(json, file, &inv, &err);
  CAPTURE(json);
  REQUIRE_MESSAGE(ok, err.Line());
  return inv;
}

// Expects a rejection whose one-line message names the file and the key.
void ExpectReject(const std::string& json, const std::string& key, const std::string& also = "") {
  Inventory inv;
  Error err;
  CAPTURE(json);
  CHECK_FALSE(ParseInventory(json, kFile, &inv, &err));
  const std::string line = err.Line();
  CAPTURE(line);
  CHECK(Contains(line, kFile));
  CHECK(Contains(line, "\"" + key + "\""));
  if (!also.empty()) CHECK(Contains(line, also));
}

}  // namespace

TEST_SUITE("inventory") {
  TEST_CASE("seed NVIDIA inventory from the notes loads unchanged") {
    Inventory inv = MustParse(kSeedNvidia);
    CHECK(inv.file == kFile);
    CHECK(inv.version == "396.26");
    CHECK(inv.activation_flag == "OCI_NVIDIA");
    CHECK(inv.driver_features == std::vector<std::string>{"compute", "utility"});
    REQUIRE(inv.features.size() == 2);
    CHECK(inv.features[0].name == "compute");
    CHECK(inv.features[1].name == "utility");

    const Feature* compute = inv.FindFeature("compute");
    REQUIRE(compute != nullptr);
    CHECK(compute->entries.size() == 14);
    CHECK(CountCategory(*compute, "devices") == 4);
    CHECK(CountCategory(*compute, "binaries") == 2);
    CHECK(CountCategory(*compute, "libraries") == 6);
    CHECK(CountCategory(*compute, "directories") == 1);
    CHECK(CountCategory(*compute, "miscellaneous") == 1);
    CHECK(compute->preload.empty());

    const Feature* utility = inv.FindFeature("utility");
    REQUIRE(utility != nullptr);
    CHECK(utility->entries.size() == 10);
    CHECK(CountCategory(*utility, "devices") == 2);
    CHECK(CountCategory(*utility, "binaries") == 3);
    CHECK(CountCategory(*utility, "libraries") == 3);
    CHECK(CountCategory(*utility, "directories") == 1);
    CHECK(CountCategory(*utility, "miscellaneous") == 1);

    CHECK(inv.FindFeature("all") == nullptr);

    for (const auto& f : inv.features)
      for (const auto& e : f.entries) {
        CAPTURE(e.category);
        REQUIRE(e.sources.size() == 1);
        CHECK_FALSE(e.optional);
        CHECK(e.target.empty());
        CHECK(e.target_dir.empty());
        if (e.category == "devices") {
          CHECK(e.kind == EntryKind::kDevice);
          CHECK(e.sources[0][0] != '/');
        } else if (e.category == "directories") {
          CHECK(e.kind == EntryKind::kDirectory);
        } else {
          CHECK(e.kind == EntryKind::kFile);
        }
      }
    auto devs = Entries(*compute, "devices");
    std::vector<std::string> names;
    for (auto* e : devs) names.push_back(e->sources[0]);
    CHECK(names ==
          std::vector<std::string>{"nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"});
    auto dirs = Entries(*utility, "directories");
    REQUIRE(dirs.size() == 1);
    CHECK(dirs[0]->sources[0] == "/usr/lib64/nvidia");
  }

  TEST_CASE("seed Solarflare inventory from the notes loads unchanged") {
    Inventory inv = MustParse(kSeedSolarflare);
    CHECK(inv.version == "201805");
    CHECK(inv.activation_flag == "OCI_SOLARFLARE");
    CHECK(inv.driver_features == std::vector<std::string>{"onload"});
    REQUIRE(inv.features.size() == 1);
    const Feature& f = inv.features[0];
    CHECK(f.name == "onload");
    CHECK(f.entries.size() == 18);
    CHECK(CountCategory(f, "devices") == 3);
    CHECK(CountCategory(f, "binaries") == 4);
    CHECK(CountCategory(f, "libraries") == 6);
    CHECK(CountCategory(f, "directories") == 3);
    CHECK(CountCategory(f, "miscellaneous") == 2);
    CHECK(f.preload.empty());
    auto libs = Entries(f, "libraries");
    REQUIRE(libs.size() == 6);
    CHECK(libs[0]->sources == std::vector<std::string>{"/usr/lib64/libonload_ext.so"});
    CHECK(libs[5]->sources == std::vector<std::string>{"/usr/lib64/libsfcaffinity.so"});
    auto misc = Entries(f, "miscellaneous");
    REQUIRE(misc.size() == 2);
    CHECK(misc[1]->sources[0] == "/usr/libexec/onload/profiles/latency-best.opf");
  }

  TEST_CASE("shipped config/onload.json") {
    Inventory inv = MustParse(ReadSource("config/onload.json"), "onload.json");
    CHECK(inv.activation_flag == "OCI_ONLOAD");
    CHECK(inv.version == "1");
    CHECK(inv.driver_features == std::vector<std::string>{"onload", "zf"});
    const Feature* onload = inv.FindFeature("onload");
    const Feature* zf = inv.FindFeature("zf");
    REQUIRE(onload);
    REQUIRE(zf);
    CHECK(onload->entries.size() == 10);
    CHECK(CountCategory(*onload, "devices") == 3);
    CHECK(CountCategory(*onload, "binaries") == 3);
    CHECK(CountCategory(*onload, "libraries") == 2);
    CHECK(CountCategory(*onload, "directories") == 2);
    CHECK(onload->preload == std::vector<std::string>{"libonload.so"});
    auto bins = Entries(*onload, "binaries");
    REQUIRE(bins.size() == 3);
    // Every entry also accepts the /opt/onload layout of AMD's Kubernetes
    // operator (onload_install with i_prefix=/opt/onload: integration
    // onload_opt_layout cites the sources), as the last alternative.
    CHECK(bins[0]->sources ==
          std::vector<std::string>{"/usr/bin/onload", "/opt/onload/usr/bin/onload"});
    CHECK(bins[2]->sources == std::vector<std::string>{"/usr/sbin/onload_tool", "/sbin/onload_tool",
                                                       "/opt/onload/sbin/onload_tool"});
    for (const Feature* f : {onload, zf})
      for (const auto& e : f->entries)
        if (e.kind != EntryKind::kDevice && e.create_if.empty())
          CHECK_MESSAGE(e.sources.back().rfind("/opt/onload/", 0) == 0, e.sources.front());
    // X3/X4's shrub controller (issue 30): /run/onload, a path compiled into
    // Onload, created when the module names an installed controller; the
    // client group when the controller's mode admits no others.
    for (const Feature* f : {onload, zf}) {
      auto dirs = Entries(*f, "directories");
      REQUIRE_FALSE(dirs.empty());
      CHECK(dirs.back()->sources == std::vector<std::string>{"/run/onload"});
      CHECK(dirs.back()->create_if == "shrub_controller");
      CHECK(dirs.back()->optional);
      REQUIRE(f->groups.size() == 1);
      CHECK(f->groups[0].gid_file == "/sys/module/onload/parameters/shrub_controller_client_gid");
      CHECK(f->groups[0].default_mode == 0666);
      CHECK(f->groups[0].optional);
    }
    REQUIRE(inv.conditions.count("shrub_controller") == 1);
    CHECK(inv.conditions["shrub_controller"].exists_named_in ==
          std::vector<std::string>{"/sys/module/onload/parameters/shrub_controller_path"});
    CHECK(inv.conditions["shrub_controller"].description.find("X3/X4") != std::string::npos);
    CHECK(inv.profiles["x4-shared"] == ocid::EnvList{{"EF_SHRUB_CONTROLLER", "0"}});
    CHECK(inv.profile_dirs == std::vector<std::string>{"/usr/libexec/onload/profiles",
                                                       "/opt/onload/usr/libexec/onload/profiles"});
    CHECK(inv.version_lock.library.back() == "/opt/onload/usr/lib64/libonload.so");
    auto libs = Entries(*onload, "libraries");
    REQUIRE(libs.size() == 2);
    CHECK(libs[0]->sources == std::vector<std::string>{"/usr/lib64/libonload.so*",
                                                       "/usr/lib/x86_64-linux-gnu/libonload.so*",
                                                       "/opt/onload/usr/lib64/libonload.so*"});
    CHECK(zf->entries.size() == 5);
    CHECK(CountCategory(*zf, "devices") == 1);
    CHECK(Entries(*zf, "devices")[0]->sources[0] == "sfc_char");
    CHECK(zf->preload.empty());
    // Both features need a Solarflare or Xilinx/AMD NIC (kOnloadNicVendors).
    CHECK(inv.needs_nic.pci_vendors == std::vector<std::string>(std::begin(ocid::kOnloadNicVendors),
                                                                std::end(ocid::kOnloadNicVendors)));
    CHECK(inv.needs_nic.features.empty());
    CHECK(inv.needs_nic.Needs({"onload"}));
    CHECK(inv.needs_nic.Needs({"zf"}));
  }

  TEST_CASE("shipped config/rdma.json and nvidia.json need no NIC") {
    CHECK_FALSE(MustParse(ReadSource("config/rdma.json"), "rdma.json").needs_nic.configured());
    CHECK_FALSE(MustParse(ReadSource("config/nvidia.json"), "nvidia.json").needs_nic.configured());
  }

  TEST_CASE("needs_nic: vendors and features, and its errors") {
    CHECK_FALSE(MustParse(WithFeature("{}")).needs_nic.Needs({"f"}));
    auto with = [](const std::string& need) {
      return R"({"activation_flag":"OCI_T","driver_feature":["f","g"],"inventory":{"f":{},"g":{}},)"
             R"("needs_nic":)" +
             need + "}";
    };
    Inventory inv =
        MustParse(with(R"({"pci_vendors":["0x1924","0x15b3"],"features":["g"],"x-why":"g"})"));
    CHECK(inv.needs_nic.pci_vendors == std::vector<std::string>{"0x1924", "0x15b3"});
    CHECK_FALSE(inv.needs_nic.Needs({"f"}));
    CHECK(inv.needs_nic.Needs({"f", "g"}));
    CHECK(MustParse(with(R"({"pci_vendors":["0x10ee"]})")).needs_nic.Needs({"f"}));  // default: all

    ExpectReject(with("true"), "needs_nic", "must be an object");
    ExpectReject(with("{}"), "needs_nic.pci_vendors", "is missing");
    ExpectReject(with(R"({"pci_vendors":[]})"), "needs_nic.pci_vendors", "non-empty");
    ExpectReject(with(R"({"pci_vendors":"0x1924"})"), "needs_nic.pci_vendors", "non-empty");
    ExpectReject(with(R"({"pci_vendors":["0x1924","0x1924"]})"), "needs_nic.pci_vendors", "twice");
    for (const char* bad : {R"("0X1924")", R"("0x19A4")", R"("1924")", R"("0x19245")", R"("0x192")",
                            R"("Solarflare")", "6436"})
      ExpectReject(with(std::string(R"({"pci_vendors":[)") + bad + "]}"), "needs_nic.pci_vendors",
                   "0x and four lower-case hex digits");
    ExpectReject(with(R"({"pci_vendors":["0x1924"],"features":["h"]})"), "needs_nic.features",
                 "not in driver_feature");
    ExpectReject(with(R"({"pci_vendors":["0x1924"],"features":[]})"), "needs_nic.features");
    ExpectReject(with(R"({"pci_vendors":["0x1924"],"vendors":["0x1924"]})"), "needs_nic.vendors",
                 "unknown key");
  }

  TEST_CASE("conditions: exists and exists_named_in, string or list, and their errors") {
    auto with = [](const std::string& conds, const std::string& feature = "{}") {
      return R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":)" + feature +
             R"(},"conditions":)" + conds + "}";
    };
    Inventory inv = MustParse(
        with(R"({"a":{"exists":"/x/y"},"b.c-1":{"exists":["/p","/q"],"exists_named_in":"/n",)"
             R"("x-why":"comment","description":"what it means"}})"));
    REQUIRE(inv.conditions.size() == 2);
    CHECK(inv.conditions["a"].name == "a");
    CHECK(inv.conditions["a"].exists == std::vector<std::string>{"/x/y"});
    CHECK(inv.conditions["a"].exists_named_in.empty());
    CHECK(inv.conditions["b.c-1"].exists == std::vector<std::string>{"/p", "/q"});
    CHECK(inv.conditions["b.c-1"].exists_named_in == std::vector<std::string>{"/n"});
    CHECK(inv.conditions["a"].description.empty());
    CHECK(inv.conditions["b.c-1"].description == "what it means");
    CHECK(MustParse(WithFeature("{}")).conditions.empty());

    ExpectReject(with("[]"), "conditions", "must be an object");
    ExpectReject(with(R"({"a":{}})"), "conditions.a", "needs \"exists\" or \"exists_named_in\"");
    ExpectReject(with(R"({"a":"/x"})"), "conditions.a", "must be an object");
    ExpectReject(with(R"({"a b":{"exists":"/x"}})"), "conditions.a b", "condition name");
    ExpectReject(with(R"({"":{"exists":"/x"}})"), "conditions.", "condition name");
    ExpectReject(with(R"({"a":{"exists":"x/y"}})"), "conditions.a.exists", "absolute");
    ExpectReject(with(R"({"a":{"exists":"/x/*"}})"), "conditions.a.exists", "glob");
    ExpectReject(with(R"({"a":{"exists":[]}})"), "conditions.a.exists", "non-empty");
    ExpectReject(with(R"({"a":{"exists_named_in":["/x/../y"]}})"), "conditions.a.exists_named_in");
    ExpectReject(with(R"({"a":{"exists":"/x","exist":"/y"}})"), "conditions.a.exist",
                 "unknown key");
    ExpectReject(with(R"({"a":{"exists":"/x","description":1}})"), "conditions.a.description",
                 "must be a string");
    ExpectReject(with(R"({"a":{"exists":"/x","description":")" + std::string(1025, 'd') + R"("}})"),
                 "conditions.a.description", "at most 1024 bytes");
    ExpectReject(with(R"({"a":{"description":"only words"}})"), "conditions.a",
                 "needs \"exists\" or \"exists_named_in\"");
  }

  TEST_CASE("create_if: a declared condition on one plain directory source") {
    auto with = [](const std::string& feature) {
      return R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":)" + feature +
             R"(},"conditions":{"c":{"exists":"/x"}}})";
    };
    Inventory inv = MustParse(
        with(R"({"directories":[{"source":"/run/onload","optional":true,"create_if":"c"}]})"));
    REQUIRE(inv.features[0].entries.size() == 1);
    CHECK(inv.features[0].entries[0].create_if == "c");
    CHECK(inv.features[0].entries[0].optional);
    CHECK(
        MustParse(with(R"({"directories":["/run/x"]})")).features[0].entries[0].create_if.empty());

    ExpectReject(with(R"({"directories":[{"source":"/run/x","create_if":"d"}]})"),
                 "inventory.f.directories[0].create_if", "conditions.d is not declared");
    ExpectReject(WithFeature(R"({"directories":["/a",{"source":"/run/x","create_if":"c"}]})"),
                 "inventory.f.directories[1].create_if", "not declared");
    ExpectReject(with(R"({"libraries":[{"source":"/run/x","create_if":"c"}]})"),
                 "inventory.f.libraries[0].create_if", "only for \"directories\"");
    ExpectReject(with(R"({"directories":[{"source":["/run/x","/run/y"],"create_if":"c"}]})"),
                 "inventory.f.directories[0].create_if", "exactly one source");
    ExpectReject(with(R"({"directories":[{"source":"/run/x*","create_if":"c"}]})"),
                 "inventory.f.directories[0].create_if", "glob");
    for (const char* banned : {"/proc/x", "/sys", "/dev/shm/x"})
      ExpectReject(
          with(std::string(R"({"directories":[{"source":")") + banned + R"(","create_if":"c"}]})"),
          "inventory.f.directories[0].create_if", "cannot create under");
    ExpectReject(with(R"({"directories":[{"source":"/","create_if":"c"}]})"),
                 "inventory.f.directories[0]", "\"/\"");
    ExpectReject(with(R"({"directories":[{"source":"/run/x","create_if":1}]})"),
                 "inventory.f.directories[0].create_if", "name of a condition");
    // A directory merely starting with a banned name is fine.
    CHECK(MustParse(with(R"({"directories":[{"source":"/device","create_if":"c"}]})"))
              .features[0]
              .entries[0]
              .create_if == "c");
  }

  TEST_CASE("groups: gid_file, mode_file, default_mode, optional, and their errors") {
    Inventory inv = MustParse(
        WithFeature(R"({"groups":[{"gid_file":"/sys/g","mode_file":"/sys/m","default_mode":"0666",)"
                    R"("optional":true,"x-why":"c"},{"gid_file":"/g2"}]})"));
    REQUIRE(inv.features[0].groups.size() == 2);
    const auto& g = inv.features[0].groups[0];
    CHECK(g.gid_file == "/sys/g");
    CHECK(g.mode_file == "/sys/m");
    CHECK(g.default_mode == 0666);
    CHECK(g.has_default_mode);
    CHECK(g.optional);
    const auto& h = inv.features[0].groups[1];
    CHECK(h.mode_file.empty());
    CHECK_FALSE(h.has_default_mode);
    CHECK_FALSE(h.optional);
    CHECK(MustParse(WithFeature(R"({"groups":[{"gid_file":"/g","default_mode":"660"}]})"))
              .features[0]
              .groups[0]
              .default_mode == 0660);

    ExpectReject(WithFeature(R"({"groups":{}})"), "inventory.f.groups", "must be a list");
    ExpectReject(WithFeature(R"({"groups":["/g"]})"), "inventory.f.groups[0]", "must be an object");
    ExpectReject(WithFeature(R"({"groups":[{"mode_file":"/m"}]})"),
                 "inventory.f.groups[0].gid_file", "is missing");
    ExpectReject(WithFeature(R"({"groups":[{"gid_file":"g"}]})"), "inventory.f.groups[0].gid_file",
                 "absolute");
    for (const char* bad : {R"("0968")", R"("")", R"("rw")", R"("017777")", "438"})
      ExpectReject(
          WithFeature(std::string(R"({"groups":[{"gid_file":"/g","default_mode":)") + bad + "}]}"),
          "inventory.f.groups[0].default_mode", "octal");
    ExpectReject(WithFeature(R"({"groups":[{"gid_file":"/g","optional":1}]})"),
                 "inventory.f.groups[0].optional");
    ExpectReject(WithFeature(R"({"groups":[{"gid_file":"/g","gid":4242}]})"),
                 "inventory.f.groups[0].gid", "unknown key");
  }

  TEST_CASE("shipped config/rdma.json") {
    Inventory inv = MustParse(ReadSource("config/rdma.json"), "rdma.json");
    CHECK(inv.activation_flag == "OCI_RDMA");
    REQUIRE(inv.features.size() == 1);
    const Feature& f = inv.features[0];
    CHECK(f.name == "verbs");
    REQUIRE(f.entries.size() == 3);
    CHECK(f.entries[0].sources[0] == "infiniband/uverbs*");
    CHECK_FALSE(f.entries[0].optional);
    CHECK(f.entries[1].sources[0] == "infiniband/rdma_cm");
    CHECK(f.entries[1].optional);
    CHECK(f.entries[2].sources[0] == "knem");
    CHECK(f.entries[2].optional);
    for (const auto& e : f.entries) CHECK(e.kind == EntryKind::kDevice);
  }

  TEST_CASE("shipped config/nvidia.json") {
    Inventory inv = MustParse(ReadSource("config/nvidia.json"), "nvidia.json");
    CHECK(inv.activation_flag == "OCI_NVIDIA");
    CHECK(inv.driver_features == std::vector<std::string>{"compute", "utility"});
    const Feature* compute = inv.FindFeature("compute");
    const Feature* utility = inv.FindFeature("utility");
    REQUIRE(compute);
    REQUIRE(utility);
    CHECK(compute->entries.size() == 10);
    CHECK(utility->entries.size() == 7);
    auto devs = Entries(*compute, "devices");
    REQUIRE(devs.size() == 4);
    CHECK(devs[1]->sources[0] == "nvidia[0-9]*");
    CHECK(devs[3]->optional);
    auto libs = Entries(*compute, "libraries");
    REQUIRE(libs.size() == 4);
    CHECK_FALSE(libs[0]->optional);
    CHECK(libs[0]->sources.size() == 2);
    CHECK(libs[1]->optional);
  }

  TEST_CASE("object entry with alternatives, optional, target") {
    Inventory inv = MustParse(WithFeature(R"({
    "libraries": [{"source": ["/usr/lib64/libx.so.1", "/usr/lib/x86_64-linux-gnu/libx.so.1"],
                   "target": "/opt/x/libx.so.1", "optional": true}],
    "binaries": [{"source": "/usr/bin/x", "optional": false}]
  })"));
    const Feature& f = inv.features.at(0);
    auto libs = Entries(f, "libraries");
    REQUIRE(libs.size() == 1);
    CHECK(libs[0]->kind == EntryKind::kFile);
    CHECK(libs[0]->sources ==
          std::vector<std::string>{"/usr/lib64/libx.so.1", "/usr/lib/x86_64-linux-gnu/libx.so.1"});
    CHECK(libs[0]->target == "/opt/x/libx.so.1");
    CHECK(libs[0]->target_dir.empty());
    CHECK(libs[0]->optional);
    auto bins = Entries(f, "binaries");
    REQUIRE(bins.size() == 1);
    CHECK(bins[0]->sources == std::vector<std::string>{"/usr/bin/x"});
    CHECK_FALSE(bins[0]->optional);
  }

  TEST_CASE("glob source with target_dir") {
    Inventory inv = MustParse(WithFeature(
        R"({"libraries": [{"source": "/usr/lib64/libonload.so*", "target_dir": "/usr/lib"}]})"));
    const InventoryEntry& e = inv.features.at(0).entries.at(0);
    CHECK(e.sources == std::vector<std::string>{"/usr/lib64/libonload.so*"});
    CHECK(e.target_dir == "/usr/lib");
    CHECK(e.target.empty());
  }

  TEST_CASE("glob forms in the last component are accepted") {
    Inventory inv = MustParse(WithFeature(
        R"({"libraries": ["/usr/lib64/lib?.so", "/usr/lib64/lib[a-z].so", "/usr/lib64/*"]})"));
    CHECK(inv.features.at(0).entries.size() == 3);
  }

  TEST_CASE("devices: names under /dev, leading /dev/ stripped") {
    Inventory inv = MustParse(WithFeature(R"({"devices": [
      "/dev/onload", "infiniband/uverbs0", "/dev/infiniband/uverbs*",
      {"source": ["/dev/nvidia-uvm", "nvidia-uvm-alt"], "optional": true}]})"));
    const Feature& f = inv.features.at(0);
    REQUIRE(f.entries.size() == 4);
    CHECK(f.entries[0].kind == EntryKind::kDevice);
    CHECK(f.entries[0].sources[0] == "onload");
    CHECK(f.entries[1].sources[0] == "infiniband/uverbs0");
    CHECK(f.entries[2].sources[0] == "infiniband/uverbs*");
    CHECK(f.entries[3].sources == std::vector<std::string>{"nvidia-uvm", "nvidia-uvm-alt"});
    CHECK(f.entries[3].optional);
  }

  TEST_CASE("directories entries are kDirectory") {
    Inventory inv = MustParse(WithFeature(R"({"directories": ["/usr/libexec/onload/profiles"]})"));
    const InventoryEntry& e = inv.features.at(0).entries.at(0);
    CHECK(e.kind == EntryKind::kDirectory);
    CHECK(e.category == "directories");
  }

  TEST_CASE("preload: names and absolute container paths") {
    Inventory inv = MustParse(WithFeature(
        R"({"libraries": ["/usr/lib64/libonload.so"], "preload": ["libonload.so", "/usr/lib64/libonload.so"]})"));
    CHECK(inv.features.at(0).preload ==
          std::vector<std::string>{"libonload.so", "/usr/lib64/libonload.so"});
  }

  TEST_CASE("empty feature object is accepted") {
    Inventory inv = MustParse(WithFeature("{}"));
    REQUIRE(inv.features.size() == 1);
    CHECK(inv.features[0].entries.empty());
  }

  TEST_CASE("numeric version is accepted as text") {
    Inventory inv = MustParse(
        R"({"version": 2, "activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{}}})");
    CHECK(inv.version == "2");
  }

  TEST_CASE("features are kept in driver_feature order") {
    Inventory inv =
        MustParse(R"({"activation_flag":"OCI_T","driver_feature":["zeta","alpha","mid"],)"
                  R"("inventory":{"alpha":{},"mid":{},"zeta":{}}})");
    REQUIRE(inv.features.size() == 3);
    CHECK(inv.features[0].name == "zeta");
    CHECK(inv.features[1].name == "alpha");
    CHECK(inv.features[2].name == "mid");
  }

  TEST_CASE("x- and _ keys are ignored at every level") {
    Inventory inv = MustParse(R"({
    "x-comment": "top", "_note": {"anything": [1, 2]},
    "activation_flag": "OCI_T", "driver_feature": ["f"],
    "inventory": {
      "_about": "ignored",
      "x-more": 1,
      "f": {
        "x-why": "because",
        "_n": null,
        "binaries": [{"source": "/usr/bin/x", "x-note": "n", "_k": 1}]
      }
    }
  })");
    REQUIRE(inv.features.size() == 1);
    REQUIRE(inv.features[0].entries.size() == 1);
    CHECK(inv.features[0].entries[0].sources[0] == "/usr/bin/x");
  }

  TEST_CASE("rejects: not JSON, not an object") {
    Inventory inv;
    Error err;
    CHECK_FALSE(ParseInventory("{ oops", kFile, &inv, &err));
    CHECK(Contains(err.Line(), kFile));
    CHECK_FALSE(ParseInventory("[]", kFile, &inv, &err));
    CHECK(Contains(err.Line(), kFile));
  }

  TEST_CASE("rejects an unknown key") {
    ExpectReject(
        R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{}},"activation_flags":"X"})",
        "activation_flags", "unknown key");
    ExpectReject(WithFeature(R"({"library": ["/usr/lib/x"]})"), "inventory.f.library",
                 "unknown key");
    ExpectReject(WithFeature(R"({"binaries": [{"source": "/usr/bin/x", "optinal": true}]})"),
                 "inventory.f.binaries[0].optinal", "unknown key");
  }

  TEST_CASE("activation_policy: defaults, every key, and its errors") {
    Inventory def = MustParse(WithFeature("{}"));
    CHECK(def.policy.accept_env);
    CHECK(def.policy.accept_annotation);
    CHECK(def.policy.require_annotations.empty());
    CHECK_FALSE(def.policy.refuse_privileged);

    auto with_policy = [](const std::string& policy) {
      return R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{}},)"
             R"("activation_policy":)" +
             policy + "}";
    };
    Inventory inv = MustParse(
        with_policy(R"({"sources":["annotation"],"require_annotations":{"example.com/ok":"yes"},)"
                    R"("refuse_privileged":true,"x-why":"multi-tenant"})"));
    CHECK_FALSE(inv.policy.accept_env);
    CHECK(inv.policy.accept_annotation);
    CHECK(inv.policy.require_annotations ==
          std::map<std::string, std::string>{{"example.com/ok", "yes"}});
    CHECK(inv.policy.refuse_privileged);

    ExpectReject(with_policy("[]"), "activation_policy", "must be an object");
    ExpectReject(with_policy(R"({"sources":[]})"), "activation_policy.sources", "non-empty");
    ExpectReject(with_policy(R"({"sources":["env","label"]})"), "activation_policy.sources");
    ExpectReject(with_policy(R"({"sources":"env"})"), "activation_policy.sources");
    ExpectReject(with_policy(R"({"require_annotations":["a"]})"),
                 "activation_policy.require_annotations");
    ExpectReject(with_policy(R"({"require_annotations":{"a":true}})"),
                 "activation_policy.require_annotations");
    ExpectReject(with_policy(R"({"refuse_privileged":"yes"})"),
                 "activation_policy.refuse_privileged");
    ExpectReject(with_policy(R"({"refuse_priviledged":true})"),
                 "activation_policy.refuse_priviledged", "unknown key");
  }

  TEST_CASE("rejects a missing activation_flag") {
    ExpectReject(R"({"driver_feature":["f"],"inventory":{"f":{}}})", "activation_flag", "missing");
  }

  TEST_CASE("rejects a bad activation_flag") {
    for (const char* flag : {R"("OCI-ONLOAD")", R"("1OCI")", R"("OCI ONLOAD")", R"("")",
                             R"("OCI=1")", "5", "null", R"(["OCI_X"])"}) {
      CAPTURE(flag);
      ExpectReject(std::string(R"({"activation_flag":)") + flag +
                       R"(,"driver_feature":["f"],"inventory":{"f":{}}})",
                   "activation_flag");
    }
  }

  TEST_CASE("accepts flag names with digits and underscores") {
    Inventory inv =
        MustParse(R"({"activation_flag":"_OCI_X2","driver_feature":["f"],"inventory":{"f":{}}})");
    CHECK(inv.activation_flag == "_OCI_X2");
  }

  TEST_CASE("rejects an empty or missing driver_feature") {
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":[],"inventory":{}})",
                 "driver_feature");
    ExpectReject(R"({"activation_flag":"OCI_T","inventory":{}})", "driver_feature", "missing");
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":"f","inventory":{"f":{}}})",
                 "driver_feature");
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":[""],"inventory":{}})",
                 "driver_feature");
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":["a b"],"inventory":{}})",
                 "driver_feature");
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":["a,b"],"inventory":{}})",
                 "driver_feature");
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":[1],"inventory":{}})",
                 "driver_feature");
  }

  TEST_CASE("rejects a duplicate feature") {
    ExpectReject(
        R"({"activation_flag":"OCI_T","driver_feature":["f","g","f"],"inventory":{"f":{},"g":{}}})",
        "driver_feature", "\"f\"");
  }

  TEST_CASE("rejects reserved feature names") {
    for (const char* name : {"all", "none", "void", "0", "false"}) {
      CAPTURE(name);
      ExpectReject(std::string(R"({"activation_flag":"OCI_T","driver_feature":[")") + name +
                       R"("],"inventory":{")" + name + R"(":{}}})",
                   "driver_feature");
    }
  }

  // Activation values are matched case-insensitively (OCI_X=ALL means all,
  // OCI_X=None means off), so the reserved words must be too: a feature named
  // "None" could never be requested on its own.
  TEST_CASE("rejects reserved feature names in any letter case") {
    for (const char* name : {"ALL", "All", "None", "VOID", "False"}) {
      CAPTURE(name);
      ExpectReject(std::string(R"({"activation_flag":"OCI_T","driver_feature":[")") + name +
                       R"("],"inventory":{")" + name + R"(":{}}})",
                   "driver_feature");
    }
  }

  TEST_CASE("rejects an inventory key not in driver_feature") {
    ExpectReject(
        R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{},"extra":{}}})",
        "inventory.extra", "driver_feature");
  }

  TEST_CASE("rejects a driver_feature without inventory") {
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":["f","g"],"inventory":{"f":{}}})",
                 "inventory.g", "missing");
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":["f"]})", "inventory", "missing");
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":[]})",
                 "inventory");
    ExpectReject(R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":[]}})",
                 "inventory.f");
  }

  TEST_CASE("rejects a relative path in binaries") {
    ExpectReject(WithFeature(R"({"binaries": ["/usr/bin/ok", "usr/bin/onload"]})"),
                 "inventory.f.binaries[1]", "usr/bin/onload");
    ExpectReject(WithFeature(R"({"libraries": [{"source": ["/ok/lib.so", "lib.so"]}]})"),
                 "inventory.f.libraries[0]", "lib.so");
  }

  TEST_CASE("rejects a .. or . component") {
    ExpectReject(WithFeature(R"({"libraries": ["/usr/lib64/../../etc/shadow"]})"),
                 "inventory.f.libraries[0]", "..");
    ExpectReject(WithFeature(R"({"miscellaneous": ["/etc/./x"]})"), "inventory.f.miscellaneous[0]");
    ExpectReject(WithFeature(R"({"devices": ["../sda"]})"), "inventory.f.devices[0]");
    ExpectReject(WithFeature(R"({"devices": ["/dev/../etc/shadow"]})"), "inventory.f.devices[0]");
    ExpectReject(WithFeature(R"({"directories": ["/usr/.."]})"), "inventory.f.directories[0]");
  }

  TEST_CASE("rejects empty components, trailing slash, / and an empty path") {
    ExpectReject(WithFeature(R"({"binaries": ["/usr//bin/x"]})"), "inventory.f.binaries[0]");
    ExpectReject(WithFeature(R"({"directories": ["/usr/lib/"]})"), "inventory.f.directories[0]");
    ExpectReject(WithFeature(R"({"directories": ["/"]})"), "inventory.f.directories[0]");
    ExpectReject(WithFeature(R"({"binaries": [""]})"), "inventory.f.binaries[0]");
  }

  TEST_CASE("rejects a device outside /dev") {
    ExpectReject(WithFeature(R"({"devices": ["/etc/shadow"]})"), "inventory.f.devices[0]");
    ExpectReject(WithFeature(R"({"devices": ["/dev"]})"), "inventory.f.devices[0]");
  }

  TEST_CASE("rejects a glob in a directory component") {
    ExpectReject(WithFeature(R"({"libraries": ["/usr/lib*/libonload.so"]})"),
                 "inventory.f.libraries[0]", "glob");
    ExpectReject(WithFeature(R"({"devices": ["infiniband*/uverbs0"]})"), "inventory.f.devices[0]",
                 "glob");
    ExpectReject(
        WithFeature(R"({"libraries": [{"source": ["/usr/lib64/x.so", "/usr/[a-z]/x.so"]}]})"),
        "inventory.f.libraries[0]", "glob");
  }

  TEST_CASE("rejects target with a glob source") {
    ExpectReject(
        WithFeature(
            R"({"libraries": [{"source": "/usr/lib64/libonload.so*", "target": "/usr/lib/libonload.so"}]})"),
        "inventory.f.libraries[0].target", "glob");
    ExpectReject(
        WithFeature(
            R"({"libraries": [{"source": ["/usr/lib64/libx.so", "/usr/lib/libx.so*"], "target": "/usr/lib/libx.so"}]})"),
        "inventory.f.libraries[0].target", "glob");
  }

  TEST_CASE("rejects target and target_dir together") {
    ExpectReject(
        WithFeature(
            R"({"libraries": [{"source": "/usr/lib64/libx.so", "target": "/a/libx.so", "target_dir": "/a"}]})"),
        "inventory.f.libraries[0]", "target_dir");
  }

  TEST_CASE("rejects targets under /proc or /sys, relative or unnormalised") {
    ExpectReject(
        WithFeature(
            R"({"miscellaneous": [{"source": "/etc/x", "target": "/proc/sys/kernel/core_pattern"}]})"),
        "inventory.f.miscellaneous[0].target", "/proc");
    ExpectReject(WithFeature(R"({"miscellaneous": [{"source": "/etc/x", "target": "/proc"}]})"),
                 "inventory.f.miscellaneous[0].target", "/proc");
    ExpectReject(
        WithFeature(R"({"miscellaneous": [{"source": "/etc/x", "target": "/sys/kernel/x"}]})"),
        "inventory.f.miscellaneous[0].target", "/sys");
    ExpectReject(
        WithFeature(R"({"libraries": [{"source": "/usr/lib64/l*", "target_dir": "/proc/self"}]})"),
        "inventory.f.libraries[0].target_dir", "/proc");
    ExpectReject(WithFeature(R"({"miscellaneous": [{"source": "/etc/x", "target": "etc/x"}]})"),
                 "inventory.f.miscellaneous[0].target");
    ExpectReject(
        WithFeature(R"({"miscellaneous": [{"source": "/etc/x", "target": "/etc/../proc/x"}]})"),
        "inventory.f.miscellaneous[0].target");
    ExpectReject(WithFeature(R"({"miscellaneous": [{"source": "/etc/x", "target": "/"}]})"),
                 "inventory.f.miscellaneous[0].target");
    ExpectReject(WithFeature(R"({"miscellaneous": [{"source": "/etc/x", "target": 5}]})"),
                 "inventory.f.miscellaneous[0].target");
  }

  TEST_CASE("a target merely starting with /proc or /sys is fine") {
    Inventory inv = MustParse(WithFeature(
        R"({"miscellaneous": [{"source": "/etc/x", "target": "/procfs/x"}, {"source": "/etc/y", "target": "/system/y"}]})"));
    CHECK(inv.features[0].entries[0].target == "/procfs/x");
    CHECK(inv.features[0].entries[1].target == "/system/y");
  }

  TEST_CASE("rejects optional that is not a boolean") {
    ExpectReject(WithFeature(R"({"binaries": [{"source": "/usr/bin/x", "optional": "true"}]})"),
                 "inventory.f.binaries[0].optional");
    ExpectReject(WithFeature(R"({"binaries": [{"source": "/usr/bin/x", "optional": 1}]})"),
                 "inventory.f.binaries[0].optional");
  }

  TEST_CASE("rejects bad sources and entries") {
    ExpectReject(WithFeature(R"({"binaries": [{"optional": true}]})"),
                 "inventory.f.binaries[0].source", "missing");
    ExpectReject(WithFeature(R"({"binaries": [{"source": []}]})"),
                 "inventory.f.binaries[0].source");
    ExpectReject(WithFeature(R"({"binaries": [{"source": ["/usr/bin/x", 1]}]})"),
                 "inventory.f.binaries[0].source");
    ExpectReject(WithFeature(R"({"binaries": [{"source": 3}]})"), "inventory.f.binaries[0].source");
    ExpectReject(WithFeature(R"({"binaries": [42]})"), "inventory.f.binaries[0]");
    ExpectReject(WithFeature(R"({"binaries": "/usr/bin/x"})"), "inventory.f.binaries", "list");
  }

  TEST_CASE("rejects a preload entry with a glob or bad form") {
    ExpectReject(
        WithFeature(R"({"libraries": ["/usr/lib64/libonload.so*"], "preload": ["libonload.so*"]})"),
        "inventory.f.preload", "libonload.so*");
    ExpectReject(WithFeature(R"({"preload": ["/usr/lib64/*.so"]})"), "inventory.f.preload");
    ExpectReject(WithFeature(R"({"preload": ["lib/x.so"]})"), "inventory.f.preload");
    ExpectReject(WithFeature(R"({"preload": ["/proc/self/x.so"]})"), "inventory.f.preload");
    ExpectReject(WithFeature(R"({"preload": [""]})"), "inventory.f.preload");
    ExpectReject(WithFeature(R"({"preload": ".."})"), "inventory.f.preload");
    ExpectReject(WithFeature(R"({"preload": [".."]})"), "inventory.f.preload");
    ExpectReject(WithFeature(R"({"preload": [1]})"), "inventory.f.preload");
  }

  TEST_CASE("a failed parse does not leave a half-filled inventory") {
    Inventory inv = MustParse(kSeedSolarflare);
    Error err;
    CHECK_FALSE(ParseInventory("{ oops", kFile, &inv, &err));
    CHECK(inv.features.empty());
    CHECK(inv.activation_flag.empty());
  }

}  // TEST_SUITE

// ---------------------------------------------------------------------------
// LoadInventoryDir on a temporary directory.

namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/ocid-inv-XXXXXX";
    char* p = ::mkdtemp(tmpl);
    REQUIRE(p != nullptr);
    path_ = p;
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string p = path_ + "/" + name;
    std::ofstream out(p, std::ios::binary);
    out << content;
    return p;
  }

 private:
  std::string path_;
};

const char kGoodA[] =
    R"({"activation_flag":"OCI_A","driver_feature":["f"],"inventory":{"f":{"devices":["a"]}}})";
const char kGoodB[] =
    R"({"activation_flag":"OCI_B","driver_feature":["f"],"inventory":{"f":{"devices":["b"]}}})";

const ocid::BrokenInventory* FindBroken(const InventorySet& set, const std::string& file) {
  for (const auto& b : set.broken)
    if (b.file == file) return &b;
  return nullptr;
}

}  // namespace

TEST_SUITE("inventory_dir") {
  TEST_CASE("good, broken, unparsable and ignored files") {
    TempDir d;
    // Written in reverse order: the result must be sorted by name anyway.
    d.Write("zz-good.json", kGoodB);
    d.Write("aa-good.json", kGoodA);
    const std::string broken = d.Write(
        "mm-broken.json",
        R"({"activation_flag":"OCI_BROKEN","driver_feature":["f"],"inventory":{"f":{"devicez":[]}}})");
    const std::string text =
        d.Write("nn-text.json",
                "# not json\n{ \"version\": 1,\n  \"activation_flag\":  \"OCI_X\",\n  oops");
    const std::string noflag = d.Write("oo-noflag.json", "complete garbage");
    d.Write("readme.txt", kGoodB);       // not *.json
    d.Write("onload.json.bak", kGoodB);  // not *.json
    d.Write(".hidden.json", kGoodB);     // dotfile
    d.Write(".json", kGoodB);            // nothing before .json

    InventorySet set;
    Error err;
    REQUIRE_MESSAGE(LoadInventoryDir(d.path(), &set, &err), err.Line());

    REQUIRE(set.inventories.size() == 2);
    CHECK(set.inventories[0].file == d.path() + "/aa-good.json");
    CHECK(set.inventories[0].activation_flag == "OCI_A");
    CHECK(set.inventories[1].file == d.path() + "/zz-good.json");
    CHECK(set.inventories[1].activation_flag == "OCI_B");

    CHECK(set.broken.size() == 3);
    const auto* b1 = FindBroken(set, broken);
    REQUIRE(b1);
    CHECK(b1->activation_flag == "OCI_BROKEN");
    CHECK(Contains(b1->error.Line(), broken));
    CHECK(Contains(b1->error.Line(), "inventory.f.devicez"));

    const auto* b2 = FindBroken(set, text);
    REQUIRE(b2);
    CHECK(b2->activation_flag == "OCI_X");
    CHECK(Contains(b2->error.Line(), text));

    const auto* b3 = FindBroken(set, noflag);
    REQUIRE(b3);
    CHECK(b3->activation_flag.empty());
    CHECK(Contains(b3->error.Line(), noflag));
  }

  TEST_CASE("a broken file with an invalid flag salvages nothing") {
    TempDir d;
    const std::string f1 =
        d.Write("a.json", R"({"activation_flag":"OCI-BAD","driver_feature":["f"]})");
    const std::string f2 = d.Write("b.json", "not json \"activation_flag\": \"has space\"");
    InventorySet set;
    Error err;
    REQUIRE(LoadInventoryDir(d.path(), &set, &err));
    REQUIRE(set.broken.size() == 2);
    CHECK(set.broken[0].file == f1);
    CHECK(set.broken[0].activation_flag.empty());
    CHECK(set.broken[1].file == f2);
    CHECK(set.broken[1].activation_flag.empty());
  }

  TEST_CASE("a directory or FIFO named *.json is broken, not fatal, and does not block") {
    TempDir d;
    REQUIRE(::mkdir((d.path() + "/sub.json").c_str(), 0755) == 0);
    REQUIRE(::mkfifo((d.path() + "/fifo.json").c_str(), 0600) == 0);
    d.Write("good.json", kGoodA);
    InventorySet set;
    Error err;
    REQUIRE_MESSAGE(LoadInventoryDir(d.path(), &set, &err), err.Line());
    REQUIRE(set.inventories.size() == 1);
    CHECK(set.inventories[0].activation_flag == "OCI_A");
    REQUIRE(set.broken.size() == 2);
    CHECK(FindBroken(set, d.path() + "/sub.json") != nullptr);
    CHECK(FindBroken(set, d.path() + "/fifo.json") != nullptr);
  }

  TEST_CASE("trailing slash on the directory gives clean file names") {
    TempDir d;
    d.Write("a.json", kGoodA);
    InventorySet set;
    Error err;
    REQUIRE(LoadInventoryDir(d.path() + "/", &set, &err));
    REQUIRE(set.inventories.size() == 1);
    CHECK(set.inventories[0].file == d.path() + "/a.json");
  }

  TEST_CASE("a missing directory is an empty set, not an error") {
    InventorySet set;
    set.broken.push_back({"stale", "X", {}});
    Error err;
    CHECK(LoadInventoryDir("/nonexistent/ocid-test/oci-decorator.d", &set, &err));
    CHECK(set.inventories.empty());
    CHECK(set.broken.empty());
    CHECK(err.empty());
  }

  TEST_CASE("an empty directory is an empty set") {
    TempDir d;
    InventorySet set;
    Error err;
    CHECK(LoadInventoryDir(d.path(), &set, &err));
    CHECK(set.inventories.empty());
    CHECK(set.broken.empty());
  }

  TEST_CASE("a path that is a file, not a directory, is an error") {
    TempDir d;
    const std::string f = d.Write("plain", "x");
    InventorySet set;
    Error err;
    CHECK_FALSE(LoadInventoryDir(f, &set, &err));
    CHECK(Contains(err.Line(), f));
  }

  // inventory.h: "each must be, or link to, a regular file".
  TEST_CASE("a symlink to a regular file is loaded; a dangling one is broken") {
    TempDir outside;
    const std::string target = outside.Write("elsewhere.json", kGoodB);
    TempDir d;
    d.Write("a.json", kGoodA);
    REQUIRE(::symlink(target.c_str(), (d.path() + "/link.json").c_str()) == 0);
    REQUIRE(::symlink((outside.path() + "/gone.json").c_str(),
                      (d.path() + "/dangling.json").c_str()) == 0);
    REQUIRE(::symlink(outside.path().c_str(), (d.path() + "/dirlink.json").c_str()) == 0);
    InventorySet set;
    Error err;
    REQUIRE_MESSAGE(LoadInventoryDir(d.path(), &set, &err), err.Line());
    REQUIRE(set.inventories.size() == 2);
    CHECK(set.inventories[0].activation_flag == "OCI_A");
    CHECK(set.inventories[1].activation_flag == "OCI_B");
    CHECK(set.inventories[1].file == d.path() + "/link.json");
    REQUIRE(set.broken.size() == 2);
    const auto* dangling = FindBroken(set, d.path() + "/dangling.json");
    REQUIRE(dangling);
    CHECK(Contains(dangling->error.Line(), d.path() + "/dangling.json"));
    CHECK(FindBroken(set, d.path() + "/dirlink.json") != nullptr);
  }

}  // TEST_SUITE

TEST_CASE("QuickActivationFlags finds every flag a file could declare, or says it cannot tell") {
  std::vector<std::string> flags;
  CHECK(ocid::QuickActivationFlags(R"({"activation_flag": "OCI_ONLOAD", "x": 1})", &flags));
  CHECK(flags == std::vector<std::string>{"OCI_ONLOAD"});
  // Whitespace and newlines between key, colon and value.
  CHECK(ocid::QuickActivationFlags("{\n  \"activation_flag\"\n\t:\r\n \"OCI_A\"}", &flags));
  CHECK(flags == std::vector<std::string>{"OCI_A"});
  // Duplicated keys: every candidate is kept (a superset is safe).
  CHECK(ocid::QuickActivationFlags(R"({"activation_flag":"OCI_A","activation_flag":"OCI_B"})",
                                   &flags));
  CHECK(flags == std::vector<std::string>{"OCI_A", "OCI_B"});
  // The word as a value, not a key, is not a flag.
  CHECK(ocid::QuickActivationFlags(R"({"note": ["activation_flag"], "activation_flag": "OCI_C"})",
                                   &flags));
  CHECK(flags == std::vector<std::string>{"OCI_C"});
  // A non-string value cannot activate anything (the parser rejects it).
  CHECK(ocid::QuickActivationFlags(R"({"activation_flag": 7})", &flags));
  CHECK(flags.empty());
  // No key at all: nothing to ask for.
  CHECK(ocid::QuickActivationFlags(R"({"version": "1"})", &flags));
  CHECK(flags.empty());
  // A broken file whose flag is still salvaged (no ':', or two): those who
  // ask for it must reach the parse, and fail (found by fuzz/inventory_fuzz).
  for (const char* broken :
       {R"({"activation_flag" "OCI_F", "driver_feature": [)", R"({"activation_flag"::"OCI_F"})"}) {
    CHECK(ocid::QuickActivationFlags(broken, &flags));
    CHECK(flags == std::vector<std::string>{"OCI_F"});
    ocid::InventorySet set;
    ocid::ParseInventoryFiles({ocid::InventoryFile{"/c/broken.json", broken, {}}}, &set);
    REQUIRE(set.broken.size() == 1);
    CHECK(set.broken[0].activation_flag == "OCI_F");
  }
  // Any backslash: a key could be spelled with escapes ("activation\u005fflag"),
  // so the scan cannot tell and the file must be parsed.
  CHECK_FALSE(ocid::QuickActivationFlags(R"({"activation\u005fflag": "OCI_D"})", &flags));
  CHECK_FALSE(ocid::QuickActivationFlags(R"({"activation_flag": "OCI_E", "p": "a\\b"})", &flags));
}

TEST_CASE("inventories writable by others are refused, keeping their flag") {
  ocid::test::TempTree t;
  const std::string good = R"({"activation_flag": "OCI_GOOD", "driver_feature": ["f"],
                               "inventory": {"f": {"binaries": ["/usr/bin/x"]}}})";
  const std::string open = R"({"activation_flag": "OCI_OPEN", "driver_feature": ["f"],
                               "inventory": {"f": {"binaries": ["/usr/bin/x"]}}})";
  t.File("d/good.json", good);
  t.File("d/open.json", open);
  REQUIRE(::chmod((t / "d").c_str(), 0755) == 0);
  REQUIRE(::chmod((t / "d/good.json").c_str(), 0644) == 0);
  REQUIRE(::chmod((t / "d/open.json").c_str(), 0666) == 0);
  ocid::InventorySet set;
  ocid::Error err;
  REQUIRE(ocid::LoadInventoryDir(t / "d", &set, &err));
  REQUIRE(set.inventories.size() == 1);
  CHECK(set.inventories[0].activation_flag == "OCI_GOOD");
  REQUIRE(set.broken.size() == 1);
  CHECK(set.broken[0].activation_flag == "OCI_OPEN");  // so only its askers fail
  CHECK(set.broken[0].error.Line().find("writable by others") != std::string::npos);
  CHECK(set.broken[0].error.Line().find("open.json") != std::string::npos);

  SUBCASE("a group-writable directory refuses every file in it") {
    REQUIRE(::chmod((t / "d/open.json").c_str(), 0644) == 0);
    REQUIRE(::chmod((t / "d").c_str(), 0775) == 0);
    REQUIRE(ocid::LoadInventoryDir(t / "d", &set, &err));
    CHECK(set.inventories.empty());
    REQUIRE(set.broken.size() == 2);
    for (const auto& b : set.broken)
      CHECK(b.error.Line().find("config directory is writable by others") != std::string::npos);
  }
}

TEST_CASE("a vouch is asked only of a root-owned directory the rule refuses, and its why is kept") {
  ocid::test::TempTree t;
  t.File("d/a.json", R"({"activation_flag": "OCI_A", "driver_feature": ["f"],
                          "inventory": {"f": {"binaries": ["/usr/bin/x"]}}})");
  REQUIRE(::chmod((t / "d/a.json").c_str(), 0644) == 0);
  int asked = 0;
  std::string answer;
  ocid::ConfigDirVouch vouch = [&](int fd) {
    ++asked;
    CHECK(fd >= 0);
    return answer;
  };
  ocid::InventorySet set;
  ocid::Error err;
  REQUIRE(::chmod((t / "d").c_str(), 0755) == 0);
  REQUIRE(ocid::LoadInventoryDir(t / "d", &set, &err, vouch));
  CHECK(asked == 0);  // the rule holds: nothing to vouch for, nothing paid
  CHECK(set.inventories.size() == 1);

  REQUIRE(::chmod((t / "d").c_str(), 0777) == 0);
  REQUIRE(ocid::LoadInventoryDir(t / "d", &set, &err, vouch));
  CHECK(asked == 1);
  CHECK(set.inventories.size() == 1);  // vouched for: read as a safe directory

  answer = "its mount is not read-only";
  REQUIRE(ocid::LoadInventoryDir(t / "d", &set, &err, vouch));
  REQUIRE(set.broken.size() == 1);
  std::string line = set.broken[0].error.Line();
  CHECK(line.find("config directory is writable by others (owner ") != std::string::npos);
  CHECK(line.find("mode 0777") != std::string::npos);
  CHECK(line.find("or be a kubelet configMap volume, and its mount is not read-only") !=
        std::string::npos);

  SUBCASE("the files are still held to the file rule") {
    answer = "";
    REQUIRE(::chmod((t / "d/a.json").c_str(), 0666) == 0);
    REQUIRE(ocid::LoadInventoryDir(t / "d", &set, &err, vouch));
    REQUIRE(set.broken.size() == 1);
    CHECK(set.broken[0].error.Line().find("refusing inventory: writable by others") == 0);
  }
  SUBCASE("without a vouch (the hook) the refusal is the rule's alone") {
    REQUIRE(ocid::LoadInventoryDir(t / "d", &set, &err));
    REQUIRE(set.broken.size() == 1);
    CHECK(set.broken[0].error.Line().find("kubelet") == std::string::npos);
  }
}

// ===========================================================================
// The hostile-input set (hostile_input.h): inventory files that are
// malformed, truncated, wrongly typed or not files at all.
#include <cerrno>
#include <chrono>
#include <future>

#include "hostile_input.h"

namespace {
namespace hostile {

using ocid::Error;
using ocid::InventoryFile;
using ocid::InventorySet;
using ocid::test::TempTree;
using ocid::test::hostile::CheckOneLine;
using ocid::test::hostile::Contains;
using ocid::test::hostile::kGoodInventory;
using ocid::test::hostile::Sub;

Error InventoryFails(const std::string& s, const std::string& needle) {
  ocid::Inventory inv;
  Error err;
  CAPTURE(s.substr(0, 300));
  CHECK_FALSE(ocid::ParseInventory(s, "/etc/oci-decorator.d/x.json", &inv, &err));
  CheckOneLine(err);
  CHECK_MESSAGE(Contains(err.Line(), "/etc/oci-decorator.d/x.json"), err.Line());
  CHECK_MESSAGE(Contains(err.Line(), needle), err.Line());
  return err;
}

TEST_SUITE("hostile.inventory") {
  TEST_CASE("empty, null, scalars, garbage, non-UTF-8") {
    for (const char* s : {"", "{", "nul", "{\"activation_flag\":"})
      InventoryFails(s, "not valid JSON");
    for (const char* s : {"null", "1", "\"x\"", "[]", "[{}]"})
      InventoryFails(s, "not a JSON object");
    InventoryFails(Sub(kGoodInventory, "good-tool", "good\xff"), "UTF-8");
    InventoryFails(kGoodInventory + std::string("\0garbage", 8), "NUL byte");
    InventoryFails(Sub(kGoodInventory, "\"1\"", "\"\xc0\xaf\""), "UTF-8");
  }

  TEST_CASE("the shipped onload.json truncated at every byte: no crash, one line naming the file") {
    const std::string full = ReadSource("config/onload.json");
    REQUIRE(full.size() > 500);
    std::vector<InventoryFile> files;
    for (size_t n = 0; n < full.size(); ++n) {
      ocid::Inventory inv;
      Error e;
      CAPTURE(n);
      if (ocid::ParseInventory(std::string_view(full).substr(0, n), "/c/onload.json", &inv, &e)) {
        CHECK(full.find_first_not_of(" \n", n) == std::string::npos);
      } else {
        CheckOneLine(e);
        CHECK(Contains(e.Line(), "/c/onload.json"));
      }
      files.push_back(
          InventoryFile{"/c/onload-" + std::to_string(n) + ".json", full.substr(0, n), {}});
    }
    // All at once, as a config directory: each broken file is kept with its
    // error, and once the flag has been written it is salvaged.
    InventorySet set;
    ocid::ParseInventoryFiles(files, &set);
    CHECK(set.inventories.size() <= 1);  // the one missing only the final newline
    REQUIRE(set.broken.size() + set.inventories.size() == files.size());
    const size_t flag_end = full.find("OCI_ONLOAD\"") + 11;
    for (const auto& b : set.broken) {
      size_t n = std::stoul(b.file.substr(b.file.find('-') + 1));
      CAPTURE(n);
      CheckOneLine(b.error);
      if (n >= flag_end)
        CHECK(b.activation_flag == "OCI_ONLOAD");
      else
        CHECK(b.activation_flag.empty());
    }
  }

  TEST_CASE("wrong type at every key") {
    struct Case {
      const char* from;
      const char* to;
      const char* needle;
    };
    const Case cases[] = {
        {R"("version": "1")", R"("version": [])", "\"version\""},
        {R"("version": "1")", R"("version": {"a": 1})", "\"version\""},
        {R"("version": "1")", R"("version": true)", "\"version\""},
        {R"("version": "1")", R"("log_level": 3)", "\"log_level\""},
        {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": 1)", "\"activation_flag\""},
        {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": "")", "\"activation_flag\""},
        {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": "1X")", "\"activation_flag\""},
        {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": "A=B")", "\"activation_flag\""},
        {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": ["OCI_GOOD"])",
         "\"activation_flag\""},
        {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": null)", "\"activation_flag\""},
        {R"("version": "1")", R"("cdi_kind": 1)", "\"cdi_kind\""},
        {R"("driver_feature": ["f"])", R"("driver_feature": "f")", "\"driver_feature\""},
        {R"("driver_feature": ["f"])", R"("driver_feature": [])", "\"driver_feature\""},
        {R"("driver_feature": ["f"])", R"("driver_feature": [1])", "\"driver_feature\""},
        {R"("driver_feature": ["f"])", R"("driver_feature": ["f", 1, null])", "\"driver_feature\""},
        {R"("driver_feature": ["f"])", R"("driver_feature": ["f", "f"])", "\"driver_feature\""},
        {R"("driver_feature": ["f"])", R"("driver_feature": ["ALL"])", "\"driver_feature\""},
        {R"("inventory": {"f")", R"("inventory": [], "x-": {"f")", "\"inventory\""},
        {R"("inventory": {"f")", R"("inventory": "f", "x-": {"f")", "\"inventory\""},
        {R"({"f": {"binaries")", R"({"f": [], "x-": {"binaries")", "\"inventory.f\""},
        {R"({"f": {"binaries")", R"({"g": {"binaries")", "inventory."},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": "/usr/bin/good-tool")",
         "inventory.f.binaries"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": {"a": 1})",
         "inventory.f.binaries"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [1])", "inventory.f.binaries[0]"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [null])",
         "inventory.f.binaries[0]"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": ["/usr/bin/good-tool", ["/x"]])",
         "inventory.f.binaries[1]"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"source": 1}])",
         "inventory.f.binaries[0].source"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"source": []}])",
         "inventory.f.binaries[0].source"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"source": ["/a", 2]}])",
         "inventory.f.binaries[0].source"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"source": "/a", "target": 1}])",
         "inventory.f.binaries[0].target"},
        {R"("binaries": ["/usr/bin/good-tool"])",
         R"("binaries": [{"source": "/a", "optional": "yes"}])",
         "inventory.f.binaries[0].optional"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"target": "/a"}])",
         "inventory.f.binaries[0].source"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": ["/usr/bin/good\u0000tool"])",
         "NUL"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("devices": [5])", "inventory.f.devices[0]"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("preload": "libx.so")", "inventory.f.preload"},
        {R"("binaries": ["/usr/bin/good-tool"])", R"("preload": [1])", "inventory.f.preload"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.to);
      InventoryFails(Sub(kGoodInventory, c.from, c.to), c.needle);
    }
  }

  TEST_CASE("duplicate keys, deep nesting, long strings: no crash") {
    ocid::Inventory inv;
    Error err;
    CHECK(ocid::ParseInventory(Sub(kGoodInventory, R"("activation_flag": "OCI_GOOD")",
                                   R"("activation_flag": "OCI_A", "activation_flag": "OCI_GOOD")"),
                               "x.json", &inv, &err));
    CHECK(inv.activation_flag == "OCI_GOOD");
    const size_t depth = 400000;  // the inventory cap is 1 MiB
    InventoryFails(std::string(depth, '['), "not valid JSON");
    // A deep comment key is skipped whole.
    CHECK_MESSAGE(ocid::ParseInventory(
                      Sub(kGoodInventory, R"("version": "1")",
                          "\"x-deep\": " + std::string(depth, '[') + std::string(depth, ']')),
                      "x.json", &inv, &err),
                  err.Line());
    InventoryFails(Sub(kGoodInventory, R"("/usr/bin/good-tool")",
                       std::string(depth, '[') + std::string(depth, ']')),
                   "inventory.f.binaries[0]");
    InventoryFails(Sub(kGoodInventory, "good-tool", "/" + std::string(1 << 20, 'a') + "/../x"),
                   "inventory.f.binaries[0]");
  }

  TEST_CASE("a broken file is kept with its salvaged flag, the good one loads") {
    std::vector<InventoryFile> files = {
        {"/c/a-good.json", kGoodInventory, {}},
        {"/c/b-broken.json", R"({"activation_flag": "OCI_BROKEN", "driver_feature": [)", {}},
        {"/c/c-garbage.json", "\xff\xfe\x00garbage", {}},
        {"/c/d-wrongtype.json", R"({"activation_flag": "OCI_WT", "driver_feature": "x"})", {}},
        {"/c/e-unreadable.json", "",
         Error{"cannot open inventory", "/c/e-unreadable.json", EACCES}},
    };
    InventorySet set;
    ocid::ParseInventoryFiles(files, &set);
    REQUIRE(set.inventories.size() == 1);
    CHECK(set.inventories[0].activation_flag == "OCI_GOOD");
    REQUIRE(set.broken.size() == 4);
    CHECK(set.broken[0].activation_flag == "OCI_BROKEN");
    CHECK(set.broken[1].activation_flag.empty());
    CHECK(set.broken[2].activation_flag == "OCI_WT");
    CHECK(set.broken[3].activation_flag.empty());
    for (const auto& b : set.broken) {
      CheckOneLine(b.error);
      CHECK_MESSAGE(Contains(b.error.Line(), b.file), b.error.Line());
    }
  }

  TEST_CASE("LoadInventoryDir: FIFO, directory, device, huge and dangling files do not hang") {
    TempTree t;
    t.Dir("d");
    ::chmod(t.path().c_str(), 0755);
    ::chmod((t / "d").c_str(), 0755);
    t.File("d/a-good.json", kGoodInventory);
    t.File("d/b-garbage.json", "{ this is not json, \"activation_flag\": \"OCI_BROKEN\" ");
    REQUIRE(::mkfifo((t / "d/c-fifo.json").c_str(), 0644) == 0);
    t.Dir("d/d-dir.json");
    t.Link("d/e-zero.json", "/dev/zero");
    t.Link("d/f-dangling.json", t / "nowhere");
    int fd = ::open((t / "d/g-huge.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, 50 << 20) == 0);  // sparse 50 MiB
    ::close(fd);
    for (const char* f : {"d/a-good.json", "d/b-garbage.json"}) ::chmod((t / f).c_str(), 0644);

    auto run = std::async(std::launch::async, [&] {
      InventorySet set;
      Error err;
      bool ok = ocid::LoadInventoryDir(t / "d", &set, &err);
      return std::make_pair(ok, set);
    });
    if (run.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      // Release a reader stuck on the FIFO, then fail.
      int w = ::open((t / "d/c-fifo.json").c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) ::close(w);
      FAIL("LoadInventoryDir hangs");
    }
    auto result = run.get();
    REQUIRE(result.first);
    const InventorySet& set = result.second;
    REQUIRE(set.inventories.size() == 1);
    CHECK(set.inventories[0].activation_flag == "OCI_GOOD");
    REQUIRE(set.broken.size() == 6);
    auto broken = [&](const std::string& name) -> const ocid::BrokenInventory& {
      for (const auto& b : set.broken)
        if (b.file == t / ("d/" + name)) return b;
      FAIL("no broken entry for " << name);
      return set.broken[0];
    };
    CHECK(broken("b-garbage.json").activation_flag == "OCI_BROKEN");
    CHECK(Contains(broken("c-fifo.json").error.Line(), "not a regular file"));
    CHECK(Contains(broken("d-dir.json").error.Line(), "not a regular file"));
    CHECK(Contains(broken("e-zero.json").error.Line(), "not a regular file"));
    CHECK(Contains(broken("f-dangling.json").error.Line(), "No such file"));
    CHECK_MESSAGE(Contains(broken("g-huge.json").error.Line(), "larger than 1048576 bytes"),
                  broken("g-huge.json").error.Line());
    for (const auto& b : set.broken) {
      CheckOneLine(b.error);
      CHECK(Contains(b.error.Line(), b.file));
    }
  }

}  // TEST_SUITE

}  // namespace hostile
}  // namespace
