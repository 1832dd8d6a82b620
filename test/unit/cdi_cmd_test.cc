// `cdi generate` (cdi_cmd.h) on a real tree: the directories a spec mounts
// and creates (create_if) are made on the host before the spec is written,
// a refusal writes nothing, and --cdi-version caps the spec. Root's writer
// refuses a directory the test's user owns, so without root it skips.
#include "cdi_cmd.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <string>

#include "options.h"
#include "test_tree.h"

namespace {

struct CdiTree {
  ocid::test::TempTree t;
  ocid::Options opts;
  ocid::CdiOptions cdi;
  CdiTree() {
    ::chmod(t.path().c_str(), 0755);
    t.File("host/usr/sbin/ctl");  // the condition's path
    t.File("host/usr/bin/tool", "x");
    t.File("host/sys/svc/gid", "4242\n");
    t.File("host/sys/svc/mode", "432\n");  // 0660: others get nothing
    t.File("conf/svc.json",
           R"({"version": "1", "activation_flag": "OCI_SVC", "driver_feature": ["f"],
               "cdi_kind": "example.com/svc",
               "conditions": {"svc": {"exists": "/usr/sbin/ctl"}},
               "inventory": {"f": {"binaries": ["/usr/bin/tool"],
                 "directories": [{"source": "/run/svc", "optional": true, "create_if": "svc"}],
                 "groups": [{"gid_file": "/sys/svc/gid", "mode_file": "/sys/svc/mode",
                             "optional": true}]}}})");
    ::chmod((t / "conf").c_str(), 0755);
    ::chmod((t / "conf/svc.json").c_str(), 0644);
    opts.config_dir = t / "conf";
    opts.host_root = t / "host";
    cdi.output_dir = t / "cdi";
  }
  nlohmann::json Spec() const {
    return nlohmann::json::parse(t.Read("cdi/oci-decorator-svc.json"));
  }
};

bool Root() {
  if (::geteuid() == 0) return true;
  MESSAGE("skipped: root's writer refuses a directory the test's user owns");
  return false;
}

}  // namespace

TEST_CASE("cdi generate: a spec's create_if directory is made on the host before the spec") {
  if (!Root()) return;
  CdiTree c;
  REQUIRE(ocid::RunCdiGenerate(c.opts, c.cdi) == 0);
  struct stat st;
  REQUIRE(::stat((c.t / "host/run/svc").c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 07777) == 0755);
  CHECK(st.st_uid == 0);
  nlohmann::json spec = c.Spec();
  CHECK(spec["cdiVersion"] == "0.7.0");
  CHECK(spec["devices"][0]["containerEdits"]["additionalGids"] == nlohmann::json{4242});
  CHECK(spec["devices"][0]["containerEdits"]["mounts"][0]["hostPath"] == c.t / "host/run/svc");
}

TEST_CASE("cdi generate: --cdi-version 0.5.0 leaves the group out") {
  if (!Root()) return;
  CdiTree c;
  c.cdi.max_version = "0.5.0";
  REQUIRE(ocid::RunCdiGenerate(c.opts, c.cdi) == 0);
  nlohmann::json spec = c.Spec();
  CHECK(spec["cdiVersion"] == "0.3.0");
  CHECK_FALSE(spec["devices"][0]["containerEdits"].contains("additionalGids"));
  CHECK(c.t.Exists("host/run/svc"));
}

TEST_CASE("cdi generate: a refused directory fails the spec, nothing written") {
  if (!Root()) return;
  CdiTree c;
  c.t.Dir("host/run");
  ::chmod((c.t / "host/run").c_str(), 0777);  // others may change it, not sticky
  CHECK(ocid::RunCdiGenerate(c.opts, c.cdi) == 1);
  CHECK_FALSE(c.t.Exists("host/run/svc"));
  CHECK_FALSE(c.t.Exists("cdi/oci-decorator-svc.json"));
  CHECK_FALSE(c.t.Exists("cdi/oci-decorator-svc.f.preload"));
}

TEST_CASE("cdi generate: a spec on stdout creates nothing") {
  CdiTree c;
  c.cdi.output_dir.clear();
  c.cdi.output = "-";
  c.cdi.max_version = "0.5.0";
  CHECK(ocid::RunCdiGenerate(c.opts, c.cdi) == 0);
  CHECK_FALSE(c.t.Exists("host/run"));
}

TEST_CASE("cdi generate: --cdi-version takes the versions the renderer knows") {
  CHECK(ocid::CdiVersionChoices() ==
        std::vector<std::string>{"0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0"});
}
