// docker's daemon.json in the engine room (src/engine/docker_config.h):
// what `setup docker` merges in, `check` reads back. The merge's own cases
// (order, idempotence, errors) are engine_setup_test.cc's; the reader's
// error cases node_check_test.cc's.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "docker_config.h"

using ocid::DockerMerge;
using ocid::Error;
using Runtimes = std::vector<std::pair<std::string, std::string>>;

namespace {

Runtimes Read(const std::string& bytes) {
  Runtimes rt;
  Error err;
  REQUIRE_MESSAGE(ocid::ParseDockerRuntimes(bytes, "daemon.json", &rt, &err), err.Line());
  return rt;
}

}  // namespace

TEST_CASE("docker config: what the merge writes, the reader reads back") {
  for (const char* before :
       {"", " \n", R"({"debug": true})", R"({"runtimes": {"nvidia": {"path": "/nv"}}})",
        R"({"runtimes": {"ocid": {"path": "/old", "runtimeArgs": ["--x"]}}})"}) {
    DockerMerge m;
    Error err;
    REQUIRE_MESSAGE(
        ocid::MergeDockerRuntime(before, "daemon.json", "ocid", "/usr/bin/shim", &m, &err),
        err.Line());
    const Runtimes expected{{"ocid", "/usr/bin/shim"}};
    Runtimes rt = Read(m.json);
    REQUIRE_FALSE(rt.empty());
    CHECK_MESSAGE(Runtimes{rt.back()} == expected, before);
  }
}

TEST_CASE("docker config: blank files and files without runtimes have none") {
  CHECK(Read("").empty());
  CHECK(Read("\t\r\n ").empty());
  CHECK(Read(R"({"debug": true})").empty());
  CHECK(Read(R"({"runtimes": {"a": {}, "b": {"path": 1}, "c": "x"}})").empty());
  Runtimes rt;
  Error err;
  CHECK_FALSE(
      ocid::ParseDockerRuntimes(R"({"runtimes": []})", "/etc/docker/daemon.json", &rt, &err));
  CHECK(err.Line().find("\"runtimes\" is not an object") != std::string::npos);
  CHECK_FALSE(ocid::ParseDockerRuntimes("[]", "/etc/docker/daemon.json", &rt, &err));
  CHECK(err.Line().find("not a JSON object") != std::string::npos);
}
