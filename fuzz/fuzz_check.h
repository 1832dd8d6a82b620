// Shared by the fuzz targets: an invariant that does not hold is a finding.
// abort() makes libFuzzer save the input (crash-<sha1>) and stop.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

#include "error.h"

#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

namespace ocid_fuzz {

// What a refused input must give: an error with a reason, rendered as one
// printable line (error.h: "One line, whatever the inputs held").
inline void CheckErrorLine(const ocid::Error& err) {
  FUZZ_CHECK(!err.empty());
  std::string line = err.Line();
  FUZZ_CHECK(!line.empty());
  for (unsigned char c : line) FUZZ_CHECK(c >= 0x20 && c != 0x7f);
}

}  // namespace ocid_fuzz
