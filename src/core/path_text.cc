#include "path_text.h"

namespace ocid {

std::string Basename(std::string_view path) {
  return std::string(path.substr(path.rfind('/') + 1));
}

std::string Dirname(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  return slash == 0 ? "/" : std::string(path.substr(0, slash));
}

std::string WithoutTrailingSlashes(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

}  // namespace ocid
