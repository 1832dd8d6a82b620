// Does a container ask for a vendor, and for which features?
//
// The request is the exact environment variable named by activation_flag, or
// the annotation "oci-decorator/<activation_flag>". Values:
//   all                        every feature in driver_feature
//   f1,f2                      those features
//   none, void, 0, false, ""   off
// An unknown feature name is an error listing the valid ones.
//
// The inventory's ActivationPolicy (inventory.h) then applies: a request
// from a source the policy does not accept is ignored (Activation::ignored),
// and CheckPolicy refuses an accepted request from a container that lacks a
// required annotation or is privileged.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bundle_config.h"
#include "device_rule.h"
#include "error.h"
#include "inventory.h"

namespace ocid {

constexpr std::string_view kAnnotationPrefix = "oci-decorator/";

struct Activation {
  bool active = false;
  std::vector<std::string> features;  // in driver_feature order, unique
  std::string source;                 // "env OCI_ONLOAD=all", "annotation ..."
  std::string ignored;                // a request the policy does not accept
};

// True for the values that mean "off": none, void, 0, false, empty
// (case-insensitive, surrounding blanks ignored).
bool IsOffValue(std::string_view value);

// Parses one request value against the inventory's features.
bool ParseActivationValue(const Inventory& inv, std::string_view value,
                          std::vector<std::string>* features, Error* err);

// One setting a container gives a name: the environment variable NAME (the
// last occurrence wins, as runc and docker dedupe) or the annotation
// "oci-decorator/NAME".
struct NamedSetting {
  bool from_env = false;  // false: the annotation
  std::string what;       // "env NAME=value" or "annotation oci-decorator/NAME=value"
  std::string value;
};

// The settings a container gives `name`, in the order they are weighed: the
// env entry, then the annotation. None, one or both. The one reading of a
// request (an activation flag) and of a profile choice (<FLAG>_PROFILE).
std::vector<NamedSetting> NamedValue(std::string_view name, const std::vector<std::string>& env,
                                     const std::map<std::string, std::string>& annotations);

// Does this env and annotation set ask for `flag`: a setting of it that is
// not an off value (IsOffValue), whatever the activation policy accepts. An
// empty flag is never asked for.
bool AsksFor(std::string_view flag, const std::vector<std::string>& env,
             const std::map<std::string, std::string>& annotations);

// The same over every reading of an ambiguous config.json (spec_keys.h):
// any env entry or annotation any runtime could read, or the state's
// annotations.
bool AsksForAnywhere(std::string_view flag, const std::vector<std::string>& env_anywhere,
                     const std::vector<std::pair<std::string, std::string>>& annotations_anywhere,
                     const std::map<std::string, std::string>& state_annotations);

// Decides activation from env and annotations. Both may request; features
// requested by either are applied.
bool DecideActivation(const Inventory& inv, const std::vector<std::string>& env,
                      const std::map<std::string, std::string>& annotations, Activation* out,
                      Error* err);

// Why the container counts as privileged, or "" when it does not: it holds
// CAP_SYS_ADMIN in any capability set (it could remount the hook's
// read-only mounts writable and write through them to the host's files), or
// its device cgroup allows every device.
std::string PrivilegedReason(const BundleConfig& cfg);
// The same from the two things it reads: the capability sets that hold
// CAP_SYS_ADMIN and the device rules, in order.
std::string PrivilegedReason(const std::vector<std::string>& sys_admin_sets,
                             const std::vector<DeviceRule>& device_rules);

// Refuses an active request the policy does not authorise: a required
// annotation missing or different, or a privileged container under
// refuse_privileged. The error names the inventory, the request and the rule.
bool CheckPolicy(const Inventory& inv, const Activation& a, const BundleConfig& cfg,
                 const std::map<std::string, std::string>& annotations, Error* err);
bool CheckPolicy(const Inventory& inv, const Activation& a,
                 const std::vector<std::string>& sys_admin_sets,
                 const std::vector<DeviceRule>& device_rules,
                 const std::map<std::string, std::string>& annotations, Error* err);

}  // namespace ocid
