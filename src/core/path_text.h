// Path text: what a path string says, read as text, never from the file
// system (for that, rootfs_path.h and host_view.h). The path a container,
// an inventory or a command line names is split and trimmed by these
// alone, so every module agrees on what "the directory" of "/x" is.
#pragma once
#include <string>
#include <string_view>

namespace ocid {

// After the last '/' ("libonload.so" of "/usr/lib64/libonload.so"); all of
// `path` when it has none; "" when it ends in '/'.
std::string Basename(std::string_view path);

// Before the last '/': "/" for "/x", "." for a path without one ("x").
std::string Dirname(std::string_view path);

// `path` without trailing '/', but "/" stays "/" ("/run/b/" is "/run/b").
std::string WithoutTrailingSlashes(std::string_view path);

}  // namespace ocid
