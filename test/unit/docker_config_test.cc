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

namespace {

using ocid::DockerDefault;
using ocid::DockerSetupRequest;

DockerSetupRequest Req(DockerDefault d, bool wrap = false) {
  DockerSetupRequest r;
  r.name = "oci-decorator";
  r.path = "/usr/bin/oci-decorator-runtime";
  r.default_runtime = d;
  r.wrap_default = wrap;
  return r;
}

DockerMerge Setup(const std::string& bytes, const DockerSetupRequest& req) {
  DockerMerge m;
  Error err;
  REQUIRE_MESSAGE(ocid::MergeDockerSetup(bytes, "daemon.json", req, &m, &err), err.Line());
  return m;
}

ocid::DockerDaemon Daemon(const std::string& bytes) {
  ocid::DockerDaemon d;
  Error err;
  REQUIRE_MESSAGE(ocid::ParseDockerDaemon(bytes, "daemon.json", &d, &err), err.Line());
  return d;
}

const ocid::DockerRuntime* Find(const ocid::DockerDaemon& d, const std::string& name) {
  for (const auto& r : d.runtimes)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("docker config: --default-runtime over no default, runc, or ours") {
  for (const char* before : {"", R"({"debug": true})", R"({"default-runtime": "runc"})",
                             R"({"default-runtime": "oci-decorator", "runtimes": {}})"}) {
    DockerMerge m = Setup(before, Req(DockerDefault::kSet));
    CHECK(m.changed);
    CHECK(m.new_default == "oci-decorator");
    CHECK(m.wrapped.empty());
    ocid::DockerDaemon d = Daemon(m.json);
    CHECK(d.default_runtime == "oci-decorator");
    REQUIRE(Find(d, "oci-decorator") != nullptr);
    CHECK(Find(d, "oci-decorator")->args.empty());
    // Twice: nothing more to do.
    DockerMerge again = Setup(m.json, Req(DockerDefault::kSet));
    CHECK_FALSE(again.changed);
    CHECK(again.json == m.json);
  }
  // Without --default-runtime the default is left alone.
  DockerMerge m = Setup(R"({"default-runtime": "runc"})", Req(DockerDefault::kLeave));
  CHECK(m.new_default == "runc");
  CHECK(Daemon(m.json).default_runtime == "runc");
}

TEST_CASE("docker config: --no-default-runtime writes runc out, so a reload takes it") {
  DockerMerge set = Setup(R"({"debug": true})", Req(DockerDefault::kSet));
  DockerMerge unset = Setup(set.json, Req(DockerDefault::kUnset));
  CHECK(unset.changed);
  CHECK(unset.old_default == "oci-decorator");
  // Not removed: dockerd's reload would keep the shim as the default
  // (moby daemon/reload_unix.go reloadPlatform takes a non-empty value only).
  CHECK(Daemon(unset.json).default_runtime == "runc");
  CHECK(Daemon(unset.json).runtimes.size() == 1);  // the runtime stays registered
  // Another runtime's default is not ours to undo.
  DockerMerge other = Setup(R"({"default-runtime": "nv", "runtimes": {"nv": {"path": "/nv"}}})",
                            Req(DockerDefault::kUnset));
  CHECK(other.new_default == "nv");
  CHECK(Daemon(other.json).default_runtime == "nv");
}

TEST_CASE("docker config: an operator's own default is refused, or wrapped when told") {
  const std::string mine =
      R"({"default-runtime": "nv", "runtimes": {"nv": {"path": "/usr/bin/nv-runtime"}, )"
      R"("oci-decorator": {"path": "/old", "runtimeArgs": ["--ocid-log-level", "debug"]}}})";
  DockerMerge m;
  Error err;
  CHECK_FALSE(
      ocid::MergeDockerSetup(mine, "/etc/docker/daemon.json", Req(DockerDefault::kSet), &m, &err));
  CHECK(err.Line().find("--default-runtime would replace docker's default runtime \"nv\"") !=
        std::string::npos);
  CHECK(err.Line().find("--wrap-default") != std::string::npos);
  CHECK(err.Line().find("/etc/docker/daemon.json") != std::string::npos);

  DockerMerge w = Setup(mine, Req(DockerDefault::kSet, /*wrap=*/true));
  CHECK(w.wrapped == "nv");
  ocid::DockerDaemon d = Daemon(w.json);
  CHECK(d.default_runtime == "oci-decorator");
  REQUIRE(Find(d, "oci-decorator") != nullptr);
  // The shim's own options kept, its runtime first.
  CHECK(
      Find(d, "oci-decorator")->args ==
      std::vector<std::string>{"--ocid-runtime=/usr/bin/nv-runtime", "--ocid-log-level", "debug"});
  CHECK(Find(d, "nv")->path == "/usr/bin/nv-runtime");
  CHECK(ocid::ShimRuntimeOf(Find(d, "oci-decorator")->args) == "/usr/bin/nv-runtime");

  // Undone: nv is the default again, the shim's options as they were.
  DockerMerge u = Setup(w.json, Req(DockerDefault::kUnset));
  CHECK(u.wrapped == "nv");
  ocid::DockerDaemon du = Daemon(u.json);
  CHECK(du.default_runtime == "nv");
  CHECK(Find(du, "oci-decorator")->args == std::vector<std::string>{"--ocid-log-level", "debug"});

  // What cannot be wrapped: no absolute path, or arguments of its own.
  for (
      const char* bad :
      {R"({"default-runtime": "nv", "runtimes": {"nv": {"path": "nv-runtime"}}})",
       R"({"default-runtime": "nv", "runtimes": {"nv": {"runtimeType": "io.containerd.x"}}})",
       R"({"default-runtime": "nv"})",
       R"({"default-runtime": "nv", "runtimes": {"nv": {"path": "/nv", "runtimeArgs": ["-x"]}}})"}) {
    CHECK_FALSE_MESSAGE(
        ocid::MergeDockerSetup(bad, "daemon.json", Req(DockerDefault::kSet, true), &m, &err), bad);
    CHECK_MESSAGE(
        err.Line().find("--wrap-default: the default runtime \"nv\"") != std::string::npos,
        err.Line());
  }
  CHECK_FALSE(ocid::MergeDockerSetup(R"({"default-runtime": 1})", "daemon.json",
                                     Req(DockerDefault::kSet), &m, &err));
  CHECK(err.Line().find("\"default-runtime\" is not a string") != std::string::npos);
}

TEST_CASE("docker config: the shim's runtime option, read as the shim reads it") {
  using V = std::vector<std::string>;
  CHECK(ocid::ShimRuntimeOf(V{}).empty());
  CHECK(ocid::ShimRuntimeOf(V{"--ocid-runtime=/a"}) == "/a");
  CHECK(ocid::ShimRuntimeOf(V{"--ocid-runtime", "/a"}) == "/a");
  CHECK(ocid::ShimRuntimeOf(V{"--ocid-log-level", "debug", "--ocid-runtime", "/b"}) == "/b");
  // After the first argument that is not the shim's: the runtime's own.
  CHECK(ocid::ShimRuntimeOf(V{"--debug", "--ocid-runtime=/a"}).empty());
  CHECK(ocid::ShimRuntimeOf(V{"--ocid-runtime"}).empty());
}
