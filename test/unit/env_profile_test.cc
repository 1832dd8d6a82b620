// Environment profiles: the .opf parser (straight-line files only, every
// rejected construct), imports, the inventory keys, and the planner's
// selection through <flag>_PROFILE.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "bundle_config.h"
#include "container_plan.h"
#include "env_profile.h"
#include "fake_host.h"
#include "inventory.h"
#include "oci_state.h"
#include "plan.h"
#include "plan_json.h"
#include "planner.h"

using ocid::EnvList;
using ocid::Error;
using ocid::OpfStatement;
using ocid::ProfileSources;
using ocid_test::FakeHost;

namespace {

const std::vector<std::string> kEF = {"EF_"};
const std::string kDir = "/usr/libexec/onload/profiles";

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

std::vector<OpfStatement> ParseOk(const std::string& bytes) {
  std::vector<OpfStatement> out;
  Error err;
  REQUIRE_MESSAGE(ocid::ParseOpf(bytes, "t.opf", kEF, &out, &err), err.Line());
  return out;
}

std::string ParseErr(const std::string& bytes) {
  std::vector<OpfStatement> out;
  Error err;
  CHECK_FALSE(ocid::ParseOpf(bytes, "t.opf", kEF, &out, &err));
  return err.Line();
}

ProfileSources Src() {
  ProfileSources s;
  s.inventory = "onload.json";
  s.dir = kDir;
  s.prefixes = kEF;
  return s;
}

bool Resolve(const FakeHost& host, const ProfileSources& src, const std::string& name, EnvList* env,
             Error* err) {
  return ocid::ResolveProfile(
      src, name, ocid::HostProfileReader(host), [&] { return ocid::AvailableProfiles(src, host); },
      env, err);
}

}  // namespace

TEST_CASE("ParseOpf: a straight-line profile like Onload's latency.opf") {
  auto s = ParseOk(
      "# Onload low latency profile.\r\n"
      "\r\n"
      "# Enable polling / spinning.\n"
      "onload_set EF_POLL_USEC 100000   # trailing comment\n"
      "\tonload_set EF_TCP_FASTSTART_INIT 0\n"
      "onload_set EF_NAME 'a b'\n"
      "onload_set EF_EMPTY \"\"\n"
      "onload_import base");
  REQUIRE(s.size() == 5);
  CHECK(s[0].kind == OpfStatement::kSet);
  CHECK(s[0].name == "EF_POLL_USEC");
  CHECK(s[0].value == "100000");
  CHECK(s[0].line == 4);
  CHECK(s[1].value == "0");
  CHECK(s[2].value == "a b");
  CHECK(s[3].value == "");
  CHECK(s[4].kind == OpfStatement::kImport);
  CHECK(s[4].name == "base");
  CHECK(s[4].line == 8);
  CHECK(ParseOk("").empty());
  CHECK(ParseOk("\n\n# only comments\n").empty());
}

TEST_CASE("ParseOpf: everything that is not straight-line is refused with file:line") {
  // The real latency-best.opf tests sysfs in an `if`.
  std::string e = ParseErr("onload_set EF_POLL_USEC 1\nif [ -e /sys/x ]; then\n");
  CHECK(Contains(e, "t.opf:2:"));
  CHECK(Contains(e, "define it in the inventory's \"profiles\" instead"));
  CHECK(Contains(e, "'['"));  // the first word is "if", but `[` is refused first
  CHECK(Contains(ParseErr("fi\n"), "\"fi\" is not onload_set or onload_import"));
  CHECK(Contains(ParseErr("echo hi\n"), "\"echo\" is not onload_set"));
  CHECK(Contains(ParseErr("onload_set EF_X $HOME\n"), "'$'"));
  CHECK(Contains(ParseErr("onload_set EF_X \"$HOME\"\n"), "shell expansion"));
  CHECK(Contains(ParseErr("onload_set EF_X '`id`'\n"), "shell expansion"));
  CHECK(Contains(ParseErr("onload_set EF_X \"a\\\\b\"\n"), "shell expansion"));
  CHECK(Contains(ParseErr("onload_set EF_X `id`\n"), "'`'"));
  CHECK(Contains(ParseErr("onload_set EF_X 1; rm -rf /\n"), "';'"));
  CHECK(Contains(ParseErr("onload_set EF_X 1 && x\n"), "'&'"));
  CHECK(Contains(ParseErr("onload_set EF_X $(id)\n"), "'$'"));
  CHECK(Contains(ParseErr("onload_set EF_X *\n"), "'*'"));
  CHECK(Contains(ParseErr("onload_set EF_X 'unterminated\n"), "unterminated"));
  CHECK(Contains(ParseErr("onload_set EF_X 'a'b\n"), "joined"));
  CHECK(Contains(ParseErr("onload_set EF_X a'b'\n"), "'''"));
  CHECK(Contains(ParseErr("onload_set EF_X\n"), "onload_set with 1 arguments"));
  CHECK(Contains(ParseErr("onload_set EF_X 1 2\n"), "onload_set with 3 arguments"));
  CHECK(Contains(ParseErr("onload_import a b\n"), "onload_import with 2 arguments"));
  CHECK(Contains(ParseErr("onload_import ../../etc/x\n"), "invalid name"));
  CHECK(Contains(ParseErr("onload_import .hidden\n"), "invalid name"));
  CHECK(
      Contains(ParseErr("onload_set LD_PRELOAD /x.so\n"), "not a variable this inventory allows"));
  CHECK(Contains(ParseErr("onload_set ef_lower 1\n"), "not a variable"));
  CHECK(Contains(ParseErr("onload_set EF_ 1\n"), "not a variable"));
  CHECK(Contains(ParseErr("onload_set EF_X a\x01z\n"), "control character"));
  CHECK(Contains(ParseErr(std::string("onload_set EF_X 1\n\0", 19)), "NUL"));
  CHECK(Contains(ParseErr("onload_set EF_X 1\n" + std::string(70000, '#')), "larger than"));
  CHECK(Contains(ParseErr("onload_set EF_X " + std::string(5000, 'a') + "\n"), "too long"));
  CHECK(Contains(ParseErr("\n\nEF_X=1\n"), "t.opf:3:"));
}

TEST_CASE("ParseOpf: other prefixes when the inventory declares them") {
  std::vector<OpfStatement> out;
  Error err;
  CHECK(ocid::ParseOpf("onload_set ZF_ATTR x\n", "t.opf", {"EF_", "ZF_"}, &out, &err));
  CHECK_FALSE(ocid::ParseOpf("onload_set ZF_ATTR x\n", "t.opf", kEF, &out, &err));
}

TEST_CASE("ResolveProfile: inline profiles win over files; imports; last set wins") {
  FakeHost h;
  h.Dir(kDir)
      .Content(kDir + "/latency.opf",
               "onload_set EF_POLL_USEC 100000\nonload_import common\n"
               "onload_set EF_POLL_USEC 5\n")
      .Content(kDir + "/common.opf-fragment", "onload_set EF_A 1\n")
      .Content(kDir + "/inl.opf", "onload_set EF_FROM_FILE 1\n");
  ProfileSources src = Src();
  src.inline_profiles["inl"] = {{"EF_FROM_INVENTORY", "1"}};
  EnvList env;
  Error err;
  REQUIRE_MESSAGE(Resolve(h, src, "latency", &env, &err), err.Line());
  CHECK(env == EnvList{{"EF_POLL_USEC", "5"}, {"EF_A", "1"}});
  REQUIRE(Resolve(h, src, "inl", &env, &err));
  CHECK(env == EnvList{{"EF_FROM_INVENTORY", "1"}});
  // A fragment is only for imports.
  CHECK_FALSE(Resolve(h, src, "common", &env, &err));
  CHECK(Contains(err.Line(), "unknown profile \"common\""));
  CHECK(Contains(err.Line(), "available: inl, latency"));
}

TEST_CASE("ResolveProfile: unknown names, cycles, depth, missing imports") {
  FakeHost h;
  h.Dir(kDir)
      .Content(kDir + "/a.opf", "onload_import b\n")
      .Content(kDir + "/b.opf", "onload_import a\n")
      .Content(kDir + "/self.opf", "onload_import self\n")
      .Content(kDir + "/miss.opf", "\nonload_import nothere\n")
      .Content(kDir + "/best.opf", "if [ -d /sys ]; then onload_set EF_X 1; fi\n");
  for (int i = 0; i < 10; ++i)
    h.Content(kDir + "/d" + std::to_string(i) + ".opf",
              i < 9 ? "onload_import d" + std::to_string(i + 1) + "\n" : "onload_set EF_D 1\n");
  ProfileSources src = Src();
  EnvList env;
  Error err;
  CHECK_FALSE(Resolve(h, src, "nope", &env, &err));
  CHECK(Contains(err.Line(),
                 "unknown profile \"nope\" for inventory onload.json (available: a, b, best"));
  CHECK_FALSE(Resolve(h, src, "../a", &env, &err));
  CHECK(Contains(err.Line(), "unknown profile"));
  CHECK_FALSE(Resolve(h, src, "a", &env, &err));
  CHECK(Contains(err.Line(), "import cycle: a -> b -> a"));
  CHECK_FALSE(Resolve(h, src, "self", &env, &err));
  CHECK(Contains(err.Line(), "import cycle: self -> self"));
  CHECK_FALSE(Resolve(h, src, "miss", &env, &err));
  CHECK(Contains(err.Line(), kDir + "/miss.opf:2: onload_import nothere: no nothere.opf"));
  CHECK_FALSE(Resolve(h, src, "best", &env, &err));
  CHECK(Contains(err.Line(), kDir + "/best.opf:1:"));
  CHECK(Contains(err.Line(), "define it in the inventory's \"profiles\" instead"));
  // d0 -> d1 -> ... -> d9: nine imports deep.
  CHECK_FALSE(Resolve(h, src, "d0", &env, &err));
  CHECK(Contains(err.Line(), "nest deeper than 8"));
  REQUIRE_MESSAGE(Resolve(h, src, "d1", &env, &err), err.Line());  // eight deep
  CHECK(env == EnvList{{"EF_D", "1"}});
  // No directory: inline profiles only.
  src.dir.clear();
  CHECK_FALSE(Resolve(h, src, "d1", &env, &err));
  CHECK(Contains(err.Line(), "(available: none)"));
}

TEST_CASE("ResolveProfile: too many variables") {
  std::string big;
  for (size_t i = 0; i <= ocid::kMaxProfileVars; ++i)
    big += "onload_set EF_V" + std::to_string(i) + " 1\n";
  FakeHost h;
  h.Dir(kDir).Content(kDir + "/big.opf", big);
  EnvList env;
  Error err;
  CHECK_FALSE(Resolve(h, Src(), "big", &env, &err));
  CHECK(Contains(err.Line(), "more than 256 variables"));
}

// --- inventory keys -------------------------------------------------------------

namespace {

std::string InventoryJson(const std::string& extra) {
  return R"({"activation_flag": "OCI_ONLOAD", "driver_feature": ["onload"],)" + extra +
         R"("inventory": {"onload": {"devices": ["onload"],
            "libraries": ["/usr/lib64/libonload.so"], "preload": ["libonload.so"]}}})";
}

std::string InventoryErr(const std::string& extra) {
  ocid::Inventory inv;
  Error err;
  CHECK_FALSE(ocid::ParseInventory(InventoryJson(extra), "onload.json", &inv, &err));
  return err.Line();
}

}  // namespace

TEST_CASE("Inventory: profiles, profile_dir and profile_prefixes") {
  ocid::Inventory inv;
  Error err;
  REQUIRE_MESSAGE(ocid::ParseInventory(InventoryJson(R"("profiles": {"latency":
      {"EF_POLL_USEC": "100000"}}, "profile_dir": "/usr/libexec/onload/profiles",)"),
                                       "onload.json", &inv, &err),
                  err.Line());
  CHECK(inv.HasProfiles());
  CHECK(inv.profile_dirs == std::vector<std::string>{kDir});
  CHECK(inv.profiles.at("latency") == EnvList{{"EF_POLL_USEC", "100000"}});
  REQUIRE(ocid::ParseInventory(InventoryJson(""), "onload.json", &inv, &err));
  CHECK_FALSE(inv.HasProfiles());
  REQUIRE_MESSAGE(ocid::ParseInventory(InventoryJson(R"("profiles": {"p": {"ZF_X": "1"}},
      "profile_prefixes": ["ZF_"],)"),
                                       "onload.json", &inv, &err),
                  err.Line());

  CHECK(Contains(InventoryErr(R"("profiles": {"../x": {}},)"),
                 "\"profiles.../x\" is not a valid profile name"));
  CHECK(Contains(InventoryErr(R"("profiles": {"p": {"LD_PRELOAD": "/x"}},)"),
                 "not a variable profiles may set"));
  CHECK(Contains(InventoryErr(R"("profiles": {"p": {"EF_X": 1}},)"), "must be a string"));
  CHECK(
      Contains(InventoryErr(R"("profiles": {"p": {"EF_X": "a\nb"}},)"), "without NUL or newline"));
  CHECK(Contains(InventoryErr(R"("profiles": [],)"), "\"profiles\" must be an object"));
  CHECK(Contains(InventoryErr(R"("profile_dir": "rel/dir",)"),
                 "\"profile_dir\" is not an absolute path"));
  CHECK(Contains(InventoryErr(R"("profile_dir": [],)"),
                 "\"profile_dir\" must be a string or a non-empty list"));
  CHECK(
      Contains(InventoryErr(R"("profile_dir": ["/a", 1],)"), "\"profile_dir\" must hold strings"));
  CHECK(Contains(InventoryErr(R"("profile_dir": ["/a", "b"],)"),
                 "\"profile_dir\" is not an absolute path"));
  CHECK(Contains(InventoryErr(R"("profile_dir": "/a/../b",)"),
                 "\"profile_dir\" has a \".\" or \"..\""));
  CHECK(Contains(InventoryErr(R"("profile_prefixes": ["LD_"],)"), "invalid prefix \"LD_\""));
  CHECK(Contains(InventoryErr(R"("profile_prefixes": ["L"],)"), "invalid prefix \"L\""));
  CHECK(Contains(InventoryErr(R"("profile_prefixes": ["ef_"],)"), "invalid prefix"));
  CHECK(Contains(InventoryErr(R"("profile_prefixes": [],)"), "non-empty list"));
}

// --- planner --------------------------------------------------------------------

namespace {

struct ProfileRun {
  ocid::OciState state;
  ocid::BundleConfig config;
  ocid::InventorySet set;
  ocid::Plan plan;
  FakeHost host;
  Error err;

  explicit ProfileRun(
      const std::string& extra = R"("profiles": {"latency": {"EF_POLL_USEC": "100000",
      "EF_TCP_FASTSTART_INIT": "0"}}, "profile_dir": "/usr/libexec/onload/profiles",)") {
    state.id = "c1";
    state.pid = 42;
    state.bundle = "/run/b/c1";
    config.root_path = "rootfs";
    ocid::Inventory inv;
    REQUIRE_MESSAGE(ocid::ParseInventory(InventoryJson(extra), "onload.json", &inv, &err),
                    err.Line());
    set.inventories.push_back(inv);
    host.Chr("/dev/onload", 240, 0)
        .File("/usr/lib64/libonload.so")
        .Dir(kDir)
        .Content(kDir + "/throughput.opf", "onload_set EF_POLL_USEC 1\n")
        .Content(kDir + "/latency-best.opf", "onload_import latency\nif [ -e /sys/x ]; then\n");
  }
  bool Go() {
    ocid::PlanInputs in{&state, &config, &set, &host};
    return ocid::BuildPlan(in, &plan, &err);
  }
};

}  // namespace

TEST_CASE("BuildPlan: OCI_ONLOAD_PROFILE selects a profile; hook mode warns") {
  ProfileRun r;
  r.config.env = {"OCI_ONLOAD=all", "OCI_ONLOAD_PROFILE=latency"};
  REQUIRE_MESSAGE(r.Go(), r.err.Line());
  CHECK(r.plan.env == EnvList{{"EF_POLL_USEC", "100000"}, {"EF_TCP_FASTSTART_INIT", "0"}});
  REQUIRE(r.plan.activated.size() == 1);
  CHECK(r.plan.activated[0].profile == "latency");
  CHECK(r.plan.activated[0].profile_by == "env OCI_ONLOAD_PROFILE=latency");
  auto w = ocid::HookModeWarnings(r.plan);
  REQUIRE(w.size() == 1);
  CHECK(Contains(w[0], "profile \"latency\" (env OCI_ONLOAD_PROFILE=latency) not applied"));
  CHECK(Contains(w[0], "runtime shim or CDI"));
  CHECK(Contains(w[0], "EF_POLL_USEC=100000 EF_TCP_FASTSTART_INIT=0"));
  std::string j = ocid::PlanToJson(r.plan);
  CHECK(Contains(j, "\"profile\": \"latency\""));
  CHECK(Contains(j, "\"EF_POLL_USEC\": \"100000\""));

  // From the directory, by annotation.
  ProfileRun a;
  a.config.env = {"OCI_ONLOAD=onload"};
  a.config.annotations["oci-decorator/OCI_ONLOAD_PROFILE"] = "throughput";
  REQUIRE_MESSAGE(a.Go(), a.err.Line());
  CHECK(a.plan.env == EnvList{{"EF_POLL_USEC", "1"}});
}

TEST_CASE("BuildPlan: profile errors fail only a container that asked") {
  ProfileRun r;
  r.config.env = {"OCI_ONLOAD=all", "OCI_ONLOAD_PROFILE=nope"};
  CHECK_FALSE(r.Go());
  CHECK(Contains(r.err.Line(),
                 "unknown profile \"nope\" for inventory onload.json (available: "
                 "latency, latency-best, throughput)"));

  ProfileRun b;
  b.config.env = {"OCI_ONLOAD=all", "OCI_ONLOAD_PROFILE=latency-best"};
  CHECK_FALSE(b.Go());
  CHECK(Contains(b.err.Line(), kDir + "/latency-best.opf:2:"));

  ProfileRun two;
  two.config.env = {"OCI_ONLOAD=all", "OCI_ONLOAD_PROFILE=latency"};
  two.config.annotations["oci-decorator/OCI_ONLOAD_PROFILE"] = "throughput";
  CHECK_FALSE(two.Go());
  CHECK(Contains(two.err.Line(), "names two profiles"));

  // Did not activate the inventory: the profile is ignored, nothing planned.
  ProfileRun off;
  off.config.env = {"OCI_ONLOAD_PROFILE=nope"};
  REQUIRE_MESSAGE(off.Go(), off.err.Line());
  CHECK_FALSE(off.plan.Active());
  CHECK(off.plan.env.empty());

  // Off values select no profile.
  ProfileRun none;
  none.config.env = {"OCI_ONLOAD=all", "OCI_ONLOAD_PROFILE=none"};
  REQUIRE_MESSAGE(none.Go(), none.err.Line());
  CHECK(none.plan.env.empty());
  CHECK(ocid::HookModeWarnings(none.plan).empty());

  // An inventory without profiles: the variable is just a variable.
  ProfileRun plain("");
  plain.config.env = {"OCI_ONLOAD=all", "OCI_ONLOAD_PROFILE=latency"};
  REQUIRE_MESSAGE(plain.Go(), plain.err.Line());
  CHECK(plain.plan.env.empty());

  // A source the activation policy does not accept is ignored, not obeyed.
  ProfileRun pol(R"("profiles": {"latency": {"EF_POLL_USEC": "1"}},
                    "activation_policy": {"sources": ["annotation"]},)");
  pol.config.annotations["oci-decorator/OCI_ONLOAD"] = "all";
  pol.config.env = {"OCI_ONLOAD_PROFILE=latency"};
  REQUIRE_MESSAGE(pol.Go(), pol.err.Line());
  CHECK(pol.plan.env.empty());
  REQUIRE(pol.plan.ignored.size() == 1);
  CHECK(Contains(pol.plan.ignored[0], "env OCI_ONLOAD_PROFILE=latency"));
}

// The /opt/onload layout of AMD's Kubernetes Onload operator puts the
// profiles in /opt/onload/usr/libexec/onload/profiles (Xilinx-CNS/onload
// scripts/onload_install, i_usrlibexec with i_prefix=/opt/onload): the
// shipped onload.json lists it after the usual directory.
TEST_CASE("Inventory: profile_dir alternatives, the first that is a directory wins") {
  const std::string kOpt = "/opt/onload/usr/libexec/onload/profiles";
  ocid::Inventory inv;
  Error err;
  REQUIRE_MESSAGE(ocid::ParseInventory(
                      InventoryJson(R"("profile_dir": [")" + kDir + R"(", ")" + kOpt + R"("],)"),
                      "onload.json", &inv, &err),
                  err.Line());
  CHECK(inv.HasProfiles());
  CHECK(inv.profile_dirs == std::vector<std::string>{kDir, kOpt});

  FakeHost opt;
  opt.Dir(kOpt).Content(kOpt + "/latency.opf", "onload_set EF_POLL_USEC 100000\n");
  CHECK(inv.Profiles(opt).dir == kOpt);
  EnvList env;
  REQUIRE_MESSAGE(Resolve(opt, inv.Profiles(opt), "latency", &env, &err), err.Line());
  CHECK(env == EnvList{{"EF_POLL_USEC", "100000"}});
  CHECK(ocid::AvailableProfiles(inv.Profiles(opt), opt) == std::vector<std::string>{"latency"});

  FakeHost both;
  both.Dir(kDir).Dir(kOpt);
  CHECK(inv.Profiles(both).dir == kDir);
  FakeHost file_not_dir;
  file_not_dir.File(kDir).Dir(kOpt);
  CHECK(inv.Profiles(file_not_dir).dir == kOpt);
  FakeHost none;
  CHECK(inv.Profiles(none).dir == kDir);  // named when a profile is unknown
}
