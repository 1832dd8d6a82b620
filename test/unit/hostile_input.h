// The hostile-input set: malformed, truncated, huge, wrongly typed and
// non-UTF-8 OCI states, config.json files and inventories (issue 5 item 4).
// Every one must give a clean failure (or success) with ONE printable line
// naming what was wrong and where, never a crash, a hang or an unbounded
// read; and a broken inventory must never touch a container that does not
// ask for it.
//
// Its suites are named hostile.<what>, each in the test file of the module
// it exercises; they run together as
//
//   build/test/unit_tests -ts='hostile*'
//
//   hostile.state      oci_state_test.cc       the OCI state on the hook's stdin
//   hostile.config     bundle_config_test.cc   config.json
//   hostile.inventory  inventory_test.cc       inventory files and directories
//   hostile.decision   decision_test.cc        whether a container asked; what fails it
//   hostile.read       files_test.cc           capped reads of pipes and files
//                      decision_test.cc        the hook's stdin; the policy as runc reads
//   hostile.error      error_test.cc           the one printable line
//
// This header holds what they share.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "error.h"

namespace ocid::test::hostile {

inline bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// Well-formed UTF-8 with no control characters (what a log line may hold).
inline bool PrintableUtf8(const std::string& s) {
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
inline void CheckOneLine(const Error& e) {
  std::string line = e.Line();
  CAPTURE(line.substr(0, 300));
  CHECK_FALSE(line.empty());
  CHECK(PrintableUtf8(line));
  CHECK(line.size() <= ocid::kMaxLineBytes);
}

inline std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Replaces the first `from` in `s` (which must be there).
inline std::string Sub(std::string s, const std::string& from, const std::string& to) {
  size_t p = s.find(from);
  REQUIRE_MESSAGE(p != std::string::npos, from);
  return s.replace(p, from.size(), to);
}

// An inventory that loads: one feature, one binary.
inline const std::string kGoodInventory =
    R"({"version": "1", "activation_flag": "OCI_GOOD", "driver_feature": ["f"],
        "inventory": {"f": {"binaries": ["/usr/bin/good-tool"]}}})";

}  // namespace ocid::test::hostile
