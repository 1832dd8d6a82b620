// ParseOciState / IsSafeContainerId: the state a runtime writes on stdin.
#include <doctest/doctest.h>

#include <string>

#include "oci_state.h"

using ocid::Error;
using ocid::OciState;
using ocid::ParseOciState;

namespace {

bool ParseFails(const std::string& s, Error* err) {
  OciState st;
  return !ParseOciState(s, &st, err);
}

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace

TEST_SUITE("oci_state") {

TEST_CASE("runc prestart state: status creating, pid, bundle, annotations") {
  const std::string s = R"({
    "ociVersion": "1.0.2-dev",
    "id": "f3c2e0a1b2",
    "status": "creating",
    "pid": 12345,
    "bundle": "/run/containerd/io.containerd.runtime.v2.task/default/f3c2e0a1b2",
    "annotations": {"oci-decorator/OCI_ONLOAD": "all", "io.kubernetes.pod": "x"}
  })";
  OciState st;
  Error err;
  REQUIRE_MESSAGE(ParseOciState(s, &st, &err), err.Line());
  CHECK(st.oci_version == "1.0.2-dev");
  CHECK(st.id == "f3c2e0a1b2");
  CHECK(st.status == "creating");
  CHECK(st.pid == 12345);
  CHECK(st.bundle == "/run/containerd/io.containerd.runtime.v2.task/default/f3c2e0a1b2");
  CHECK(st.root.empty());
  REQUIRE(st.annotations.size() == 2);
  CHECK(st.annotations.at("oci-decorator/OCI_ONLOAD") == "all");
  CHECK(st.annotations.at("io.kubernetes.pod") == "x");
}

TEST_CASE("crun state: root and status created") {
  const std::string s =
      R"({"ociVersion":"1.0.0","id":"c1","status":"created","pid":77,)"
      R"("bundle":"/var/lib/b/c1","root":"/var/lib/b/c1/rootfs"})";
  OciState st;
  Error err;
  REQUIRE_MESSAGE(ParseOciState(s, &st, &err), err.Line());
  CHECK(st.status == "created");
  CHECK(st.pid == 77);
  CHECK(st.root == "/var/lib/b/c1/rootfs");
  CHECK(st.annotations.empty());
}

TEST_CASE("poststop state without pid") {
  const std::string s = R"({"ociVersion":"1.0.2","id":"c2","status":"stopped","bundle":"/b"})";
  OciState st;
  st.pid = 99;  // must be reset
  Error err;
  REQUIRE_MESSAGE(ParseOciState(s, &st, &err), err.Line());
  CHECK(st.pid == 0);
  CHECK(st.status == "stopped");
  CHECK(st.bundle == "/b");
}

TEST_CASE("null pid and null annotations are treated as absent") {
  OciState st;
  Error err;
  REQUIRE(ParseOciState(R"({"id":"c","bundle":"/b","pid":null,"annotations":null})", &st, &err));
  CHECK(st.pid == 0);
  CHECK(st.annotations.empty());
}

TEST_CASE("largest Linux pid (4194304) is accepted") {
  OciState st;
  Error err;
  REQUIRE_MESSAGE(ParseOciState(R"({"id":"c","bundle":"/b","pid":4194304})", &st, &err),
                  err.Line());
  CHECK(st.pid == 4194304);
}

TEST_CASE("rejects input that is not JSON") {
  Error err;
  CHECK(ParseFails("", &err));
  CHECK(Contains(err.Line(), "not valid JSON"));
  CHECK(ParseFails("hello", &err));
  CHECK(Contains(err.Line(), "not valid JSON"));
}

TEST_CASE("rejects truncated JSON") {
  Error err;
  CHECK(ParseFails(R"({"ociVersion":"1.0.2","id":"c","bundle":"/b","pid":1)", &err));
  CHECK(Contains(err.Line(), "not valid JSON"));
  CHECK(ParseFails(R"({"id":"c","bundle":"/b)", &err));
  CHECK(Contains(err.Line(), "not valid JSON"));
}

TEST_CASE("rejects JSON that is not an object") {
  Error err;
  CHECK(ParseFails(R"(["id","bundle"])", &err));
  CHECK(Contains(err.Line(), "not a JSON object"));
  CHECK(ParseFails("42", &err));
  CHECK(Contains(err.Line(), "not a JSON object"));
  CHECK(ParseFails(R"("str")", &err));
}

TEST_CASE("rejects missing or empty id") {
  Error err;
  CHECK(ParseFails(R"({"bundle":"/b","pid":1})", &err));
  CHECK(Contains(err.Line(), "\"id\""));
  CHECK(ParseFails(R"({"id":"","bundle":"/b","pid":1})", &err));
  CHECK(Contains(err.Line(), "\"id\""));
  CHECK(ParseFails(R"({"id":7,"bundle":"/b","pid":1})", &err));
  CHECK(Contains(err.Line(), "\"id\""));
}

TEST_CASE("rejects missing, relative or non-string bundle") {
  Error err;
  CHECK(ParseFails(R"({"id":"c","pid":1})", &err));
  CHECK(Contains(err.Line(), "\"bundle\""));
  CHECK(ParseFails(R"({"id":"c","bundle":"relative/dir","pid":1})", &err));
  CHECK(Contains(err.Line(), "\"bundle\""));
  CHECK(Contains(err.Line(), "relative/dir"));
  CHECK(ParseFails(R"({"id":"c","bundle":"","pid":1})", &err));
  CHECK(Contains(err.Line(), "\"bundle\""));
  CHECK(ParseFails(R"({"id":"c","bundle":["/b"],"pid":1})", &err));
  CHECK(Contains(err.Line(), "\"bundle\""));
}

TEST_CASE("keeps crun's root as written, relative or absolute") {
  // crun copies root.path into the state unchanged: relative to the bundle
  // when config.json has it relative.
  ocid::OciState st;
  Error err;
  REQUIRE(ocid::ParseOciState(R"({"id":"c","bundle":"/b","root":"rootfs"})", &st, &err));
  CHECK(st.root == "rootfs");
  REQUIRE(ocid::ParseOciState(R"({"id":"c","bundle":"/b","root":"/abs/rootfs"})", &st, &err));
  CHECK(st.root == "/abs/rootfs");
  CHECK(ParseFails(R"({"id":"c","bundle":"/b","root":7})", &err));
  CHECK(Contains(err.Line(), "\"root\""));
}

TEST_CASE("rejects pid of a wrong type") {
  Error err;
  for (const char* pid : {"\"123\"", "12.5", "true", "[1]", "{}"}) {
    CAPTURE(pid);
    CHECK(ParseFails(std::string(R"({"id":"c","bundle":"/b","pid":)") + pid + "}", &err));
    CHECK(Contains(err.Line(), "\"pid\""));
  }
}

TEST_CASE("pid 0 means no process (crun's poststop state)") {
  ocid::OciState st;
  Error err;
  REQUIRE(ocid::ParseOciState(R"({"id":"c","bundle":"/b","status":"stopped","pid":0})", &st, &err));
  CHECK(st.pid == 0);
}

TEST_CASE("rejects negative and huge pids") {
  Error err;
  for (const char* pid : {"-1", "4194305", "2147483648", "99999999999",
                          "18446744073709551615"}) {
    CAPTURE(pid);
    CHECK(ParseFails(std::string(R"({"id":"c","bundle":"/b","pid":)") + pid + "}", &err));
    CHECK(Contains(err.Line(), "\"pid\""));
  }
}

TEST_CASE("rejects annotations that are not strings") {
  Error err;
  CHECK(ParseFails(R"({"id":"c","bundle":"/b","annotations":{"a":1}})", &err));
  CHECK(Contains(err.Line(), "annotation \"a\""));
  CHECK(ParseFails(R"({"id":"c","bundle":"/b","annotations":{"a":"x","b":null}})", &err));
  CHECK(Contains(err.Line(), "annotation \"b\""));
  CHECK(ParseFails(R"({"id":"c","bundle":"/b","annotations":["a"]})", &err));
  CHECK(Contains(err.Line(), "\"annotations\""));
}

TEST_CASE("rejects non-UTF-8 bytes inside a string without throwing") {
  std::string s = "{\"id\":\"c\",\"bundle\":\"/b/\xff\xfe\",\"pid\":1}";
  Error err;
  OciState st;
  bool ok = true;
  CHECK_NOTHROW(ok = ParseOciState(s, &st, &err));
  CHECK_FALSE(ok);
  CHECK(Contains(err.Line(), "not valid JSON"));
  // An overlong encoding of '/' is not UTF-8 either.
  s = "{\"id\":\"c\xc0\xaf\",\"bundle\":\"/b\"}";
  CHECK_NOTHROW(ok = ParseOciState(s, &st, &err));
  CHECK_FALSE(ok);
}

TEST_CASE("valid UTF-8 in strings is kept byte for byte") {
  OciState st;
  Error err;
  REQUIRE(ParseOciState("{\"id\":\"c\",\"bundle\":\"/b/\xc3\xa9t\xc3\xa9\"}", &st, &err));
  CHECK(st.bundle == "/b/\xc3\xa9t\xc3\xa9");
}

TEST_CASE("IsSafeContainerId") {
  using ocid::IsSafeContainerId;
  CHECK(IsSafeContainerId("abc-1.2_3+x"));
  CHECK(IsSafeContainerId("a"));
  CHECK(IsSafeContainerId("..."));  // not a dot-dot component
  CHECK(IsSafeContainerId(std::string(128, 'a')));
  CHECK_FALSE(IsSafeContainerId(std::string(129, 'a')));
  CHECK_FALSE(IsSafeContainerId(""));
  CHECK_FALSE(IsSafeContainerId("."));
  CHECK_FALSE(IsSafeContainerId(".."));
  CHECK_FALSE(IsSafeContainerId("a/b"));
  CHECK_FALSE(IsSafeContainerId("/abc"));
  CHECK_FALSE(IsSafeContainerId("a b"));
  CHECK_FALSE(IsSafeContainerId("a\nb"));
  CHECK_FALSE(IsSafeContainerId(std::string("a\0b", 3)));
  CHECK_FALSE(IsSafeContainerId("caf\xc3\xa9"));
}

}  // TEST_SUITE
