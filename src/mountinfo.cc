#include "mountinfo.h"

#include <sstream>

namespace ocid {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() &&
        s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
        s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool HasOption(const std::string& opts, const std::string& want) {
  size_t start = 0;
  while (start <= opts.size()) {
    size_t end = opts.find(',', start);
    if (end == std::string::npos) end = opts.size();
    if (opts.compare(start, end - start, want) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::vector<MountInfoEntry> ParseMountinfo(std::string_view text) {
  std::vector<MountInfoEntry> out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    MountInfoEntry e;
    std::string majmin, field;
    if (!(ls >> e.id >> e.parent >> majmin >> e.root >> e.mount_point >> e.mount_options))
      continue;
    bool sep = false;
    while (ls >> field) {
      if (field == "-") { sep = true; break; }
      if (!e.optional_fields.empty()) e.optional_fields += ' ';
      e.optional_fields += field;
    }
    if (!sep || !(ls >> e.fstype >> e.source >> e.super_options)) continue;
    e.root = Unescape(e.root);
    e.mount_point = Unescape(e.mount_point);
    out.push_back(std::move(e));
  }
  return out;
}

ProcCgroup ParseProcCgroup(std::string_view text) {
  ProcCgroup out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string id = line.substr(0, a);
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (id == "0" && controllers.empty()) {
      out.has_unified = true;
      out.unified = path;
      continue;
    }
    size_t start = 0;
    while (start <= controllers.size()) {
      size_t end = controllers.find(',', start);
      if (end == std::string::npos) end = controllers.size();
      std::string c = controllers.substr(start, end - start);
      if (!c.empty()) out.v1[c] = path;
      start = end + 1;
    }
  }
  return out;
}

std::string FindCgroupV1Mount(const std::vector<MountInfoEntry>& mounts,
                              const std::string& controller) {
  std::string found;
  for (const auto& m : mounts) {
    if (m.fstype != "cgroup" || !HasOption(m.super_options, controller)) continue;
    if (m.root == "/") return m.mount_point;
    if (found.empty()) found = m.mount_point;
  }
  return found;
}

std::string FindCgroup2Mount(const std::vector<MountInfoEntry>& mounts) {
  for (const auto& m : mounts)
    if (m.fstype == "cgroup2" && m.root == "/") return m.mount_point;
  return "";
}

}  // namespace ocid
