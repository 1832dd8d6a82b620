// Inventories parsed from texts, for the tests of the pure code that takes
// an InventorySet (cluster view, view snapshot): each pair is the file name
// the messages show and the file's bytes, parsed as the config directory's
// files are (ParseInventoryFiles), refusals included.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "inventory.h"

namespace ocid_test {

inline ocid::InventorySet LoadInventories(
    const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<ocid::InventoryFile> raw;
  raw.reserve(files.size());
  for (const auto& [path, bytes] : files) raw.push_back({path, bytes, {}});
  ocid::InventorySet set;
  ocid::ParseInventoryFiles(raw, &set);
  return set;
}

}  // namespace ocid_test
