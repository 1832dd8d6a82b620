// What the hook needs from a bundle's config.json: where the rootfs is, the
// process environment and the annotations that may request a vendor, the
// container's device rules (a cgroup v2 device program must keep them) and
// whether its capabilities make it privileged.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device_rule.h"
#include "error.h"

namespace ocid {

struct ConfigInterest;  // spec_keys.h

// One linux.devices entry: a node the runtime creates in the container.
struct LinuxDevice {
  std::string path;
  char type = 'c';     // 'c', 'b', 'u' or 'p'
  int64_t major = -1;  // -1 when absent (allowed for 'p' only)
  int64_t minor = -1;
};

// One linux.uidMappings / gidMappings entry: container ids
// [container_id, container_id + size) are host ids [host_id, host_id + size).
struct IdMapping {
  uint32_t container_id = 0;
  uint32_t host_id = 0;
  uint32_t size = 0;
};

// One linux.namespaces entry: a new namespace of `type` ("mount", "user",
// "pid", ...) or, with `path`, one the container joins.
struct NamespaceEntry {
  std::string type;
  std::string path;  // "" for a new namespace
};

struct BundleConfig {
  std::string root_path;  // root.path as written (relative or absolute)
  bool root_readonly = false;
  std::vector<std::string> env;  // process.env, "NAME=value"
  std::map<std::string, std::string> annotations;
  std::vector<LinuxDevice> devices;  // linux.devices
  // linux.resources.devices, in order: type 'a' when absent, -1 (wildcard)
  // for an absent or negative major/minor (as runc reads them), access "rwm"
  // when absent, otherwise in the canonical order "rwm".
  std::vector<DeviceRule> device_rules;
  // The process.capabilities sets ("bounding", "effective", ...) that hold
  // CAP_SYS_ADMIN, in file order: what makes a container privileged for an
  // activation policy (activation.h).
  std::vector<std::string> sys_admin_sets;
  // process.user: the ids the container's process runs with, as seen inside
  // the container (0 when absent).
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> additional_gids;
  std::vector<NamespaceEntry> namespaces;  // linux.namespaces, in order
  std::vector<IdMapping> uid_mappings;     // linux.uidMappings
  std::vector<IdMapping> gid_mappings;     // linux.gidMappings

  // Where runc and crun could read this document differently ("" when
  // nowhere), and every request any reading could hold (spec_keys.h). With
  // an ambiguity the fields above are the exact-key reading only.
  std::string ambiguity;
  std::vector<std::string> env_anywhere;
  std::vector<std::pair<std::string, std::string>> annotations_anywhere;

  // The linux.namespaces entry of `type`, or nullptr when the container
  // shares the runtime's namespace of that type.
  const NamespaceEntry* Namespace(std::string_view type) const;
  // Has a user namespace of its own (new or joined).
  bool HasUserNamespace() const { return Namespace("user") != nullptr; }
};

// The host id of container id `id` through `mappings`; false when no entry
// maps it. An empty list is the identity (no user namespace).
bool MapToHost(const std::vector<IdMapping>& mappings, uint32_t id, uint32_t* host);
// The inverse: the container id that host id `host` is through `mappings`
// (the first entry covering it); false when none does. An empty list is the
// identity.
bool MapToContainer(const std::vector<IdMapping>& mappings, uint32_t host, uint32_t* id);

// `where` names the file in errors (the config.json path). With an
// `interest`, env and annotations hold only the entries it names (the hook
// needs no others, and a config.json may hold millions).
bool ParseBundleConfig(std::string_view bytes, const std::string& where, BundleConfig* out,
                       Error* err, const ConfigInterest* interest = nullptr);

// The rootfs as an absolute path: crun's state.root when given, otherwise
// root.path; either made absolute against the bundle directory.
std::string RootfsPath(const std::string& bundle, const std::string& state_root,
                       const std::string& root_path);

// Whether the process.env entry `entry` is the variable `name`: "NAME=value",
// or "NAME" alone (present, empty). *value, when given, gets what follows
// the '='. The one definition of "the env entry for a flag": LookupEnv and
// the request reader (request_reader.h) both use it.
bool EnvEntryIs(std::string_view entry, std::string_view name, std::string_view* value = nullptr);

// The value of `name` in an env list; the last occurrence wins (as runc and
// docker dedupe). Returns false when the variable is absent.
bool LookupEnv(const std::vector<std::string>& env, std::string_view name, std::string* value);

}  // namespace ocid
