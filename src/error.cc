#include "error.h"

#include <cstring>

namespace ocid {

std::string Error::Line() const {
  std::string line = what;
  if (!path.empty()) line += ": " + path;
  if (errnum != 0) line += ": " + std::string(std::strerror(errnum));
  return line;
}

bool Fail(Error* err, std::string what, std::string path, int errnum) {
  if (err) {
    err->what = std::move(what);
    err->path = std::move(path);
    err->errnum = errnum;
  }
  return false;
}

}  // namespace ocid
