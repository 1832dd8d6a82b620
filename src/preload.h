// /etc/ld.so.preload content: the image's entries kept, ours added.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace ocid {

// Entries of an ld.so.preload file (whitespace or ':' separated; '#' starts
// nothing special for ld.so, but blank lines are dropped).
std::vector<std::string> ParsePreload(std::string_view text);

// The image's entries in their order, then ours not already present; one
// per line.
std::string MergePreload(std::string_view image_file,
                         const std::vector<std::string>& ours);

}  // namespace ocid
