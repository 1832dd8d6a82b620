// request_reader: whether a config.json (or state) asks, as runc reads it.
//
// The semantics are Go's encoding/json as runc decodes the spec; Debian's
// runc 1.1.5 (the one the integration tests run) is built with Go 1.19
// (its Built-Using), so the lines cited are those of golang-1.19-src
// 1.19.8, /usr/share/go-1.19/src/encoding/json/:
//   decode.go:703-716  a key matches a field exactly (nameIndex) first,
//                      then by case folding (ff.equalFold);
//   fold.go:12-16,62-100  the fold: ASCII case, 'k' with the Kelvin sign
//                      U+212A, 's' with the long s U+017F;
//   decode.go:575-598  an array into a slice: the slice is what the last
//                      array held (SetLen, or a new empty slice);
//   decode.go:650-653,694-699,817  an object into a map: the map is kept
//                      and entries are added (a later object accumulates);
//   decode.go:903-913  null sets a pointer, map or slice to nil; into a
//                      string it does nothing;
//   decode.go:1199-1310 (unquoteBytes)  \u escapes and surrogate pairs
//                      decoded, an invalid surrogate becomes U+FFFD
//                      (1287), invalid UTF-8 is coerced to U+FFFD (1303),
//                      never an error;
//   scanner.go:146  maxNestingDepth = 10000;
//   stream.go:49-79  Decoder.Decode reads the first value only (runc's
//                      loadSpec in spec.go: json.NewDecoder(cf).Decode).
// The fields: runtime-spec specs-go/config.go (`Process *Process
// json:"process,omitempty"`, `Env []string json:"env,omitempty"`,
// `Annotations map[string]string json:"annotations,omitempty"`).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "request_reader.h"

using ocid::RequestReader;
using Verdict = ocid::RequestReader::Verdict;

namespace {

const std::vector<std::string> kFlags = {"OCI_ONLOAD", "OCI_RDMA"};

// Fed whole, and one byte at a time: the verdict must not depend on where
// the chunks split.
Verdict Read(const std::string& json,
             RequestReader::Document doc = RequestReader::Document::kConfig) {
  CAPTURE(json);
  RequestReader whole(kFlags, doc);
  whole.Feed(json);
  RequestReader bytes(kFlags, doc);
  for (char c : json) bytes.Feed(std::string_view(&c, 1));
  CHECK(static_cast<int>(whole.Finish()) == static_cast<int>(bytes.Finish()));
  CHECK(whole.Detail() == bytes.Detail());
  return bytes.Finish();
}

bool Asked(const std::string& json) { return Read(json) == Verdict::kAsked; }
bool NotAsked(const std::string& json) { return Read(json) == Verdict::kNotAsked; }
bool Unreadable(const std::string& json) { return Read(json) == Verdict::kUnreadable; }

}  // namespace

TEST_CASE("a mention outside process.env and annotations does not ask") {
  CHECK(NotAsked(
      R"({"process": {"args": ["sh", "-c", "OCI_ONLOAD=all run"], "env": ["PATH=/bin"]}})"));
  CHECK(NotAsked(R"({"process": {"env": ["NOTE=set OCI_ONLOAD=all to accelerate", "XOCI_ONLOAD=all",
                   "OCI_ONLOAD_X=all", "oci_onload=all", "OCI_ONLOADX"]}})"));
  CHECK(NotAsked(R"({"mounts": [{"destination": "/OCI_ONLOAD"}], "hostname": "OCI_ONLOAD",
                   "env": ["OCI_ONLOAD=all"], "linux": {"env": ["OCI_ONLOAD=all"]}})"));
  CHECK(NotAsked(R"({"annotations": {"OCI_ONLOAD": "all", "x": "oci-decorator/OCI_ONLOAD",
                   "oci-decorator/OCI_ONLOAD_X": "all"}})"));
  // An env array nested deeper than process.env is not runc's env.
  CHECK(NotAsked(R"({"process": {"user": {"env": ["OCI_ONLOAD=all"]}}})"));
  CHECK(NotAsked(R"({})"));
}

TEST_CASE("the flag as a variable of process.env asks, whatever its value") {
  CHECK(Asked(R"({"process": {"env": ["PATH=/bin", "OCI_ONLOAD=all"]}})"));
  CHECK(Asked(R"({"process": {"env": ["OCI_RDMA=none"]}})"));
  CHECK(Asked(R"({"process": {"env": ["OCI_ONLOAD="]}})"));
  CHECK(Asked(R"({"process": {"env": ["OCI_ONLOAD"]}})"));  // "NAME" alone: present
  RequestReader r(kFlags, RequestReader::Document::kConfig);
  r.Feed(R"({"process": {"env": ["OCI_RDMA=1"]}})");
  CHECK(r.Finish() == Verdict::kAsked);
  CHECK(r.Detail() == "process.env OCI_RDMA");
}

TEST_CASE("escapes are decoded: an escaped name is the name") {
  CHECK(Asked(R"({"process": {"env": ["OCI\u005fONLOAD=all"]}})"));
  CHECK(Asked(R"({"process": {"env": ["\u004F\u0043\u0049_ONLOAD"]}})"));
  CHECK(Asked(R"({"pro\u0063ess": {"e\u006ev": ["OCI_ONLOAD=all"]}})"));
  CHECK(Asked(R"({"annotations": {"oci-decorator\/OCI_ONLOAD": "all"}})"));
  // A lone surrogate is U+FFFD, not nothing: the name is not the flag.
  CHECK(NotAsked(R"({"process": {"env": ["OCI_ONLOAD\ud800=all"]}})"));
  CHECK(NotAsked(R"({"process": {"env": ["OCI_ONLOAD\udc00\ud800"]}})"));
  // A surrogate pair is one rune; a pair in the value is harmless.
  CHECK(Asked(R"({"process": {"env": ["OCI_ONLOAD=\ud83d\ude00"]}})"));
  CHECK(NotAsked(R"({"process": {"env": ["OCI_ONLOAD\ud83d\ude00"]}})"));
}

TEST_CASE("keys match fields as Go does: exactly, or by case folding") {
  CHECK(Asked(R"({"Process": {"ENV": ["OCI_ONLOAD=all"]}})"));
  CHECK(Asked(R"({"PROCESS": {"Env": ["OCI_ONLOAD=all"]}})"));
  // The long s U+017F folds to 's', the Kelvin sign does not reach "env".
  CHECK(Asked("{\"proce\xC5\xBF\xC5\xBF\": {\"env\": [\"OCI_ONLOAD=all\"]}}"));
  CHECK(Asked(R"({"ANNOTATION\u017f": {"oci-decorator/OCI_ONLOAD": "all"}})"));
  CHECK(NotAsked("{\"process\": {\"\xE2\x84\xAAnv\": [\"OCI_ONLOAD=all\"]}}"));
  // Annotation keys are map keys: exact, never folded.
  CHECK(NotAsked(R"({"annotations": {"OCI-DECORATOR/OCI_ONLOAD": "all"}})"));
  CHECK(NotAsked(R"({"annotations": {"oci-decorator/oci_onload": "all"}})"));
  // A key that only resembles a field is another key.
  CHECK(NotAsked(
      R"({"process ": {"env": ["OCI_ONLOAD=all"]}, "processes": {"env": ["OCI_ONLOAD"]}})"));
}

TEST_CASE("duplicate keys are decoded in order") {
  // The last env array is the env.
  CHECK(NotAsked(R"({"process": {"env": ["OCI_ONLOAD=all"], "env": ["PATH=/bin"]}})"));
  CHECK(Asked(R"({"process": {"env": ["PATH=/bin"], "ENV": ["OCI_ONLOAD=all"]}})"));
  CHECK(NotAsked(R"({"process": {"env": ["OCI_ONLOAD=all"], "env": []}})"));
  // A second process object decodes into the same struct.
  CHECK(NotAsked(R"({"process": {"env": ["OCI_ONLOAD=all"]}, "Process": {"env": ["A=1"]}})"));
  CHECK(Asked(R"({"process": {"env": ["OCI_ONLOAD=all"]}, "process": {"args": ["x"]}})"));
  // Annotation maps accumulate.
  CHECK(
      Asked(R"({"annotations": {"oci-decorator/OCI_ONLOAD": "all"}, "annotations": {"a": "b"}})"));
}

TEST_CASE("null resets what it is decoded into") {
  CHECK(NotAsked(R"({"process": {"env": ["OCI_ONLOAD=all"]}, "process": null})"));
  CHECK(NotAsked(R"({"process": {"env": ["OCI_ONLOAD=all"]}, "process": null,
                   "process": {"args": []}})"));
  CHECK(NotAsked(R"({"process": {"env": ["OCI_ONLOAD=all"], "env": null}})"));
  CHECK(NotAsked(R"({"annotations": {"oci-decorator/OCI_ONLOAD": "all"}, "annotations": null})"));
  // A null env entry is ""; a null annotation value is "" and present.
  CHECK(NotAsked(R"({"process": {"env": [null, "A=1"]}})"));
  CHECK(Asked(R"({"annotations": {"oci-decorator/OCI_ONLOAD": null}})"));
}

TEST_CASE("annotations ask; in the state too, where process means nothing") {
  CHECK(Asked(R"({"annotations": {"a": "b", "oci-decorator/OCI_RDMA": "all"}})"));
  auto state = RequestReader::Document::kState;
  CHECK(Read(R"({"id": "c", "bundle": "/b", "annotations": {"oci-decorator/OCI_ONLOAD": "all"}})",
             state) == Verdict::kAsked);
  CHECK(Read(R"({"id": "c", "bundle": "/b", "process": {"env": ["OCI_ONLOAD=all"]}})", state) ==
        Verdict::kNotAsked);
  CHECK(Read(R"({"id": "OCI_ONLOAD", "annotations": {"OCI_ONLOAD": "oci-decorator/OCI_ONLOAD"}})",
             state) == Verdict::kNotAsked);
}

TEST_CASE("invalid UTF-8 is replaced, never an error") {
  CHECK(NotAsked(
      "{\"process\": {\"args\": [\"OCI_ONLOAD\"], \"env\": [\"LANG=caf\xe9\", \"X=\xff\xfe\"]}}"));
  CHECK(Asked("{\"process\": {\"env\": [\"LANG=\xff\", \"OCI_ONLOAD=\xc0\xaf\"]}}"));
  // Keys with invalid bytes match nothing (U+FFFD is no letter) ...
  CHECK(NotAsked("{\"proce\xffss\": {\"env\": [\"OCI_ONLOAD=all\"]}}"));
  // ... an overlong or truncated sequence is not the letter it spells ...
  CHECK(NotAsked("{\"proce\xc1\xb3s\": {\"env\": [\"OCI_ONLOAD=all\"]}}"));
  CHECK(NotAsked("{\"process\": {\"env\": [\"OCI_ONLOAD\xc5=all\"]}}"));
  // ... and neither is a raw lead byte before an escaped continuation.
  CHECK(NotAsked("{\"proce\xc5\\u00bf\": {\"env\": [\"OCI_ONLOAD=all\"]}}"));
}

TEST_CASE("only the first JSON value counts, as runc's Decoder reads it") {
  CHECK(NotAsked(R"({"process": {"env": ["A=1"]}} {"process": {"env": ["OCI_ONLOAD=all"]}})"));
  CHECK(NotAsked("{}\n garbage OCI_ONLOAD \xff"));
  CHECK(Asked(" \t\r\n{\"process\": {\"env\": [\"OCI_ONLOAD=all\"]}} trailing"));
}

TEST_CASE("what runc cannot decode is unreadable, never a verdict") {
  for (const char* bad :
       {"", "   ", "{", R"({"process": {"env": ["OCI_ONLOAD=all"])", "[]", "null", "\"x\"", "12",
        R"({"a": 1,})", R"({"a" 1})", R"({a: 1})", R"({"a": [1,]})", R"({"a": 01})", R"({"a": -})",
        R"({"a": 1.})", R"({"a": 1e})", R"({"a": tru})", R"({"a": nulll})", R"({"a": "\x"})",
        R"({"a": "\u12G4"})", "{\"a\": \"tab\there\"}", "\xEF\xBB\xBF{}", R"({"a": [}})",
        // The request paths with a type runc's decoding refuses.
        R"({"process": "OCI_ONLOAD=all"})", R"({"process": {"env": "OCI_ONLOAD=all"}})",
        R"({"process": {"env": [["OCI_ONLOAD=all"]]}})", R"({"process": {"env": [1]}})",
        R"({"annotations": ["oci-decorator/OCI_ONLOAD"]})",
        R"({"annotations": {"oci-decorator/OCI_ONLOAD": true}})", R"({"process": []})"}) {
    CHECK(Unreadable(bad));
  }
  RequestReader r(kFlags, RequestReader::Document::kConfig);
  r.Feed(R"({"a": 1,})");
  CHECK(r.Detail().find("at byte 8") != std::string::npos);
  // Numbers and literals the grammar allows are fine anywhere else.
  CHECK(NotAsked(
      R"({"a": [0, -1, 1.5e+3, 2E-2, -0.0, true, false, null, {}, [], "\"\\\/\b\f\n\r\t"]})"));
}

TEST_CASE("nesting: Go's 10000 levels read, one more unreadable; memory stays bounded") {
  std::string ok = "{\"a\": " + std::string(9999, '[') + std::string(9999, ']') + "}";
  CHECK(NotAsked(ok));
  std::string deep = "{\"a\": " + std::string(10000, '[') + std::string(10000, ']') + "}";
  CHECK(Unreadable(deep));
  // 40 MB of one env value and of one key, fed in 64 KiB chunks: read.
  RequestReader r(kFlags, RequestReader::Document::kConfig);
  r.Feed(R"({"process": {"env": ["BIG=)");
  std::string chunk(65536, 'x');
  for (int i = 0; i < 640; ++i) r.Feed(chunk);
  r.Feed(R"(", "OCI_ONLOAD=all"], ")");
  for (int i = 0; i < 640; ++i) r.Feed(chunk);
  r.Feed(R"(": 1}})");
  CHECK(r.Finish() == Verdict::kAsked);
}
