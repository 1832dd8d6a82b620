#include "device_rule.h"

#include <cstdlib>
#include <sstream>

namespace ocid {
namespace {

std::string Num(int64_t v) { return v < 0 ? "*" : std::to_string(v); }

bool ParseNum(const std::string& s, int64_t* out) {
  if (s == "*") return *out = -1, true;
  if (s.empty() || s.size() > 10) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  *out = std::strtoll(s.c_str(), nullptr, 10);
  return true;
}

bool Matches(int64_t have, int64_t want) { return have < 0 || have == want; }

}  // namespace

std::string DeviceRuleToV1(const DeviceRule& r) {
  if (r.type == 'a') return "a *:* " + r.access;
  return std::string(1, r.type) + " " + Num(r.major) + ":" + Num(r.minor) + " " + r.access;
}

std::vector<DeviceRule> ParseV1DevicesList(std::string_view text) {
  std::vector<DeviceRule> out;
  std::istringstream in{std::string(text)};
  std::string type, majmin, access;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    if (!(ls >> type >> majmin >> access)) continue;
    if (type.size() != 1 || (type[0] != 'a' && type[0] != 'b' && type[0] != 'c')) continue;
    size_t colon = majmin.find(':');
    if (colon == std::string::npos) continue;
    DeviceRule r;
    r.type = type[0];
    if (!ParseNum(majmin.substr(0, colon), &r.major) ||
        !ParseNum(majmin.substr(colon + 1), &r.minor))
      continue;
    r.access = access;
    out.push_back(r);
  }
  return out;
}

bool RuleCovers(const DeviceRule& have, const DeviceRule& want) {
  if (have.type != 'a' && have.type != want.type) return false;
  if (have.type != 'a' && (!Matches(have.major, want.major) || !Matches(have.minor, want.minor)))
    return false;
  for (char c : want.access)
    if (have.access.find(c) == std::string::npos) return false;
  return true;
}

bool ListAllows(const std::vector<DeviceRule>& list, const DeviceRule& want) {
  // devices.list grants are additive (a whitelist), so one covering rule is
  // enough; access letters may also be spread over several rules.
  std::string got;
  for (const auto& r : list) {
    DeviceRule probe = want;
    for (char c : want.access) {
      probe.access = std::string(1, c);
      if (RuleCovers(r, probe) && got.find(c) == std::string::npos) got += c;
    }
  }
  return got.size() == want.access.size();
}

}  // namespace ocid
