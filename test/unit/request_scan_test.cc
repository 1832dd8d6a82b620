// FlagScanner and ScanFileForFlags (request_scan.h): the raw-byte scan that
// decides "did not ask" for nearly every container, before any JSON is
// parsed. A miss here is a request ignored, so the scan must find an
// activation flag wherever the input is cut into chunks, and a \u00XX
// escape that could spell one. A mention is not a request: the request
// reader decides then, so the scan may find a flag in process.args or
// inside a longer name; it must not invent one out of near misses or the
// seams between chunks.
#include <doctest/doctest.h>

#include "test_tree.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "inventory.h"
#include "request_reader.h"
#include "request_scan.h"

using ocid::Error;
using ocid::FlagScanner;
using ocid::test::TempTree;

namespace {

using Flags = std::vector<std::string>;

std::string ReadSource(const std::string& rel) {
  std::ifstream in(std::string(OCID_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The activation flag of every inventory shipped in config/.
Flags ShippedFlags() {
  Flags flags;
  const std::string dir = std::string(OCID_SOURCE_DIR) + "/config";
  DIR* d = ::opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    ocid::Inventory inv;
    Error err;
    REQUIRE_MESSAGE(ocid::ParseInventory(ReadSource("config/" + name), name, &inv, &err),
                    err.Line());
    flags.push_back(inv.activation_flag);
  }
  ::closedir(d);
  return flags;
}

bool Mentioned(const Flags& flags, std::string_view input) {
  FlagScanner s(flags);
  s.Feed(input);
  return s.mentioned();
}

// `input` fed in pieces, cut at the ascending offsets `cuts`.
bool MentionedCut(const Flags& flags, std::string_view input, const std::vector<size_t>& cuts) {
  FlagScanner s(flags);
  size_t from = 0;
  for (size_t at : cuts) {
    s.Feed(input.substr(from, at - from));
    from = at;
  }
  s.Feed(input.substr(from));
  return s.mentioned();
}

// Every way of cutting `input` into two chunks gives `want`.
void EveryTwoChunks(const Flags& flags, const std::string& input, bool want) {
  for (size_t i = 0; i <= input.size(); ++i) {
    CAPTURE(input);
    CAPTURE(i);
    CHECK(MentionedCut(flags, input, {i}) == want);
  }
}

// Every way of cutting `input` into three chunks gives `want`.
void EveryThreeChunks(const Flags& flags, const std::string& input, bool want) {
  for (size_t i = 0; i <= input.size(); ++i)
    for (size_t j = i; j <= input.size(); ++j) {
      CAPTURE(input);
      CAPTURE(i);
      CAPTURE(j);
      CHECK(MentionedCut(flags, input, {i, j}) == want);
    }
}

// One byte per chunk.
bool MentionedByteByByte(const Flags& flags, std::string_view input) {
  FlagScanner s(flags);
  for (char c : input) s.Feed(std::string_view(&c, 1));
  return s.mentioned();
}

std::string Env(const std::string& entry) {
  return R"({"root": {"path": "rootfs"}, "process": {"env": ["PATH=/bin", ")" + entry +
         R"("], "cwd": "/"}})";
}

}  // namespace

TEST_SUITE("request_scan") {
  TEST_CASE(
      "every shipped inventory's flag is found: in an env entry, an annotation key, at either "
      "end") {
    const Flags flags = ShippedFlags();
    REQUIRE(flags.size() >= 3);
    CHECK(std::find(flags.begin(), flags.end(), "OCI_ONLOAD") != flags.end());
    for (const auto& flag : flags) {
      CAPTURE(flag);
      CHECK(Mentioned(flags, Env(flag + "=all")));
      CHECK(Mentioned({flag}, Env(flag + "=all")));
      CHECK(Mentioned(flags, R"({"annotations": {"oci-decorator/)" + flag + R"(": "all"}})"));
      CHECK(Mentioned({flag}, flag));
      CHECK(Mentioned({flag}, flag + "=1, the rest"));
      CHECK(Mentioned({flag}, "the rest, " + flag));
      CHECK_FALSE(Mentioned({flag}, Env("OTHER=all")));
    }
    CHECK_FALSE(Mentioned(flags, Env("TERM=xterm")));
    CHECK_FALSE(Mentioned(flags, ""));
  }

  TEST_CASE("a flag cut at every byte across two chunks, and across three") {
    const Flags flags = ShippedFlags();
    for (const auto& flag : flags) {
      CAPTURE(flag);
      EveryTwoChunks(flags, Env(flag + "=all"), true);
      EveryThreeChunks(flags, R"({"env": [")" + flag + R"(=1"]})", true);
      CHECK(MentionedByteByByte(flags, Env(flag + "=all")));
    }
    // Without a flag no cut makes one.
    EveryTwoChunks(flags, Env("TERM=xterm"), false);
    EveryThreeChunks(flags, R"({"env": ["TERM=1"]})", false);
    CHECK_FALSE(MentionedByteByByte(flags, Env("TERM=xterm")));
  }

  TEST_CASE("the overlap kept between chunks is as long as the longest flag needs") {
    // A long flag next to a short one: the seam must hold the long one.
    const std::string longest = "OCI_" + std::string(60, 'L');
    const Flags flags = {"OCI_A", longest};
    EveryTwoChunks(flags, Env(longest + "=all"), true);
    // Cut into many small chunks, each shorter than the overlap.
    for (size_t step = 1; step <= 8; ++step) {
      const std::string input = Env(longest + "=all");
      std::vector<size_t> cuts;
      for (size_t at = step; at < input.size(); at += step) cuts.push_back(at);
      CAPTURE(step);
      CHECK(MentionedCut(flags, input, cuts));
    }
    // All but its last byte is no mention, whatever the cut.
    EveryTwoChunks(flags, Env(longest.substr(0, longest.size() - 1) + "=all"), false);
    // A flag of one byte.
    EveryTwoChunks({"Q"}, "abc Q def", true);
    EveryTwoChunks({"Q"}, "abc q def", false);
  }

  TEST_CASE("empty chunks keep the overlap; empty flags are dropped; a mention stays") {
    FlagScanner s({"OCI_ONLOAD"});
    s.Feed("{\"env\": [\"OCI_ON");
    s.Feed("");
    s.Feed("");
    CHECK_FALSE(s.mentioned());
    s.Feed("LOAD=all\"]}");
    CHECK(s.mentioned());
    s.Feed("more bytes, no flag");
    CHECK(s.mentioned());
    // An empty name would occur everywhere: it names no flag.
    CHECK_FALSE(Mentioned({""}, Env("TERM=xterm")));
    CHECK_FALSE(Mentioned({"", ""}, "OCI_ONLOAD"));
    CHECK(Mentioned({"", "OCI_ONLOAD"}, Env("OCI_ONLOAD=all")));
    // No flag at all (no inventory): nothing is a mention, not even an escape.
    CHECK_FALSE(Mentioned({}, Env("OCI_ONLOAD=all")));
    CHECK_FALSE(Mentioned({}, Env(R"(OCI\u005fONLOAD=all)")));
  }

  TEST_CASE("near misses are no mention") {
    const Flags flags = {"OCI_ONLOAD"};
    for (const std::string near :
         {"OCI_ONLOA", "CI_ONLOAD", "OCI-ONLOAD", "OCI ONLOAD", "oci_onload", "Oci_Onload",
          "OCI_0NLOAD", "OCI__ONLOAD", "OCI_ONL0AD", R"(OCI_", "ONLOAD)", R"(OCI\\_ONLOAD)",
          R"(OCI\"ONLOAD)"}) {
      CAPTURE(near);
      CHECK_FALSE(Mentioned(flags, Env(near + "=all")));
      EveryTwoChunks(flags, "[\"" + near + "=all\"]", false);
    }
  }

  TEST_CASE("a mention is not a request: a value, a key, process.args, a longer name") {
    // The scan does not read JSON: wherever the flag's bytes occur, the
    // request reader must look. A request is in a value (an env entry) or a
    // key (an annotation), so neither may be skipped.
    const Flags flags = {"OCI_ONLOAD"};
    CHECK(Mentioned(flags, R"({"process": {"env": ["OCI_ONLOAD=all"]}})"));
    CHECK(Mentioned(flags, R"({"annotations": {"oci-decorator/OCI_ONLOAD": "all"}})"));
    CHECK(Mentioned(flags, R"({"annotations": {"note": "OCI_ONLOAD"}})"));
    CHECK(Mentioned(flags, R"({"process": {"args": ["sh", "-c", "OCI_ONLOAD=all x"]}})"));
    CHECK(Mentioned(flags, R"({"OCI_ONLOAD": 1})"));
    CHECK(Mentioned(flags, Env("MY_OCI_ONLOAD_TOO=1")));
  }

  TEST_CASE("a \\u00XX escape of a character a flag can hold is a mention, cut anywhere") {
    const Flags flags = {"OCI_ONLOAD"};
    // Every character of the flag escaped in turn, in lower and upper case hex.
    const std::string flag = flags[0];
    for (size_t i = 0; i < flag.size(); ++i) {
      for (const char* hex : {"0123456789abcdef", "0123456789ABCDEF"}) {
        auto c = static_cast<unsigned char>(flag[i]);
        std::string esc = std::string("\\u00") + hex[c >> 4] + hex[c & 15];
        std::string spelled = flag.substr(0, i) + esc + flag.substr(i + 1);
        CAPTURE(spelled);
        CHECK(Mentioned(flags, Env(spelled + "=all")));
        EveryTwoChunks(flags, "[\"" + spelled + "=1\"]", true);
      }
    }
    // Any letter, digit or '_' escaped could spell a flag: a mention, even
    // alone. The overlap holds a whole escape, however short the flags.
    for (const std::string esc :
         {R"(\u0041)", R"(\u007a)", R"(\u0030)", R"(\u0039)", R"(\u005F)"}) {
      CAPTURE(esc);
      CHECK(Mentioned(flags, Env("X=" + esc)));
      EveryTwoChunks({"Q"}, "ab " + esc + " cd", true);
      EveryThreeChunks({"Q"}, "a" + esc + "b", true);
    }
  }

  TEST_CASE("escapes no flag can hold keep the fast path") {
    const Flags flags = {"OCI_ONLOAD"};
    // What encoders escape (Go: <, >, &, U+2028/9; controls), and the
    // characters a flag never holds.
    for (const std::string esc :
         {R"(\u003c)", R"(\u003E)", R"(\u0026)", R"(\u0000)", R"(\u001b)", R"(\u0020)", R"(\u002d)",
          R"(\u003d)", R"(\u0022)", R"(\u005c)", R"(\u002f)", R"(\u003a)", R"(\u0040)", R"(\u005b)",
          R"(\u005e)", R"(\u0060)", R"(\u007b)", R"(\u007f)", R"(\u2028)", R"(\u0141)", R"(\u00e9)",
          R"(\n)",     R"(\\)",     R"(\")",     R"(\/)"}) {
      CAPTURE(esc);
      CHECK_FALSE(Mentioned(flags, Env("URL=http://x/?a=1" + esc + "b")));
      EveryTwoChunks(flags, "[\"a" + esc + "b\"]", false);
    }
    // Not an escape of a byte: \u00 with a non-hex digit, or cut short by
    // the end of the input.
    CHECK_FALSE(Mentioned(flags, R"(["\u00zz", "\u00G1", "\u004")"));
    CHECK_FALSE(Mentioned(flags, R"(x \u004)"));
    CHECK_FALSE(Mentioned(flags, R"(x \u00)"));
  }

  TEST_CASE("ScanFileForFlags: the file's own 64 KiB reads cut the flag anywhere") {
    TempTree t;
    const std::string flag = "OCI_ONLOAD";
    // The flag straddling the first read's end at every offset, and past it.
    for (size_t at = 65536 - flag.size(); at <= 65536; ++at) {
      std::string bytes(70000, 'x');
      bytes.replace(at, flag.size(), flag);
      t.File("config.json", bytes);
      FlagScanner scanner({flag});
      Error err;
      CAPTURE(at);
      REQUIRE_MESSAGE(ocid::ScanFileForFlags(t / "config.json", &scanner, nullptr, &err),
                      err.Line());
      CHECK(scanner.mentioned());
    }
    t.File("config.json", std::string(200000, 'x'));
    FlagScanner none({flag});
    Error err;
    REQUIRE(ocid::ScanFileForFlags(t / "config.json", &none, nullptr, &err));
    CHECK_FALSE(none.mentioned());
  }

  TEST_CASE("ScanFileForFlags: a mention has the reader read the file again from its start") {
    TempTree t;
    // The request is beyond the first read, where the scan stops; the
    // reader must still see the document whole.
    const std::string pad(100000, 'p');
    t.File("config.json", R"({"process": {"env": ["PAD=)" + pad + R"(", "OCI_ONLOAD=all"]}})");
    FlagScanner scanner({"OCI_ONLOAD"});
    ocid::RequestReader reader({"OCI_ONLOAD"}, ocid::RequestReader::Document::kConfig);
    Error err;
    REQUIRE_MESSAGE(ocid::ScanFileForFlags(t / "config.json", &scanner, &reader, &err), err.Line());
    CHECK(scanner.mentioned());
    CHECK(reader.Finish() == ocid::RequestReader::Verdict::kAsked);
    // Only in process.args: a mention, and runc's reading asks nothing.
    t.File("config.json",
           R"({"process": {"env": ["PAD=)" + pad + R"("], "args": ["OCI_ONLOAD=all"]}})");
    FlagScanner scanner2({"OCI_ONLOAD"});
    ocid::RequestReader reader2({"OCI_ONLOAD"}, ocid::RequestReader::Document::kConfig);
    REQUIRE_MESSAGE(ocid::ScanFileForFlags(t / "config.json", &scanner2, &reader2, &err),
                    err.Line());
    CHECK(scanner2.mentioned());
    CHECK(reader2.Finish() == ocid::RequestReader::Verdict::kNotAsked);
  }

}  // TEST_SUITE
