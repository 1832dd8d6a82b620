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
