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
#include <vector>

#include "bundle_config.h"
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

// Refuses an active request the policy does not authorise: a required
// annotation missing or different, or a privileged container under
// refuse_privileged. The error names the inventory, the request and the rule.
bool CheckPolicy(const Inventory& inv, const Activation& a, const BundleConfig& cfg,
                 const std::map<std::string, std::string>& annotations, Error* err);

}  // namespace ocid
