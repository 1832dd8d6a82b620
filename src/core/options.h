// The settings every command shares (global command-line options).
#pragma once
#include <string>

#include "version.h"

namespace ocid {

struct Options {
  std::string config_dir = OCID_DEFAULT_CONFIG_DIR;
  std::string host_root = "/";
  std::string state_dir = "/run/oci-decorator";
};

}  // namespace ocid
