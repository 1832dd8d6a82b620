// spec_keys: config.json keys as runc (Go) and crun read them; where they
// disagree; pruning to what the hook needs.
#include <doctest/doctest.h>

#include <string>

#include "bundle_config.h"
#include "spec_keys.h"

using ocid::BundleConfig;
using ocid::ConfigInterest;
using ocid::Error;
using ocid::GoFoldEquals;
using ocid::ParseBundleConfig;

namespace {

const std::string kWhere = "/run/b/config.json";

BundleConfig Parse(const std::string& json, const ConfigInterest* interest = nullptr) {
  BundleConfig cfg;
  Error err;
  CAPTURE(json);
  REQUIRE_MESSAGE(ParseBundleConfig(json, kWhere, &cfg, &err, interest), err.Line());
  return cfg;
}

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace

TEST_SUITE("spec_keys") {
  TEST_CASE("GoFoldEquals: ASCII case, the Kelvin sign and the long s") {
    CHECK(GoFoldEquals("process", "process"));
    CHECK(GoFoldEquals("Process", "process"));
    CHECK(GoFoldEquals("PROCESS", "process"));
    CHECK(GoFoldEquals("uidmappings", "uidMappings"));
    CHECK(GoFoldEquals("proce\xC5\xBFs", "process"));  // ſ
    CHECK(
        GoFoldEquals("\xC5\xBF"
                     "ize",
                     "size"));
    CHECK(
        GoFoldEquals("\xE2\x84\xAA"
                     "ind",
                     "kind"));  // K (Kelvin)
    CHECK_FALSE(
        GoFoldEquals("\xE2\x84\xAA"
                     "ind",
                     "mind"));
    CHECK_FALSE(GoFoldEquals("proces", "process"));
    CHECK_FALSE(GoFoldEquals("processs", "process"));
    CHECK_FALSE(GoFoldEquals("pro_ess", "process"));
    CHECK_FALSE(GoFoldEquals("", "process"));
    CHECK_FALSE(GoFoldEquals("containerid_", "containerID"));
    CHECK(GoFoldEquals("CONTAINERID", "containerID"));
    // Only letters fold: '[' is not '{' upper-cased.
    CHECK_FALSE(GoFoldEquals("a[", "a{"));
  }

  TEST_CASE("an ordinary config.json is not ambiguous") {
    BundleConfig cfg = Parse(R"({"ociVersion":"1.0.2","root":{"path":"rootfs"},
    "process":{"env":["OCI_ONLOAD=all","PATH=/bin"],"user":{"uid":0,"gid":0},
      "capabilities":{"bounding":["CAP_CHOWN"]}},
    "mounts":[{"destination":"/proc","type":"proc","source":"proc"}],
    "annotations":{"a":"b"},
    "linux":{"namespaces":[{"type":"mount"}],"resources":{"devices":[{"allow":false,"access":"rwm"}]}}})");
    CHECK(cfg.ambiguity.empty());
    CHECK(cfg.env.size() == 2);
  }

  TEST_CASE("keys runc reads by case folding, and duplicates, are ambiguous") {
    struct Case {
      const char* json;
      const char* needle;
    } cases[] = {
        {R"({"root":{"path":"r"},"Process":{"capabilities":{"bounding":["CAP_SYS_ADMIN"]}}})",
         "\"Process\" matches \"process\" only by case"},
        {R"({"root":{"path":"r"},"proce\u017fs":{"env":["X=1"]}})", "matches \"process\""},
        {R"({"root":{"path":"r"},"Linux":{"resources":{"devices":[{"allow":true}]}}})",
         "\"Linux\" matches \"linux\""},
        {R"({"root":{"path":"r"},"linux":{"Resources":{"devices":[{"allow":true}]}}})",
         "\"linux.Resources\""},
        {R"({"root":{"path":"r"},"linux":{"resources":{"devices":[{"allow":false,"Allow":true}]}}})",
         "\"linux.resources.devices[].Allow\""},
        {R"({"root":{"path":"r"},"process":{"Capabilities":{"bounding":["CAP_SYS_ADMIN"]}}})",
         "\"process.Capabilities\""},
        {R"({"root":{"path":"r"},"process":{"capabilities":{"Bounding":["CAP_SYS_ADMIN"]}}})",
         "\"process.capabilities.Bounding\""},
        {R"({"root":{"path":"r"},"process":{"Env":["OCI_ONLOAD=all"]}})", "\"process.Env\""},
        {R"({"root":{"path":"r"},"process":{"env":[]},"process":{"env":["A=1"]}})",
         "\"process\" is given twice"},
        {R"({"root":{"path":"r"},"process":{"env":[],"env":[]}})",
         "\"process.env\" is given twice"},
        {R"({"root":{"path":"r"},"annotations":{"oci-decorator/OCI_ONLOAD":"all","oci-decorator/OCI_ONLOAD":"none"}})",
         "is given twice"},
        {R"({"root":{"path":"r"},"Mounts":[]})", "\"Mounts\" matches \"mounts\""},
        {R"({"root":{"path":"r"},"mounts":[{"destination":"/a","Destination":"/b"}]})",
         "\"mounts[].Destination\""},
        {R"({"root":{"path":"r"},"linux":{"uidMappings":[{"containerID":0,"hostID":1,"hostid":2,"size":1}]}})",
         "\"linux.uidMappings[].hostid\""},
        {R"({"Root":{"path":"r"},"root":{"path":"r"}})", "\"Root\" matches \"root\""},
    };
    for (const auto& c : cases) {
      BundleConfig cfg = Parse(c.json);
      CHECK_MESSAGE(Contains(cfg.ambiguity, c.needle), cfg.ambiguity);
    }
    // Keys the hook and the shim never rely on may be spelled any way.
    CHECK(
        Parse(
            R"({"root":{"path":"r"},"Hostname":"x","hostname":"y","process":{"Cwd":"/","cwd":"/"}})")
            .ambiguity.empty());
  }

  TEST_CASE("requests are collected from every reading") {
    BundleConfig cfg = Parse(R"({"root":{"path":"r"},
    "process":{"env":["OCI_ONLOAD=all"]},"Process":{"env":["OCI_RDMA=all"]},
    "annotations":{"a":"1"},"ANNOTATIONS":{"oci-decorator/OCI_NV":"all"}})");
    CHECK_FALSE(cfg.ambiguity.empty());
    // The pruned document is the exact-key reading only.
    CHECK(cfg.env == std::vector<std::string>{"OCI_ONLOAD=all"});
    CHECK(cfg.annotations.count("oci-decorator/OCI_NV") == 0);
    CHECK(cfg.env_anywhere == std::vector<std::string>{"OCI_ONLOAD=all", "OCI_RDMA=all"});
    REQUIRE(cfg.annotations_anywhere.size() == 2);
    CHECK(cfg.annotations_anywhere[1].first == "oci-decorator/OCI_NV");
  }

  TEST_CASE("an interest keeps only the env entries and annotations that matter") {
    ConfigInterest in;
    in.env_names = {"OCI_ONLOAD"};
    in.annotation_keys = {"oci-decorator/OCI_ONLOAD", "team"};
    std::string env;
    for (int i = 0; i < 200000; ++i) env += "\"V" + std::to_string(i) + "=x\",";
    BundleConfig cfg =
        Parse(R"({"root":{"path":"r"},"process":{"env":[)" + env +
                  R"("OCI_ONLOAD=all","OCI_ONLOAD"]},"annotations":{"team":"a","x":"y"}})",
              &in);
    CHECK(cfg.env == std::vector<std::string>{"OCI_ONLOAD=all", "OCI_ONLOAD"});
    CHECK(cfg.annotations.size() == 1);
    CHECK(cfg.annotations.at("team") == "a");
    // A wrong type is still an error, filtered or not.
    BundleConfig bad;
    Error err;
    CHECK_FALSE(ParseBundleConfig(R"({"root":{"path":"r"},"process":{"env":["A=1",7]}})", kWhere,
                                  &bad, &err, &in));
    CHECK(Contains(err.Line(), "process.env"));
    // Capability sets keep only CAP_SYS_ADMIN, which is all the policy reads.
    cfg = Parse(
        R"({"root":{"path":"r"},"process":{"capabilities":{"bounding":["CAP_CHOWN","CAP_SYS_ADMIN"],
              "mystery":["CAP_SYS_ADMIN"]}}})",
        &in);
    CHECK(cfg.sys_admin_sets == std::vector<std::string>{"bounding", "mystery"});
  }

}  // TEST_SUITE
