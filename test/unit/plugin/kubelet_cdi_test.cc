// CdiDirWriter on real files: the device plugin's --cdi-dir writes each
// spec with its preload files (cdi.h), and removes them all when the
// inventory is gone.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../test_tree.h"
#include "kubelet_cdi.h"

namespace {

std::string Inventory(const std::string& lib) {
  return R"({"version": "1", "activation_flag": "OCI_T", "cdi_kind": "example.com/pre",
    "driver_feature": ["t"],
    "inventory": {"t": {"devices": ["null"],
                        "libraries": [{"source": ")" + lib + R"(", "target": "/usr/lib64/libt.so"}],
                        "preload": ["/usr/lib64/libt.so"]}}})";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("kubelet cdi: --cdi-dir writes the preload files before the spec, and removes them") {
  ocid::test::TempTree t;
  t.File("host/libt.so", "x");
  t.File("conf/pre.json", Inventory(t / "host/libt.so"));
  t.Dir("cdi");
  ocid::PluginOptions opts;
  opts.config_dir = t / "conf";
  opts.host_root = "/";
  opts.host_path_root = "/";
  ocid::CdiDirWriter w(opts, t / "cdi");
  REQUIRE(w.Sync());

  const std::string spec_path = t / "cdi/oci-decorator-pre.json";
  auto spec = nlohmann::json::parse(Slurp(spec_path));
  CHECK(spec.dump().find("LD_PRELOAD") == std::string::npos);
  nlohmann::json want = {{"hostPath", t / "cdi/oci-decorator-pre.t.preload"},
                         {"containerPath", "/etc/ld.so.preload"},
                         {"options", {"ro", "nosuid", "nodev", "bind"}}};
  bool found = false;
  for (const auto& m : spec["devices"][0]["containerEdits"]["mounts"]) found = found || m == want;
  CHECK_MESSAGE(found, spec.dump());
  CHECK(Slurp(t / "cdi/oci-decorator-pre.t.preload") == "/usr/lib64/libt.so\n");
  CHECK(Slurp(t / "cdi/oci-decorator-pre.all.preload") == "/usr/lib64/libt.so\n");
  struct stat st {};
  REQUIRE(::stat((t / "cdi/oci-decorator-pre.t.preload").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);

  // A preload file changed behind the writer's back is put back.
  t.File("cdi/oci-decorator-pre.t.preload", "/evil.so\n");
  REQUIRE(w.Sync());
  CHECK(Slurp(t / "cdi/oci-decorator-pre.t.preload") == "/usr/lib64/libt.so\n");

  // The inventory is gone: the spec and its preload files go too.
  std::filesystem::remove(t / "conf/pre.json");
  REQUIRE(w.Sync());
  CHECK(std::filesystem::is_empty(t / "cdi"));
}
