// One error type for the whole hook: what was being done, on which path, and
// the errno if the kernel said no. Line() renders the one line a user sees.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace ocid {

struct Error {
  std::string what;   // e.g. "cannot open host source", "invalid inventory"
  std::string path;   // the path, file or key concerned ("" if none)
  int errnum = 0;     // errno, 0 if not a system error

  // One line, whatever the inputs held: control characters and bytes that
  // are not UTF-8 are shown as \xNN, and each part is cut to kMaxShownBytes
  // (the middle is elided). A config.json can put anything in a message: a
  // newline in an annotation key, a 10 MB env value.
  std::string Line() const;
  bool empty() const { return what.empty(); }
};

constexpr size_t kMaxShownBytes = 4096;

// `s` made safe for a one-line message, as Line() does to each part.
std::string Printable(std::string_view s, size_t max = kMaxShownBytes);

// Where and why a JSON document did not parse, from the what() of the
// nlohmann::json exception: "line 1, column 8: invalid string: ill-formed
// UTF-8 byte". The exception's prefix and the bytes it last read are left
// out (they would repeat the input).
std::string JsonErrorReason(std::string_view exception_what);

// Fill *err and return false: lets callers write `return Fail(err, ...)`.
bool Fail(Error* err, std::string what, std::string path = {}, int errnum = 0);

}  // namespace ocid
