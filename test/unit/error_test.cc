// Printable, PrintableJson, Error::Line and JsonErrorReason (error.h): the
// one escaping rule and the one printable line every error becomes. The
// hostile.error suite of the hostile-input set (hostile_input.h).
#include <doctest/doctest.h>

#include <cctype>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "error.h"
#include "hostile_input.h"

using ocid::Error;
using ocid::test::hostile::Contains;
using ocid::test::hostile::PrintableUtf8;
using ocid::test::hostile::Repeat;

// ===========================================================================
TEST_SUITE("hostile.error") {
  TEST_CASE("Printable: controls and bad UTF-8 escaped, good UTF-8 kept, long values elided") {
    using ocid::Printable;
    CHECK(Printable("plain /path: ok") == "plain /path: ok");
    CHECK(Printable("a\nb\r\tc") == "a\\x0ab\\x0d\\x09c");
    CHECK(Printable(std::string("a\0b", 3)) == "a\\x00b");
    CHECK(Printable("\x1b[31mred\x7f") == "\\x1b[31mred\\x7f");
    CHECK(Printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") ==
          "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    CHECK(Printable("\xff") == "\\xff");
    CHECK(Printable("\xc0\xaf") == "\\xc0\\xaf");                    // overlong '/'
    CHECK(Printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");           // surrogate
    CHECK(Printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
    CHECK(Printable("\xc2\x9b") == "\\xc2\\x9b");                    // C1 CSI
    CHECK(Printable("\xe2\x82") == "\\xe2\\x82");                    // cut short
    std::string big = "HEAD" + std::string(10 << 20, 'm') + "TAIL";
    std::string p = Printable(big);
    CHECK(p.size() <= ocid::kMaxLineBytes);
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
    CHECK(Printable("\xc2\x9b"
                    "31m") ==
          "\\xc2\\x9b"
          "31m");
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
    CHECK(Printable("admin\xe2\x80\xae"  // NOLINT(misc-misleading-bidirectional)
                    "txt.exe") ==
          "admin\\xe2\\x80\\xae"
          "txt.exe");
    // Invalid UTF-8, byte by byte.
    CHECK(Printable("\xff\xfe") == "\\xff\\xfe");
    CHECK(Printable("\xe2\x80") == "\\xe2\\x80");
    // Kept: printable ASCII, and UTF-8 that is not a control (U+00A0 and up,
    // U+200D next to the bidi range, U+202F right after it).
    CHECK(Printable("caf\xc3\xa9 \xc2\xa0 \xe2\x80\x8d \xe2\x80\xaf") ==
          "caf\xc3\xa9 \xc2\xa0 \xe2\x80\x8d \xe2\x80\xaf");
    // A second pass changes nothing.
    std::string once = Printable(
        "a\r\x0b\x0c\xc2\x9b\x7f\xe2\x80\xae\xff");  // NOLINT(misc-misleading-bidirectional)
    CHECK(Printable(once) == once);
    // No cut when asked for none.
    CHECK(Printable(std::string(10000, 'q'), std::string_view::npos).size() == 10000);
  }

  TEST_CASE("PrintableJson: a dumped JSON text shows no control, and parses the same") {
    nlohmann::ordered_json j;
    j["v"] =
        "a\x7f"  // NOLINT(misc-misleading-bidirectional)
        "b\xc2\x9b"
        "c\xe2\x80\xae"
        "d\xc3\xa9\x1b";
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

  // Issue 27, finding 3: Printable's cut bounded what it read (4 KiB), not
  // what it wrote: 4 KiB of TAB became 16 KiB of \x09, an Error line of two
  // parts 32 KiB, and a cut could split a character into escapes. The bound
  // is now on what is written (kMaxLineBytes), quoting included.
  TEST_CASE("Printable: what it writes is within max, never splits a unit, says it cut") {
    using ocid::Printable;
    using ocid::Quoting;
    auto written = [](const std::string& s, Quoting q) {
      size_t n = s.size();
      if (q == Quoting::kDoubled)
        for (char c : s) n += c == '"' || c == '\\';
      return n;
    };
    const std::string mib_of_tabs = "OCI_ONLOAD=all" + std::string(1 << 20, '\t') + "END";
    const std::string inputs[] = {
        mib_of_tabs,
        std::string(5000, '\t'),  // shorter than the bound, longer once escaped
        Repeat("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 ", 4000),
        Repeat("\"\\", 3000),               // doubled by JSON and logfmt quoting
        Repeat("a\xe2\x80\xae\xff", 3000),  // NOLINT(misc-misleading-bidirectional)
        Printable(mib_of_tabs),             // already shown, cut once
        Repeat("\\x09", 2000),              // looks like escapes: kept whole
    };
    for (const std::string& in : inputs) {
      for (size_t max : {size_t{64}, size_t{100}, size_t{1000}, ocid::kMaxLineBytes}) {
        for (Quoting q : {Quoting::kNone, Quoting::kDoubled}) {
          CAPTURE(in.substr(0, 40));
          CAPTURE(max);
          std::string p = Printable(in, max, q);
          CHECK(written(p, q) <= max);
          CHECK(PrintableUtf8(p));
          CHECK(Contains(p, "bytes ...]"));
          CHECK(Printable(p, max, q) == p);  // a second pass changes nothing
          // No escape is cut short: every backslash starts a whole \xNN
          // (or stands for itself, as in the input).
          for (size_t i = p.find("\\x"); i != std::string::npos; i = p.find("\\x", i + 1)) {
            bool whole = i + 3 < p.size() && std::isxdigit(static_cast<unsigned char>(p[i + 2])) &&
                         std::isxdigit(static_cast<unsigned char>(p[i + 3]));
            CHECK(whole);
          }
        }
      }
    }
    // Head and tail kept, the count is of the bytes left out.
    std::string p = Printable(mib_of_tabs);
    CHECK(p.rfind("OCI_ONLOAD=all\\x09", 0) == 0);
    CHECK(p.compare(p.size() - 7, 7, "\\x09END") == 0);
    size_t shown_tabs = 0;
    for (size_t i = p.find("\\x09"); i != std::string::npos; i = p.find("\\x09", i + 4))
      ++shown_tabs;
    CHECK(Contains(p, "[... " + std::to_string((1u << 20) - shown_tabs) + " bytes ...]"));
    // A character is never split: "é" is kept or left out, never \xc3.
    for (size_t max : {size_t{40}, size_t{41}, size_t{42}, size_t{43}})
      CHECK_FALSE(Contains(Printable(Repeat("\xc3\xa9", 100), max), "\\xc3"));
    // A text cut again: its marker is never split, and its count carries
    // over into the new one (the bytes of the original input left out).
    std::string again = Printable(p, 1000);
    CHECK(again.find("[... ") == again.rfind("[... "));
    size_t n = std::stoul(again.substr(again.find("[... ") + 5));
    CHECK(n > (1u << 20) - 1000);
    // Too small for the marker: what fits of "[...]".
    CHECK(Printable(std::string(100, 'x'), 3) == "[..");
    // Under the bound nothing is cut, and plain text is returned as it is.
    CHECK(Printable(std::string(4096, 'q')) == std::string(4096, 'q'));
    CHECK(Printable(std::string(1024, '\t')) == Repeat("\\x09", 1024));
  }

  TEST_CASE("PrintableParts: the short parts whole, the long ones share the rest") {
    std::vector<std::string> p =
        ocid::PrintableParts({"short", std::string(10000, 'a'), std::string(10000, 'b')}, 1000);
    CHECK(p[0] == "short");
    CHECK(p[1].size() + p[2].size() <= 995);
    CHECK(p[1].size() >= 490);
    CHECK(p[2].size() >= 490);
    p = ocid::PrintableParts({"a", "b"}, 1000);
    CHECK(p == std::vector<std::string>{"a", "b"});
  }

  TEST_CASE("Error::Line: at most kMaxLineBytes, whatever the parts hold") {
    const std::string tabs(1 << 20, '\t');
    for (const Error& e : {Error{tabs, tabs, 2}, Error{"cannot open", tabs, 0}, Error{tabs, "", 0},
                           Error{"x", std::string(1 << 20, '\xff'), 22}}) {
      std::string line = e.Line();
      CHECK(line.size() <= ocid::kMaxLineBytes);
      CHECK(PrintableUtf8(line));
      CHECK(Contains(line, "bytes ...]"));
      if (e.errnum == 2) CHECK(Contains(line, ": No such file or directory"));
    }
    CHECK(Error{"cannot open", tabs, 0}.Line().rfind("cannot open: \\x09", 0) == 0);
  }

  TEST_CASE("JsonErrorReason: where and why, without the prefix or the input") {
    for (const std::string& s :
         {std::string("{\"a\": \"\xff\"}"), std::string("{\"a\": 1"), std::string(""),
          std::string("[1e400]"), std::string("{\"a\":\"\\udc80\"}")}) {
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
