// The engines' files both `setup` and `check` name (src/engine/engine_files.h):
// the hooks.d entry the package installs reads as the hook's, the CRI-O
// drop-in names the hooks.d directories `check` looks in, and runtime names.
// The parsers' error cases are node_check_test.cc's, the drop-ins' bytes
// engine_setup_test.cc's.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine_files.h"

using ocid::Error;
using ocid::HooksEntryFacts;

namespace {

// The repository's hooks.d template, filled in as the install does.
std::string InstalledEntry(const std::string& hook_path, const std::string& stage) {
  std::ifstream in(std::string(OCID_SOURCE_DIR) + "/hooks.d/oci-decorator.json.in",
                   std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"@OCID_HOOK_PATH@", hook_path},
                                 {"@OCID_STAGE@", stage}})
    for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size())
      s.replace(p, from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("engine files: the installed hooks.d entries read as the hook's") {
  const std::string path = "/usr/libexec/oci/hooks.d/oci-decorator";
  for (const char* stage : {"prestart", "poststop"}) {
    HooksEntryFacts f;
    Error err;
    REQUIRE_MESSAGE(ocid::ParseHooksEntry(InstalledEntry(path, stage), "e.json", &f, &err),
                    err.Line());
    CHECK(f.hook_path == path);
    CHECK(f.args == std::vector<std::string>{"oci-decorator", "hook", stage});
    CHECK(f.stages == std::vector<std::string>{stage});
  }
}

TEST_CASE("engine files: a hooks.d entry's non-string items are skipped") {
  HooksEntryFacts f;
  Error err;
  REQUIRE(ocid::ParseHooksEntry(R"({"hook":{"path":"/h","args":["a",1,null,"b"]},"stages":[2]})",
                                "e.json", &f, &err));
  CHECK(f.args == std::vector<std::string>{"a", "b"});
  CHECK(f.stages.empty());
  CHECK_FALSE(ocid::ParseHooksEntry("[]", "/etc/x.json", &f, &err));
  CHECK(err.Line().find("/etc/x.json") != std::string::npos);
  CHECK(f.hook_path.empty());  // cleared on failure too
}

TEST_CASE("engine files: the CRI-O drop-in names every hooks.d directory check reads") {
  std::string d = ocid::CrioDropIn("oci-decorator", "");
  for (const char* dir : ocid::kHooksDirs)
    CHECK(d.find("\"" + std::string(dir) + "\"") != std::string::npos);
}

TEST_CASE("engine files: runtime names, 1 to 64 letters, digits, '-' and '_'") {
  std::string why;
  CHECK(ocid::CheckRuntimeName(std::string(64, 'a'), &why));
  CHECK_FALSE(ocid::CheckRuntimeName(std::string(65, 'a'), &why));
  CHECK(why == "must have 1 to 64 characters");
  CHECK_FALSE(ocid::CheckRuntimeName("a b", &why));
  CHECK(why == "may hold only letters, digits, '-' and '_'");
  CHECK(ocid::CheckRuntimeName(ocid::kShimProgramName, &why));
}
