// Hostile input (issue 5 item 4): malformed, truncated, huge, wrongly typed
// and non-UTF-8 OCI states, config.json files and inventories. Every one must
// give a clean failure (or success) with ONE printable line naming what was
// wrong and where, never a crash, a hang or an unbounded read; and a broken
// inventory must never touch a container that does not ask for it.
//
// What "asked" means (decision.h): an activation flag occurs literally (or
// \u00XX-escaped) in the state or config.json bytes. A config.json that is
// garbage but mentions no flag did not ask; one that mentions a flag asked
// and fails with the parse error.
#include <doctest/doctest.h>

#include "test_tree.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bundle_config.h"
#include "decision.h"
#include "error.h"
#include "files.h"
#include "hook_cmd.h"
#include "inventory.h"
#include "oci_state.h"
#include "unique_fd.h"

#include <nlohmann/json.hpp>

using ocid::BundleConfig;
using ocid::Error;
using ocid::InventoryFile;
using ocid::InventorySet;
using ocid::OciState;
using ocid::test::TempTree;

namespace {

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// Well-formed UTF-8 with no control characters (what a log line may hold).
bool PrintableUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || c > 0xF4 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// The one line a user sees: not empty, printable, bounded.
void CheckOneLine(const Error& e) {
  std::string line = e.Line();
  CAPTURE(line.substr(0, 300));
  CHECK_FALSE(line.empty());
  CHECK(PrintableUtf8(line));
  CHECK(line.size() < 4 * ocid::kMaxShownBytes + 256);
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Replaces the first `from` in `s` (which must be there).
std::string Sub(std::string s, const std::string& from, const std::string& to) {
  size_t p = s.find(from);
  REQUIRE_MESSAGE(p != std::string::npos, from);
  return s.replace(p, from.size(), to);
}

// ---------------------------------------------------------------------------
// Realistic documents.

const std::string kState = R"({
  "ociVersion": "1.0.2-dev",
  "id": "c0ffee",
  "status": "creating",
  "pid": 4242,
  "bundle": "/run/containerd/io.containerd.runtime.v2.task/default/c0ffee",
  "root": "rootfs",
  "annotations": {"io.kubernetes.cri.container-type": "container",
                  "oci-decorator/OCI_ONLOAD": "zf"}
})";

// `runc spec` plus what the hook reads: env, annotations, devices.
const std::string kConfig = R"({
  "ociVersion": "1.0.2-dev",
  "process": {
    "terminal": true,
    "user": {"uid": 0, "gid": 0},
    "args": ["sh"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "TERM=xterm", "OCI_ONLOAD=all", "BARE"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "ambient": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    },
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs", "readonly": true},
  "hostname": "runc",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
     "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]}
  ],
  "annotations": {"org.example/team": "net", "oci-decorator/OCI_ONLOAD": "onload"},
  "linux": {
    "devices": [{"path": "/dev/ldev", "type": "c", "major": 240, "minor": 0,
                 "fileMode": 438, "uid": 0, "gid": 0}],
    "resources": {"devices": [{"allow": false, "access": "rwm"},
                              {"allow": true, "type": "c", "major": 1, "minor": 3,
                               "access": "rw"}]},
    "namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "ipc"},
                   {"type": "uts"}, {"type": "mount"}, {"type": "cgroup"}],
    "maskedPaths": ["/proc/acpi", "/proc/kcore", "/sys/firmware"],
    "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/sys"]
  }
})";

const std::string kWhere = "/run/bundle/config.json";

std::string ReadSource(const std::string& rel) {
  std::ifstream in(std::string(OCID_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------------------
// Expectations.

Error StateFails(const std::string& s) {
  OciState st;
  Error err;
  CAPTURE(s.substr(0, 200));
  CHECK_FALSE(ParseOciState(s, &st, &err));
  CheckOneLine(err);
  return err;
}

void StateFailsNaming(const std::string& s, const std::string& needle) {
  Error err = StateFails(s);
  CHECK_MESSAGE(Contains(err.Line(), needle), err.Line());
}

Error ConfigFails(const std::string& s) {
  BundleConfig cfg;
  Error err;
  CAPTURE(s.substr(0, 300));
  CHECK_FALSE(ParseBundleConfig(s, kWhere, &cfg, &err));
  CheckOneLine(err);
  CHECK_MESSAGE(Contains(err.Line(), kWhere), err.Line());
  return err;
}

void ConfigFailsNaming(const std::string& s, const std::string& needle) {
  Error err = ConfigFails(s);
  CHECK_MESSAGE(Contains(err.Line(), needle), err.Line());
}

Error InventoryFails(const std::string& s, const std::string& needle) {
  ocid::Inventory inv;
  Error err;
  CAPTURE(s.substr(0, 300));
  CHECK_FALSE(ocid::ParseInventory(s, "/etc/oci-decorator.d/x.json", &inv, &err));
  CheckOneLine(err);
  CHECK_MESSAGE(Contains(err.Line(), "/etc/oci-decorator.d/x.json"), err.Line());
  CHECK_MESSAGE(Contains(err.Line(), needle), err.Line());
  return err;
}

const std::string kGoodInventory =
    R"({"version": "1", "activation_flag": "OCI_GOOD", "driver_feature": ["f"],
        "inventory": {"f": {"binaries": ["/usr/bin/good-tool"]}}})";


}  // namespace

// ===========================================================================
TEST_SUITE("hostile.state") {

TEST_CASE("empty, null, scalars, arrays, garbage: not valid JSON / not an object") {
  for (const char* s : {"", " ", "\n", "{", "}", "[", "nul", "{\"id\":"})
    StateFailsNaming(s, "not valid JSON");
  for (const char* s : {"null", "0", "-1", "true", "\"x\"", "[]", "[{}]", "1e5"})
    StateFailsNaming(s, "not a JSON object");
  StateFailsNaming(std::string("\xff\xfe{}", 4), "not valid JSON");
  // nlohmann would stop at a NUL and ignore the rest.
  StateFailsNaming(std::string("{\"id\":\"c\",\"bundle\":\"/b\"}\0{\"x\"", 29), "NUL byte at offset 24");
  StateFailsNaming("{} {}", "not valid JSON");
  // The reason is given, without nlohmann's prefix or the bytes it last read.
  Error e = StateFails("{\"id\": \"a\",");
  CHECK(Contains(e.Line(), "line 1"));
  CHECK_FALSE(Contains(e.Line(), "json.exception"));
  CHECK_FALSE(Contains(e.Line(), "last read"));
}

TEST_CASE("truncated at every byte: no crash, an error with a message, only the whole parses") {
  OciState whole;
  Error err;
  REQUIRE_MESSAGE(ParseOciState(kState, &whole, &err), err.Line());
  CHECK(whole.pid == 4242);
  for (size_t n = 0; n < kState.size(); ++n) {
    OciState st;
    Error e;
    bool ok = ParseOciState(std::string_view(kState).substr(0, n), &st, &e);
    if (ok) {  // only whitespace may be missing
      CHECK_MESSAGE(kState.find_first_not_of(" \n", n) == std::string::npos, n);
    } else {
      CAPTURE(n);
      CheckOneLine(e);
      CHECK(Contains(e.Line(), "OCI state"));
    }
  }
}

TEST_CASE("wrong type at every key the parser reads") {
  const std::vector<std::string> bad = {"1", "true", "[]", "{}", "[\"a\"]", "1.5"};
  for (const char* key : {"ociVersion", "id", "status", "bundle", "root"}) {
    for (const auto& v : bad) {
      std::string s = R"({"ociVersion":"1","id":"c","status":"creating","bundle":"/b","root":"r"})";
      size_t p = s.find(std::string("\"") + key + "\":");
      size_t vb = s.find(':', p) + 1, ve = s.find_first_of(",}", vb);
      s.replace(vb, ve - vb, v);
      StateFailsNaming(s, std::string("\"") + key + "\"");
    }
  }
  for (const char* v : {"[]", "\"x\"", "1", "true"})
    StateFailsNaming(std::string(R"({"id":"c","bundle":"/b","annotations":)") + v + "}",
                     "\"annotations\"");
  for (const char* v : {"1", "true", "[\"x\"]", "{}", "1.0"})
    StateFailsNaming(std::string(R"({"id":"c","bundle":"/b","annotations":{"k":)") + v + "}}",
                     "annotation \"k\"");
}

TEST_CASE("pid: string, float, negative, huge, boolean, containers") {
  auto with_pid = [](const std::string& v) {
    return R"({"id":"c","bundle":"/b","pid":)" + v + "}";
  };
  for (const char* v : {"\"123\"", "1.5", "1e3", "-1", "4194305", "2147483648",
                        "9223372036854775807", "9223372036854775808", "18446744073709551615",
                        "-9223372036854775808", "99999999999999999999999", "true", "[1]", "{}",
                        "-0.0"}) {
    CAPTURE(v);
    StateFailsNaming(with_pid(v), "\"pid\"");
  }
  // The message says how it is wrong, for a string pid and an out-of-range one.
  CHECK(Contains(StateFails(with_pid("\"123\"")).Line(), "string"));
  CHECK(Contains(StateFails(with_pid("18446744073709551615")).Line(), "18446744073709551615"));
  // A number too large for a double is a JSON error, still one clean line.
  StateFailsNaming(with_pid("1e400"), "not valid JSON");
  for (const auto& c : std::vector<std::pair<std::string, int>>{
           {"0", 0}, {"-0", 0}, {"1", 1}, {"4194304", 4194304}, {"null", 0}}) {
    OciState st;
    Error err;
    CAPTURE(c.first);
    CHECK_MESSAGE(ParseOciState(with_pid(c.first), &st, &err), err.Line());
    CHECK(st.pid == c.second);
  }
}

TEST_CASE("missing fields: id and bundle are required, the rest optional") {
  StateFailsNaming("{}", "\"id\"");
  StateFailsNaming(R"({"bundle":"/b"})", "\"id\"");
  StateFailsNaming(R"({"id":"c"})", "\"bundle\"");
  StateFailsNaming(R"({"id":"","bundle":"/b"})", "\"id\"");
  StateFailsNaming(R"({"id":"c","bundle":""})", "\"bundle\"");
  StateFailsNaming(R"({"id":"c","bundle":"rel"})", "\"bundle\"");
  OciState st;
  Error err;
  REQUIRE_MESSAGE(ParseOciState(R"({"id":"c","bundle":"/b"})", &st, &err), err.Line());
  CHECK(st.pid == 0);
  CHECK(st.root.empty());
  CHECK(st.annotations.empty());
}

TEST_CASE("duplicate keys: the last one wins (as Go's encoding/json), no crash") {
  OciState st;
  Error err;
  REQUIRE(ParseOciState(R"({"id":"a","id":"b","bundle":"/x","bundle":"/y","pid":1,"pid":2,)"
                        R"("annotations":{"k":"1"},"annotations":{"k":"2","k":"3"}})",
                        &st, &err));
  CHECK(st.id == "b");
  CHECK(st.bundle == "/y");
  CHECK(st.pid == 2);
  CHECK(st.annotations.at("k") == "3");
  // A later duplicate of the wrong type is still refused.
  StateFailsNaming(R"({"id":"a","bundle":"/b","pid":1,"pid":"1"})", "\"pid\"");
}

TEST_CASE("deep nesting: no stack overflow, one line") {
  const size_t depth = 500000;  // the state cap is 1 MiB
  StateFailsNaming(std::string(depth, '['), "not valid JSON");
  StateFailsNaming(std::string(depth, '[') + std::string(depth, ']'), "not a JSON object");
  StateFailsNaming(Repeat("{\"a\":", depth / 5), "not valid JSON");
  StateFailsNaming(R"({"id":"c","bundle":"/b","annotations":{"k":)" + std::string(depth, '[') +
                       std::string(depth, ']') + "}}",
                   "annotation \"k\"");
  StateFailsNaming(R"({"id":"c","bundle":"/b","x":)" + Repeat("{\"a\":", depth / 5) + "1" +
                       std::string(depth / 5, '}') + R"(,"pid":"1"})",
                   "\"pid\"");
}

TEST_CASE("invalid UTF-8 and bad escapes in every string: refused by the JSON parser") {
  const std::vector<std::string> bad = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                        "a\xe2\x82", "\x80"};
  for (const auto& b : bad) {
    for (const char* tmpl : {R"({"id":"@","bundle":"/b"})", R"({"id":"c","bundle":"/b@"})",
                             R"({"id":"c","bundle":"/b","annotations":{"@":"v"}})",
                             R"({"id":"c","bundle":"/b","annotations":{"k":"@"}})",
                             R"({"id":"c","bundle":"/b","root":"@"})"}) {
      Error e = StateFails(Sub(tmpl, "@", b));
      CHECK_MESSAGE(Contains(e.Line(), "not valid JSON"), e.Line());
      CHECK_MESSAGE(Contains(e.Line(), "UTF-8"), e.Line());
    }
  }
  StateFailsNaming(R"({"id":"c","bundle":"/b\udc80"})", "surrogate");
  StateFailsNaming(R"({"id":"c","bundle":"/b\ud800"})", "not valid JSON");
  StateFailsNaming(R"({"id":"c","bundle":"/b\x"})", "not valid JSON");
  StateFailsNaming("{\"id\":\"c\",\"bundle\":\"/b\n\"}", "not valid JSON");
}

TEST_CASE("NUL: refused in paths, kept in annotation values") {
  StateFailsNaming(R"({"id":"c","bundle":"/b\u0000/x"})", "\"bundle\" contains a NUL");
  StateFailsNaming(R"({"id":"c","bundle":"/b","root":"rootfs\u0000x"})", "\"root\" contains a NUL");
  OciState st;
  Error err;
  REQUIRE(ParseOciState(R"({"id":"c","bundle":"/b","annotations":{"k\u0000":"v\u0000w"}})", &st,
                        &err));
  CHECK(st.annotations.at(std::string("k\0", 2)) == std::string("v\0w", 3));
  // An id with a NUL parses (it is only the runtime's name for the container)
  // but is no directory name.
  REQUIRE(ParseOciState(R"({"id":"a\u0000b","bundle":"/b"})", &st, &err));
  CHECK_FALSE(ocid::IsSafeContainerId(st.id));
}

TEST_CASE("very long strings parse; errors quoting them stay one bounded line") {
  std::string big(10 << 20, 'x');
  OciState st;
  Error err;
  REQUIRE(ParseOciState(R"({"id":"c","bundle":"/b","annotations":{"k":")" + big + "\"}}", &st, &err));
  CHECK(st.annotations.at("k").size() == big.size());
  // A 10 MB request annotation with a bad value: the error quotes the key.
  Error e = StateFails(R"({"id":"c","bundle":"/b","annotations":{"oci-decorator/)" + big +
                       "\":1}}");
  CHECK(Contains(e.Line(), "bytes ...]"));
  // A key with control characters cannot break the line.
  e = StateFails(R"({"id":"c","bundle":"/b","annotations":{"a\nb\u001b[31m":1}})");
  CHECK_MESSAGE(Contains(e.Line(), "a\\x0ab\\x1b[31m"), e.Line());
}

}  // TEST_SUITE

// ===========================================================================
TEST_SUITE("hostile.config") {

TEST_CASE("the realistic config.json parses") {
  BundleConfig cfg;
  Error err;
  REQUIRE_MESSAGE(ParseBundleConfig(kConfig, kWhere, &cfg, &err), err.Line());
  CHECK(cfg.root_path == "rootfs");
  CHECK(cfg.env.size() == 4);
  CHECK(cfg.annotations.size() == 2);
  CHECK(cfg.devices.size() == 1);
  CHECK(cfg.device_rules.size() == 2);
}

TEST_CASE("empty, null, scalars, garbage") {
  for (const char* s : {"", " ", "{", "nul", "{\"root\":"}) ConfigFailsNaming(s, "not valid JSON");
  for (const char* s : {"null", "0", "true", "\"x\"", "[]", "[{}]"})
    ConfigFailsNaming(s, "not a JSON object");
  ConfigFailsNaming("{}", "\"root\"");
  ConfigFailsNaming(std::string("\x00\x01\x02", 3), "not valid JSON");
  ConfigFailsNaming(kConfig + std::string("\0{\"x\": 1}", 9), "NUL byte");
}

TEST_CASE("truncated at every byte: no crash, an error naming the file, only the whole parses") {
  for (size_t n = 0; n < kConfig.size(); ++n) {
    BundleConfig cfg;
    Error e;
    bool ok = ParseBundleConfig(std::string_view(kConfig).substr(0, n), kWhere, &cfg, &e);
    CAPTURE(n);
    if (ok) {
      CHECK(kConfig.find_first_not_of(" \n", n) == std::string::npos);
    } else {
      CheckOneLine(e);
      CHECK(e.path == kWhere);
    }
  }
}

TEST_CASE("wrong type at every key the parser reads") {
  struct Case {
    const char* from;   // a piece of kConfig
    const char* to;     // its hostile replacement
    const char* needle; // what the error must name
  };
  const Case cases[] = {
      {R"("root": {"path": "rootfs", "readonly": true})", R"("root": "rootfs")", "\"root\""},
      {R"("root": {"path": "rootfs", "readonly": true})", R"("root": ["rootfs"])", "\"root\""},
      {R"("root": {"path": "rootfs", "readonly": true})", R"("root": null)", "\"root\""},
      {R"("path": "rootfs")", R"("path": 1)", "root.path"},
      {R"("path": "rootfs")", R"("path": "")", "root.path"},
      {R"("path": "rootfs")", R"("path": ["rootfs"])", "root.path"},
      {R"("path": "rootfs")", R"("path": {})", "root.path"},
      {R"("path": "rootfs")", R"("p": "rootfs")", "root.path"},
      {R"("readonly": true)", R"("readonly": "true")", "root.readonly"},
      {R"("readonly": true)", R"("readonly": 1)", "root.readonly"},
      {R"("process": {)", R"("process": [], "x": {)", "\"process\""},
      {R"("process": {)", R"("process": "sh", "x": {)", "\"process\""},
      {R"("env": [)", R"("env": {"a": 1}, "x": [)", "process.env"},
      {R"("env": [)", R"("env": 1, "x": [)", "process.env"},
      {R"("env": [)", R"("env": "PATH=/bin", "x": [)", "process.env"},
      {R"("TERM=xterm")", "1", "process.env"},
      {R"("TERM=xterm")", "null", "process.env"},
      {R"("TERM=xterm")", "[\"TERM=xterm\"]", "process.env"},
      {R"("TERM=xterm")", "{\"TERM\": \"xterm\"}", "process.env"},
      {R"("TERM=xterm")", "true", "process.env"},
      {R"("annotations": {)", R"("annotations": [], "x": {)", "\"annotations\""},
      {R"("annotations": {)", R"("annotations": "a=b", "x": {)", "\"annotations\""},
      {R"("org.example/team": "net")", R"("org.example/team": 1)", "annotation \"org.example/team\""},
      {R"("org.example/team": "net")", R"("org.example/team": ["net"])", "annotation \"org.example/team\""},
      {R"("org.example/team": "net")", R"("org.example/team": {})", "annotation \"org.example/team\""},
      {R"("linux": {)", R"("linux": [], "x": {)", "\"linux\""},
      {R"("devices": [{"path")", R"("devices": {"a": 1}, "x": [{"path")", "linux.devices"},
      {R"("path": "/dev/ldev")", R"("path": 5)", "linux.devices[0].path"},
      {R"("path": "/dev/ldev")", R"("path": "")", "linux.devices[0].path"},
      {R"("type": "c", "major": 240)", R"("type": "x", "major": 240)", "linux.devices[0].type"},
      {R"("type": "c", "major": 240)", R"("type": 99, "major": 240)", "linux.devices[0].type"},
      {R"("major": 240)", R"("major": "240")", "linux.devices[0].major"},
      {R"("major": 240)", R"("major": 240.5)", "linux.devices[0].major"},
      {R"("major": 240)", R"("major": 18446744073709551615)", "linux.devices[0].major"},
      {R"("major": 240)", R"("major": 1e300)", "linux.devices[0].major"},
      {R"("minor": 0,)", R"("minor": [0],)", "linux.devices[0].minor"},
      {R"("minor": 0,)", R"("x": 0,)", "linux.devices[0]"},
      {R"("resources": {)", R"("resources": [], "x": {)", "linux.resources"},
      {R"({"devices": [{"allow": false)", R"({"devices": {"a": 1}, "x": [{"allow": false)",
       "linux.resources.devices"},
      {R"("allow": false)", R"("allow": "false")", "linux.resources.devices[0].allow"},
      {R"("allow": false)", R"("allowed": false)", "linux.resources.devices[0].allow"},
      {R"("type": "c", "major": 1)", R"("type": "p", "major": 1)", "linux.resources.devices[1].type"},
      {R"("major": 1, "minor": 3)", R"("major": "1", "minor": 3)", "linux.resources.devices[1].major"},
      {R"("major": 1, "minor": 3)", R"("major": 1, "minor": 4294967296)",
       "linux.resources.devices[1].minor"},
      {R"("access": "rw")", R"("access": "rwx")", "linux.resources.devices[1].access"},
      {R"("access": "rw")", R"("access": 7)", "linux.resources.devices[1].access"},
      {R"("namespaces": [)", R"("namespaces": "all", "y": [)", "linux.namespaces"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.to);
    ConfigFailsNaming(Sub(kConfig, c.from, c.to), c.needle);
  }
  // Keys the hook never reads may hold anything.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {R"("hostname": "runc")", R"("hostname": [1, {"a": null}, "x", 2.5, true])"},
           {R"("mounts": [)", R"("mounts": 5, "x": [)"},
           {R"("cwd": "/")", R"("cwd": {"a": [[[]]]})"},
           {R"("ociVersion": "1.0.2-dev")", R"("ociVersion": 1, "hooks": "x")"}}) {
    BundleConfig cfg;
    Error err;
    const std::string& hostile = to;  // (a structured binding cannot be captured in C++17)
    CAPTURE(hostile);
    CHECK_MESSAGE(ParseBundleConfig(Sub(kConfig, from, to), kWhere, &cfg, &err), err.Line());
  }
}

TEST_CASE("missing process, env, annotations, linux: fine; env entries without '='") {
  BundleConfig cfg;
  Error err;
  REQUIRE(ParseBundleConfig(R"({"root":{"path":"r"}})", kWhere, &cfg, &err));
  CHECK(cfg.env.empty());
  REQUIRE(ParseBundleConfig(R"({"root":{"path":"r"},"process":{}})", kWhere, &cfg, &err));
  REQUIRE(ParseBundleConfig(R"({"root":{"path":"r"},"process":{"env":["OCI_ONLOAD","=x","",)"
                            R"("A==b"]}})",
                            kWhere, &cfg, &err));
  std::string v = "unset";
  CHECK(ocid::LookupEnv(cfg.env, "OCI_ONLOAD", &v));
  CHECK(v.empty());
  CHECK(ocid::LookupEnv(cfg.env, "A", &v));
  CHECK(v == "=b");
}

TEST_CASE("duplicate keys: the last one wins, no crash") {
  BundleConfig cfg;
  Error err;
  REQUIRE(ParseBundleConfig(R"({"root":{"path":"a"},"root":{"path":"b"},)"
                            R"("process":{"env":["A=1"]},"process":{"env":["A=2"],"env":["A=3"]},)"
                            R"("annotations":{"k":"1","k":"2"}})",
                            kWhere, &cfg, &err));
  CHECK(cfg.root_path == "b");
  REQUIRE(cfg.env.size() == 1);
  CHECK(cfg.env[0] == "A=3");
  CHECK(cfg.annotations.at("k") == "2");
  // The last duplicate is the one checked.
  ConfigFailsNaming(R"({"root":{"path":"a"},"root":{"path":1}})", "root.path");
}

TEST_CASE("deep nesting, read and discarded parts: no stack overflow") {
  const size_t depth = 200000;
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  const std::string deep_obj = Repeat("{\"a\":", depth / 5) + "1" + std::string(depth / 5, '}');
  ConfigFailsNaming(std::string(depth, '['), "not valid JSON");
  ConfigFailsNaming(deep, "not a JSON object");
  ConfigFailsNaming(Sub(kConfig, R"("TERM=xterm")", deep), "process.env");
  ConfigFailsNaming(Sub(kConfig, R"("net")", deep_obj), "annotation \"org.example/team\"");
  ConfigFailsNaming(Sub(kConfig, R"("linux": {)", R"("linux": )" + deep + R"(, "x": {)"), "\"linux\"");
  BundleConfig cfg;
  Error err;
  CHECK_MESSAGE(ParseBundleConfig(Sub(kConfig, R"("hostname": "runc")", "\"hostname\": " + deep),
                                  kWhere, &cfg, &err),
                err.Line());
  CHECK_MESSAGE(ParseBundleConfig(Sub(kConfig, R"("cwd": "/")", "\"cwd\": " + deep_obj), kWhere,
                                  &cfg, &err),
                err.Line());
  ConfigFailsNaming(Sub(kConfig, R"("hostname": "runc")", "\"hostname\": " + deep.substr(1)),
                    "not valid JSON");
}

TEST_CASE("invalid UTF-8 anywhere (env value, annotation key, root.path, unread parts)") {
  for (const std::string b : {"\xff", "\xc0\x80", "\xed\xb0\x80", "\xe2\x82"}) {
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"TERM=xterm", "LANG=fr_FR.ISO-8859-1@" + b},
             {"org.example/team", "k" + b},
             {R"("path": "rootfs")", R"("path": "root)" + b + "\""},
             {R"("hostname": "runc")", R"("hostname": ")" + b + "\""},
             {R"("source": "sysfs")", R"("source": ")" + b + "\""}}) {
      Error e = ConfigFails(Sub(kConfig, from, to));
      CHECK_MESSAGE(Contains(e.Line(), "not valid JSON"), e.Line());
      CHECK_MESSAGE(Contains(e.Line(), "UTF-8"), e.Line());
      CHECK_MESSAGE(Contains(e.Line(), "line "), e.Line());
    }
  }
}

TEST_CASE("NUL: refused in root.path, kept in env values") {
  ConfigFailsNaming(Sub(kConfig, R"("path": "rootfs")", R"("path": "rootfs\u0000/../../x")"),
                    "root.path");
  BundleConfig cfg;
  Error err;
  REQUIRE(ParseBundleConfig(Sub(kConfig, "\"OCI_ONLOAD=all\"", R"("OCI_ONLOAD=all\u0000x")"), kWhere,
                            &cfg, &err));
  std::string v;
  REQUIRE(ocid::LookupEnv(cfg.env, "OCI_ONLOAD", &v));
  CHECK(v == std::string("all\0x", 5));
}

TEST_CASE("a 10 MB env value and a 10 MB annotation key parse") {
  std::string big(10 << 20, 'v');
  BundleConfig cfg;
  Error err;
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(ParseBundleConfig(Sub(Sub(kConfig, "TERM=xterm", "BIG=" + big), "org.example/team", big),
                            kWhere, &cfg, &err));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  std::string v;
  REQUIRE(ocid::LookupEnv(cfg.env, "BIG", &v));
  CHECK(v.size() == big.size());
  CHECK(cfg.annotations.count(big) == 1);
}

}  // TEST_SUITE

// ===========================================================================
TEST_SUITE("hostile.inventory") {


TEST_CASE("empty, null, scalars, garbage, non-UTF-8") {
  for (const char* s : {"", "{", "nul", "{\"activation_flag\":"}) InventoryFails(s, "not valid JSON");
  for (const char* s : {"null", "1", "\"x\"", "[]", "[{}]"})
    InventoryFails(s, "not a JSON object");
  InventoryFails(Sub(kGoodInventory, "good-tool", "good\xff"), "UTF-8");
  InventoryFails(kGoodInventory + std::string("\0garbage", 8), "NUL byte");
  InventoryFails(Sub(kGoodInventory, "\"1\"", "\"\xc0\xaf\""), "UTF-8");
}

TEST_CASE("the shipped onload.json truncated at every byte: no crash, one line naming the file") {
  const std::string full = ReadSource("config/onload.json");
  REQUIRE(full.size() > 500);
  std::vector<InventoryFile> files;
  for (size_t n = 0; n < full.size(); ++n) {
    ocid::Inventory inv;
    Error e;
    CAPTURE(n);
    if (ocid::ParseInventory(std::string_view(full).substr(0, n), "/c/onload.json", &inv, &e)) {
      CHECK(full.find_first_not_of(" \n", n) == std::string::npos);
    } else {
      CheckOneLine(e);
      CHECK(Contains(e.Line(), "/c/onload.json"));
    }
    files.push_back(InventoryFile{"/c/onload-" + std::to_string(n) + ".json", full.substr(0, n), {}});
  }
  // All at once, as a config directory: each broken file is kept with its
  // error, and once the flag has been written it is salvaged.
  InventorySet set;
  ocid::ParseInventoryFiles(files, &set);
  CHECK(set.inventories.size() <= 1);  // the one missing only the final newline
  REQUIRE(set.broken.size() + set.inventories.size() == files.size());
  const size_t flag_end = full.find("OCI_ONLOAD\"") + 11;
  for (const auto& b : set.broken) {
    size_t n = std::stoul(b.file.substr(b.file.find('-') + 1));
    CAPTURE(n);
    CheckOneLine(b.error);
    if (n >= flag_end) CHECK(b.activation_flag == "OCI_ONLOAD");
    else CHECK(b.activation_flag.empty());
  }
}

TEST_CASE("wrong type at every key") {
  struct Case {
    const char* from;
    const char* to;
    const char* needle;
  };
  const Case cases[] = {
      {R"("version": "1")", R"("version": [])", "\"version\""},
      {R"("version": "1")", R"("version": {"a": 1})", "\"version\""},
      {R"("version": "1")", R"("version": true)", "\"version\""},
      {R"("version": "1")", R"("log_level": 3)", "\"log_level\""},
      {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": 1)", "\"activation_flag\""},
      {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": "")", "\"activation_flag\""},
      {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": "1X")", "\"activation_flag\""},
      {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": "A=B")", "\"activation_flag\""},
      {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": ["OCI_GOOD"])", "\"activation_flag\""},
      {R"("activation_flag": "OCI_GOOD")", R"("activation_flag": null)", "\"activation_flag\""},
      {R"("version": "1")", R"("cdi_kind": 1)", "\"cdi_kind\""},
      {R"("driver_feature": ["f"])", R"("driver_feature": "f")", "\"driver_feature\""},
      {R"("driver_feature": ["f"])", R"("driver_feature": [])", "\"driver_feature\""},
      {R"("driver_feature": ["f"])", R"("driver_feature": [1])", "\"driver_feature\""},
      {R"("driver_feature": ["f"])", R"("driver_feature": ["f", 1, null])", "\"driver_feature\""},
      {R"("driver_feature": ["f"])", R"("driver_feature": ["f", "f"])", "\"driver_feature\""},
      {R"("driver_feature": ["f"])", R"("driver_feature": ["ALL"])", "\"driver_feature\""},
      {R"("inventory": {"f")", R"("inventory": [], "x-": {"f")", "\"inventory\""},
      {R"("inventory": {"f")", R"("inventory": "f", "x-": {"f")", "\"inventory\""},
      {R"({"f": {"binaries")", R"({"f": [], "x-": {"binaries")", "\"inventory.f\""},
      {R"({"f": {"binaries")", R"({"g": {"binaries")", "inventory."},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": "/usr/bin/good-tool")",
       "inventory.f.binaries"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": {"a": 1})", "inventory.f.binaries"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [1])", "inventory.f.binaries[0]"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [null])", "inventory.f.binaries[0]"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": ["/usr/bin/good-tool", ["/x"]])",
       "inventory.f.binaries[1]"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"source": 1}])",
       "inventory.f.binaries[0].source"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"source": []}])",
       "inventory.f.binaries[0].source"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"source": ["/a", 2]}])",
       "inventory.f.binaries[0].source"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"source": "/a", "target": 1}])",
       "inventory.f.binaries[0].target"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"source": "/a", "optional": "yes"}])",
       "inventory.f.binaries[0].optional"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": [{"target": "/a"}])",
       "inventory.f.binaries[0].source"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("binaries": ["/usr/bin/good\u0000tool"])",
       "NUL"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("devices": [5])", "inventory.f.devices[0]"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("preload": "libx.so")", "inventory.f.preload"},
      {R"("binaries": ["/usr/bin/good-tool"])", R"("preload": [1])", "inventory.f.preload"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.to);
    InventoryFails(Sub(kGoodInventory, c.from, c.to), c.needle);
  }
}

TEST_CASE("duplicate keys, deep nesting, long strings: no crash") {
  ocid::Inventory inv;
  Error err;
  CHECK(ocid::ParseInventory(Sub(kGoodInventory, R"("activation_flag": "OCI_GOOD")",
                                 R"("activation_flag": "OCI_A", "activation_flag": "OCI_GOOD")"),
                             "x.json", &inv, &err));
  CHECK(inv.activation_flag == "OCI_GOOD");
  const size_t depth = 400000;  // the inventory cap is 1 MiB
  InventoryFails(std::string(depth, '['), "not valid JSON");
  // A deep comment key is skipped whole.
  CHECK_MESSAGE(ocid::ParseInventory(Sub(kGoodInventory, R"("version": "1")",
                                         "\"x-deep\": " + std::string(depth, '[') +
                                             std::string(depth, ']')),
                                     "x.json", &inv, &err),
                err.Line());
  InventoryFails(Sub(kGoodInventory, R"("/usr/bin/good-tool")", std::string(depth, '[') +
                                                                   std::string(depth, ']')),
                 "inventory.f.binaries[0]");
  InventoryFails(Sub(kGoodInventory, "good-tool", "/" + std::string(1 << 20, 'a') + "/../x"),
                 "inventory.f.binaries[0]");
}

TEST_CASE("a broken file is kept with its salvaged flag, the good one loads") {
  std::vector<InventoryFile> files = {
      {"/c/a-good.json", kGoodInventory, {}},
      {"/c/b-broken.json", R"({"activation_flag": "OCI_BROKEN", "driver_feature": [)", {}},
      {"/c/c-garbage.json", "\xff\xfe\x00garbage", {}},
      {"/c/d-wrongtype.json", R"({"activation_flag": "OCI_WT", "driver_feature": "x"})", {}},
      {"/c/e-unreadable.json", "", Error{"cannot open inventory", "/c/e-unreadable.json", EACCES}},
  };
  InventorySet set;
  ocid::ParseInventoryFiles(files, &set);
  REQUIRE(set.inventories.size() == 1);
  CHECK(set.inventories[0].activation_flag == "OCI_GOOD");
  REQUIRE(set.broken.size() == 4);
  CHECK(set.broken[0].activation_flag == "OCI_BROKEN");
  CHECK(set.broken[1].activation_flag.empty());
  CHECK(set.broken[2].activation_flag == "OCI_WT");
  CHECK(set.broken[3].activation_flag.empty());
  for (const auto& b : set.broken) {
    CheckOneLine(b.error);
    CHECK_MESSAGE(Contains(b.error.Line(), b.file), b.error.Line());
  }
}

TEST_CASE("LoadInventoryDir: FIFO, directory, device, huge and dangling files do not hang") {
  TempTree t;
  t.Dir("d");
  ::chmod(t.path().c_str(), 0755);
  ::chmod((t / "d").c_str(), 0755);
  t.File("d/a-good.json", kGoodInventory);
  t.File("d/b-garbage.json", "{ this is not json, \"activation_flag\": \"OCI_BROKEN\" ");
  REQUIRE(::mkfifo((t / "d/c-fifo.json").c_str(), 0644) == 0);
  t.Dir("d/d-dir.json");
  t.Link("d/e-zero.json", "/dev/zero");
  t.Link("d/f-dangling.json", t / "nowhere");
  int fd = ::open((t / "d/g-huge.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 50 << 20) == 0);  // sparse 50 MiB
  ::close(fd);
  for (const char* f : {"d/a-good.json", "d/b-garbage.json"}) ::chmod((t / f).c_str(), 0644);

  auto run = std::async(std::launch::async, [&] {
    InventorySet set;
    Error err;
    bool ok = ocid::LoadInventoryDir(t / "d", &set, &err);
    return std::make_pair(ok, set);
  });
  if (run.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Release a reader stuck on the FIFO, then fail.
    int w = ::open((t / "d/c-fifo.json").c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) ::close(w);
    FAIL("LoadInventoryDir hangs");
  }
  auto result = run.get();
  REQUIRE(result.first);
  const InventorySet& set = result.second;
  REQUIRE(set.inventories.size() == 1);
  CHECK(set.inventories[0].activation_flag == "OCI_GOOD");
  REQUIRE(set.broken.size() == 6);
  auto broken = [&](const std::string& name) -> const ocid::BrokenInventory& {
    for (const auto& b : set.broken)
      if (b.file == t / ("d/" + name)) return b;
    FAIL("no broken entry for " << name);
    return set.broken[0];
  };
  CHECK(broken("b-garbage.json").activation_flag == "OCI_BROKEN");
  CHECK(Contains(broken("c-fifo.json").error.Line(), "not a regular file"));
  CHECK(Contains(broken("d-dir.json").error.Line(), "not a regular file"));
  CHECK(Contains(broken("e-zero.json").error.Line(), "not a regular file"));
  CHECK(Contains(broken("f-dangling.json").error.Line(), "No such file"));
  CHECK_MESSAGE(Contains(broken("g-huge.json").error.Line(), "larger than 1048576 bytes"),
                broken("g-huge.json").error.Line());
  for (const auto& b : set.broken) {
    CheckOneLine(b.error);
    CHECK(Contains(b.error.Line(), b.file));
  }
}

}  // TEST_SUITE

// ===========================================================================
// LoadIfAsked / PlanFor / CouldHaveAsked / RunHook on a real temporary tree.
namespace {

const std::string kBrokenInventory =
    R"({"activation_flag": "OCI_BROKEN", "driver_feature": ["f"], "inventory": {"f": )";

struct Fixture {
  TempTree t;
  ocid::Options opts;
  std::string bundle;

  Fixture() {
    ::chmod(t.path().c_str(), 0755);
    t.Dir("conf");
    t.Dir("bundle/rootfs");
    t.File("host/usr/bin/good-tool", "tool");
    ::chmod((t / "conf").c_str(), 0755);
    opts.config_dir = t / "conf";
    opts.host_root = t / "host";
    opts.state_dir = t / "state";
    bundle = t / "bundle";
  }
  void Inventory(const std::string& name, const std::string& content) const {
    t.File("conf/" + name, content);
    ::chmod((t / ("conf/" + name)).c_str(), 0644);
  }
  void Config(const std::string& content) const { t.File("bundle/config.json", content); }
  // A config.json with these env entries (JSON strings, comma separated).
  void ConfigEnv(const std::string& env) const {
    Config(R"({"root": {"path": "rootfs"}, "process": {"env": ["PATH=/bin")" +
           (env.empty() ? "" : ", " + env) + "]}}");
  }
  std::string State(const std::string& extra = "") const {
    return R"({"id": "c", "bundle": ")" + bundle + "\"" + extra + "}";
  }
};

struct Loaded {
  bool ok = false, asked = false, dir_unreadable = false;
  Error err;
  ocid::Container c;
};

Loaded Load(const Fixture& f, const std::string& state) {
  Loaded l;
  Error perr;
  REQUIRE_MESSAGE(ocid::ParseOciState(state, &l.c.state, &perr), perr.Line());
  l.ok = ocid::LoadIfAsked(f.opts, state, &l.c, &l.asked, &l.dir_unreadable, &l.err);
  return l;
}

// PlanFor on a loaded container that asked.
bool Plan(const Fixture& f, const Loaded& l, ocid::Plan* plan, Error* err) {
  std::unique_ptr<ocid::HostRootView> host;
  return ocid::PlanFor(f.opts, l.c, false, &host, plan, err);
}

// RunHook in-process with `state` on its stdin (unconfined: an activated
// container is refused before anything is applied).
int Hook(const Fixture& f, const std::string& state, const std::string& stage = "prestart") {
  TempTree in;
  in.File("state", state);
  int fd = ::open((in / "state").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  int rc = ocid::RunHook(f.opts, stage, fd, /*confined=*/false);
  ::close(fd);
  return rc;
}

}  // namespace

TEST_SUITE("hostile.decision") {

TEST_CASE("garbage config.json: did not ask unless a flag occurs in it") {
  Fixture f;
  f.Inventory("a-good.json", kGoodInventory);
  f.Config("\xff\xfe garbage {{{ [[[ \x01\x02");
  Loaded l = Load(f, f.State());
  CHECK_MESSAGE(l.ok, l.err.Line());
  CHECK_FALSE(l.asked);
  CHECK(Hook(f, f.State()) == 0);

  f.Config("\xff\xfe garbage OCI_GOOD=all {{{");
  l = Load(f, f.State());
  CHECK(l.asked);
  REQUIRE_FALSE(l.ok);
  CheckOneLine(l.err);
  CHECK(Contains(l.err.Line(), "not valid JSON"));
  CHECK(Contains(l.err.Line(), f.bundle + "/config.json"));
  CHECK(Hook(f, f.State()) == 1);
  // Even "OCI_GOOD=none" in garbage is a mention: the hook cannot tell.
  f.Config("{\"process\": {\"env\": [\"OCI_GOOD=none\"]");
  CHECK(Hook(f, f.State()) == 1);
  // A flag in the state (an annotation) with a garbage config.json.
  f.Config("garbage");
  CHECK(Hook(f, f.State(R"(, "annotations": {"oci-decorator/OCI_GOOD": "all"})")) == 1);
}

TEST_CASE("a flag mentioned outside process.env asks nothing: no cap, no strict parse") {
  Fixture f;
  f.Inventory("a-good.json", kGoodInventory);
  // Over the 32 MiB cap, the flag in process.args and invalid UTF-8 in
  // another variable's value (runc runs it: Go replaces the byte).
  std::string pad(33u << 20, 'p');
  std::string body = R"({"root": {"path": "rootfs"}, "process": {"args": ["sh", "-c", "OCI_GOOD=all x"],
      "env": ["LANG=caf)" "\xff" R"(", "PAD=)" + pad + "\"]";
  f.Config(body + "}}");
  Loaded l = Load(f, f.State());
  CHECK_MESSAGE(l.ok, l.err.Line());
  CHECK_FALSE(l.asked);
  CHECK(Hook(f, f.State()) == 0);
  // The flag as an env entry of the same document: the caps apply.
  f.Config(body.substr(0, body.size() - 1) + R"(, "OCI_GOOD=all"]}})");
  l = Load(f, f.State());
  CHECK(l.asked);
  CHECK_FALSE(l.ok);
  CHECK_MESSAGE(Contains(l.err.Line(), "larger than 33554432 bytes"), l.err.Line());
  CHECK(Hook(f, f.State()) == 1);
  // Small, with the invalid byte: the strict parse refuses only an asker.
  f.Config(R"({"root": {"path": "rootfs"}, "process": {"args": ["OCI_GOOD"], "env": ["LANG=caf)" "\xff" R"("]}})");
  l = Load(f, f.State());
  CHECK_MESSAGE(l.ok, l.err.Line());
  CHECK_FALSE(l.asked);
  f.Config(R"({"root": {"path": "rootfs"}, "process": {"env": ["LANG=caf)" "\xff" R"(", "OCI_GOOD=all"]}})");
  l = Load(f, f.State());
  CHECK(l.asked);
  CHECK_FALSE(l.ok);
  // The state: an annotation value naming the flag is no request either.
  f.ConfigEnv(R"("TERM=xterm")");
  CHECK(Hook(f, f.State(R"(, "annotations": {"note": "oci-decorator/OCI_GOOD"})")) == 0);
  CHECK_FALSE(ocid::CouldHaveAsked(f.opts, f.State(R"(, "pid": "x", "annotations": {"note": "OCI_GOOD"})")));
  CHECK(ocid::CouldHaveAsked(f.opts, f.State(R"(, "pid": "x", "annotations": {"oci-decorator/OCI_GOOD": "all"})")));
}

TEST_CASE("config.json missing, a FIFO, a directory, a symlink, 50 MB: no hang; errors only once asked") {
  Fixture f;
  f.Inventory("a-good.json", kGoodInventory);
  const std::string cfg = f.bundle + "/config.json";
  // The request in the state: the caps on config.json apply.
  const std::string asking = f.State(R"(, "annotations": {"oci-decorator/OCI_GOOD": "all"})");
  auto load = [&](const std::string& state) {
    auto run = std::async(std::launch::async, [&] { return Load(f, state); });
    if (run.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      int w = ::open(cfg.c_str(), O_WRONLY | O_NONBLOCK);  // release a stuck reader
      if (w >= 0) ::close(w);
      FAIL("LoadIfAsked hangs");
    }
    return run.get();
  };
  // Without a flag in the state, whatever config.json is cannot have asked.
  auto not_asked = [&]() {
    Loaded l = load(f.State());
    CHECK_MESSAGE(l.ok, l.err.Line());
    CHECK_FALSE(l.asked);
    CHECK(Hook(f, f.State()) == 0);
  };
  auto load_error = [&]() {
    Loaded l = load(asking);
    CHECK_FALSE(l.ok);
    CHECK_FALSE(l.dir_unreadable);
    CheckOneLine(l.err);
    CHECK_MESSAGE(Contains(l.err.Line(), cfg), l.err.Line());
    CHECK(Hook(f, asking) == 1);
    return l.err.Line();
  };
  not_asked();
  CHECK(Contains(load_error(), "No such file"));
  REQUIRE(::mkfifo(cfg.c_str(), 0644) == 0);
  not_asked();
  CHECK(Contains(load_error(), "not a regular file"));
  ::unlink(cfg.c_str());
  f.t.Dir("bundle/config.json");
  not_asked();
  CHECK(Contains(load_error(), "not a regular file"));
  ::rmdir(cfg.c_str());
  // A symlink is followed for the scan, as the runtime followed it.
  f.t.File("bundle/real.json", R"({"root": {"path": "rootfs"}})");
  f.t.Link("bundle/config.json", "real.json");
  not_asked();
  CHECK(Contains(load_error(), "symbolic link"));
  f.t.File("bundle/real.json", R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]}})");
  Loaded l = load(f.State());
  CHECK(l.asked);
  CHECK_FALSE(l.ok);
  CHECK(Contains(l.err.Line(), "symbolic link"));
  ::unlink(cfg.c_str());
  int fd = ::open(cfg.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 50 << 20) == 0);
  ::close(fd);
  auto t0 = std::chrono::steady_clock::now();
  not_asked();
  CHECK(Contains(load_error(), "larger than " + std::to_string(ocid::kMaxConfigBytes) + " bytes"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
  // A valid config.json over the cap that names no flag: not asked. The
  // same naming the flag at its very end (read in chunks, found across
  // any chunk boundary) asked, and the cap applies.
  std::string big = R"({"root": {"path": "rootfs"}, "process": {"env": [)";
  while (big.size() < (33u << 20)) big += "\"A_RATHER_LONG_VARIABLE=with some value\", ";
  f.Config(big + "\"LAST=1\"]}}");
  not_asked();
  f.Config(big + "\"OCI_GOOD=all\"]}}");
  l = load(f.State());
  CHECK(l.asked);
  CHECK(Contains(l.err.Line(), "larger than"));
  // The state's bundle is a file, or missing.
  ::unlink(cfg.c_str());
  f.t.File("bundle-file", "x");
  l = Load(f, R"({"id": "c", "bundle": ")" + (f.t / "bundle-file") + "\"}");
  CHECK(l.ok);
  CHECK_FALSE(l.asked);
  l = Load(f, R"({"id": "c", "bundle": ")" + (f.t / "bundle-file") +
                  R"(", "annotations": {"oci-decorator/OCI_GOOD": "all"}})");
  CHECK_FALSE(l.ok);
  CHECK(Contains(l.err.Line(), "Not a directory"));
  l = Load(f, R"({"id": "c", "bundle": ")" + (f.t / "no-such-bundle") +
                  R"(", "annotations": {"oci-decorator/OCI_GOOD": "all"}})");
  CHECK_FALSE(l.ok);
  CHECK(Contains(l.err.Line(), "no-such-bundle/config.json"));
  // None of this matters with no inventory installed.
  Fixture empty;
  Loaded e = Load(empty, R"({"id": "c", "bundle": "/nonexistent/ocid"})");
  CHECK(e.ok);
  CHECK_FALSE(e.asked);
}

TEST_CASE("a broken inventory fails only the containers that ask for it") {
  Fixture f;
  f.Inventory("a-good.json", kGoodInventory);
  f.Inventory("b-broken.json", kBrokenInventory);
  f.Inventory("c-garbage.json", "\xff\xfe\x01 not json at all");

  // Asks for the good one only.
  f.ConfigEnv(R"("OCI_GOOD=all")");
  Loaded l = Load(f, f.State());
  REQUIRE_MESSAGE(l.ok, l.err.Line());
  REQUIRE(l.asked);
  CHECK(l.c.inventories.broken.size() == 2);
  ocid::Plan plan;
  Error err;
  REQUIRE_MESSAGE(Plan(f, l, &plan, &err), err.Line());
  REQUIRE(plan.activated.size() == 1);
  CHECK(Contains(plan.activated[0].file, "a-good.json"));

  // Switches the broken one off, by env and by annotation: not a request.
  for (const std::string& how : {std::string(R"("OCI_BROKEN=none", "OCI_GOOD=0")"),
                                 std::string(R"("OCI_BROKEN=", "OCI_BROKEN")")}) {
    f.ConfigEnv(how);
    l = Load(f, f.State());
    REQUIRE(l.ok);
    CHECK(l.asked);
    CHECK_MESSAGE(Plan(f, l, &plan, &err), err.Line());
    CHECK_FALSE(plan.Active());
    CHECK(Hook(f, f.State()) == 0);
  }

  // Asks for the broken one: fails, naming it.
  f.ConfigEnv(R"("OCI_BROKEN=all")");
  l = Load(f, f.State());
  REQUIRE(l.ok);
  CHECK_FALSE(Plan(f, l, &plan, &err));
  CheckOneLine(err);
  CHECK_MESSAGE(Contains(err.Line(), f.t / "conf/b-broken.json"), err.Line());
  CHECK(Hook(f, f.State()) == 1);
  l = Load(f, f.State(R"(, "annotations": {"oci-decorator/OCI_BROKEN": "f"})"));
  f.ConfigEnv("");
  l = Load(f, f.State(R"(, "annotations": {"oci-decorator/OCI_BROKEN": "f"})"));
  REQUIRE(l.ok);
  CHECK(l.asked);
  CHECK_FALSE(Plan(f, l, &plan, &err));

  // Asks for nothing: never even parsed.
  f.ConfigEnv(R"("OTHER=1")");
  l = Load(f, f.State());
  CHECK(l.ok);
  CHECK_FALSE(l.asked);
  CHECK(Hook(f, f.State()) == 0);
}

TEST_CASE("every inventory broken: a container that does not ask starts") {
  Fixture f;
  f.Inventory("a.json", kBrokenInventory);
  f.Inventory("b.json", "");
  f.Inventory("c.json", "\xff");
  f.Inventory("d.json", R"({"activation_flag": 7})");
  f.Inventory("e.json", std::string(600000, '['));
  f.ConfigEnv(R"("PATH=/usr/bin", "HOME=/root")");
  Loaded l = Load(f, f.State());
  CHECK(l.ok);
  CHECK_FALSE(l.asked);
  CHECK(Hook(f, f.State()) == 0);
  // With an annotation the broken one would see, it fails.
  CHECK(Hook(f, f.State(R"(, "annotations": {"oci-decorator/OCI_BROKEN": "all"})")) == 1);
}

TEST_CASE("a flag spelled with \\u00XX escapes is still a request") {
  Fixture f;
  f.Inventory("a-good.json", kGoodInventory);
  f.ConfigEnv(R"("OCI\u005fGOOD=all")");
  Loaded l = Load(f, f.State());
  REQUIRE(l.ok);
  CHECK(l.asked);
  ocid::Plan plan;
  Error err;
  REQUIRE_MESSAGE(Plan(f, l, &plan, &err), err.Line());
  CHECK(plan.Active());
  // Escapes of characters no flag holds (what Go's encoder writes) keep the
  // fast path.
  f.ConfigEnv(R"("URL=http://x/?a=1\u0026b=\u003c\u003e", "OTHER=1")");
  l = Load(f, f.State());
  CHECK(l.ok);
  CHECK_FALSE(l.asked);
}

TEST_CASE("hostile request values: one bounded printable line") {
  Fixture f;
  f.Inventory("a-good.json", kGoodInventory);
  f.ConfigEnv(R"("OCI_GOOD=)" + std::string(10 << 20, 'z') + R"(")");
  Loaded l = Load(f, f.State());
  REQUIRE(l.ok);
  ocid::Plan plan;
  Error err;
  CHECK_FALSE(Plan(f, l, &plan, &err));
  CheckOneLine(err);
  CHECK(Contains(err.Line(), "unknown feature"));
  CHECK_MESSAGE(Contains(err.Line(), "a-good.json"), err.Line());  // the tail survives
  f.ConfigEnv(R"("OCI_GOOD=all\u0000\n\u001b[2J")");
  l = Load(f, f.State());
  REQUIRE(l.ok);
  CHECK_FALSE(Plan(f, l, &plan, &err));
  CheckOneLine(err);
  CHECK_MESSAGE(Contains(err.Line(), "\\x00\\x0a\\x1b[2J"), err.Line());
}

TEST_CASE("an unusable state fails only a container that may have asked") {
  Fixture f;
  f.ConfigEnv(R"("OTHER=1")");
  const std::vector<std::string> unusable = {
      "", "null", "{", "[]", "\xff", R"({"id": "c"})", R"({"bundle": "/b"})",
      f.State(R"(, "pid": "12")"), f.State(R"(, "pid": -1)"), f.State(R"(, "annotations": [])"),
      f.State(R"(, "status": 3)"), f.State(R"(, "root": "a\u0000b")"),
      R"({"id": "c", "bundle": ")" + f.bundle + R"(\u0000x"})"};
  // No inventory installed: nobody can have asked.
  for (const auto& s : unusable) {
    CAPTURE(s);
    CHECK_FALSE(ocid::CouldHaveAsked(f.opts, s));
    CHECK(Hook(f, s) == 0);
    CHECK(Hook(f, s, "poststop") == 0);
  }
  // Only unsalvageable inventories (no flag can be read): the same.
  f.Inventory("a.json", "\xff garbage");
  for (const auto& s : unusable) CHECK(Hook(f, s) == 0);
  // A readable flag: the state's bundle decides when there is one.
  f.Inventory("b-good.json", kGoodInventory);
  CHECK_FALSE(ocid::CouldHaveAsked(f.opts, f.State(R"(, "pid": "12")")));
  CHECK(Hook(f, f.State(R"(, "pid": "12")")) == 0);
  CHECK(Hook(f, f.State(R"(, "annotations": [])")) == 0);
  f.ConfigEnv(R"("OCI_GOOD=all")");
  CHECK(ocid::CouldHaveAsked(f.opts, f.State(R"(, "pid": "12")")));
  CHECK(Hook(f, f.State(R"(, "pid": "12")")) == 1);
  f.ConfigEnv(R"("OTHER=1")");
  // The flag in the (bad) state itself.
  CHECK(Hook(f, f.State(R"(, "pid": "12", "annotations": {"oci-decorator/OCI_GOOD": "all"})")) == 1);
  // No usable bundle, or config.json unreadable: cannot tell, so it fails.
  for (const std::string& s :
       {std::string(""), std::string("{"), std::string(R"({"id": "c"})"),
        std::string(R"({"id": "c", "bundle": "relative"})"),
        std::string(R"({"bundle": ")" + (f.t / "nowhere") + "\"}")}) {
    CAPTURE(s);
    CHECK(ocid::CouldHaveAsked(f.opts, s));
    CHECK(Hook(f, s) == 1);
  }
  // A usable state of a container that did not ask, no pid: fine.
  CHECK(Hook(f, f.State()) == 0);
  // One that asked, with no pid: refused (unconfined here, so for that first).
  f.ConfigEnv(R"("OCI_GOOD=all")");
  CHECK(Hook(f, f.State()) == 1);
}

}  // TEST_SUITE

// ===========================================================================
TEST_SUITE("hostile.read") {

TEST_CASE("ReadAllFd: 50 MB on a pipe: drained, refused naming the cap, not kept") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  std::atomic<size_t> written{0};
  std::thread writer([&] {
    std::string chunk(1 << 20, ' ');
    for (int i = 0; i < 50; ++i) {
      size_t done = 0;
      while (done < chunk.size()) {
        ssize_t n = ::write(p[1], chunk.data() + done, chunk.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      written += done;
    }
    ::close(p[1]);
  });
  std::string out;
  Error err;
  CHECK_FALSE(ocid::ReadAllFd(p[0], 1 << 20, "OCI state on stdin", &out, &err));
  writer.join();
  ::close(p[0]);
  CHECK(written == size_t{50} << 20);  // the writer never saw EPIPE
  CHECK(out.empty());
  CheckOneLine(err);
  CHECK(err.Line() == "OCI state on stdin is larger than 1048576 bytes");
}

TEST_CASE("ReadAllFd: a pipe that never ends: given up on after the drain budget") {
  struct sigaction ign {}, old {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  int p[2];
  REQUIRE(::pipe(p) == 0);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::string chunk(1 << 16, 'x');
    while (!stop && ::write(p[1], chunk.data(), chunk.size()) > 0) {
    }
    ::close(p[1]);
  });
  std::string out;
  Error err;
  auto read = std::async(std::launch::async, [&] {
    return ocid::ReadAllFd(p[0], 1 << 20, "OCI state on stdin", &out, &err);
  });
  bool ended = read.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  stop = true;  // the writer stops (and the reader sees EOF, if it was still reading)
  CHECK_MESSAGE(ended, "ReadAllFd reads an endless pipe forever");
  CHECK_FALSE(read.get());
  ::close(p[0]);  // a writer still blocked gets EPIPE
  writer.join();
  ::sigaction(SIGPIPE, &old, nullptr);
  CHECK(Contains(err.Line(), "larger than 1048576 bytes"));
}

TEST_CASE("policy sees what runc applies: case variants and duplicates refuse only askers") {
  Fixture f;
  f.Inventory("a-good.json", R"({"version": "1", "activation_flag": "OCI_GOOD",
      "driver_feature": ["f"], "activation_policy": {"refuse_privileged": true},
      "inventory": {"f": {"binaries": ["/usr/bin/good-tool"]}}})");
  auto plan_error = [&](const std::string& config) {
    f.Config(config);
    Loaded l = Load(f, f.State());
    REQUIRE_MESSAGE(l.ok, l.err.Line());
    ocid::Plan plan;
    Error err;
    if (!l.asked) return std::string("not asked");
    if (Plan(f, l, &plan, &err)) return std::string(plan.Active() ? "planned" : "not active");
    CheckOneLine(err);
    return err.Line();
  };
  // runc grants CAP_SYS_ADMIN through "Process"; exact keys would miss it.
  std::string e = plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]},
      "Process": {"capabilities": {"bounding": ["CAP_SYS_ADMIN"]}}})");
  CHECK_MESSAGE(Contains(e, "config.json is ambiguous"), e);
  CHECK_MESSAGE(Contains(e, "\"Process\" matches \"process\""), e);
  CHECK_MESSAGE(Contains(e, "OCI_GOOD"), e);
  // An allow-all device rule under "Linux".
  e = plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]},
      "Linux": {"resources": {"devices": [{"allow": true, "access": "rwm"}]}}})");
  CHECK_MESSAGE(Contains(e, "\"Linux\" matches"), e);
  // The request only in a variant, or only in an earlier duplicate.
  e = plan_error(R"({"root": {"path": "rootfs"}, "proce\u017fs": {"env": ["OCI_GOOD=all"]}})");
  CHECK_MESSAGE(Contains(e, "config.json is ambiguous"), e);
  e = plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["PATH=/bin"]},
      "process": {"env": ["OCI_GOOD=all"]}})");
  CHECK_MESSAGE(Contains(e, "is given twice"), e);
  // A request runc's reading drops (an earlier duplicate) asks for nothing:
  // nothing is activated for it under any runtime (request_reader.h).
  CHECK(plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]},
      "process": {"env": ["PATH=/bin"]}})") == "not asked");
  // The flag named, but no reading asks: left alone.
  CHECK(plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=none"],
      "args": ["OCI_GOOD=all"]}, "Process": {"capabilities": {"bounding": ["CAP_SYS_ADMIN"]}}})") ==
        "not active");
  // Without ambiguity the policy works as before.
  e = plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"],
      "capabilities": {"bounding": ["CAP_SYS_ADMIN"]}}})");
  CHECK_MESSAGE(Contains(e, "CAP_SYS_ADMIN"), e);
  CHECK(plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]}})") ==
        "planned");
}

// A state on a pipe, written by a thread as a runtime would.
int HookOnPipe(const Fixture& f, const std::string& state) {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  std::atomic<size_t> written{0};
  std::thread writer([&] {
    size_t done = 0;
    while (done < state.size()) {
      ssize_t n = ::write(p[1], state.data() + done, state.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    written = done;
    ::close(p[1]);
  });
  int rc = ocid::RunHook(f.opts, "prestart", p[0], /*confined=*/false);
  writer.join();
  ::close(p[0]);
  CHECK(written == state.size());  // read to EOF: the writer never saw EPIPE
  return rc;
}

TEST_CASE("a state of any size: read as a stream; caps apply only once asked") {
  Fixture f;
  f.Inventory("a-good.json", kGoodInventory);
  f.ConfigEnv(R"("TERM=xterm")");
  // A 20 MB annotation, and 300000 small ones: no flag, not asked.
  std::string big(20 << 20, 'x');
  CHECK(HookOnPipe(f, f.State(R"(, "annotations": {"big": ")" + big + "\"}")) == 0);
  std::string many = R"(, "annotations": {)";
  for (int i = 0; i < 300000; ++i) many += "\"k" + std::to_string(i) + "\": \"v\", ";
  many += R"("last": "v"})";
  CHECK(HookOnPipe(f, f.State(many)) == 0);
  // Parsed, only the first MiB of annotations is kept, and the requests.
  OciState st;
  Error err;
  REQUIRE(ParseOciState(f.State(many.substr(0, many.size() - 1) +
                                R"(, "oci-decorator/OCI_GOOD": "all"})"),
                        &st, &err));
  CHECK(st.annotations_pruned);
  CHECK(st.annotations.size() < 100000);
  CHECK(st.annotations.at("oci-decorator/OCI_GOOD") == "all");
  CHECK(st.annotations.count("k0") == 1);
  // That container asks: refused, naming the cap.
  Loaded l = Load(f, f.State(many.substr(0, many.size() - 1) +
                             R"(, "oci-decorator/OCI_GOOD": "all"})"));
  REQUIRE_MESSAGE(l.ok, l.err.Line());
  REQUIRE(l.asked);
  ocid::Plan plan;
  CHECK_FALSE(Plan(f, l, &plan, &err));
  CHECK_MESSAGE(Contains(err.Line(), "annotations over 1048576 bytes"), err.Line());
  // The same state small enough: planned.
  l = Load(f, f.State(R"(, "annotations": {"oci-decorator/OCI_GOOD": "all"})"));
  CHECK_MESSAGE(Plan(f, l, &plan, &err), err.Line());
  // A flag in the state's bytes beyond the first chunks is still seen.
  CHECK(HookOnPipe(f, f.State(R"(, "annotations": {"big": ")" + big +
                              R"(", "oci-decorator/OCI_GOOD": "all"})")) == 1);
}

TEST_CASE("the hook on a pipe that never ends: gives up, never hangs") {
  Fixture f;
  f.Inventory("a-good.json", kGoodInventory);
  f.ConfigEnv(R"("TERM=xterm")");
  struct sigaction ign {}, old {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  int p[2];
  REQUIRE(::pipe(p) == 0);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::string head = f.State().substr(0, f.State().size() - 1) + R"(, "annotations": {"x": ")";
    std::string chunk(1 << 16, 'x');
    bool ok = ::write(p[1], head.data(), head.size()) > 0;
    while (ok && !stop && ::write(p[1], chunk.data(), chunk.size()) > 0) {
    }
    ::close(p[1]);
  });
  auto run = std::async(std::launch::async, [&] {
    return ocid::RunHook(f.opts, "prestart", p[0], /*confined=*/false);
  });
  bool ended = run.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  stop = true;
  REQUIRE_MESSAGE(ended, "the hook reads an endless stdin forever");
  // No flag anywhere and the bundle known: the container cannot have asked.
  CHECK(run.get() == 0);
  ::close(p[0]);
  writer.join();
  ::sigaction(SIGPIPE, &old, nullptr);
}

TEST_CASE("a regular file over the cap is refused without being read") {
  TempTree t;
  std::string big(3 << 20, 'x');
  t.File("big", big);
  int fd = ::open((t / "big").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::string out;
  Error err;
  CHECK_FALSE(ocid::ReadAllFd(fd, 1 << 20, "x", &out, &err));
  CHECK(::lseek(fd, 0, SEEK_CUR) == 0);
  ::close(fd);
  CHECK(err.Line() == "x is larger than 1048576 bytes");
  // Exactly at the cap is fine.
  t.File("exact", std::string(1 << 20, 'y'));
  CHECK(ocid::ReadFileAt(AT_FDCWD, t / "exact", 1 << 20, &out, &err));
  CHECK(out.size() == size_t{1} << 20);
  CHECK_FALSE(ocid::ReadFileAt(AT_FDCWD, t / "big", 1 << 20, &out, &err));
  CHECK(out.empty());
}

}  // TEST_SUITE

// ===========================================================================
TEST_SUITE("hostile.error") {

TEST_CASE("Printable: controls and bad UTF-8 escaped, good UTF-8 kept, long values elided") {
  using ocid::Printable;
  CHECK(Printable("plain /path: ok") == "plain /path: ok");
  CHECK(Printable("a\nb\r\tc") == "a\\x0ab\\x0d\\x09c");
  CHECK(Printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(Printable("\x1b[31mred\x7f") == "\\x1b[31mred\\x7f");
  CHECK(Printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(Printable("\xff") == "\\xff");
  CHECK(Printable("\xc0\xaf") == "\\xc0\\xaf");                  // overlong '/'
  CHECK(Printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");          // surrogate
  CHECK(Printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80"); // above U+10FFFF
  CHECK(Printable("\xc2\x9b") == "\\xc2\\x9b");                  // C1 CSI
  CHECK(Printable("\xe2\x82") == "\\xe2\\x82");                  // cut short
  std::string big = "HEAD" + std::string(10 << 20, 'm') + "TAIL";
  std::string p = Printable(big);
  CHECK(p.size() < ocid::kMaxShownBytes + 64);
  CHECK(p.rfind("HEAD", 0) == 0);
  CHECK(p.size() >= 4);
  CHECK(p.compare(p.size() - 4, 4, "TAIL") == 0);
  CHECK(Contains(p, "bytes ...]"));
  CHECK(PrintableUtf8(Printable(std::string(10000, '\xff'))));
}

TEST_CASE("Printable: the one escaping rule (SECURITY.md 2.11), byte by byte") {
  using ocid::Printable;
  auto hex = [](unsigned c) {
    static const char k[] = "0123456789abcdef";
    return std::string{'\\', 'x', k[c >> 4], k[c & 15]};
  };
  // Every C0 control (CR, VT, FF, TAB and ESC included) and DEL.
  for (unsigned c = 0; c < 0x20; ++c)
    CHECK(Printable("a" + std::string(1, static_cast<char>(c)) + "b") == "a" + hex(c) + "b");
  CHECK(Printable("\x7f") == "\\x7f");
  // Every C1 control as UTF-8 encodes it (U+0085 NEL, U+009B CSI among them).
  for (unsigned c = 0x80; c <= 0x9f; ++c)
    CHECK(Printable(std::string("\xc2") + static_cast<char>(c)) == "\\xc2" + hex(c));
  CHECK(Printable("\xc2\x85") == "\\xc2\\x85");
  CHECK(Printable("\xc2\x9b" "31m") == "\\xc2\\x9b" "31m");
  // Bidirectional controls ("Trojan Source") and the line/paragraph separators.
  for (unsigned cp : {0x061Cu, 0x200Eu, 0x200Fu, 0x2028u, 0x2029u, 0x202Au, 0x202Bu, 0x202Cu,
                      0x202Du, 0x202Eu, 0x2066u, 0x2067u, 0x2068u, 0x2069u}) {
    std::string u = cp < 0x800 ? std::string{static_cast<char>(0xC0 | cp >> 6),
                                             static_cast<char>(0x80 | (cp & 0x3F))}
                               : std::string{static_cast<char>(0xE0 | cp >> 12),
                                             static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                                             static_cast<char>(0x80 | (cp & 0x3F))};
    std::string want;
    for (unsigned char b : u) want += hex(b);
    CHECK(Printable("x" + u + "y") == "x" + want + "y");
  }
  CHECK(Printable("admin\xe2\x80\xae" "txt.exe") == "admin\\xe2\\x80\\xae" "txt.exe");
  // Invalid UTF-8, byte by byte.
  CHECK(Printable("\xff\xfe") == "\\xff\\xfe");
  CHECK(Printable("\xe2\x80") == "\\xe2\\x80");
  // Kept: printable ASCII, and UTF-8 that is not a control (U+00A0 and up,
  // U+200D next to the bidi range, U+202F right after it).
  CHECK(Printable("caf\xc3\xa9 \xc2\xa0 \xe2\x80\x8d \xe2\x80\xaf") ==
        "caf\xc3\xa9 \xc2\xa0 \xe2\x80\x8d \xe2\x80\xaf");
  // A second pass changes nothing.
  std::string once = Printable("a\r\x0b\x0c\xc2\x9b\x7f\xe2\x80\xae\xff");
  CHECK(Printable(once) == once);
  // No cut when asked for none.
  CHECK(Printable(std::string(10000, 'q'), std::string_view::npos).size() == 10000);
}

TEST_CASE("PrintableJson: a dumped JSON text shows no control, and parses the same") {
  nlohmann::ordered_json j;
  j["v"] = "a\x7f" "b\xc2\x9b" "c\xe2\x80\xae" "d\xc3\xa9\x1b";
  std::string dumped = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  // nlohmann on its own escapes C0 only: DEL, C1 and bidi stay raw.
  REQUIRE(dumped.find("\xc2\x9b") != std::string::npos);
  std::string shown = ocid::PrintableJson(dumped);
  CHECK(Contains(shown, "a\\u007fb\\u009bc\\u202ed\xc3\xa9\\u001b"));
  CHECK(ocid::Printable(shown) == shown);  // nothing left the rule would escape
  CHECK(nlohmann::json::parse(shown) == nlohmann::json::parse(dumped));
  CHECK(ocid::PrintableJson(std::string("\"\xff\"")) == "\"\\ufffd\"");
}

TEST_CASE("Error::Line is one printable line whatever the parts hold") {
  Error e{"bad \"k\nx\"", std::string("/p\0ath\n", 7), 2};
  CHECK(e.Line() == "bad \"k\\x0ax\": /p\\x00ath\\x0a: No such file or directory");
}

TEST_CASE("JsonErrorReason: where and why, without the prefix or the input") {
  for (const std::string& s : {std::string("{\"a\": \"\xff\"}"), std::string("{\"a\": 1"),
                               std::string(""), std::string("[1e400]"),
                               std::string("{\"a\":\"\\udc80\"}")}) {
    try {
      nlohmann::json j = nlohmann::json::parse(s);
      (void)j;
      FAIL("parsed: " << s);
    } catch (const nlohmann::json::exception& e) {
      std::string r = ocid::JsonErrorReason(e.what());
      CAPTURE(e.what());
      CHECK_FALSE(r.empty());
      CHECK_FALSE(Contains(r, "json.exception"));
      CHECK_FALSE(Contains(r, "last read"));
      CHECK_FALSE(Contains(r, "\xff"));
    }
  }
  CHECK(ocid::JsonErrorReason("[json.exception.parse_error.101] parse error at line 1, column 8: "
                              "syntax error while parsing value - invalid string: ill-formed "
                              "UTF-8 byte; last read: '\"\xff'") ==
        "line 1, column 8: invalid string: ill-formed UTF-8 byte");
  CHECK(ocid::JsonErrorReason("something else") == "something else");
}

}  // TEST_SUITE
