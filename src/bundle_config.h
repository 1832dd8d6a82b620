// What the hook needs from a bundle's config.json: where the rootfs is, the
// process environment and the annotations that may request a vendor.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"

namespace ocid {

struct BundleConfig {
  std::string root_path;        // root.path as written (relative or absolute)
  bool root_readonly = false;
  std::vector<std::string> env;  // process.env, "NAME=value"
  std::map<std::string, std::string> annotations;
};

// `where` names the file in errors (the config.json path).
bool ParseBundleConfig(std::string_view bytes, const std::string& where,
                       BundleConfig* out, Error* err);

// The rootfs as an absolute path: crun's state.root when given, otherwise
// root.path made absolute against the bundle directory.
std::string RootfsPath(const std::string& bundle, const std::string& state_root,
                       const std::string& root_path);

// The value of `name` in an env list; the last occurrence wins (as runc and
// docker dedupe). Returns false when the variable is absent.
bool LookupEnv(const std::vector<std::string>& env, std::string_view name,
               std::string* value);

}  // namespace ocid
