// containerd's TOML as the engine room reads and writes it
// (src/engine/containerd_config.h): the TOML pieces on their own (blanks,
// strings with their escapes, top-level values over several lines), and
// the readers `check` runs over what `setup` wrote. The drop-in's content
// and the imports rule in setup's words are engine_setup_test.cc's.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "containerd_config.h"

using ocid::ContainerdBinaryNames;
using ocid::ContainerdImportsCover;
using ocid::ReadTomlString;
using ocid::TomlStrings;
using ocid::TomlTrim;
using ocid::TopLevelTomlValue;
using Strings = std::vector<std::string>;

namespace {

// The text of the string at the start of `s`, or "<none>" when there is none.
std::string StringAt(const std::string& s) {
  std::string out;
  size_t end = 0;
  return ReadTomlString(s, 0, &out, &end) ? out : "<none>";
}

}  // namespace

TEST_CASE("toml: blanks at either end, line ends included") {
  CHECK(TomlTrim(" \t a b \r\n") == "a b");
  CHECK(TomlTrim("\n\r\t ").empty());
  CHECK(TomlTrim("").empty());
  CHECK(TomlTrim("x") == "x");
}

TEST_CASE("toml: a basic string takes \\\" and \\\\ as a quote and a backslash") {
  CHECK(StringAt(R"("/usr/bin/x")") == "/usr/bin/x");
  CHECK(StringAt(R"("a \"b\" \\c" # comment)") == R"(a "b" \c)");
  // Any other escaped byte is taken as it is.
  CHECK(StringAt(R"("\x")") == "x");
  CHECK(StringAt(R"("")").empty());
  // What TomlString writes reads back as it was.
  for (const std::string& s : {std::string("/a \"b\"\\c"), std::string("plain"), std::string()})
    CHECK(StringAt(ocid::TomlString(s)) == s);
}

TEST_CASE("toml: a literal string has no escapes") {
  CHECK(StringAt(R"('C:\dir\')") == R"(C:\dir\)");
  CHECK(StringAt(R"('say "hi"')") == R"(say "hi")");
}

TEST_CASE("toml: no string where there is no quote or no closing quote") {
  CHECK(StringAt("") == "<none>");
  CHECK(StringAt("/usr/bin/x") == "<none>");
  CHECK(StringAt(" \"x\"") == "<none>");  // blanks are the caller's to trim
  CHECK(StringAt("\"open") == "<none>");
  CHECK(StringAt("'open") == "<none>");
  CHECK(StringAt("\"ends in a backslash\\") == "<none>");
  CHECK(StringAt(R"("escaped end\")") == "<none>");
}

TEST_CASE("toml: the string's end, for the next read") {
  std::string out;
  size_t end = 0;
  const std::string s = R"(x = "a\"b", 'c')";
  REQUIRE(ReadTomlString(s, 4, &out, &end));
  CHECK(out == "a\"b");
  CHECK(end == 10);
  REQUIRE(ReadTomlString(s, 12, &out, &end));
  CHECK(out == "c");
  CHECK(end == s.size());
  CHECK_FALSE(ReadTomlString(s, s.size(), &out, &end));
}

TEST_CASE("toml: every string of an array, comments skipped") {
  CHECK(TomlStrings(R"( ["/a/*.toml", '/b.toml'])") == Strings{"/a/*.toml", "/b.toml"});
  CHECK(TomlStrings(" [\n  \"/a\",  # the \"old\" one's\n  '/b',\n]\n") == Strings{"/a", "/b"});
  // A '#' inside a string is the string's.
  CHECK(TomlStrings(R"(["/a#b"])") == Strings{"/a#b"});
  CHECK(TomlStrings(R"(["/a\"q\".toml", "/b"])") == Strings{"/a\"q\".toml", "/b"});
  // Up to a string that does not end.
  CHECK(TomlStrings(R"(["/a", "/b)") == Strings{"/a"});
  CHECK(TomlStrings("# only a comment").empty());
  CHECK(TomlStrings("").empty());
}

TEST_CASE("toml: a top-level value, raw; an array over several lines") {
  CHECK(TopLevelTomlValue("version = 2\n", "version") == " 2");
  CHECK(TopLevelTomlValue("version=3", "version") == "3");
  CHECK(TopLevelTomlValue("a = 1\nimports = [\n  \"/x\",\n  '/y'\n]\nb = 2\n", "imports") ==
        " [\n  \"/x\",\n  '/y'\n]");
  // An array that does not close runs to the end of the bytes.
  CHECK(TopLevelTomlValue("imports = [\"/x\",\n", "imports") == " [\"/x\",\n");
  // Not a key that only begins with the name, and not inside a table.
  CHECK(TopLevelTomlValue("versions = 2\n", "version").empty());
  CHECK(TopLevelTomlValue("[plugins]\nversion = 2\n", "version").empty());
  CHECK(TopLevelTomlValue("root = '/x'\n", "version").empty());
  CHECK(TopLevelTomlValue("  version = 2  \r\n", "version") == " 2  \r");
}

TEST_CASE("containerd config: imports read with the string escapes") {
  const std::string dropin = "/etc/containerd/conf.d/oci-decorator.toml";
  bool has = false;
  // An escaped quote in an earlier entry does not hide the next one.
  CHECK(ContainerdImportsCover(
      "imports = [\"/x/\\\"q\\\".toml\", \"/etc/containerd/conf.d/*.toml\"]\n", dropin, &has));
  CHECK(has);
  CHECK(ContainerdImportsCover(
      "imports = [\n  # '/no/*.toml',\n  '/etc/containerd/conf.d/oci-decorator.toml',\n]\n", dropin,
      &has));
  // An empty list is a list.
  CHECK_FALSE(ContainerdImportsCover("imports = []\n", dropin, &has));
  CHECK(has);
  CHECK_FALSE(ContainerdImportsCover("imports =\n", dropin, &has));
  CHECK_FALSE(has);
}

TEST_CASE("containerd config: BinaryName values, as check reads setup's drop-in") {
  CHECK(ContainerdBinaryNames("[a.options]\n  BinaryName = \"/a \\\"b\\\" \\\\c\"\n") ==
        Strings{"/a \"b\" \\c"});
  CHECK(ContainerdBinaryNames("BinaryName='C:\\x'\nBinaryName = \"open\n") == Strings{"C:\\x"});
  CHECK(ContainerdBinaryNames("BinaryName = /bare\n#BinaryName = \"/no\"\n").empty());
  // What setup writes, check reads back, in both schemas.
  const std::string shim = "/opt/odd \"dir\"\\oci-decorator-runtime";
  for (int version : {2, 3})
    CHECK(ContainerdBinaryNames(ocid::ContainerdDropIn("x", shim, version)) == Strings{shim});
}
