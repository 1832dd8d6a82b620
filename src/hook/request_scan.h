// Could this container have asked? The raw-byte scan that decides it for
// nearly every container, before any JSON is parsed; where it finds a flag
// mentioned, the request reader (request_reader.h) decides.
//
// A request is an env entry or an annotation naming an inventory's
// activation flag, so a flag that occurs nowhere in the state or
// config.json bytes, not even JSON-escaped, cannot have been asked for. The
// scan reads its input in chunks and keeps nothing but a few bytes of
// overlap: it works on input of any size. A mention is not a request (the
// flag may be in process.args); it only means the reader must look.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "request_reader.h"

namespace ocid {

class FlagScanner {
 public:
  explicit FlagScanner(std::vector<std::string> flags);
  // Feeds the next chunk of the input; chunks may split a flag anywhere.
  void Feed(std::string_view chunk);
  // A flag occurred, or a JSON escape (\u00XX) of a character a flag name
  // can hold, which could spell a flag ("OCI\u005fONLOAD") that no literal
  // search finds. Encoders escape only <, >, &, controls and the like, so
  // real files take the fast path.
  bool mentioned() const { return mentioned_; }
  // An FdInput observer (files.h): Feed on the scanner `self`.
  static void Observe(void* self, std::string_view chunk) {
    static_cast<FlagScanner*>(self)->Feed(chunk);
  }

 private:
  void Search(std::string_view window);
  std::vector<std::string> flags_;
  std::string carry_;  // the last bytes of the input so far
  size_t keep_ = 5;    // how many: the longest flag or escape, less one
  bool mentioned_ = false;
};

// Scans the file at `path` (the bundle's config.json) for the flags and,
// when one is mentioned and `reader` is given, reads it again from the
// start with `reader` (request_reader.h: whether runc's reading asks). The
// file is looked at through an O_PATH fd first (a symlink is followed, as
// the runtime followed it), and read only if it is a regular file: opening
// a device node would run its driver's open as host root. Both passes read
// the same open file, in chunks: any size. Returns false with `err` set
// when the file cannot be scanned (missing, not a regular file,
// unreadable); the caller decides what that means.
bool ScanFileForFlags(const std::string& path, FlagScanner* scanner, RequestReader* reader,
                      Error* err);

}  // namespace ocid
