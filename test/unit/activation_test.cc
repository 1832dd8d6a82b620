// Activation: which inventories and features a container asks for.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "activation.h"

using ocid::Activation;
using ocid::BundleConfig;
using ocid::CheckPolicy;
using ocid::DecideActivation;
using ocid::Error;
using ocid::Inventory;
using ocid::IsOffValue;
using ocid::ParseActivationValue;
using ocid::PrivilegedReason;

namespace {

using Strings = std::vector<std::string>;
using Annotations = std::map<std::string, std::string>;

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

Inventory OnloadInventory() {
  Inventory inv;
  inv.file = "/etc/oci-decorator/oci-decorator.d/onload.json";
  inv.activation_flag = "OCI_ONLOAD";
  inv.driver_features = {"onload", "zf", "tcpdirect"};
  for (const auto& n : inv.driver_features) {
    ocid::Feature f;
    f.name = n;
    inv.features.push_back(f);
  }
  return inv;
}

Strings Features(const std::string& value) {
  Strings out = {"sentinel"};
  Error err;
  bool ok = ParseActivationValue(OnloadInventory(), value, &out, &err);
  CAPTURE(value);
  REQUIRE_MESSAGE(ok, err.Line());
  return out;
}

Activation Decide(const Strings& env, const Annotations& ann = {}) {
  Activation a;
  a.features = {"stale"};
  Error err;
  bool ok = DecideActivation(OnloadInventory(), env, ann, &a, &err);
  REQUIRE_MESSAGE(ok, err.Line());
  return a;
}

}  // namespace

TEST_SUITE("activation") {
  TEST_CASE("all requests every feature in driver_feature order") {
    CHECK(Features("all") == Strings{"onload", "zf", "tcpdirect"});
    CHECK(Features("ALL") == Strings{"onload", "zf", "tcpdirect"});
    CHECK(Features("All") == Strings{"onload", "zf", "tcpdirect"});
    CHECK(Features("  all  ") == Strings{"onload", "zf", "tcpdirect"});
  }

  TEST_CASE("a single feature") {
    CHECK(Features("zf") == Strings{"zf"});
    CHECK(Features("onload") == Strings{"onload"});
  }

  TEST_CASE("a comma list, kept in driver_feature order") {
    CHECK(Features("tcpdirect,onload") == Strings{"onload", "tcpdirect"});
    CHECK(Features("zf,onload") == Strings{"onload", "zf"});
  }

  TEST_CASE("spaces around names and empty items are ignored") {
    CHECK(Features(" zf , onload ") == Strings{"onload", "zf"});
    CHECK(Features("zf,,onload,") == Strings{"onload", "zf"});
    CHECK(Features("\tzf\t") == Strings{"zf"});
  }

  TEST_CASE("duplicates collapse") {
    CHECK(Features("zf,zf") == Strings{"zf"});
    CHECK(Features("all,zf") == Strings{"onload", "zf", "tcpdirect"});
    CHECK(Features("zf,all,onload") == Strings{"onload", "zf", "tcpdirect"});
  }

  TEST_CASE("off values") {
    for (const char* v : {"none", "NONE", "None", "void", "VOID", "0", "false", "FALSE", "", "  ",
                          " none ", "\tfalse\n"}) {
      CAPTURE(v);
      CHECK(IsOffValue(v));
      CHECK(Features(v).empty());
    }
    for (const char* v : {"1", "true", "all", "zf", "nonee", "no"}) {
      CAPTURE(v);
      CHECK_FALSE(IsOffValue(v));
    }
  }

  TEST_CASE("an unknown feature is an error listing the valid names and the file") {
    Inventory inv = OnloadInventory();
    Strings f;
    Error err;
    CHECK_FALSE(ParseActivationValue(inv, "onload,bogus", &f, &err));
    const std::string line = err.Line();
    CAPTURE(line);
    CHECK(Contains(line, "\"bogus\""));
    CHECK(Contains(line, "OCI_ONLOAD"));
    CHECK(Contains(line, "all"));
    CHECK(Contains(line, "onload"));
    CHECK(Contains(line, "zf"));
    CHECK(Contains(line, "tcpdirect"));
    CHECK(Contains(line, inv.file));
  }

  TEST_CASE("feature names are case-sensitive") {
    Strings f;
    Error err;
    CHECK_FALSE(ParseActivationValue(OnloadInventory(), "ZF", &f, &err));
    CHECK(Contains(err.Line(), "\"ZF\""));
  }

  TEST_CASE("not requested: inactive, no features") {
    Activation a = Decide({"PATH=/bin"});
    CHECK_FALSE(a.active);
    CHECK(a.features.empty());
    CHECK(a.source.empty());
  }

  TEST_CASE("requested by environment") {
    Activation a = Decide({"PATH=/bin", "OCI_ONLOAD=all"});
    CHECK(a.active);
    CHECK(a.features == Strings{"onload", "zf", "tcpdirect"});
    CHECK(Contains(a.source, "env"));
    CHECK(Contains(a.source, "OCI_ONLOAD=all"));
  }

  TEST_CASE("requested by annotation oci-decorator/<flag>") {
    Activation a = Decide({}, {{"oci-decorator/OCI_ONLOAD", "zf"}});
    CHECK(a.active);
    CHECK(a.features == Strings{"zf"});
    CHECK(Contains(a.source, "annotation"));
    CHECK(Contains(a.source, "oci-decorator/OCI_ONLOAD"));
    CHECK_FALSE(Contains(a.source, "env"));
  }

  TEST_CASE("env and annotation: union of both") {
    Activation a = Decide({"OCI_ONLOAD=tcpdirect"}, {{"oci-decorator/OCI_ONLOAD", "onload"}});
    CHECK(a.active);
    CHECK(a.features == Strings{"onload", "tcpdirect"});
    CHECK(Contains(a.source, "env"));
    CHECK(Contains(a.source, "annotation"));
  }

  TEST_CASE("env off, annotation on: on") {
    Activation a = Decide({"OCI_ONLOAD=none"}, {{"oci-decorator/OCI_ONLOAD", "zf"}});
    CHECK(a.active);
    CHECK(a.features == Strings{"zf"});
    CHECK_FALSE(Contains(a.source, "env"));
  }

  TEST_CASE("env on, annotation off: on") {
    Activation a = Decide({"OCI_ONLOAD=zf"}, {{"oci-decorator/OCI_ONLOAD", "false"}});
    CHECK(a.active);
    CHECK(a.features == Strings{"zf"});
  }

  TEST_CASE("both off: off") {
    Activation a = Decide({"OCI_ONLOAD=0"}, {{"oci-decorator/OCI_ONLOAD", "void"}});
    CHECK_FALSE(a.active);
    CHECK(a.features.empty());
  }

  TEST_CASE("bare variable without '=' is off") {
    Activation a = Decide({"OCI_ONLOAD"});
    CHECK_FALSE(a.active);
  }

  TEST_CASE("last env occurrence wins") {
    CHECK_FALSE(Decide({"OCI_ONLOAD=all", "OCI_ONLOAD=none"}).active);
    Activation a = Decide({"OCI_ONLOAD=none", "OCI_ONLOAD=zf"});
    CHECK(a.active);
    CHECK(a.features == Strings{"zf"});
  }

  TEST_CASE("exact-name matching for env and annotations") {
    Activation a =
        Decide({"DISABLE_OCI_ONLOAD=all", "XOCI_ONLOAD=all", "OCI_ONLOAD_X=all", "oci_onload=all"},
               {{"oci-decorator/OCI_ONLOAD_X", "all"},
                {"OCI_ONLOAD", "all"},
                {"oci-decorator/oci_onload", "all"},
                {"x-oci-decorator/OCI_ONLOAD", "all"}});
    CHECK_FALSE(a.active);
    CHECK(a.features.empty());
  }

  TEST_CASE("unknown feature in env or annotation is an error") {
    Activation a;
    Error err;
    CHECK_FALSE(DecideActivation(OnloadInventory(), {"OCI_ONLOAD=bogus"}, {}, &a, &err));
    CHECK(Contains(err.Line(), "\"bogus\""));
    Error err2;
    CHECK_FALSE(DecideActivation(OnloadInventory(), {}, {{"oci-decorator/OCI_ONLOAD", "zf,nope"}},
                                 &a, &err2));
    CHECK(Contains(err2.Line(), "\"nope\""));
  }

  // --- Activation policy: an environment variable is a request, and the
  // operator decides whose requests count.

  namespace {

  Activation DecideWith(const Inventory& inv, const Strings& env, const Annotations& ann) {
    Activation a;
    Error err;
    bool ok = DecideActivation(inv, env, ann, &a, &err);
    REQUIRE_MESSAGE(ok, err.Line());
    return a;
  }

  }  // namespace

  TEST_CASE("policy: annotation-only ignores env requests, even malformed ones") {
    Inventory inv = OnloadInventory();
    inv.policy.accept_env = false;
    Activation a = DecideWith(inv, {"OCI_ONLOAD=all"}, {});
    CHECK_FALSE(a.active);
    CHECK(Contains(a.ignored, "env OCI_ONLOAD=all"));
    CHECK(Contains(a.ignored, "accepts only the annotation oci-decorator/OCI_ONLOAD"));
    // An ignored value is not even parsed: it cannot fail the container.
    CHECK_FALSE(DecideWith(inv, {"OCI_ONLOAD=bogus"}, {}).active);
    // "Off" in the env is not worth a warning.
    CHECK(DecideWith(inv, {"OCI_ONLOAD=none"}, {}).ignored.empty());
    Activation b = DecideWith(inv, {"OCI_ONLOAD=all"}, {{"oci-decorator/OCI_ONLOAD", "zf"}});
    CHECK(b.active);
    CHECK(b.features == Strings{"zf"});
    CHECK(b.source == "annotation oci-decorator/OCI_ONLOAD=zf");
    CHECK_FALSE(b.ignored.empty());
  }

  TEST_CASE("policy: env-only ignores the annotation") {
    Inventory inv = OnloadInventory();
    inv.policy.accept_annotation = false;
    Activation a = DecideWith(inv, {}, {{"oci-decorator/OCI_ONLOAD", "all"}});
    CHECK_FALSE(a.active);
    CHECK(Contains(a.ignored, "accepts only the environment variable"));
    CHECK(DecideWith(inv, {"OCI_ONLOAD=onload"}, {}).active);
  }

  TEST_CASE("policy: required annotations refuse, naming the rule") {
    Inventory inv = OnloadInventory();
    inv.policy.require_annotations = {{"example.com/onload-allowed", "true"}};
    BundleConfig cfg;
    Annotations ok_ann = {{"example.com/onload-allowed", "true"}};
    Activation a = DecideWith(inv, {"OCI_ONLOAD=all"}, ok_ann);
    Error err;
    CHECK(CheckPolicy(inv, a, cfg, ok_ann, &err));

    for (const Annotations& bad :
         {Annotations{}, Annotations{{"example.com/onload-allowed", "TRUE"}},
          Annotations{{"example.com/onload-allowed", ""}}}) {
      Activation b = DecideWith(inv, {"OCI_ONLOAD=all"}, bad);
      Error e;
      CHECK_FALSE(CheckPolicy(inv, b, cfg, bad, &e));
      CHECK(Contains(e.Line(), "example.com/onload-allowed=true"));
      CHECK(Contains(e.Line(), "require_annotations"));
      CHECK(Contains(e.Line(), inv.file));
      CHECK(Contains(e.Line(), "env OCI_ONLOAD=all"));
    }
    // A container that does not ask is never refused.
    Activation none = DecideWith(inv, {}, {});
    Error e2;
    CHECK(CheckPolicy(inv, none, cfg, {}, &e2));
  }

  TEST_CASE("privileged: CAP_SYS_ADMIN in any set, or every device allowed last") {
    BundleConfig cfg;
    CHECK(PrivilegedReason(cfg).empty());
    cfg.sys_admin_sets = {"bounding"};
    CHECK(Contains(PrivilegedReason(cfg), "CAP_SYS_ADMIN in process.capabilities.bounding"));

    BundleConfig dev;
    ocid::DeviceRule deny_all{'a', -1, -1, "rwm", false};
    ocid::DeviceRule allow_all{'a', -1, -1, "rwm", true};
    ocid::DeviceRule allow_one{'c', 1, 3, "rwm", true};
    dev.device_rules = {deny_all, allow_one};
    CHECK(PrivilegedReason(dev).empty());
    dev.device_rules = {deny_all, allow_all, allow_one};
    CHECK(Contains(PrivilegedReason(dev), "allows every device"));
    dev.device_rules = {allow_all, deny_all};
    CHECK(PrivilegedReason(dev).empty());
  }

  TEST_CASE("policy: refuse_privileged refuses only privileged requesters") {
    Inventory inv = OnloadInventory();
    inv.policy.refuse_privileged = true;
    BundleConfig plain, priv;
    priv.sys_admin_sets = {"effective", "bounding"};
    Activation a = DecideWith(inv, {"OCI_ONLOAD=all"}, {});
    Error err;
    CHECK(CheckPolicy(inv, a, plain, {}, &err));
    Error e;
    CHECK_FALSE(CheckPolicy(inv, a, priv, {}, &e));
    CHECK(Contains(e.Line(),
                   "is privileged (it has CAP_SYS_ADMIN in process.capabilities.effective)"));
    CHECK(Contains(e.Line(), "refuse_privileged"));
    Activation none = DecideWith(inv, {}, {});
    Error e2;
    CHECK(CheckPolicy(inv, none, priv, {}, &e2));
  }

  TEST_CASE(
      "NamedValue: the env entry (last wins), then the annotation, each as a message names it") {
    using ocid::NamedValue;
    CHECK(NamedValue("OCI_ONLOAD", {"PATH=/bin"}, {}).empty());
    auto both =
        NamedValue("OCI_ONLOAD_PROFILE", {"OCI_ONLOAD_PROFILE=a", "OCI_ONLOAD_PROFILE=latency"},
                   {{"oci-decorator/OCI_ONLOAD_PROFILE", "none"}});
    REQUIRE(both.size() == 2);
    CHECK(both[0].from_env);
    CHECK(both[0].what == "env OCI_ONLOAD_PROFILE=latency");
    CHECK(both[0].value == "latency");
    CHECK_FALSE(both[1].from_env);
    CHECK(both[1].what == "annotation oci-decorator/OCI_ONLOAD_PROFILE=none");
    CHECK(both[1].value == "none");
    // A bare name is present with an empty value; a longer name is another variable.
    auto bare = NamedValue("OCI_ONLOAD", {"OCI_ONLOAD", "OCI_ONLOADX=all"}, {});
    REQUIRE(bare.size() == 1);
    CHECK(bare[0].what == "env OCI_ONLOAD=");
    CHECK(NamedValue("OCI_ONLOAD", {}, {{"OCI_ONLOAD", "all"}}).empty());
  }

  TEST_CASE("AsksFor: a setting that is not off, from either source, whatever the policy") {
    using ocid::AsksFor;
    CHECK_FALSE(AsksFor("OCI_ONLOAD", {}, {}));
    CHECK(AsksFor("OCI_ONLOAD", {"OCI_ONLOAD=zf"}, {}));
    CHECK(AsksFor("OCI_ONLOAD", {}, {{"oci-decorator/OCI_ONLOAD", "bogus"}}));
    CHECK_FALSE(AsksFor("OCI_ONLOAD", {"OCI_ONLOAD=all", "OCI_ONLOAD= None "}, {}));
    CHECK(AsksFor("OCI_ONLOAD", {"OCI_ONLOAD=0"}, {{"oci-decorator/OCI_ONLOAD", "all"}}));
    CHECK_FALSE(AsksFor("OCI_ONLOAD", {"OCI_ONLOAD"}, {{"oci-decorator/OCI_ONLOAD", "false"}}));
    CHECK_FALSE(AsksFor("", {"=all"}, {{"oci-decorator/", "all"}}));
  }

  TEST_CASE("AsksForAnywhere: any reading of config.json, or the state") {
    using ocid::AsksForAnywhere;
    using Pairs = std::vector<std::pair<std::string, std::string>>;
    CHECK_FALSE(AsksForAnywhere("OCI_ONLOAD", {}, {}, {}));
    // Every entry counts, not only the last one.
    CHECK(AsksForAnywhere("OCI_ONLOAD", {"OCI_ONLOAD=all", "OCI_ONLOAD=none"}, {}, {}));
    CHECK_FALSE(
        AsksForAnywhere("OCI_ONLOAD", {"OCI_ONLOAD=none", "OCI_ONLOAD", "OCI_ONLOADX=1"}, {}, {}));
    CHECK(AsksForAnywhere("OCI_ONLOAD", {}, Pairs{{"oci-decorator/OCI_ONLOAD", "off?"}, {"x", "y"}},
                          {}));
    CHECK_FALSE(AsksForAnywhere("OCI_ONLOAD", {}, Pairs{{"oci-decorator/OCI_ONLOAD", "void"}}, {}));
    CHECK(AsksForAnywhere("OCI_ONLOAD", {}, {}, {{"oci-decorator/OCI_ONLOAD", "all"}}));
    CHECK_FALSE(AsksForAnywhere("OCI_ONLOAD", {}, {}, {{"OCI_ONLOAD", "all"}}));
    CHECK_FALSE(AsksForAnywhere("", {"=all"}, Pairs{{"oci-decorator/", "all"}}, {}));
  }

}  // TEST_SUITE
