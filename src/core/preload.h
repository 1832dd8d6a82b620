// /etc/ld.so.preload content: the image's entries kept, ours added.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ocid {

// Entries of an ld.so.preload file (whitespace or ':' separated; '#' starts
// nothing special for ld.so, but blank lines are dropped).
std::vector<std::string> ParsePreload(std::string_view text);

// The image's entries in their order, then ours not already present; one
// per line.
std::string MergePreload(std::string_view image_file, const std::vector<std::string>& ours);

// The container's process as the host sees it: process.user's ids through
// the id mappings. Nothing it could not read itself may be shown to it.
struct HostCredentials {
  // An id no mapping covers (or a joined user namespace, whose mappings
  // config.json does not give): it matches no file owner.
  static constexpr uint32_t kUnmapped = UINT32_MAX;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // the additional gids that map
};

// Whether `who` may read a file of `mode` owned by uid:gid, judged by the
// mode bits the way the kernel picks the class (owner, then group, then
// other). Host uid 0 may read anything. ACLs are not consulted.
bool MayRead(const HostCredentials& who, unsigned mode, uint32_t uid, uint32_t gid);

}  // namespace ocid
