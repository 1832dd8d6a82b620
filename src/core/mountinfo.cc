#include "mountinfo.h"

#include <sstream>
#include <vector>

namespace ocid {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool HasMountOption(const std::string& opts, const std::string& want) {
  size_t start = 0;
  while (start <= opts.size()) {
    size_t end = opts.find(',', start);
    if (end == std::string::npos) end = opts.size();
    if (opts.compare(start, end - start, want) == 0) return true;
    start = end + 1;
  }
  return false;
}

namespace {

// Splits `line` on single spaces into fields (mountinfo never has runs of
// spaces: the kernel escapes them).
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    if (end > start) out.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool ToInt(std::string_view s, int* out) {
  if (s.empty() || s.size() > 9) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::vector<MountInfoEntry> ParseMountinfo(std::string_view text) {
  std::vector<MountInfoEntry> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::vector<std::string_view> f = Fields(text.substr(start, end - start));
    start = end + 1;
    // id parent maj:min root mount-point options [optional...] - fstype source super
    size_t sep = 6;
    while (sep < f.size() && f[sep] != "-") ++sep;
    MountInfoEntry e;
    if (sep + 3 >= f.size() || !ToInt(f[0], &e.id) || !ToInt(f[1], &e.parent)) continue;
    e.dev = f[2];
    e.root = Unescape(std::string(f[3]));
    e.mount_point = Unescape(std::string(f[4]));
    e.mount_options = f[5];
    for (size_t i = 6; i < sep; ++i) {
      if (!e.optional_fields.empty()) e.optional_fields += ' ';
      e.optional_fields += f[i];
    }
    e.fstype = f[sep + 1];
    e.source = f[sep + 2];
    e.super_options = f[sep + 3];
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<int> SharedMountIds(std::string_view text) {
  std::vector<int> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    // The tag lives among the optional fields, before " - ".
    if (line.substr(0, dash).find(" shared:") == std::string_view::npos) continue;
    int id;
    if (ToInt(line.substr(0, line.find(' ')), &id)) out.push_back(id);
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

}  // namespace ocid
