// Device IDs of a shared resource: "<prefix><n>" for n = 0 .. slots-1, in
// decimal without leading zeros. Both plugin modes advertise slots this way
// (kubelet: "onload-7", Nomad: "amd-onload-7") and check the IDs they are
// handed back by parsing, not by listing them: slots may be large.
//
// Bound: at most kMaxSlots per resource (man page, Slots). A slot counts a
// container, not hardware: a node can use as many as it runs containers
// holding the resource, and the kubelet runs at most 110 pods by default
// (rarely more than a few hundred). Every slot is an ID in every
// ListAndWatch, Fingerprint and Stats message, and lives in the plugin's
// memory: at 100000 the Nomad mode sent 45.6 MB of Stats a second and the
// kubernetes mode held 57.6 MB RSS (its DaemonSet limit is 64Mi).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace ocid {

constexpr int kMaxSlots = 1024;
// How much of a client's unknown device ID an error quotes (through
// Printable, error.h: a client's bytes), in both modes.
constexpr size_t kMaxShownId = 80;

// "" when `n` slots are within 1..kMaxSlots; otherwise one line saying why
// not, naming the value and the limit (the caller names the option or key).
inline std::string SlotsRefusal(double n) {
  if (n >= 1 && n <= kMaxSlots) return "";
  std::string shown =
      n > -1e15 && n < 1e15 ? std::to_string(static_cast<long long>(n)) : "out of range";
  if (n < 1) return shown + " slots is below the minimum of 1";
  return shown + " slots is above the limit of " + std::to_string(kMaxSlots) +
         " per resource (a slot counts a container; see oci-decorator-device-plugin(8), Slots)";
}

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
