// The per-container entry in core: facts of a container, the cheap "does it
// ask", and a container known only by its facts (no config.json, no rootfs,
// as the device plugin would build one) planned like the hook's.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bundle_config.h"
#include "container_plan.h"
#include "fake_host.h"
#include "inventory.h"
#include "oci_state.h"
#include "plan.h"

using ocid::BundleConfig;
using ocid::ContainerDecision;
using ocid::ContainerFacts;
using ocid::ContainerVerdict;
using ocid::Error;
using ocid::InventorySet;
using ocid::OciState;
using ocid::Plan;
using ocid_test::FakeHost;

namespace {

using Strings = std::vector<std::string>;

const char* kInventory = R"({"activation_flag": "OCI_ONLOAD", "driver_feature": ["onload", "zf"],
  "profiles": {"latency": {"EF_POLL_USEC": "100000"}},
  "inventory": {
    "onload": {"devices": ["onload", "sfc_char"], "libraries": ["/usr/lib64/libonload.so"],
               "preload": ["libonload.so"]},
    "zf": {"libraries": ["/usr/lib64/libonload_zf.so"], "binaries": ["/usr/bin/zf_stackdump"]}}})";

InventorySet Set(const std::string& json = kInventory) {
  InventorySet set;
  ocid::Inventory inv;
  Error err;
  REQUIRE_MESSAGE(
      ocid::ParseInventory(json, "/etc/oci-decorator/oci-decorator.d/onload.json", &inv, &err),
      err.Line());
  set.inventories.push_back(inv);
  return set;
}

FakeHost Host() {
  FakeHost h;
  h.Chr("/dev/onload", 300, 0)
      .Chr("/dev/sfc_char", 302, 0)
      .File("/usr/lib64/libonload.so")
      .File("/usr/lib64/libonload_zf.so")
      .File("/usr/bin/zf_stackdump");
  return h;
}

const char* kState = R"({"ociVersion": "1.2.0", "id": "ctr1", "status": "creating", "pid": 4242,
  "bundle": "/run/bundles/ctr1", "annotations": {"oci-decorator/OCI_ONLOAD": "zf"}})";

const char* kConfig = R"({"ociVersion": "1.2.0", "root": {"path": "rootfs"},
  "process": {"user": {"uid": 1000, "gid": 1000, "additionalGids": [27]},
              "env": ["PATH=/bin", "OCI_ONLOAD=onload", "OCI_ONLOAD_PROFILE=latency"]},
  "annotations": {"team": "a"},
  "linux": {"devices": [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}],
            "resources": {"devices": [{"allow": false, "access": "rwm"},
                                      {"allow": true, "type": "c", "major": 10, "minor": 229,
                                       "access": "rw"}]}}})";

void Load(OciState* state, BundleConfig* config) {
  Error err;
  REQUIRE_MESSAGE(ocid::ParseOciState(kState, state, &err), err.Line());
  REQUIRE_MESSAGE(ocid::ParseBundleConfig(kConfig, "/run/bundles/ctr1/config.json", config, &err),
                  err.Line());
}

Strings Targets(const Plan& p) {
  Strings t;
  for (const auto& m : p.mounts) t.push_back(m.target + " <- " + m.source);
  return t;
}

}  // namespace

TEST_SUITE("container_plan") {
  TEST_CASE("ContainerFactsOf: config.json's requests, the state's annotations under its own") {
    OciState state;
    BundleConfig config;
    Load(&state, &config);
    config.annotations["oci-decorator/OCI_ONLOAD"] = "onload";  // config.json's wins
    ContainerFacts c = ocid::ContainerFactsOf(state, config);
    CHECK(c.id == "ctr1");
    CHECK(c.pid == 4242);
    CHECK(c.rootfs == "/run/bundles/ctr1/rootfs");
    CHECK(c.env == config.env);
    CHECK(c.annotations.at("oci-decorator/OCI_ONLOAD") == "onload");
    CHECK(c.annotations.at("team") == "a");
    CHECK(c.uid == 1000);
    CHECK(c.additional_gids == std::vector<uint32_t>{27});
    REQUIRE(c.devices.size() == 1);
    CHECK(c.devices[0].path == "/dev/fuse");
    CHECK(c.device_rules == config.device_rules);
    // Every reading of the request holds the state's as well.
    bool state_request = false;
    for (const auto& [k, v] : c.annotations_anywhere)
      if (k == "oci-decorator/OCI_ONLOAD" && v == "zf") state_request = true;
    CHECK(state_request);
    // The credentials: no user namespace, the ids as given.
    CHECK(ocid::ProcessOnHost(c).uid == 1000);
    CHECK(ocid::ProcessOnHost(c).groups == std::vector<uint32_t>{27});
    c.namespaces.push_back({"user", "/proc/1/ns/user"});
    CHECK(ocid::ProcessOnHost(c).uid == ocid::HostCredentials::kUnmapped);
  }

  TEST_CASE("AsksAny: an activation flag set to anything but off, broken inventories too") {
    InventorySet set = Set();
    ContainerFacts c;
    CHECK_FALSE(ocid::AsksAny(c, set));
    c.env = {"OCI_ONLOAD=none", "OCI_ONLOAD_PROFILE=latency"};
    c.annotations = {{"oci-decorator/OCI_ONLOAD", "false"}, {"OCI_ONLOAD", "all"}};
    CHECK_FALSE(ocid::AsksAny(c, set));
    // Not asked: the decision says so and fails nothing.
    ContainerDecision d;
    Error err;
    CHECK(ocid::DecideContainer(c, set, &d, &err));
    CHECK(d.verdict == ContainerVerdict::kNotAsked);
    c.env.push_back("OCI_ONLOAD=bogus");  // asks, although the decision will fail
    CHECK(ocid::AsksAny(c, set));
    CHECK_FALSE(ocid::DecideContainer(c, set, &d, &err));
    CHECK(err.Line().find("unknown feature \"bogus\"") != std::string::npos);

    ContainerFacts b;
    b.annotations = {{"oci-decorator/OCI_BROKEN", "all"}};
    CHECK_FALSE(ocid::AsksAny(b, set));
    set.broken.push_back({"/etc/oci-decorator/oci-decorator.d/broken.json", "OCI_BROKEN", Error{}});
    CHECK(ocid::AsksAny(b, set));

    // An ambiguous config.json: any reading counts, the exact one's is not enough.
    ContainerFacts a;
    a.ambiguity = "two process.env keys";
    a.env_anywhere = {"OCI_ONLOAD=all"};
    CHECK(ocid::AsksAny(a, Set()));
    a.env_anywhere = {"OCI_ONLOAD=0"};
    a.env = {"OCI_ONLOAD=all"};
    CHECK_FALSE(ocid::AsksAny(a, Set()));
  }

  TEST_CASE("a container known by its facts alone plans the hook's mounts for the same config") {
    InventorySet set = Set();
    FakeHost host = Host();

    // The hook's way: the state and config.json a runtime hands over.
    OciState state;
    BundleConfig config;
    Load(&state, &config);
    Plan hook;
    Error err;
    ocid::PlanInputs in{&state, &config, &set, &host};
    REQUIRE_MESSAGE(ocid::BuildPlan(in, &hook, &err), err.Line());

    // The same container as the device plugin would know it: no bundle, no
    // rootfs, no pid; the pod's annotations beside the container's.
    ContainerFacts c;
    c.id = "ctr1";
    c.env = {"PATH=/bin", "OCI_ONLOAD=onload", "OCI_ONLOAD_PROFILE=latency"};
    c.annotations = {{"team", "a"}, {"oci-decorator/OCI_ONLOAD", "zf"}};
    c.uid = 1000;
    c.gid = 1000;
    c.additional_gids = {27};
    c.devices = config.devices;
    c.device_rules = config.device_rules;
    ContainerDecision decision;
    Plan facts;
    REQUIRE_MESSAGE(
        ocid::PlanContainer(c, set, host, ocid::UnseenLibraryDirs(), &decision, &facts, &err),
        err.Line());

    CHECK(decision.verdict == ContainerVerdict::kActivated);
    REQUIRE(decision.by_inventory.size() == 1);
    CHECK(decision.by_inventory[0].activation.features == Strings{"onload", "zf"});
    CHECK(decision.by_inventory[0].profile == "latency");
    CHECK(decision.by_inventory[0].profile_by == "env OCI_ONLOAD_PROFILE=latency");

    CHECK(facts.rootfs.empty());
    CHECK(hook.rootfs == "/run/bundles/ctr1/rootfs");
    CHECK(facts.pid == 0);
    CHECK(Targets(facts) == Targets(hook));
    CHECK(Targets(facts).size() == 7);  // 2 devices, 2 libraries in 2 directories each, 1 binary
    CHECK(facts.device_rules == hook.device_rules);
    CHECK(facts.container_device_rules == hook.container_device_rules);
    CHECK_FALSE(facts.container_device_rules.empty());
    CHECK(facts.preload == hook.preload);
    CHECK(facts.env == hook.env);
    CHECK(facts.env == ocid::EnvList{{"EF_POLL_USEC", "100000"}});
    CHECK(facts.process.uid == hook.process.uid);
    CHECK(facts.process.groups == hook.process.groups);
    REQUIRE(facts.activated.size() == 1);
    CHECK(facts.activated[0].requested_by == hook.activated[0].requested_by);
    CHECK(facts.activated[0].profile_by == hook.activated[0].profile_by);
  }

  TEST_CASE("DecideContainer: ignored requests, and the decision PlanContainer reports") {
    InventorySet set = Set(R"({"activation_flag": "OCI_ONLOAD", "driver_feature": ["onload"],
                "activation_policy": {"sources": ["annotation"]},
                "profiles": {"latency": {"EF_POLL_USEC": "100000"}},
                "inventory": {"onload": {"devices": ["onload"]}}})");
    ContainerFacts c;
    c.env = {"OCI_ONLOAD=all"};
    ContainerDecision d;
    Error err;
    REQUIRE_MESSAGE(ocid::DecideContainer(c, set, &d, &err), err.Line());
    CHECK(d.verdict == ContainerVerdict::kIgnored);
    REQUIRE(d.ignored.size() == 1);
    CHECK(d.ignored[0].rfind("env OCI_ONLOAD=all (", 0) == 0);

    c.annotations = {{"oci-decorator/OCI_ONLOAD", "onload"}};
    c.env.push_back("OCI_ONLOAD_PROFILE=latency");
    REQUIRE_MESSAGE(ocid::DecideContainer(c, set, &d, &err), err.Line());
    CHECK(d.verdict == ContainerVerdict::kActivated);
    CHECK(d.by_inventory[0].profile.empty());
    REQUIRE(d.ignored.size() == 2);
    CHECK(d.ignored[1].rfind("env OCI_ONLOAD_PROFILE=latency (", 0) == 0);

    FakeHost host = Host();
    ContainerDecision pd;
    Plan plan;
    REQUIRE_MESSAGE(ocid::PlanContainer(c, set, host, ocid::UnseenLibraryDirs(), &pd, &plan, &err),
                    err.Line());
    CHECK(pd.verdict == d.verdict);
    CHECK(pd.ignored == d.ignored);
    CHECK(plan.ignored == d.ignored);

    c.annotations_pruned = true;
    CHECK_FALSE(ocid::DecideContainer(c, set, &d, &err));
    CHECK(err.Line().find("OCI state: annotations over") != std::string::npos);
  }
}
