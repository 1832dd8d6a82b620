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
    REQUIRE(cfg.env ==
            std::vector<std::string>{"PATH=/usr/bin:/bin", "OCI_ONLOAD=all", "TERM=xterm"});
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
    REQUIRE(ParseBundleConfig(R"({"root":{"path":"rootfs"},"process":{"cwd":"/"}})", kWhere, &cfg,
                              &err));
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
    for (const char* s :
         {R"({"root":{"path":"r"}})", R"({"root":{"path":"r"},"linux":{}})",
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
    REQUIRE(
        ParseBundleConfig(R"({"root":{"path":"r"},"process":{"capabilities":{)"
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
    ExpectError(
        R"({"root":{"path":"r"},"process":{"capabilities":{"bounding":["CAP_SYS_ADMIN",7]}}})",
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
    CHECK(LookupEnv({"DISABLE_OCI_ONLOAD=1", "OCI_ONLOAD=onload", "OCI_ONLOAD_X=zf"}, "OCI_ONLOAD",
                    &v));
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
    // The inverse, for what the runtime shim adds to additionalGids.
    uint32_t inside = 0;
    CHECK(ocid::MapToContainer(cfg.uid_mappings, 100000, &inside));
    CHECK(inside == 0);
    CHECK(ocid::MapToContainer(cfg.uid_mappings, 165535, &inside));
    CHECK(inside == 65535);
    CHECK_FALSE(ocid::MapToContainer(cfg.uid_mappings, 99999, &inside));
    CHECK_FALSE(ocid::MapToContainer(cfg.uid_mappings, 165536, &inside));
    CHECK(ocid::MapToContainer(cfg.gid_mappings, 1000, &inside));
    CHECK(inside == 1000);
    CHECK_FALSE(ocid::MapToContainer(cfg.gid_mappings, 4242, &inside));
    CHECK(ocid::MapToContainer({}, 7, &inside));
    CHECK(inside == 7);
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

// ===========================================================================
// The hostile-input set (hostile_input.h): config.json files that are
// malformed, truncated, huge, wrongly typed or not UTF-8.
#include <chrono>
#include <utility>

#include "hostile_input.h"

namespace {
namespace hostile {

using ocid::BundleConfig;
using ocid::Error;
using ocid::test::hostile::CheckOneLine;
using ocid::test::hostile::Contains;
using ocid::test::hostile::Repeat;
using ocid::test::hostile::Sub;

// `runc spec` plus what the hook reads: env, annotations, devices.
const std::string kConfig = R"({
  "ociVersion": "1.0.2-dev",
  "process": {
    "terminal": true,
    "user": {"uid": 0, "gid": 0},
    "args": ["sh"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "TERM=xterm", "OCI_ONLOAD=all", "BARE"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "ambient": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    },
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs", "readonly": true},
  "hostname": "runc",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
     "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]}
  ],
  "annotations": {"org.example/team": "net", "oci-decorator/OCI_ONLOAD": "onload"},
  "linux": {
    "devices": [{"path": "/dev/ldev", "type": "c", "major": 240, "minor": 0,
                 "fileMode": 438, "uid": 0, "gid": 0}],
    "resources": {"devices": [{"allow": false, "access": "rwm"},
                              {"allow": true, "type": "c", "major": 1, "minor": 3,
                               "access": "rw"}]},
    "namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "ipc"},
                   {"type": "uts"}, {"type": "mount"}, {"type": "cgroup"}],
    "maskedPaths": ["/proc/acpi", "/proc/kcore", "/sys/firmware"],
    "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/sys"]
  }
})";

Error ConfigFails(const std::string& s) {
  BundleConfig cfg;
  Error err;
  CAPTURE(s.substr(0, 300));
  CHECK_FALSE(ParseBundleConfig(s, kWhere, &cfg, &err));
  CheckOneLine(err);
  CHECK_MESSAGE(Contains(err.Line(), kWhere), err.Line());
  return err;
}

void ConfigFailsNaming(const std::string& s, const std::string& needle) {
  Error err = ConfigFails(s);
  CHECK_MESSAGE(Contains(err.Line(), needle), err.Line());
}

TEST_SUITE("hostile.config") {
  TEST_CASE("the realistic config.json parses") {
    BundleConfig cfg;
    Error err;
    REQUIRE_MESSAGE(ParseBundleConfig(kConfig, kWhere, &cfg, &err), err.Line());
    CHECK(cfg.root_path == "rootfs");
    CHECK(cfg.env.size() == 4);
    CHECK(cfg.annotations.size() == 2);
    CHECK(cfg.devices.size() == 1);
    CHECK(cfg.device_rules.size() == 2);
  }

  TEST_CASE("empty, null, scalars, garbage") {
    for (const char* s : {"", " ", "{", "nul", "{\"root\":"})
      ConfigFailsNaming(s, "not valid JSON");
    for (const char* s : {"null", "0", "true", "\"x\"", "[]", "[{}]"})
      ConfigFailsNaming(s, "not a JSON object");
    ConfigFailsNaming("{}", "\"root\"");
    ConfigFailsNaming(std::string("\x00\x01\x02", 3), "not valid JSON");
    ConfigFailsNaming(kConfig + std::string("\0{\"x\": 1}", 9), "NUL byte");
  }

  TEST_CASE("truncated at every byte: no crash, an error naming the file, only the whole parses") {
    for (size_t n = 0; n < kConfig.size(); ++n) {
      BundleConfig cfg;
      Error e;
      bool ok = ParseBundleConfig(std::string_view(kConfig).substr(0, n), kWhere, &cfg, &e);
      CAPTURE(n);
      if (ok) {
        CHECK(kConfig.find_first_not_of(" \n", n) == std::string::npos);
      } else {
        CheckOneLine(e);
        CHECK(e.path == kWhere);
      }
    }
  }

  TEST_CASE("wrong type at every key the parser reads") {
    struct Case {
      const char* from;    // a piece of kConfig
      const char* to;      // its hostile replacement
      const char* needle;  // what the error must name
    };
    const Case cases[] = {
        {R"("root": {"path": "rootfs", "readonly": true})", R"("root": "rootfs")", "\"root\""},
        {R"("root": {"path": "rootfs", "readonly": true})", R"("root": ["rootfs"])", "\"root\""},
        {R"("root": {"path": "rootfs", "readonly": true})", R"("root": null)", "\"root\""},
        {R"("path": "rootfs")", R"("path": 1)", "root.path"},
        {R"("path": "rootfs")", R"("path": "")", "root.path"},
        {R"("path": "rootfs")", R"("path": ["rootfs"])", "root.path"},
        {R"("path": "rootfs")", R"("path": {})", "root.path"},
        {R"("path": "rootfs")", R"("p": "rootfs")", "root.path"},
        {R"("readonly": true)", R"("readonly": "true")", "root.readonly"},
        {R"("readonly": true)", R"("readonly": 1)", "root.readonly"},
        {R"("process": {)", R"("process": [], "x": {)", "\"process\""},
        {R"("process": {)", R"("process": "sh", "x": {)", "\"process\""},
        {R"("env": [)", R"("env": {"a": 1}, "x": [)", "process.env"},
        {R"("env": [)", R"("env": 1, "x": [)", "process.env"},
        {R"("env": [)", R"("env": "PATH=/bin", "x": [)", "process.env"},
        {R"("TERM=xterm")", "1", "process.env"},
        {R"("TERM=xterm")", "null", "process.env"},
        {R"("TERM=xterm")", "[\"TERM=xterm\"]", "process.env"},
        {R"("TERM=xterm")", "{\"TERM\": \"xterm\"}", "process.env"},
        {R"("TERM=xterm")", "true", "process.env"},
        {R"("annotations": {)", R"("annotations": [], "x": {)", "\"annotations\""},
        {R"("annotations": {)", R"("annotations": "a=b", "x": {)", "\"annotations\""},
        {R"("org.example/team": "net")", R"("org.example/team": 1)",
         "annotation \"org.example/team\""},
        {R"("org.example/team": "net")", R"("org.example/team": ["net"])",
         "annotation \"org.example/team\""},
        {R"("org.example/team": "net")", R"("org.example/team": {})",
         "annotation \"org.example/team\""},
        {R"("linux": {)", R"("linux": [], "x": {)", "\"linux\""},
        {R"("devices": [{"path")", R"("devices": {"a": 1}, "x": [{"path")", "linux.devices"},
        {R"("path": "/dev/ldev")", R"("path": 5)", "linux.devices[0].path"},
        {R"("path": "/dev/ldev")", R"("path": "")", "linux.devices[0].path"},
        {R"("type": "c", "major": 240)", R"("type": "x", "major": 240)", "linux.devices[0].type"},
        {R"("type": "c", "major": 240)", R"("type": 99, "major": 240)", "linux.devices[0].type"},
        {R"("major": 240)", R"("major": "240")", "linux.devices[0].major"},
        {R"("major": 240)", R"("major": 240.5)", "linux.devices[0].major"},
        {R"("major": 240)", R"("major": 18446744073709551615)", "linux.devices[0].major"},
        {R"("major": 240)", R"("major": 1e300)", "linux.devices[0].major"},
        {R"("minor": 0,)", R"("minor": [0],)", "linux.devices[0].minor"},
        {R"("minor": 0,)", R"("x": 0,)", "linux.devices[0]"},
        {R"("resources": {)", R"("resources": [], "x": {)", "linux.resources"},
        {R"({"devices": [{"allow": false)", R"({"devices": {"a": 1}, "x": [{"allow": false)",
         "linux.resources.devices"},
        {R"("allow": false)", R"("allow": "false")", "linux.resources.devices[0].allow"},
        {R"("allow": false)", R"("allowed": false)", "linux.resources.devices[0].allow"},
        {R"("type": "c", "major": 1)", R"("type": "p", "major": 1)",
         "linux.resources.devices[1].type"},
        {R"("major": 1, "minor": 3)", R"("major": "1", "minor": 3)",
         "linux.resources.devices[1].major"},
        {R"("major": 1, "minor": 3)", R"("major": 1, "minor": 4294967296)",
         "linux.resources.devices[1].minor"},
        {R"("access": "rw")", R"("access": "rwx")", "linux.resources.devices[1].access"},
        {R"("access": "rw")", R"("access": 7)", "linux.resources.devices[1].access"},
        {R"("namespaces": [)", R"("namespaces": "all", "y": [)", "linux.namespaces"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.to);
      ConfigFailsNaming(Sub(kConfig, c.from, c.to), c.needle);
    }
    // Keys the hook never reads may hold anything.
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {R"("hostname": "runc")", R"("hostname": [1, {"a": null}, "x", 2.5, true])"},
             {R"("mounts": [)", R"("mounts": 5, "x": [)"},
             {R"("cwd": "/")", R"("cwd": {"a": [[[]]]})"},
             {R"("ociVersion": "1.0.2-dev")", R"("ociVersion": 1, "hooks": "x")"}}) {
      BundleConfig cfg;
      Error err;
      const std::string& hostile = to;  // (a structured binding cannot be captured in C++17)
      CAPTURE(hostile);
      CHECK_MESSAGE(ParseBundleConfig(Sub(kConfig, from, to), kWhere, &cfg, &err), err.Line());
    }
  }

  TEST_CASE("missing process, env, annotations, linux: fine; env entries without '='") {
    BundleConfig cfg;
    Error err;
    REQUIRE(ParseBundleConfig(R"({"root":{"path":"r"}})", kWhere, &cfg, &err));
    CHECK(cfg.env.empty());
    REQUIRE(ParseBundleConfig(R"({"root":{"path":"r"},"process":{}})", kWhere, &cfg, &err));
    REQUIRE(ParseBundleConfig(R"({"root":{"path":"r"},"process":{"env":["OCI_ONLOAD","=x","",)"
                              R"("A==b"]}})",
                              kWhere, &cfg, &err));
    std::string v = "unset";
    CHECK(ocid::LookupEnv(cfg.env, "OCI_ONLOAD", &v));
    CHECK(v.empty());
    CHECK(ocid::LookupEnv(cfg.env, "A", &v));
    CHECK(v == "=b");
  }

  TEST_CASE("duplicate keys: the last one wins, no crash") {
    BundleConfig cfg;
    Error err;
    REQUIRE(
        ParseBundleConfig(R"({"root":{"path":"a"},"root":{"path":"b"},)"
                          R"("process":{"env":["A=1"]},"process":{"env":["A=2"],"env":["A=3"]},)"
                          R"("annotations":{"k":"1","k":"2"}})",
                          kWhere, &cfg, &err));
    CHECK(cfg.root_path == "b");
    REQUIRE(cfg.env.size() == 1);
    CHECK(cfg.env[0] == "A=3");
    CHECK(cfg.annotations.at("k") == "2");
    // The last duplicate is the one checked.
    ConfigFailsNaming(R"({"root":{"path":"a"},"root":{"path":1}})", "root.path");
  }

  TEST_CASE("deep nesting, read and discarded parts: no stack overflow") {
    const size_t depth = 200000;
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    const std::string deep_obj = Repeat("{\"a\":", depth / 5) + "1" + std::string(depth / 5, '}');
    ConfigFailsNaming(std::string(depth, '['), "not valid JSON");
    ConfigFailsNaming(deep, "not a JSON object");
    ConfigFailsNaming(Sub(kConfig, R"("TERM=xterm")", deep), "process.env");
    ConfigFailsNaming(Sub(kConfig, R"("net")", deep_obj), "annotation \"org.example/team\"");
    ConfigFailsNaming(Sub(kConfig, R"("linux": {)", R"("linux": )" + deep + R"(, "x": {)"),
                      "\"linux\"");
    BundleConfig cfg;
    Error err;
    CHECK_MESSAGE(ParseBundleConfig(Sub(kConfig, R"("hostname": "runc")", "\"hostname\": " + deep),
                                    kWhere, &cfg, &err),
                  err.Line());
    CHECK_MESSAGE(ParseBundleConfig(Sub(kConfig, R"("cwd": "/")", "\"cwd\": " + deep_obj), kWhere,
                                    &cfg, &err),
                  err.Line());
    ConfigFailsNaming(Sub(kConfig, R"("hostname": "runc")", "\"hostname\": " + deep.substr(1)),
                      "not valid JSON");
  }

  TEST_CASE("invalid UTF-8 anywhere (env value, annotation key, root.path, unread parts)") {
    for (const std::string b : {"\xff", "\xc0\x80", "\xed\xb0\x80", "\xe2\x82"}) {
      for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
               {"TERM=xterm", "LANG=fr_FR.ISO-8859-1@" + b},
               {"org.example/team", "k" + b},
               {R"("path": "rootfs")", R"("path": "root)" + b + "\""},
               {R"("hostname": "runc")", R"("hostname": ")" + b + "\""},
               {R"("source": "sysfs")", R"("source": ")" + b + "\""}}) {
        Error e = ConfigFails(Sub(kConfig, from, to));
        CHECK_MESSAGE(Contains(e.Line(), "not valid JSON"), e.Line());
        CHECK_MESSAGE(Contains(e.Line(), "UTF-8"), e.Line());
        CHECK_MESSAGE(Contains(e.Line(), "line "), e.Line());
      }
    }
  }

  TEST_CASE("NUL: refused in root.path, kept in env values") {
    ConfigFailsNaming(Sub(kConfig, R"("path": "rootfs")", R"("path": "rootfs\u0000/../../x")"),
                      "root.path");
    BundleConfig cfg;
    Error err;
    REQUIRE(ParseBundleConfig(Sub(kConfig, "\"OCI_ONLOAD=all\"", R"("OCI_ONLOAD=all\u0000x")"),
                              kWhere, &cfg, &err));
    std::string v;
    REQUIRE(ocid::LookupEnv(cfg.env, "OCI_ONLOAD", &v));
    CHECK(v == std::string("all\0x", 5));
  }

  TEST_CASE("a 10 MB env value and a 10 MB annotation key parse") {
    std::string big(10 << 20, 'v');
    BundleConfig cfg;
    Error err;
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(
        ParseBundleConfig(Sub(Sub(kConfig, "TERM=xterm", "BIG=" + big), "org.example/team", big),
                          kWhere, &cfg, &err));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    std::string v;
    REQUIRE(ocid::LookupEnv(cfg.env, "BIG", &v));
    CHECK(v.size() == big.size());
    CHECK(cfg.annotations.count(big) == 1);
  }

}  // TEST_SUITE

}  // namespace hostile
}  // namespace
