// Vendor inventories: one JSON file per vendor in the config directory.
//
// The seed format (version, log_level, activation_flag, driver_feature,
// inventory.<feature>.{devices,binaries,libraries,directories,miscellaneous})
// loads unchanged. Extensions, documented in oci-decorator.json(5):
//   - an entry is a string or an object
//       {"source": "<path>" | ["<alt1>", "<alt2>", ...],
//        "target": "<container path>", "target_dir": "<container dir>",
//        "optional": true|false}
//     where alternatives are tried in order and the first that matches wins;
//   - the last component of a source may be a glob (libonload.so*);
//   - a per-feature "preload" list of libraries to preload;
//   - "cdi_kind": the CDI kind ("vendor/class") of `cdi generate` (cdi.h);
//   - "activation_policy": who may activate the inventory (ActivationPolicy);
//   - "version_lock": a library that must match the loaded kernel module
//     (VersionLock below; the check on the host is version_lock.h);
//   - "needs_nic": features that need a NIC of given PCI vendors
//     (NicRequirement below; the NICs of the host are nic.h);
//   - "conditions": named facts of the host (HostCondition), which a
//     directory entry's "create_if" names;
//   - a per-feature "groups" list of supplementary groups (GroupEntry).
//
// The inventory only describes a vendor: the modules that check a host
// against it (version_lock, nic, activation, planner) include this header,
// never the other way round.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cdi_names.h"
#include "env_profile.h"
#include "error.h"

namespace ocid {

enum class EntryKind { kDevice, kFile, kDirectory };

struct InventoryEntry {
  EntryKind kind = EntryKind::kFile;
  std::string category;              // "devices", "binaries", ...
  size_t index = 0;                  // its place in that list (messages)
  std::vector<std::string> sources;  // alternatives; devices: under /dev
  std::string target;                // "" = same path as the source
  std::string target_dir;            // for glob sources: container dir
  bool optional = false;
  // directories only: the name of a condition (Inventory::conditions); when
  // the source is missing and the condition is met, the directory is created
  // (root, 0755) before the container starts. Then exactly one source,
  // absolute, no glob, not "/" nor under /proc, /sys, /dev.
  std::string create_if;
};

// A supplementary group a container's process may need to reach something
// of a feature ("groups"): its id is the first line of a host file (decimal,
// 0 = none); the mode clients are given is another host file (decimal, as
// the kernel shows an int module parameter; 0 or missing = default_mode).
// It is required when the id is not 0 and the mode gives others nothing.
struct GroupEntry {
  std::string gid_file;
  std::string mode_file;      // "" = none
  uint32_t default_mode = 0;  // "default_mode"; 0 = none given
  bool has_default_mode = false;
  bool optional = false;  // a missing gid_file gives no group
};

struct Feature {
  std::string name;
  std::vector<InventoryEntry> entries;
  std::vector<std::string> preload;  // library names or container paths
  // Initialised, so that Feature{name, entries, preload} stays complete.
  std::vector<GroupEntry> groups{};
};

// A named fact of the host ("conditions"): met when one of `exists` exists,
// or one of `exists_named_in` exists and its first line (trailing blanks
// trimmed) is an absolute path that exists. Paths are absolute, no glob,
// looked up inside the host root (planner.h evaluates them). An optional
// "description" says, in the vendor's words, what it means and what to do
// when a named file names nothing that exists.
struct HostCondition {
  std::string name;
  std::vector<std::string> exists;
  std::vector<std::string> exists_named_in;
  std::string description;  // what the fact means for the vendor (`check` shows it)
};

// The operator's rules for activating an inventory on a multi-tenant host.
// An environment variable is a request anyone who writes an image or runs a
// container can make; these turn it into something the operator authorises.
//   "activation_policy": {
//     "sources": ["annotation"],             // default ["env", "annotation"]
//     "require_annotations": {"k": "v"},     // each must be present, exactly
//     "refuse_privileged": true              // default false
//   }
// A request from a source not listed is ignored (logged); a request from a
// container that lacks a required annotation or is privileged is refused:
// the container fails to start with one line saying why.
struct ActivationPolicy {
  bool accept_env = true;
  bool accept_annotation = true;
  std::map<std::string, std::string> require_annotations;
  bool refuse_privileged = false;
};

// "version_lock" (version_lock.h says what it checks and why): the
// user-space library that must be the loaded module's version.
struct VersionLock {
  bool enforce = false;               // refuse on mismatch
  std::string module_version;         // host path; "" = no version lock
  std::vector<std::string> library;   // alternatives, first that exists wins
  std::vector<std::string> features;  // features it guards; empty = all

  bool configured() const { return !module_version.empty(); }
  // Whether asking for `requested` features needs the check.
  bool Guards(const std::vector<std::string>& requested) const;
};

// "needs_nic" (nic.h says why): features that need a NIC of these PCI
// vendors on the node.
struct NicRequirement {
  std::vector<std::string> pci_vendors;  // empty: no NIC needed
  std::vector<std::string> features;     // features that need one; empty = all

  bool configured() const { return !pci_vendors.empty(); }
  // Whether asking for `requested` features needs a NIC.
  bool Needs(const std::vector<std::string>& requested) const;
};

struct Inventory {
  std::string file;  // where it was loaded from
  std::string version;
  std::string activation_flag;
  std::string cdi_kind;  // "" = derived from the file name
  ActivationPolicy policy;
  VersionLock version_lock;
  NicRequirement needs_nic;
  std::map<std::string, HostCondition> conditions;  // by name
  // Environment profiles (env_profile.h): inline ones, the host directory
  // of .opf files as alternatives (none = no directory; the first that is a
  // directory on the host is used, as with an entry's sources) and the
  // variable prefixes they may set.
  std::map<std::string, EnvList> profiles;
  std::vector<std::string> profile_dirs;
  std::vector<std::string> profile_prefixes = {"EF_"};
  bool HasProfiles() const { return !profiles.empty() || !profile_dirs.empty(); }
  // The profiles as seen on `host`: its directory is the first alternative
  // that is a directory there (the first when none is), and messages name
  // files as the host does.
  ProfileSources Profiles(const HostView& host) const;
  std::vector<std::string> driver_features;  // declared order
  std::vector<Feature> features;             // in driver_feature order

  const Feature* FindFeature(std::string_view name) const;
};

// The inventory's CDI kind and spec file name (cdi_names.h, which takes
// strings and knows no inventory).
inline std::string CdiKindOf(const Inventory& inv) { return CdiKindOf(inv.cdi_kind, inv.file); }
inline std::string CdiFileName(const Inventory& inv) {
  return CdiFileName(InventoryStem(inv.file));
}

// Parses one inventory. `file` is used in messages and stored in out->file.
bool ParseInventory(std::string_view bytes, const std::string& file, Inventory* out, Error* err);

// The result of loading a config directory. A broken file never hides the
// good ones: it is kept with its error, and with its activation flag when
// that could still be read, so only containers asking for it fail.
struct BrokenInventory {
  std::string file;
  std::string activation_flag;  // "" when not even that could be read
  Error error;
};

struct InventorySet {
  std::vector<Inventory> inventories;  // sorted by file name
  std::vector<BrokenInventory> broken;
};

// The raw files of a config directory, read but not parsed.
struct InventoryFile {
  std::string path;
  std::string bytes;
  Error read_error;  // set when the file could not be read
};
// The config directory must be owned by root (or the effective user) and
// writable by neither group nor others; otherwise every file in it is
// refused ("writable by others"). `vouch`, when given, is asked only then,
// and only of a directory whose owner is right: "" when it knows the
// directory is safe anyway (the device plugin: a kubelet configMap volume,
// kubelet_volume.h), else why not, which joins the refusal. The hook gives
// none. The files are held to the file rule either way.
using ConfigDirVouch = std::function<std::string(int dirfd)>;
bool ReadInventoryDir(const std::string& dir, std::vector<InventoryFile>* out, Error* err,
                      const ConfigDirVouch& vouch = nullptr);

// Every activation flag the file could declare, found without parsing it:
// each `"activation_flag"` followed by ':' and a string (or, as a broken file
// may have it, by no ':' or several: SalvageFlag takes those). Exact for any JSON
// without backslash escapes (a key can then only be spelled literally);
// returns false when it cannot tell, and the file must be parsed.
bool QuickActivationFlags(std::string_view bytes, std::vector<std::string>* flags);

// Parses read files into an InventorySet (broken ones kept with errors).
void ParseInventoryFiles(const std::vector<InventoryFile>& files, InventorySet* out);

// Loads every *.json file in `dir` (names starting with '.' are skipped;
// each must be, or link to, a regular file). A missing directory gives an
// empty set and returns true.
bool LoadInventoryDir(const std::string& dir, InventorySet* out, Error* err,
                      const ConfigDirVouch& vouch = nullptr);

}  // namespace ocid
