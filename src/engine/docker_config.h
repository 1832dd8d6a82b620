// docker's daemon.json, as `setup docker` merges it and `check` reads it
// back: the "runtimes" object only, every other key left as it is. Pure:
// bytes in, bytes out.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "error.h"

namespace ocid {

struct DockerMerge {
  std::string json;  // the new daemon.json (the input when unchanged)
  bool changed = false;
  std::string old_path;  // the entry's path before, "" if none
  std::string runtimes;  // the resulting "runtimes" object, for messages
};

// Merges {"runtimes": {name: {"path": path}}} into daemon.json's bytes
// ("" or blank: no file yet). Every other key, every other runtime and any
// other key of the entry (runtimeArgs) is kept, in order. Unchanged when
// the entry already has this path. `file` names the file in errors.
bool MergeDockerRuntime(const std::string& bytes, const std::string& file, const std::string& name,
                        const std::string& path, DockerMerge* out, Error* err);

// daemon.json's "runtimes" as (name, path) pairs; entries without a string
// path are skipped. A blank file has none (docker accepts it).
bool ParseDockerRuntimes(std::string_view bytes, const std::string& file,
                         std::vector<std::pair<std::string, std::string>>* out, Error* err);

}  // namespace ocid
