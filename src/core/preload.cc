#include "preload.h"

#include <sys/stat.h>

#include <algorithm>

namespace ocid {

std::vector<std::string> ParsePreload(std::string_view text) {
  // ld.so splits /etc/ld.so.preload on white space and ':'.
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::string MergePreload(std::string_view image_file, const std::vector<std::string>& ours) {
  std::vector<std::string> entries = ParsePreload(image_file);
  for (const auto& e : ours)
    if (std::find(entries.begin(), entries.end(), e) == entries.end()) entries.push_back(e);
  std::string out;
  for (const auto& e : entries) out += e + "\n";
  return out;
}

bool MayRead(const HostCredentials& who, unsigned mode, uint32_t uid, uint32_t gid) {
  if (who.uid == 0) return true;
  if (uid == who.uid) return mode & S_IRUSR;
  bool in_group =
      gid == who.gid || std::find(who.groups.begin(), who.groups.end(), gid) != who.groups.end();
  if (in_group) return mode & S_IRGRP;
  return mode & S_IROTH;
}

}  // namespace ocid
