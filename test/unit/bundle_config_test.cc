// config.json: rootfs location, process.env, annotations; LookupEnv.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bundle_config.h"

using ocid::BundleConfig;
using ocid::Error;
using ocid::LookupEnv;
using ocid::ParseBundleConfig;
using ocid::RootfsPath;

namespace {

const std::string kWhere = "/run/bundle/config.json";

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// Expects a parse failure whose error names the file and mentions `what`.
void ExpectError(const std::string& json, const std::string& what) {
  BundleConfig cfg;
  Error err;
  CAPTURE(json);
  CHECK_FALSE(ParseBundleConfig(json, kWhere, &cfg, &err));
  CHECK(err.path == kWhere);
  CHECK(Contains(err.Line(), kWhere));
  CHECK_MESSAGE(Contains(err.Line(), what), err.Line());
}

}  // namespace

TEST_SUITE("bundle_config") {

TEST_CASE("relative root.path, env and annotations") {
  const std::string s = R"({
    "ociVersion": "1.0.2",
    "process": {"args": ["sh"], "env": ["PATH=/usr/bin:/bin", "OCI_ONLOAD=all", "TERM=xterm"]},
    "root": {"path": "rootfs", "readonly": true},
    "annotations": {"oci-decorator/OCI_RDMA": "verbs"}
  })";
  BundleConfig cfg;
  Error err;
  REQUIRE_MESSAGE(ParseBundleConfig(s, kWhere, &cfg, &err), err.Line());
  CHECK(cfg.root_path == "rootfs");
  CHECK(cfg.root_readonly);
  REQUIRE(cfg.env == std::vector<std::string>{"PATH=/usr/bin:/bin", "OCI_ONLOAD=all",
                                              "TERM=xterm"});
  REQUIRE(cfg.annotations.size() == 1);
  CHECK(cfg.annotations.at("oci-decorator/OCI_RDMA") == "verbs");
}

TEST_CASE("absolute root.path, no process, no annotations") {
  BundleConfig cfg;
  Error err;
  REQUIRE(ParseBundleConfig(R"({"root":{"path":"/var/lib/c/merged"}})", kWhere, &cfg, &err));
  CHECK(cfg.root_path == "/var/lib/c/merged");
  CHECK_FALSE(cfg.root_readonly);
  CHECK(cfg.env.empty());
  CHECK(cfg.annotations.empty());
}

TEST_CASE("process without env is fine") {
  BundleConfig cfg;
  Error err;
  REQUIRE(ParseBundleConfig(R"({"root":{"path":"rootfs"},"process":{"cwd":"/"}})", kWhere,
                            &cfg, &err));
  CHECK(cfg.env.empty());
}

TEST_CASE("errors name the config file") {
  ExpectError("not json", "not valid JSON");
  ExpectError("[1,2]", "not a JSON object");
  ExpectError(R"({"process":{"env":[]}})", "\"root\"");
  ExpectError(R"({"root":"rootfs"})", "\"root\"");
  ExpectError(R"({"root":{}})", "root.path");
  ExpectError(R"({"root":{"path":""}})", "root.path");
  ExpectError(R"({"root":{"path":5}})", "root.path");
  ExpectError(R"({"root":{"path":"r","readonly":"yes"}})", "root.readonly");
  ExpectError(R"({"root":{"path":"r"},"process":[]})", "\"process\"");
  ExpectError(R"({"root":{"path":"r"},"process":{"env":"A=1"}})", "process.env");
  ExpectError(R"({"root":{"path":"r"},"process":{"env":{"A":"1"}}})", "process.env");
  ExpectError(R"({"root":{"path":"r"},"process":{"env":["A=1",2]}})", "process.env");
  ExpectError(R"({"root":{"path":"r"},"process":{"env":["A=1",null]}})", "process.env");
  ExpectError(R"({"root":{"path":"r"},"annotations":["a"]})", "\"annotations\"");
  ExpectError(R"({"root":{"path":"r"},"annotations":{"k":"v","n":3}})", "annotation \"n\"");
  ExpectError(R"({"root":{"path":"r"},"annotations":{"k":true}})", "annotation \"k\"");
}

TEST_CASE("linux.resources.devices: order, types, wildcards, defaults") {
  const std::string s = R"({"root":{"path":"r"},"linux":{"resources":{"devices":[
    {"allow": false, "access": "rwm"},
    {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rw"},
    {"allow": true, "type": "b", "major": 8},
    {"allow": false, "type": "c", "minor": null, "access": "mwrr"},
    {"allow": true, "type": "a", "major": -1, "minor": 4294967295}
  ]}}})";
  BundleConfig cfg;
  Error err;
  REQUIRE_MESSAGE(ParseBundleConfig(s, kWhere, &cfg, &err), err.Line());
  REQUIRE(cfg.device_rules.size() == 5);
  auto rule = [](char type, int64_t major, int64_t minor, const char* access, bool allow) {
    ocid::DeviceRule r;
    r.type = type;
    r.major = major;
    r.minor = minor;
    r.access = access;
    r.allow = allow;
    return r;
  };
  CHECK(cfg.device_rules[0] == rule('a', -1, -1, "rwm", false));
  CHECK(cfg.device_rules[1] == rule('c', 10, 229, "rw", true));
  CHECK(cfg.device_rules[2] == rule('b', 8, -1, "rwm", true));
  CHECK(cfg.device_rules[3] == rule('c', -1, -1, "rwm", false));  // canonical order
  CHECK(cfg.device_rules[4] == rule('a', -1, 4294967295, "rwm", true));
  CHECK(cfg.devices.empty());
}

TEST_CASE("linux.devices") {
  const std::string s = R"({"root":{"path":"r"},"linux":{"devices":[
    {"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438, "uid": 0},
    {"path": "/dev/sda", "type": "b", "major": 8, "minor": 0},
    {"path": "/dev/ttyX", "type": "u", "major": 4, "minor": 64},
    {"path": "/dev/fifo", "type": "p"}
  ]}})";
  BundleConfig cfg;
  Error err;
  REQUIRE_MESSAGE(ParseBundleConfig(s, kWhere, &cfg, &err), err.Line());
  REQUIRE(cfg.devices.size() == 4);
  CHECK(cfg.devices[0].path == "/dev/fuse");
  CHECK(cfg.devices[0].type == 'c');
  CHECK(cfg.devices[0].major == 10);
  CHECK(cfg.devices[0].minor == 229);
  CHECK(cfg.devices[1].type == 'b');
  CHECK(cfg.devices[2].type == 'u');
  CHECK(cfg.devices[3].type == 'p');
  CHECK(cfg.devices[3].major == -1);
  CHECK(cfg.device_rules.empty());
}

TEST_CASE("no linux, empty linux, empty lists") {
  for (const char* s : {R"({"root":{"path":"r"}})", R"({"root":{"path":"r"},"linux":{}})",
                        R"({"root":{"path":"r"},"linux":{"resources":{}}})",
                        R"({"root":{"path":"r"},"linux":{"devices":[],"resources":{"devices":[]}}})",
                        R"({"root":{"path":"r"},"linux":{"devices":null,"resources":null}})"}) {
    BundleConfig cfg;
    Error err;
    CAPTURE(s);
    REQUIRE_MESSAGE(ParseBundleConfig(s, kWhere, &cfg, &err), err.Line());
    CHECK(cfg.devices.empty());
    CHECK(cfg.device_rules.empty());
  }
}

TEST_CASE("device errors name the key") {
  auto rules = [](const std::string& entries) {
    return R"({"root":{"path":"r"},"linux":{"resources":{"devices":[)" + entries + "]}}}";
  };
  auto devices = [](const std::string& entries) {
    return R"({"root":{"path":"r"},"linux":{"devices":[)" + entries + "]}}";
  };
  ExpectError(R"({"root":{"path":"r"},"linux":[]})", "\"linux\" is not an object");
  ExpectError(R"({"root":{"path":"r"},"linux":{"resources":[]}})", "\"linux.resources\"");
  ExpectError(R"({"root":{"path":"r"},"linux":{"resources":{"devices":{}}}})",
              "\"linux.resources.devices\" is not an array");
  ExpectError(rules("3"), "\"linux.resources.devices[0]\" is not an object");
  ExpectError(rules(R"({"access":"rwm"})"), "\"linux.resources.devices[0].allow\"");
  ExpectError(rules(R"({"allow":true},{"allow":"yes"})"), "\"linux.resources.devices[1].allow\"");
  ExpectError(rules(R"({"allow":true,"type":"u"})"), "\"linux.resources.devices[0].type\"");
  ExpectError(rules(R"({"allow":true,"type":99})"), "\"linux.resources.devices[0].type\"");
  ExpectError(rules(R"({"allow":true,"major":"10"})"), "\"linux.resources.devices[0].major\"");
  ExpectError(rules(R"({"allow":true,"minor":1.5})"), "\"linux.resources.devices[0].minor\"");
  ExpectError(rules(R"({"allow":true,"major":4294967296})"),
              "\"linux.resources.devices[0].major\" is out of range");
  ExpectError(rules(R"({"allow":true,"access":"rx"})"), "\"linux.resources.devices[0].access\"");
  ExpectError(rules(R"({"allow":true,"access":""})"), "\"linux.resources.devices[0].access\"");
  ExpectError(rules(R"({"allow":true,"access":7})"), "\"linux.resources.devices[0].access\"");
  ExpectError(R"({"root":{"path":"r"},"linux":{"devices":{}}})",
              "\"linux.devices\" is not an array");
  ExpectError(devices(R"("/dev/fuse")"), "\"linux.devices[0]\" is not an object");
  ExpectError(devices(R"({"type":"c","major":1,"minor":3})"), "\"linux.devices[0].path\"");
  ExpectError(devices(R"({"path":"/dev/x","type":"x","major":1,"minor":3})"),
              "\"linux.devices[0].type\"");
  ExpectError(devices(R"({"path":"/dev/x","major":1,"minor":3})"), "\"linux.devices[0].type\"");
  ExpectError(devices(R"({"path":"/dev/x","type":"c","minor":3})"),
              "\"linux.devices[0]\" has no \"major\" or \"minor\"");
  ExpectError(devices(R"({"path":"/dev/x","type":"c","major":"1","minor":3})"),
              "\"linux.devices[0].major\" is not an integer");
}

TEST_CASE("process.capabilities: which sets hold CAP_SYS_ADMIN") {
  BundleConfig cfg;
  Error err;
  REQUIRE(ParseBundleConfig(
      R"({"root":{"path":"r"},"process":{"capabilities":{)"
      R"("bounding":["CAP_CHOWN","CAP_SYS_ADMIN"],"effective":["CAP_CHOWN"],)"
      R"("permitted":["CAP_SYS_ADMIN"],"ambient":[]}}})",
      kWhere, &cfg, &err));
  CHECK(cfg.sys_admin_sets == std::vector<std::string>{"bounding", "permitted"});
  BundleConfig none;
  REQUIRE(ParseBundleConfig(R"({"root":{"path":"r"},"process":{"capabilities":{"bounding":[]}}})",
                            kWhere, &none, &err));
  CHECK(none.sys_admin_sets.empty());
  ExpectError(R"({"root":{"path":"r"},"process":{"capabilities":[]}})", "process.capabilities");
  ExpectError(R"({"root":{"path":"r"},"process":{"capabilities":{"bounding":"CAP_SYS_ADMIN"}}})",
              "process.capabilities.bounding");
  ExpectError(R"({"root":{"path":"r"},"process":{"capabilities":{"bounding":["CAP_SYS_ADMIN",7]}}})",
              "process.capabilities.bounding");
}

TEST_CASE("RootfsPath") {
  CHECK(RootfsPath("/b", "", "rootfs") == "/b/rootfs");
  CHECK(RootfsPath("/b/", "", "rootfs") == "/b/rootfs");
  CHECK(RootfsPath("/b//", "", "rootfs") == "/b/rootfs");
  CHECK(RootfsPath("/b", "", "./rootfs") == "/b/rootfs");
  CHECK(RootfsPath("/b/", "", "./rootfs") == "/b/rootfs");
  CHECK(RootfsPath("/b", "", "sub/rootfs") == "/b/sub/rootfs");
  CHECK(RootfsPath("/b", "", ".") == "/b");
  CHECK(RootfsPath("/", "", "rootfs") == "/rootfs");
  CHECK(RootfsPath("/b", "", "/abs/rootfs") == "/abs/rootfs");
  // crun's state root wins over everything.
  CHECK(RootfsPath("/b", "/crun/root", "rootfs") == "/crun/root");
  CHECK(RootfsPath("/b", "/crun/root", "/abs/rootfs") == "/crun/root");
  // crun's state root as written in a config.json with a relative root.path.
  CHECK(RootfsPath("/b", "rootfs", "ignored") == "/b/rootfs");
  CHECK(RootfsPath("/b/", "./rootfs", "") == "/b/rootfs");
}

TEST_CASE("LookupEnv matches the exact name only") {
  std::string v = "untouched";
  const std::vector<std::string> env = {"DISABLE_OCI_ONLOAD=1", "XOCI_ONLOAD=all",
                                        "OCI_ONLOAD_X=all", "OCI_ONLOADall", "PATH=/bin"};
  CHECK_FALSE(LookupEnv(env, "OCI_ONLOAD", &v));
  CHECK(v == "untouched");

  CHECK(LookupEnv({"OCI_ONLOAD=zf"}, "OCI_ONLOAD", &v));
  CHECK(v == "zf");
  CHECK(LookupEnv({"DISABLE_OCI_ONLOAD=1", "OCI_ONLOAD=onload", "OCI_ONLOAD_X=zf"},
                  "OCI_ONLOAD", &v));
  CHECK(v == "onload");
}

TEST_CASE("LookupEnv: value may contain '=', empty value is present") {
  std::string v;
  CHECK(LookupEnv({"OCI_ONLOAD=a=b"}, "OCI_ONLOAD", &v));
  CHECK(v == "a=b");
  v = "x";
  CHECK(LookupEnv({"OCI_ONLOAD="}, "OCI_ONLOAD", &v));
  CHECK(v.empty());
}

TEST_CASE("LookupEnv: last occurrence wins") {
  std::string v;
  CHECK(LookupEnv({"OCI_ONLOAD=all", "A=1", "OCI_ONLOAD=none"}, "OCI_ONLOAD", &v));
  CHECK(v == "none");
  CHECK(LookupEnv({"OCI_ONLOAD=none", "OCI_ONLOAD=zf"}, "OCI_ONLOAD", &v));
  CHECK(v == "zf");
  CHECK(LookupEnv({"OCI_ONLOAD=zf", "OCI_ONLOAD"}, "OCI_ONLOAD", &v));
  CHECK(v.empty());
}

TEST_CASE("LookupEnv: bare name without '=' gives empty value") {
  std::string v = "stale";
  CHECK(LookupEnv({"OCI_ONLOAD"}, "OCI_ONLOAD", &v));
  CHECK(v.empty());
}

TEST_CASE("LookupEnv on empty env") {
  std::string v;
  CHECK_FALSE(LookupEnv({}, "OCI_ONLOAD", &v));
  CHECK_FALSE(LookupEnv({"=all", ""}, "OCI_ONLOAD", &v));
}

}  // TEST_SUITE

TEST_SUITE("bundle_config user and namespaces") {

TEST_CASE("process.user, linux.namespaces and id mappings") {
  const std::string s = R"({
    "root": {"path": "rootfs"},
    "process": {"user": {"uid": 1000, "gid": 100, "additionalGids": [10, 20]}},
    "linux": {
      "namespaces": [{"type": "pid"}, {"type": "mount", "path": "/proc/42/ns/mnt"},
                     {"type": "user"}],
      "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
      "gidMappings": [{"containerID": 0, "hostID": 200000, "size": 1000},
                      {"containerID": 1000, "hostID": 1000, "size": 1}]
    }
  })";
  BundleConfig cfg;
  Error err;
  REQUIRE_MESSAGE(ParseBundleConfig(s, kWhere, &cfg, &err), err.Line());
  CHECK(cfg.uid == 1000);
  CHECK(cfg.gid == 100);
  CHECK(cfg.additional_gids == std::vector<uint32_t>{10, 20});
  REQUIRE(cfg.namespaces.size() == 3);
  REQUIRE(cfg.Namespace("mount") != nullptr);
  CHECK(cfg.Namespace("mount")->path == "/proc/42/ns/mnt");
  CHECK(cfg.Namespace("net") == nullptr);
  CHECK(cfg.HasUserNamespace());
  uint32_t host = 0;
  CHECK(ocid::MapToHost(cfg.uid_mappings, 0, &host));
  CHECK(host == 100000);
  CHECK(ocid::MapToHost(cfg.uid_mappings, 65535, &host));
  CHECK(host == 165535);
  CHECK_FALSE(ocid::MapToHost(cfg.uid_mappings, 65536, &host));
  CHECK(ocid::MapToHost(cfg.gid_mappings, 1000, &host));
  CHECK(host == 1000);
  CHECK_FALSE(ocid::MapToHost(cfg.gid_mappings, 1001, &host));
  CHECK(ocid::MapToHost({}, 7, &host));
  CHECK(host == 7);
}

TEST_CASE("bad user and namespace fields name the field") {
  ExpectError(R"({"root":{"path":"r"},"process":{"user":{"uid":-1}}})", "process.user.uid");
  ExpectError(R"({"root":{"path":"r"},"process":{"user":{"gid":"0"}}})", "process.user.gid");
  ExpectError(R"({"root":{"path":"r"},"linux":{"namespaces":[{"path":"/x"}]}})",
              "linux.namespaces[0].type");
  ExpectError(R"({"root":{"path":"r"},"linux":{"uidMappings":[{"containerID":0,"hostID":1}]}})",
              "linux.uidMappings[0].size");
}

}  // TEST_SUITE
