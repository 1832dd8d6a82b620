// /proc/<pid>/mountinfo and /proc/<pid>/cgroup, parsed from bytes.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ocid {

struct MountInfoEntry {
  int id = 0;
  int parent = 0;
  std::string dev;          // "major:minor" of the filesystem
  std::string root;         // root of the mount within its filesystem
  std::string mount_point;  // unescaped
  std::string mount_options;
  std::string optional_fields;  // "shared:1 master:2" ...
  std::string fstype;
  std::string source;
  std::string super_options;
};

std::vector<MountInfoEntry> ParseMountinfo(std::string_view text);

// Just the ids of mounts with shared propagation ("shared:N" among the
// optional fields): a scan, no full parse, for the hook's hot path.
std::vector<int> SharedMountIds(std::string_view text);

// cgroup membership: controller -> path for v1 lines ("5:devices:/a/b"),
// and the unified ("0::/x") path if any.
struct ProcCgroup {
  std::map<std::string, std::string> v1;  // "devices" -> "/a/b"
  bool has_unified = false;
  std::string unified;
};
ProcCgroup ParseProcCgroup(std::string_view text);

// Is `want` one of the comma-separated options in `opts` (whole options
// only: "dev" is not "devices")?
bool HasMountOption(const std::string& opts, const std::string& want);

}  // namespace ocid
