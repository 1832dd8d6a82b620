// One error type for the whole hook: what was being done, on which path, and
// the errno if the kernel said no. Line() renders the one line a user sees.
#pragma once
#include <string>

namespace ocid {

struct Error {
  std::string what;   // e.g. "cannot open host source", "invalid inventory"
  std::string path;   // the path, file or key concerned ("" if none)
  int errnum = 0;     // errno, 0 if not a system error

  std::string Line() const;
  bool empty() const { return what.empty(); }
};

// Fill *err and return false: lets callers write `return Fail(err, ...)`.
bool Fail(Error* err, std::string what, std::string path = {}, int errnum = 0);

}  // namespace ocid
