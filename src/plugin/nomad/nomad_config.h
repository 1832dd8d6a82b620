// The Nomad plugin's `config` block: its HCL schema, and the decoding of
// what Nomad sends back (SetConfig's msgpack_config: go-cty's msgpack of
// the object HCL decoded from that schema, a map key -> value).
//
// Strict: Nomad has already checked the types against the schema, but the
// bytes come over a socket and a later Nomad may send more, so an unknown
// key, a wrong type or an out-of-range value is an error naming the key;
// null (and go-cty's "unknown") keeps the default. Pure, so it is unit tested.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "plugin_options.h"

namespace ocid {

struct NomadConfig {
  std::string config_dir;
  std::string host_root;
  std::string host_path_root;
  // LD_PRELOAD from the inventory's preload list (nomad-onload's key).
  bool set_preload = true;
  // Mount the Onload inventory's files (amd.com/onload). Default true: the
  // mounts ARE this plugin's plan; false suits images that ship Onload
  // themselves (they still get the device nodes and LD_PRELOAD).
  bool mount_onload = true;
  // Periodic re-check of the inventories and the host (inotify acts at once).
  std::chrono::seconds fingerprint_period{60};
  // Virtual devices advertised per group: tasks sharing one host's Onload.
  int slots = 64;
  // The environment profile the devices deliver (cluster.h); "" = none.
  std::string profile;
};

// The defaults: the command line's options (Nomad usually passes none).
NomadConfig NomadConfigFrom(const PluginOptions& opts);

// One config key as ConfigSchema announces it.
struct NomadConfigKey {
  const char* name;
  const char* hcl_type;  // "string", "bool", "number"
};
const std::vector<NomadConfigKey>& NomadConfigKeys();

// Applies the msgpack `bytes` onto *cfg. Empty bytes or nil: no config block, all
// defaults. On failure *cfg is unchanged and *err is one line (naming the key).
bool DecodeNomadConfig(const std::string& bytes, NomadConfig* cfg, std::string* err);

// Go's time.ParseDuration syntax ("1m", "30s", "1h30m", "1.5s"); no sign.
bool ParseGoDuration(const std::string& text, std::chrono::nanoseconds* out, std::string* err);

// The options ResourceWatch runs with under `cfg`.
PluginOptions WatchOptions(const NomadConfig& cfg, const PluginOptions& base);

}  // namespace ocid
