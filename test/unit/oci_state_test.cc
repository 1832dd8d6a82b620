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
    const std::string s = R"({"ociVersion":"1.0.0","id":"c1","status":"created","pid":77,)"
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
    REQUIRE(
        ocid::ParseOciState(R"({"id":"c","bundle":"/b","status":"stopped","pid":0})", &st, &err));
    CHECK(st.pid == 0);
  }

  TEST_CASE("rejects negative and huge pids") {
    Error err;
    for (const char* pid : {"-1", "4194305", "2147483648", "99999999999", "18446744073709551615"}) {
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

// ===========================================================================
// The hostile-input set (hostile_input.h): OCI states that are malformed,
// truncated, huge, wrongly typed or not UTF-8.
#include <utility>
#include <vector>

#include "hostile_input.h"

namespace {
namespace hostile {

using ocid::Error;
using ocid::OciState;
using ocid::test::hostile::CheckOneLine;
using ocid::test::hostile::Contains;
using ocid::test::hostile::Repeat;
using ocid::test::hostile::Sub;

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

TEST_SUITE("hostile.state") {
  TEST_CASE("empty, null, scalars, arrays, garbage: not valid JSON / not an object") {
    for (const char* s : {"", " ", "\n", "{", "}", "[", "nul", "{\"id\":"})
      StateFailsNaming(s, "not valid JSON");
    for (const char* s : {"null", "0", "-1", "true", "\"x\"", "[]", "[{}]", "1e5"})
      StateFailsNaming(s, "not a JSON object");
    StateFailsNaming(std::string("\xff\xfe{}", 4), "not valid JSON");
    // nlohmann would stop at a NUL and ignore the rest.
    StateFailsNaming(std::string("{\"id\":\"c\",\"bundle\":\"/b\"}\0{\"x\"", 29),
                     "NUL byte at offset 24");
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
        std::string s =
            R"({"ociVersion":"1","id":"c","status":"creating","bundle":"/b","root":"r"})";
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
    for (const char* v :
         {"\"123\"", "1.5", "1e3", "-1", "4194305", "2147483648", "9223372036854775807",
          "9223372036854775808", "18446744073709551615", "-9223372036854775808",
          "99999999999999999999999", "true", "[1]", "{}", "-0.0"}) {
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
    const std::vector<std::string> bad = {
        "\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\xe2\x82", "\x80"};
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
    StateFailsNaming(R"({"id":"c","bundle":"/b","root":"rootfs\u0000x"})",
                     "\"root\" contains a NUL");
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
    REQUIRE(
        ParseOciState(R"({"id":"c","bundle":"/b","annotations":{"k":")" + big + "\"}}", &st, &err));
    CHECK(st.annotations.at("k").size() == big.size());
    // A 10 MB request annotation with a bad value: the error quotes the key.
    Error e =
        StateFails(R"({"id":"c","bundle":"/b","annotations":{"oci-decorator/)" + big + "\":1}}");
    CHECK(Contains(e.Line(), "bytes ...]"));
    // A key with control characters cannot break the line.
    e = StateFails(R"({"id":"c","bundle":"/b","annotations":{"a\nb\u001b[31m":1}})");
    CHECK_MESSAGE(Contains(e.Line(), "a\\x0ab\\x1b[31m"), e.Line());
  }

}  // TEST_SUITE

}  // namespace hostile
}  // namespace
