// Device IDs of a shared resource: "<prefix><n>" for n = 0 .. slots-1, in
// decimal without leading zeros. Both plugin modes advertise slots this way
// (kubelet: "onload-7", Nomad: "amd-onload-7") and check the IDs they are
// handed back by parsing, not by listing them: slots may be large.
#pragma once
#include <string>
#include <vector>

namespace ocid {

inline std::vector<std::string> SlotIds(const std::string& prefix, int slots) {
  std::vector<std::string> ids;
  ids.reserve(slots > 0 ? static_cast<size_t>(slots) : 0);
  for (int n = 0; n < slots; ++n) ids.push_back(prefix + std::to_string(n));
  return ids;
}

// True when `id` is one of SlotIds(prefix, slots).
inline bool IsSlotId(const std::string& id, const std::string& prefix, int slots) {
  if (id.size() <= prefix.size() || id.compare(0, prefix.size(), prefix) != 0) return false;
  std::string digits = id.substr(prefix.size());
  if (digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return false;
  long n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  return n < slots;
}

}  // namespace ocid
