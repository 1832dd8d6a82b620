// Device cgroup rules as data, with pure renderers and parsers.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ocid {

// The access every mode grants to a device a plan adds: read and write.
// Never mknod ("m"): the node is made for the container (by the hook, or by
// the engine before the device cgroup applies), so the container never
// needs to create one, and with CAP_MKNOD it could otherwise make more.
// One value for the hook's rules, the runtime shim's, CDI's "permissions"
// and the device plugins' answers.
constexpr const char* kGrantedDeviceAccess = "rw";

struct DeviceRule {
  char type = 'c';     // 'c', 'b' or 'a' (all)
  int64_t major = -1;  // -1 is the wildcard '*'
  int64_t minor = -1;
  std::string access = "rwm";
  bool allow = true;  // false: a deny rule (config.json only; ours allow)

  bool operator==(const DeviceRule& o) const {
    return type == o.type && major == o.major && minor == o.minor && access == o.access &&
           allow == o.allow;
  }
};

// "c 240:0 rwm", "a *:* rwm": the cgroup v1 devices.allow / devices.list form.
std::string DeviceRuleToV1(const DeviceRule& r);

// Parses cgroup v1 devices.list content. Malformed lines are skipped.
std::vector<DeviceRule> ParseV1DevicesList(std::string_view text);

// Does `have` grant every access in `want` for want's device?
bool RuleCovers(const DeviceRule& have, const DeviceRule& want);
bool ListAllows(const std::vector<DeviceRule>& list, const DeviceRule& want);

}  // namespace ocid
