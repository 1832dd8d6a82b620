// The runtime shim's pure parts: runc's command line, the shim's own
// options, settings precedence and the runtime log lines.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "docker_config.h"
#include "runtime_shim.h"
#include "shim_config.h"
#include "test_tree.h"

using ocid::Error;
using ocid::ParseRuntimeArgs;
using ocid::RuntimeInvocation;
using ocid::ShimOptions;
using ocid::ShimSettings;

namespace {
using Args = std::vector<std::string>;
}

TEST_CASE("ParseRuntimeArgs: docker/containerd's create") {
  RuntimeInvocation r = ParseRuntimeArgs({"--root", "/run/containerd/runc/moby", "--log",
                                          "/b/log.json", "--log-format", "json", "create",
                                          "--bundle", "/b", "--pid-file", "/b/init.pid", "id1"});
  CHECK(r.command == "create");
  CHECK(r.Creates());
  CHECK(r.bundle == "/b");
  CHECK(r.container_id == "id1");
  CHECK(r.log_file == "/b/log.json");
  CHECK(r.log_format == "json");
}

TEST_CASE("ParseRuntimeArgs: global flags in every form") {
  RuntimeInvocation r =
      ParseRuntimeArgs({"--debug", "--systemd-cgroup", "--root=/r", "-log", "/l",
                        "--log-format=text", "--criu", "/c", "--rootless=false", "create", "id"});
  CHECK(r.command == "create");
  CHECK(r.log_file == "/l");
  CHECK(r.log_format == "text");
  CHECK(r.container_id == "id");
  r = ParseRuntimeArgs({"--log=/x", "--", "create", "id"});
  CHECK(r.command == "create");
  CHECK(r.log_file == "/x");
  // The value of a global flag is never taken for the command.
  r = ParseRuntimeArgs({"--root", "create", "start", "id"});
  CHECK(r.command == "start");
}

TEST_CASE("ParseRuntimeArgs: the bundle in every form, anywhere") {
  for (const Args& a :
       {Args{"create", "--bundle", "/b", "id"}, Args{"create", "--bundle=/b", "id"},
        Args{"create", "-b", "/b", "id"}, Args{"create", "-b=/b", "id"},
        Args{"create", "-bundle", "/b", "id"}, Args{"create", "id", "--bundle", "/b"},
        Args{"create", "--no-pivot", "--console-socket", "/s", "-b", "/x", "--bundle", "/b",
             "--preserve-fds", "2", "--no-new-keyring", "id"}}) {
    CAPTURE(a);
    RuntimeInvocation r = ParseRuntimeArgs(a);
    CHECK(r.bundle == "/b");
    CHECK(r.container_id == "id");
  }
}

TEST_CASE("ParseRuntimeArgs: no bundle means the current directory; run is a create") {
  RuntimeInvocation r = ParseRuntimeArgs({"create", "id"});
  CHECK(r.bundle.empty());
  CHECK(r.container_id == "id");
  r = ParseRuntimeArgs({"run", "-d", "--keep", "--bundle", "rel/b", "id2"});
  CHECK(r.Creates());
  CHECK(r.bundle == "rel/b");
  CHECK(r.container_id == "id2");
  r = ParseRuntimeArgs({"create", "--", "-odd-id"});
  CHECK(r.container_id == "-odd-id");
  r = ParseRuntimeArgs({"create"});
  CHECK(r.container_id.empty());
}

TEST_CASE("ParseRuntimeArgs: every other command passes through") {
  for (const Args& a : {Args{"start", "id"}, Args{"--root", "/r", "delete", "--force", "id"},
                        Args{"state", "id"}, Args{"kill", "id", "9"},
                        Args{"exec", "--process", "/p.json", "id"}, Args{"update", "-r", "-", "id"},
                        Args{"features"}, Args{"--version"}, Args{"-v"}, Args{"--help"}, Args{}}) {
    CAPTURE(a);
    RuntimeInvocation r = ParseRuntimeArgs(a);
    CHECK_FALSE(r.Creates());
    CHECK(r.container_id.empty());
  }
  CHECK(ParseRuntimeArgs({"--version"}).command.empty());
  CHECK(ParseRuntimeArgs({"state", "id"}).command == "state");
}

TEST_CASE("TakeShimOptions: leading --ocid-* options only, both forms") {
  Args a = {"--ocid-host-root",
            "/h",
            "--ocid-config-dir=/c",
            "--ocid-runtime",
            "/usr/bin/crun",
            "--ocid-config",
            "/etc/x.json",
            "--ocid-log-level=debug",
            "--ocid-log-file",
            "/l",
            "--root",
            "/r",
            "--ocid-host-root",
            "/late",
            "create",
            "id"};
  ShimOptions o;
  Error err;
  REQUIRE(ocid::TakeShimOptions(&a, &o, &err));
  CHECK(a == Args{"--root", "/r", "--ocid-host-root", "/late", "create", "id"});
  CHECK(*o.host_root == "/h");
  CHECK(*o.config_dir == "/c");
  CHECK(*o.runtime == "/usr/bin/crun");
  CHECK(*o.config_file == "/etc/x.json");
  CHECK(*o.log_level == "debug");
  CHECK(*o.log_file == "/l");

  Args none = {"start", "id"};
  ShimOptions o2;
  REQUIRE(ocid::TakeShimOptions(&none, &o2, &err));
  CHECK(none == Args{"start", "id"});
  CHECK_FALSE(o2.runtime.has_value());
}

TEST_CASE("TakeShimOptions: errors") {
  for (const Args& bad :
       {Args{"--ocid-bogus", "x", "start"}, Args{"--ocid-runtime"}, Args{"--ocid-runtime="}}) {
    CAPTURE(bad);
    Args a = bad;
    ShimOptions o;
    Error err;
    CHECK_FALSE(ocid::TakeShimOptions(&a, &o, &err));
    CHECK(err.Line().find("--ocid-") != std::string::npos);
  }
}

TEST_CASE("ResolveShimSettings: defaults < config file < options") {
  ocid::test::TempTree t;
  ShimSettings s;
  Error err;
  SUBCASE("no file: the defaults") {
    REQUIRE(ocid::ResolveShimSettings({}, t / "absent.json", &s, &err));
    CHECK(s.runtime == "/usr/sbin/runc");
    CHECK(s.config_dir == OCID_DEFAULT_CONFIG_DIR);
    CHECK(s.host_root == "/");
    CHECK(s.log_level == "info");
    CHECK(s.log_file.empty());
  }
  SUBCASE("the file overrides the defaults, options override the file") {
    t.File("runtime.json",
           R"({"runtime": "/usr/bin/crun", "host_root": "/srv/h", "log_level": "debug"})");
    REQUIRE(ocid::ResolveShimSettings({}, t / "runtime.json", &s, &err));
    CHECK(s.runtime == "/usr/bin/crun");
    CHECK(s.host_root == "/srv/h");
    CHECK(s.log_level == "debug");
    CHECK(s.config_dir == OCID_DEFAULT_CONFIG_DIR);
    ShimOptions o;
    o.host_root = "/opt/h";
    o.runtime = "/usr/local/sbin/runc";
    REQUIRE(ocid::ResolveShimSettings(o, t / "runtime.json", &s, &err));
    CHECK(s.runtime == "/usr/local/sbin/runc");
    CHECK(s.host_root == "/opt/h");
    CHECK(s.log_level == "debug");
  }
  SUBCASE("--ocid-config names another file, which must exist") {
    t.File("default.json", R"({"host_root": "/from-default"})");
    t.File("other.json", R"({"host_root": "/from-other"})");
    ShimOptions o;
    o.config_file = t / "other.json";
    REQUIRE(ocid::ResolveShimSettings(o, t / "default.json", &s, &err));
    CHECK(s.host_root == "/from-other");
    o.config_file = t / "missing.json";
    CHECK_FALSE(ocid::ResolveShimSettings(o, t / "default.json", &s, &err));
    CHECK(err.Line().find("missing.json") != std::string::npos);
  }
  SUBCASE("a broken file is an error naming it") {
    for (std::string bad :
         {std::string("{"), std::string("[]"), std::string(R"({"runtime": 1})"),
          std::string(R"({"runtime": ""})"), std::string(R"({"runtim": "/x"})")}) {
      CAPTURE(bad);
      t.File("runtime.json", bad);
      CHECK_FALSE(ocid::ResolveShimSettings({}, t / "runtime.json", &s, &err));
      CHECK(err.Line().find(t / "runtime.json") != std::string::npos);
    }
  }
  SUBCASE("a relative runtime or an unknown log level is refused") {
    ShimOptions o;
    o.runtime = "runc";
    CHECK_FALSE(ocid::ResolveShimSettings(o, t / "absent.json", &s, &err));
    CHECK(err.Line().find("absolute") != std::string::npos);
    t.File("runtime.json", R"({"log_level": "loud"})");
    CHECK_FALSE(ocid::ResolveShimSettings({}, t / "runtime.json", &s, &err));
  }
  SUBCASE("log targets and format: from the file, options win, unknown ones refused") {
    t.File("runtime.json", R"({"log_target": "file,journald", "log_format": "json"})");
    REQUIRE(ocid::ResolveShimSettings({}, t / "runtime.json", &s, &err));
    CHECK(s.log_target == "file,journald");
    CHECK(s.log_format == "json");
    ShimOptions o;
    Args a = {"--ocid-log-target=syslog", "--ocid-log-format", "text", "create", "id"};
    REQUIRE(ocid::TakeShimOptions(&a, &o, &err));
    REQUIRE(ocid::ResolveShimSettings(o, t / "runtime.json", &s, &err));
    CHECK(s.log_target == "syslog");
    CHECK(s.log_format == "text");
    t.File("runtime.json", R"({"log_target": "stderr,kafka"})");
    CHECK_FALSE(ocid::ResolveShimSettings({}, t / "runtime.json", &s, &err));
    CHECK(err.Line().find("unknown log target \"kafka\"") != std::string::npos);
    t.File("runtime.json", R"({"log_format": "xml"})");
    CHECK_FALSE(ocid::ResolveShimSettings({}, t / "runtime.json", &s, &err));
    CHECK(err.Line().find("unknown log format") != std::string::npos);
  }
}

TEST_CASE("RuntimeLogLine: runc's json and text formats") {
  CHECK(ocid::RuntimeLogLine("json", "error", "oci-decorator: x \"y\"",
                             "2024-01-02T03:04:05.000000001Z") ==
        "{\"level\":\"error\",\"msg\":\"oci-decorator: x "
        "\\\"y\\\"\",\"time\":\"2024-01-02T03:04:05.000000001Z\"}\n");
  CHECK(ocid::RuntimeLogLine("", "info", "a \"b\"\nc", "T") ==
        "time=\"T\" level=info msg=\"a \\\"b\\\"\\\\x0ac\"\n");
}

// Finding 5 of issue 19: an activation value's CR, VT and FF reached the
// runtime's --log raw (the text format's quoting escaped only '"', '\' and
// newline; JSON leaves DEL, C1 and bidi raw). Both formats now carry the one
// rule's escapes (error.h Printable), the same message as every other log.
TEST_CASE("RuntimeLogLine: a container's control bytes are escaped in both formats") {
  const std::string msg =
      "edited: env OCI_ONLOAD=all\r\x0b\x0c\x1b\x7f\xc2\x9b\xe2\x80\xae";  // NOLINT(misc-misleading-bidirectional)
  const std::string shown =
      "edited: env OCI_ONLOAD=all\\x0d\\x0b\\x0c\\x1b\\x7f\\xc2\\x9b\\xe2\\x80\\xae";
  std::string text = ocid::RuntimeLogLine("text", "info", msg, "T");
  CHECK(text == "time=\"T\" level=info msg=\"" +
                    std::string("edited: env OCI_ONLOAD=all\\\\x0d\\\\x0b\\\\x0c\\\\x1b\\\\x7f"
                                "\\\\xc2\\\\x9b\\\\xe2\\\\x80\\\\xae") +
                    "\"\n");
  std::string js = ocid::RuntimeLogLine("json", "info", msg, "T");
  for (std::string raw : {"\r", "\x0b", "\x0c", "\x7f", "\xc2\x9b",
                          "\xe2\x80\xae"}) {  // NOLINT(misc-misleading-bidirectional)
    CHECK(text.find(raw) == std::string::npos);
    CHECK(js.find(raw) == std::string::npos);
  }
  CHECK(nlohmann::json::parse(js)["msg"] == shown);
}

// Issue 27, finding 3: the shim's "edited" line quoted the whole activation
// value: OCI_ONLOAD=all and 1 MiB of TAB (a valid request: items are
// trimmed) made a 5 MB line in the runtime's --log. Both formats are now cut
// to the one bound (error.h kMaxLineBytes), quoting included, and say so.
TEST_CASE("RuntimeLogLine: a 1 MiB request gives a line within the bound, both formats") {
  const std::string msg =
      "oci-decorator: container c1: edited /b/config.json: onload.json (env "
      "OCI_ONLOAD=all" +
      std::string(1 << 20, '\t') + "\"\\): features onload; 9 mounts";
  for (const char* format : {"text", "json"}) {
    CAPTURE(format);
    std::string line = ocid::RuntimeLogLine(format, "info", msg, "2024-01-02T03:04:05.000000001Z");
    REQUIRE(line.back() == '\n');
    CHECK(line.find('\n') == line.size() - 1);
    CHECK(line.size() - 1 <= ocid::kMaxLineBytes);
    CHECK(line.size() - 1 > ocid::kMaxLineBytes - 64);
    CHECK(line.find(" bytes ...]") != std::string::npos);
    CHECK(line.find("9 mounts") != std::string::npos);  // the tail is kept
    if (std::string(format) == "json") {
      std::string m = nlohmann::json::parse(line)["msg"];
      CHECK(m.rfind("oci-decorator: container c1: edited /b/config.json: onload.json (env "
                    "OCI_ONLOAD=all\\x09",
                    0) == 0);
    }
  }
}

TEST_CASE("IsShimProgramName: the installed link's name, any directory") {
  CHECK(ocid::IsShimProgramName("oci-decorator-runtime"));
  CHECK(ocid::IsShimProgramName("/usr/bin/oci-decorator-runtime"));
  CHECK_FALSE(ocid::IsShimProgramName("/usr/bin/oci-decorator"));
  CHECK_FALSE(ocid::IsShimProgramName("oci-decorator-runtime2"));
  CHECK_FALSE(ocid::IsShimProgramName(nullptr));
}

// setup docker --no-default-runtime and check read the runtime the shim
// runs from daemon.json's runtimeArgs (docker_config.h ShimRuntimeOf): the
// same answer as the shim's own parser.
TEST_CASE("ShimRuntimeOf reads runtimeArgs as TakeShimOptions does") {
  for (const Args& args :
       {Args{"--ocid-runtime=/a"}, Args{"--ocid-runtime", "/a", "--root", "/r"},
        Args{"--ocid-host-root", "/h", "--ocid-runtime=/b", "--ocid-log-level", "debug"},
        Args{"--ocid-log-file=/l", "--ocid-runtime", "/c"}, Args{"--root", "--ocid-runtime=/a"},
        Args{"--ocid-runtime=/a", "--ocid-runtime=/b"}, Args{}}) {
    Args rest = args;
    ShimOptions o;
    Error err;
    REQUIRE(ocid::TakeShimOptions(&rest, &o, &err));
    CHECK(ocid::ShimRuntimeOf(args) == o.runtime.value_or(""));
  }
}

// EditIfAsked on a real tree: an inventory whose directory entry is created
// when a condition is met (create_if), the way /run/onload is.
namespace {

struct ShimTree {
  ocid::test::TempTree t;
  ShimTree() {
    ::chmod(t.path().c_str(), 0755);
    t.Dir("host");
    t.File("host/usr/sbin/svc-controller", "x");  // the condition's path
    t.File("host/sys/svc/client_gid", "4242\n");
    t.File("host/sys/svc/client_mode", "432\n");  // 0660: others get nothing
    t.File("conf/svc.json",
           R"({"version": "1", "activation_flag": "OCI_SVC", "driver_feature": ["f"],
               "conditions": {"svc": {"exists": "/usr/sbin/svc-controller"}},
               "inventory": {"f": {"directories": [
                 {"source": "/run/svc", "optional": true, "create_if": "svc"}],
                 "groups": [{"gid_file": "/sys/svc/client_gid",
                             "mode_file": "/sys/svc/client_mode", "optional": true}]}}})");
    ::chmod((t / "conf").c_str(), 0755);
    ::chmod((t / "conf/svc.json").c_str(), 0644);
    t.Dir("bundle/rootfs");
  }
  void Config(const std::string& env, const std::string& user = R"({"uid": 1000, "gid": 1000})",
              const std::string& linux = "{}") const {
    t.File("bundle/config.json", R"({"root": {"path": "rootfs"}, "process": {"user": )" + user +
                                     R"(, "env": ["PATH=/bin", )" + env + R"(]}, "linux": )" +
                                     linux + "}");
  }
  bool Edit(Error* err) const {
    ocid::RuntimeShim shim(Args{"--log", t / "runc.log", "create", "--bundle", t / "bundle", "c1"},
                           nullptr, 022);
    shim.settings()->config_dir = t / "conf";
    shim.settings()->host_root = t / "host";
    return shim.EditIfAsked(err);
  }
};

}  // namespace

TEST_CASE("runtime shim: a create_if directory is made on the host, then bound read-only") {
  ShimTree s;
  s.Config(R"("OCI_SVC=all")");
  Error err;
  REQUIRE_MESSAGE(s.Edit(&err), err.Line());
  struct stat st;
  REQUIRE(::stat((s.t / "host/run/svc").c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 07777) == 0755);
  auto spec = nlohmann::json::parse(s.t.Read("bundle/config.json"));
  REQUIRE(spec["mounts"].size() == 1);
  CHECK(spec["mounts"][0]["destination"] == "/run/svc");
  CHECK(spec["mounts"][0]["source"] == s.t / "host/run/svc");
  CHECK(spec["mounts"][0]["options"] == nlohmann::json{"bind", "ro", "nosuid", "nodev"});
  CHECK(s.t.Read("runc.log").find("container c1: created /run/svc (root, 0755) on the host") !=
        std::string::npos);
  // A second container finds it there: no second "created" line.
  s.Config(R"("OCI_SVC=all")");
  REQUIRE_MESSAGE(s.Edit(&err), err.Line());
  std::string log = s.t.Read("runc.log");
  CHECK(log.find("created") == log.rfind("created"));
}

TEST_CASE("runtime shim: a refused walk refuses the container that asked, nothing made") {
  ShimTree s;
  s.t.Dir("host/run");
  ::chmod((s.t / "host/run").c_str(), 0777);  // others may change it, not sticky
  s.Config(R"("OCI_SVC=all")");
  std::string before = s.t.Read("bundle/config.json");
  Error err;
  CHECK_FALSE(s.Edit(&err));
  CHECK(err.Line().find("not creating directory /run/svc") != std::string::npos);
  CHECK_FALSE(s.t.Exists("host/run/svc"));
  CHECK(s.t.Read("bundle/config.json") == before);
  // A container that did not ask is not touched.
  s.Config(R"("OTHER=1")");
  REQUIRE_MESSAGE(s.Edit(&err), err.Line());
  CHECK_FALSE(s.t.Exists("host/run/svc"));
}

TEST_CASE("runtime shim: condition not met, nothing is made nor mounted") {
  ShimTree s;
  ::unlink((s.t / "host/usr/sbin/svc-controller").c_str());
  s.Config(R"("OCI_SVC=all")");
  Error err;
  REQUIRE_MESSAGE(s.Edit(&err), err.Line());
  CHECK_FALSE(s.t.Exists("host/run"));
  auto spec = nlohmann::json::parse(s.t.Read("bundle/config.json"));
  CHECK_FALSE(spec.contains("mounts"));
}

TEST_CASE("runtime shim: a required client group goes into additionalGids, logged") {
  ShimTree s;
  s.Config(R"("OCI_SVC=all")");
  Error err;
  REQUIRE_MESSAGE(s.Edit(&err), err.Line());
  auto spec = nlohmann::json::parse(s.t.Read("bundle/config.json"));
  CHECK(spec["process"]["user"]["additionalGids"] == nlohmann::json{4242});
  CHECK(s.t.Read("runc.log").find(", group 4242") != std::string::npos);
  // The mode gives others access: nobody needs the group.
  s.t.File("host/sys/svc/client_mode", "438\n");  // 0666
  s.Config(R"("OCI_SVC=all")");
  REQUIRE_MESSAGE(s.Edit(&err), err.Line());
  spec = nlohmann::json::parse(s.t.Read("bundle/config.json"));
  CHECK_FALSE(spec["process"]["user"].contains("additionalGids"));
}

TEST_CASE("runtime shim: a group the user namespace does not map is a warning, not a refusal") {
  ShimTree s;
  s.Config(R"("OCI_SVC=all")", R"({"uid": 0, "gid": 0})",
           R"({"namespaces": [{"type": "user"}],
               "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
               "gidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}]})");
  Error err;
  REQUIRE_MESSAGE(s.Edit(&err), err.Line());
  auto spec = nlohmann::json::parse(s.t.Read("bundle/config.json"));
  CHECK_FALSE(spec["process"]["user"].contains("additionalGids"));
  std::string log = s.t.Read("runc.log");
  CHECK(log.find("warning") != std::string::npos);
  CHECK(log.find("container c1: group 4242 (/sys/svc/client_gid) not added") != std::string::npos);
  CHECK(log.find("EF_SHRUB_CONTROLLER") != std::string::npos);
  CHECK(log.find("edited") != std::string::npos);
}
