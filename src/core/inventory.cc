#include "inventory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "cdi_names.h"
#include "files.h"
#include "host_view.h"
#include "json_text.h"
#include "unique_fd.h"

namespace ocid {
namespace {

using nlohmann::json;

// A condition's "description": a sentence or two for `check` to show.
constexpr size_t kMaxDescription = 1024;

bool IsCommentKey(const std::string& k) { return k.rfind("x-", 0) == 0 || k.rfind('_', 0) == 0; }

bool IsFlagName(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool IsFeatureName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  // Activation values match these words case-insensitively, so a feature
  // with one of these names could never be asked for.
  std::string lower = s;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> kReserved = {"all", "none", "void", "0", "false"};
  return kReserved.count(lower) == 0;
}

// A normalised path: components separated by single '/', none "." or "..",
// no trailing '/', globs only in the last component.
bool CheckPathSyntax(const std::string& p, bool absolute, bool allow_glob, std::string* why) {
  if (p.empty()) return *why = "is empty", false;
  if (p.find('\0') != std::string::npos) return *why = "contains a NUL", false;
  if (absolute != (p[0] == '/'))
    return *why = absolute ? "is not an absolute path" : "must be a name under /dev", false;
  if (p == "/") return *why = "is \"/\"", false;
  size_t start = absolute ? 1 : 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    std::string comp = p.substr(start, end - start);
    bool last = end == p.size();
    if (comp.empty()) return *why = "has an empty component", false;
    if (comp == "." || comp == "..") return *why = "has a \".\" or \"..\" component", false;
    if (HasGlob(comp) && !(last && allow_glob))
      return *why = "has a glob outside its last component", false;
    start = end + 1;
  }
  return true;
}

bool CheckTarget(const std::string& t, std::string* why) {
  if (!CheckPathSyntax(t, true, false, why)) return false;
  for (const char* banned : {"/proc", "/sys"}) {
    std::string b = banned;
    if (t == b || t.rfind(b + "/", 0) == 0) return *why = "is under " + b, false;
  }
  return true;
}

bool IsConditionName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// An octal permission mode as a string: "0666", "660"; at most 07777.
bool ParseOctalMode(const std::string& s, uint32_t* out) {
  if (s.empty() || s.size() > 5) return false;
  uint32_t m = 0;
  for (char c : s) {
    if (c < '0' || c > '7') return false;
    m = m * 8 + static_cast<uint32_t>(c - '0');
  }
  if (m > 07777) return false;
  *out = m;
  return true;
}

// "0x" and four lower-case hex digits, as sysfs shows a PCI vendor.
bool IsPciVendorId(const std::string& s) {
  if (s.size() != 6 || s.compare(0, 2, "0x") != 0) return false;
  for (size_t i = 2; i < s.size(); ++i)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return true;
}

class InventoryParser {
 public:
  InventoryParser(const std::string& file, Error* err) : file_(file), err_(err) {}

  bool Parse(const json& j, Inventory* out) {
    if (!j.is_object()) return Bad("", "the file is not a JSON object");
    out->file = file_;
    const json* inventory = nullptr;
    const json* profiles = nullptr;  // parsed once the prefixes are known
    const json* conditions = nullptr;
    for (const auto& [k, v] : j.items()) {
      if (k == "version") {
        if (v.is_string())
          out->version = v.get<std::string>();
        else if (v.is_number())
          out->version = v.dump();
        else
          return Bad(k, "must be a string");
      } else if (k == "log_level") {
        if (!v.is_string()) return Bad(k, "must be a string");
      } else if (k == "activation_flag") {
        if (!v.is_string() || !IsFlagName(v.get<std::string>()))
          return Bad(k, "must be an environment variable name");
        out->activation_flag = v.get<std::string>();
      } else if (k == "cdi_kind") {
        std::string why;
        if (!v.is_string()) return Bad(k, "must be a string");
        if (!CheckCdiKind(v.get<std::string>(), &why)) return Bad(k, why);
        out->cdi_kind = v.get<std::string>();
      } else if (k == "activation_policy") {
        if (!ParsePolicy(v, &out->policy)) return false;
      } else if (k == "version_lock") {
        if (!ParseVersionLock(v, &out->version_lock)) return false;
      } else if (k == "needs_nic") {
        if (!ParseNeedsNic(v, &out->needs_nic)) return false;
      } else if (k == "profiles") {
        profiles = &v;
      } else if (k == "conditions") {
        conditions = &v;
      } else if (k == "profile_dir") {
        if (!ParseProfileDirs(v, &out->profile_dirs)) return false;
      } else if (k == "profile_prefixes") {
        if (!ParsePrefixes(v, &out->profile_prefixes)) return false;
      } else if (k == "driver_feature") {
        if (!ParseFeatureList(v, &out->driver_features)) return false;
      } else if (k == "inventory") {
        inventory = &v;
      } else if (!IsCommentKey(k)) {
        return Bad(k, "unknown key");
      }
    }
    if (profiles && !ParseProfiles(*profiles, out->profile_prefixes, &out->profiles)) return false;
    if (conditions && !ParseConditions(*conditions, &out->conditions)) return false;
    if (out->activation_flag.empty()) return Bad("activation_flag", "is missing");
    if (out->driver_features.empty()) return Bad("driver_feature", "is missing");
    if (!inventory) return Bad("inventory", "is missing");
    for (const auto& g : out->version_lock.features)
      if (std::find(out->driver_features.begin(), out->driver_features.end(), g) ==
          out->driver_features.end())
        return Bad("version_lock.features", "names \"" + g + "\", which is not in driver_feature");
    for (const auto& g : out->needs_nic.features)
      if (std::find(out->driver_features.begin(), out->driver_features.end(), g) ==
          out->driver_features.end())
        return Bad("needs_nic.features", "names \"" + g + "\", which is not in driver_feature");
    if (!inventory->is_object()) return Bad("inventory", "must be an object");
    for (const auto& [k, v] : inventory->items()) {
      if (IsCommentKey(k)) continue;
      if (std::find(out->driver_features.begin(), out->driver_features.end(), k) ==
          out->driver_features.end())
        return Bad("inventory." + k, "is not listed in driver_feature");
    }
    for (const auto& name : out->driver_features) {
      auto it = inventory->find(name);
      if (it == inventory->end())
        return Bad("inventory." + name, "is missing (listed in driver_feature)");
      Feature f;
      f.name = name;
      if (!ParseFeature(*it, "inventory." + name, &f)) return false;
      for (size_t i = 0; i < f.entries.size(); ++i) {
        const std::string& c = f.entries[i].create_if;
        if (!c.empty() && out->conditions.count(c) == 0)
          return Bad("inventory." + name + "." + f.entries[i].category + "[" +
                         std::to_string(f.entries[i].index) + "].create_if",
                     "names \"" + c + "\": conditions." + c + " is not declared");
      }
      out->features.push_back(std::move(f));
    }
    return true;
  }

 private:
  bool Bad(const std::string& key, const std::string& why) {
    return Fail(err_, "invalid inventory " + file_, key.empty() ? why : "\"" + key + "\" " + why);
  }

  bool ParsePolicy(const json& v, ActivationPolicy* out) {
    const std::string key = "activation_policy";
    if (!v.is_object()) return Bad(key, "must be an object");
    for (const auto& [k, val] : v.items()) {
      std::string sub = key + "." + k;
      if (k == "sources") {
        if (!val.is_array() || val.empty())
          return Bad(sub, "must be a non-empty list of \"env\" and \"annotation\"");
        out->accept_env = out->accept_annotation = false;
        for (const auto& e : val) {
          std::string s = e.is_string() ? e.get<std::string>() : "";
          if (s == "env")
            out->accept_env = true;
          else if (s == "annotation")
            out->accept_annotation = true;
          else
            return Bad(sub, "may only hold \"env\" and \"annotation\"");
        }
      } else if (k == "require_annotations") {
        if (!val.is_object()) return Bad(sub, "must be an object of annotation: value");
        for (const auto& [name, want] : val.items()) {
          if (name.empty() || !want.is_string())
            return Bad(sub, "must map annotation names to string values");
          out->require_annotations[name] = want.get<std::string>();
        }
      } else if (k == "refuse_privileged") {
        if (!val.is_boolean()) return Bad(sub, "must be true or false");
        out->refuse_privileged = val.get<bool>();
      } else if (!IsCommentKey(k)) {
        return Bad(sub, "unknown key");
      }
    }
    return true;
  }

  // "profile_dir": a host directory, or alternatives tried in order like an
  // entry's source (Inventory::Profiles takes the first that exists).
  bool ParseProfileDirs(const json& v, std::vector<std::string>* out) {
    const std::string key = "profile_dir";
    std::vector<const json*> dirs;
    if (v.is_string())
      dirs.push_back(&v);
    else if (v.is_array() && !v.empty())
      for (const auto& d : v) dirs.push_back(&d);
    else
      return Bad(key, "must be a string or a non-empty list");
    for (const json* d : dirs) {
      std::string why;
      if (!d->is_string()) return Bad(key, "must hold strings");
      if (!CheckPathSyntax(d->get<std::string>(), true, false, &why)) return Bad(key, why);
      out->push_back(d->get<std::string>());
    }
    return true;
  }

  // A host file path: absolute, normalised, no glob (the lock reads one file).
  bool ParseHostFile(const json& v, const std::string& key, std::string* out) {
    std::string why;
    if (!v.is_string()) return Bad(key, "must be a string (an absolute host path)");
    if (!CheckPathSyntax(v.get<std::string>(), true, false, &why))
      return Bad(key, "\"" + Printable(v.get<std::string>(), 256) + "\" " + why);
    *out = v.get<std::string>();
    return true;
  }

  bool ParseVersionLock(const json& v, VersionLock* out) {
    const std::string key = "version_lock";
    if (!v.is_object()) return Bad(key, "must be an object");
    for (const auto& [k, val] : v.items()) {
      std::string sub = key + "." + k;
      if (k == "enforce") {
        if (!val.is_boolean()) return Bad(sub, "must be true or false");
        out->enforce = val.get<bool>();
      } else if (k == "module_version") {
        if (!ParseHostFile(val, sub, &out->module_version)) return false;
      } else if (k == "library") {
        if (val.is_string()) {
          out->library.emplace_back();
          if (!ParseHostFile(val, sub, &out->library.back())) return false;
        } else if (val.is_array() && !val.empty()) {
          for (const auto& alt : val) {
            out->library.emplace_back();
            if (!ParseHostFile(alt, sub, &out->library.back())) return false;
          }
        } else {
          return Bad(sub, "must be a path or a non-empty list of paths");
        }
      } else if (k == "features") {
        if (!val.is_array()) return Bad(sub, "must be a list of feature names");
        for (const auto& f : val) {
          if (!f.is_string()) return Bad(sub, "must be a list of feature names");
          out->features.push_back(f.get<std::string>());
        }
      } else if (!IsCommentKey(k)) {
        return Bad(sub, "unknown key");
      }
    }
    if (out->module_version.empty()) return Bad(key + ".module_version", "is missing");
    if (out->library.empty()) return Bad(key + ".library", "is missing");
    return true;
  }

  // "needs_nic": {"pci_vendors": [...], "features": [...]} (NicRequirement).
  bool ParseNeedsNic(const json& v, NicRequirement* out) {
    const std::string key = "needs_nic";
    if (!v.is_object()) return Bad(key, "must be an object");
    for (const auto& [k, val] : v.items()) {
      std::string sub = key + "." + k;
      if (k == "pci_vendors") {
        if (!val.is_array() || val.empty())
          return Bad(sub, "must be a non-empty list of PCI vendor IDs");
        for (const auto& e : val) {
          std::string id = e.is_string() ? e.get<std::string>() : "";
          if (!IsPciVendorId(id))
            return Bad(sub, "has \"" + Printable(e.is_string() ? id : e.dump(), 64) +
                                "\": a PCI vendor ID is 0x and four lower-case hex digits, as "
                                "sysfs shows it (\"0x1924\")");
          if (std::find(out->pci_vendors.begin(), out->pci_vendors.end(), id) !=
              out->pci_vendors.end())
            return Bad(sub, "lists \"" + id + "\" twice");
          out->pci_vendors.push_back(id);
        }
      } else if (k == "features") {
        if (!val.is_array() || val.empty())
          return Bad(sub, "must be a non-empty list of feature names");
        for (const auto& f : val) {
          if (!f.is_string()) return Bad(sub, "must be a non-empty list of feature names");
          out->features.push_back(f.get<std::string>());
        }
      } else if (!IsCommentKey(k)) {
        return Bad(sub, "unknown key");
      }
    }
    if (out->pci_vendors.empty()) return Bad(key + ".pci_vendors", "is missing");
    return true;
  }

  bool ParsePrefixes(const json& v, std::vector<std::string>* out) {
    const std::string key = "profile_prefixes";
    if (!v.is_array() || v.empty()) return Bad(key, "must be a non-empty list of prefixes");
    out->clear();
    for (const auto& e : v) {
      std::string p = e.is_string() ? e.get<std::string>() : "";
      bool ok = !p.empty() && p.size() <= 32 && !(p[0] >= '0' && p[0] <= '9');
      for (char c : p) ok = ok && ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
      // The loader's and libc's own variables are never a profile's to set.
      bool loader = p.rfind("LD_", 0) == 0 || std::string("LD_").rfind(p, 0) == 0;
      if (!ok || loader)
        return Bad(key, "has an invalid prefix \"" + p + "\" (A-Z 0-9 _, not LD_)");
      out->push_back(p);
    }
    return true;
  }

  bool ParseProfiles(const json& v, const std::vector<std::string>& prefixes,
                     std::map<std::string, EnvList>* out) {
    if (!v.is_object()) return Bad("profiles", "must be an object of name: {variable: value}");
    for (const auto& [name, vars] : v.items()) {
      if (IsCommentKey(name)) continue;
      std::string key = "profiles." + name;
      if (!IsProfileName(name))
        return Bad(key, "is not a valid profile name ([A-Za-z0-9_.-], 1 to 64, no leading '.')");
      if (!vars.is_object()) return Bad(key, "must be an object of variable: value");
      EnvList env;
      for (const auto& [var, val] : vars.items()) {
        if (!IsProfileVariable(var, prefixes))
          return Bad(key + "." + var,
                     "is not a variable profiles may set (prefixes in "
                     "profile_prefixes, then A-Z 0-9 _)");
        if (!val.is_string() || !IsProfileValue(val.get<std::string>()))
          return Bad(key + "." + var,
                     "must be a string without NUL or newline (at most 4096 bytes)");
        env.emplace_back(var, val.get<std::string>());
      }
      if (env.size() > kMaxProfileVars)
        return Bad(key, "sets more than " + std::to_string(kMaxProfileVars) + " variables");
      (*out)[name] = std::move(env);
    }
    return true;
  }

  // A host path or a non-empty list of them (absolute, no glob).
  bool ParseHostFiles(const json& v, const std::string& key, std::vector<std::string>* out) {
    if (v.is_string()) {
      out->emplace_back();
      return ParseHostFile(v, key, &out->back());
    }
    if (!v.is_array() || v.empty()) return Bad(key, "must be a path or a non-empty list of paths");
    for (const auto& e : v) {
      out->emplace_back();
      if (!ParseHostFile(e, key, &out->back())) return false;
    }
    return true;
  }

  // "conditions": {"<name>": {"exists": ..., "exists_named_in": ...,
  // "description": ...}}.
  bool ParseConditions(const json& v, std::map<std::string, HostCondition>* out) {
    if (!v.is_object()) return Bad("conditions", "must be an object of name: condition");
    for (const auto& [name, c] : v.items()) {
      if (IsCommentKey(name)) continue;
      const std::string key = "conditions." + name;
      if (!IsConditionName(name))
        return Bad(key, "is not a valid condition name ([A-Za-z0-9_.-], 1 to 64)");
      if (!c.is_object()) return Bad(key, "must be an object");
      HostCondition hc;
      hc.name = name;
      for (const auto& [k, val] : c.items()) {
        const std::string sub = key + "." + k;
        if (k == "exists") {
          if (!ParseHostFiles(val, sub, &hc.exists)) return false;
        } else if (k == "exists_named_in") {
          if (!ParseHostFiles(val, sub, &hc.exists_named_in)) return false;
        } else if (k == "description") {
          if (!val.is_string() || val.get<std::string>().size() > kMaxDescription)
            return Bad(sub,
                       "must be a string of at most " + std::to_string(kMaxDescription) + " bytes");
          hc.description = val.get<std::string>();
        } else if (!IsCommentKey(k)) {
          return Bad(sub, "unknown key");
        }
      }
      if (hc.exists.empty() && hc.exists_named_in.empty())
        return Bad(key, "needs \"exists\" or \"exists_named_in\"");
      (*out)[name] = std::move(hc);
    }
    return true;
  }

  // "groups": [{"gid_file", "mode_file", "default_mode", "optional"}].
  bool ParseGroups(const json& v, const std::string& key, std::vector<GroupEntry>* out) {
    if (!v.is_array()) return Bad(key, "must be a list");
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string at = key + "[" + std::to_string(i) + "]";
      const json& g = v[i];
      if (!g.is_object()) return Bad(at, "must be an object");
      GroupEntry e;
      for (const auto& [k, val] : g.items()) {
        const std::string sub = at + "." + k;
        if (k == "gid_file") {
          if (!ParseHostFile(val, sub, &e.gid_file)) return false;
        } else if (k == "mode_file") {
          if (!ParseHostFile(val, sub, &e.mode_file)) return false;
        } else if (k == "default_mode") {
          if (!val.is_string() || !ParseOctalMode(val.get<std::string>(), &e.default_mode))
            return Bad(sub, "must be an octal mode string (\"0666\")");
          e.has_default_mode = true;
        } else if (k == "optional") {
          if (!val.is_boolean()) return Bad(sub, "must be true or false");
          e.optional = val.get<bool>();
        } else if (!IsCommentKey(k)) {
          return Bad(sub, "unknown key");
        }
      }
      if (e.gid_file.empty()) return Bad(at + ".gid_file", "is missing");
      out->push_back(std::move(e));
    }
    return true;
  }

  bool ParseFeatureList(const json& v, std::vector<std::string>* out) {
    if (!v.is_array() || v.empty())
      return Bad("driver_feature", "must be a non-empty list of names");
    for (const auto& e : v) {
      if (!e.is_string() || !IsFeatureName(e.get<std::string>()))
        return Bad("driver_feature", "has an invalid name (letters, digits, _ . -; not all/none)");
      std::string n = e.get<std::string>();
      if (std::find(out->begin(), out->end(), n) != out->end())
        return Bad("driver_feature", "lists \"" + n + "\" twice");
      out->push_back(n);
    }
    return true;
  }

  bool ParseFeature(const json& v, const std::string& key, Feature* f) {
    if (!v.is_object()) return Bad(key, "must be an object");
    for (const auto& [k, list] : v.items()) {
      if (IsCommentKey(k)) continue;
      std::string sub = key + "." + k;
      if (k == "preload") {
        if (!ParsePreload(list, sub, &f->preload)) return false;
        continue;
      }
      if (k == "groups") {
        if (!ParseGroups(list, sub, &f->groups)) return false;
        continue;
      }
      EntryKind kind;
      if (k == "devices")
        kind = EntryKind::kDevice;
      else if (k == "directories")
        kind = EntryKind::kDirectory;
      else if (k == "binaries" || k == "libraries" || k == "miscellaneous")
        kind = EntryKind::kFile;
      else
        return Bad(sub, "unknown key");
      if (!list.is_array()) return Bad(sub, "must be a list");
      for (size_t i = 0; i < list.size(); ++i) {
        InventoryEntry e;
        e.kind = kind;
        e.category = k;
        e.index = i;
        if (!ParseEntry(list[i], sub + "[" + std::to_string(i) + "]", &e)) return false;
        f->entries.push_back(std::move(e));
      }
    }
    return true;
  }

  bool ParsePreload(const json& v, const std::string& key, std::vector<std::string>* out) {
    if (!v.is_array()) return Bad(key, "must be a list");
    for (const auto& e : v) {
      if (!e.is_string()) return Bad(key, "must hold strings");
      std::string s = e.get<std::string>();
      std::string why;
      bool ok = s.find('/') == std::string::npos
                    ? (!s.empty() && s != "." && s != ".." && !HasGlob(s))
                    : CheckTarget(s, &why);
      if (!ok) return Bad(key, "has an invalid entry \"" + s + "\"");
      out->push_back(s);
    }
    return true;
  }

  bool ParseSource(std::string s, const std::string& key, EntryKind kind,
                   std::vector<std::string>* out) {
    if (kind == EntryKind::kDevice && s.rfind("/dev/", 0) == 0) s = s.substr(5);
    std::string why;
    if (!CheckPathSyntax(s, kind != EntryKind::kDevice, true, &why))
      return Bad(key, "source \"" + s + "\" " + why);
    out->push_back(s);
    return true;
  }

  bool ParseEntry(const json& v, const std::string& key, InventoryEntry* e) {
    if (v.is_string()) return ParseSource(v.get<std::string>(), key, e->kind, &e->sources);
    if (!v.is_object()) return Bad(key, "must be a string or an object");
    for (const auto& [k, x] : v.items()) {
      if (k == "source") {
        if (x.is_string()) {
          if (!ParseSource(x.get<std::string>(), key, e->kind, &e->sources)) return false;
        } else if (x.is_array() && !x.empty()) {
          for (const auto& alt : x) {
            if (!alt.is_string()) return Bad(key + ".source", "must hold strings");
            if (!ParseSource(alt.get<std::string>(), key, e->kind, &e->sources)) return false;
          }
        } else {
          return Bad(key + ".source", "must be a string or a non-empty list");
        }
      } else if (k == "target" || k == "target_dir") {
        std::string why;
        if (!x.is_string() || !CheckTarget(x.get<std::string>(), &why))
          return Bad(key + "." + k, x.is_string() ? why : "must be a string");
        (k == "target" ? e->target : e->target_dir) = x.get<std::string>();
      } else if (k == "optional") {
        if (!x.is_boolean()) return Bad(key + ".optional", "must be true or false");
        e->optional = x.get<bool>();
      } else if (k == "create_if") {
        if (!x.is_string() || !IsConditionName(x.get<std::string>()))
          return Bad(key + ".create_if", "must be the name of a condition");
        e->create_if = x.get<std::string>();
      } else if (!IsCommentKey(k)) {
        return Bad(key + "." + k, "unknown key");
      }
    }
    if (e->sources.empty()) return Bad(key + ".source", "is missing");
    if (!e->create_if.empty() && !CheckCreateIf(*e, key)) return false;
    if (!e->target.empty() && !e->target_dir.empty())
      return Bad(key, "has both target and target_dir");
    if (!e->target.empty())
      for (const auto& s : e->sources)
        if (HasGlob(s))
          return Bad(key + ".target", "cannot be used with a glob source (use target_dir)");
    return true;
  }

  // Where "create_if" may create: one plain directory the hook can name
  // exactly, outside the kernel's own trees.
  bool CheckCreateIf(const InventoryEntry& e, const std::string& key) {
    const std::string sub = key + ".create_if";
    if (e.kind != EntryKind::kDirectory) return Bad(sub, "is only for \"directories\" entries");
    if (e.sources.size() != 1) return Bad(sub, "needs exactly one source");
    const std::string& s = e.sources[0];
    if (HasGlob(s)) return Bad(sub, "cannot be used with a glob source");
    for (const char* banned : {"/proc", "/sys", "/dev"}) {
      std::string b = banned;
      if (s == b || s.rfind(b + "/", 0) == 0)
        return Bad(sub, "cannot create under " + b + " (source \"" + s + "\")");
    }
    return true;
  }

  const std::string& file_;
  Error* err_;
};

// Best effort for a file that failed to parse: the activation flag, so the
// containers asking for it (and only those) can be failed.
std::string SalvageFlag(std::string_view bytes) {
  json j = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    auto it = j.find("activation_flag");
    if (it != j.end() && it->is_string() && IsFlagName(it->get<std::string>()))
      return it->get<std::string>();
    return "";
  }
  const std::string_view key = "\"activation_flag\"";
  size_t p = bytes.find(key);
  if (p == std::string_view::npos) return "";
  p += key.size();
  while (p < bytes.size() && (bytes[p] == ' ' || bytes[p] == '\t' || bytes[p] == '\n' ||
                              bytes[p] == '\r' || bytes[p] == ':'))
    ++p;
  if (p >= bytes.size() || bytes[p] != '"') return "";
  size_t end = bytes.find('"', p + 1);
  if (end == std::string_view::npos) return "";
  std::string flag(bytes.substr(p + 1, end - p - 1));
  return IsFlagName(flag) ? flag : "";
}

// Owned by root (or by us, for a developer running `check` or the tests on
// their own files) and writable by nobody else.
bool OwnedSafely(const struct stat& st) {
  return (st.st_uid == 0 || st.st_uid == ::geteuid()) && (st.st_mode & 022) == 0;
}

}  // namespace

ProfileSources Inventory::Profiles(const HostView& host) const {
  ProfileSources src{file, profiles, "", profile_prefixes,
                     [&host](const std::string& p) { return host.Display(p); }};
  for (const auto& d : profile_dirs) {
    std::vector<HostMatch> m;
    Error ignored;
    if (host.Match(d, &m, &ignored) && !m.empty() && m[0].type == FileType::kDirectory) {
      src.dir = d;
      return src;
    }
  }
  if (!profile_dirs.empty()) src.dir = profile_dirs.front();  // named in "unknown profile"
  return src;
}

const Feature* Inventory::FindFeature(std::string_view name) const {
  for (const auto& f : features)
    if (f.name == name) return &f;
  return nullptr;
}

bool VersionLock::Guards(const std::vector<std::string>& requested) const {
  if (!configured()) return false;
  if (features.empty()) return !requested.empty();
  for (const auto& f : requested)
    for (const auto& g : features)
      if (f == g) return true;
  return false;
}

bool NicRequirement::Needs(const std::vector<std::string>& requested) const {
  if (!configured()) return false;
  if (features.empty()) return true;
  for (const auto& r : requested)
    if (std::find(features.begin(), features.end(), r) != features.end()) return true;
  return false;
}

bool ParseInventory(std::string_view bytes, const std::string& file, Inventory* out, Error* err) {
  *out = Inventory{};
  json j;
  std::string why;
  if (!ParseJsonText(bytes, &j, &why))
    return Fail(err, "invalid inventory " + file, "not valid JSON (" + why + ")");
  try {
    InventoryParser p(file, err);
    return p.Parse(j, out);
  } catch (const json::exception& e) {
    return Fail(err, "invalid inventory " + file, e.what());
  }
}

bool ReadInventoryDir(const std::string& dir, std::vector<InventoryFile>* out, Error* err,
                      const ConfigDirVouch& vouch) {
  out->clear();
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dfd.valid()) {
    if (errno == ENOENT) return true;
    return Fail(err, "cannot open config directory", dir, errno);
  }
  // The hook runs as root on what these files say: a directory or file that
  // someone else could write is refused. The files are still read, so the
  // containers that ask for such an inventory (and only those) fail with
  // the reason; everyone else is untouched.
  Error dir_insecure;
  struct stat dst;
  if (::fstat(dfd.get(), &dst) != 0) return Fail(err, "cannot stat config directory", dir, errno);
  if (!OwnedSafely(dst)) {
    // Lazily: a directory that meets the rule never reaches the vouch.
    std::string why_not;
    bool owner_ok = dst.st_uid == 0 || dst.st_uid == ::geteuid();
    if (vouch && owner_ok) why_not = vouch(dfd.get());
    if (!vouch || !owner_ok || !why_not.empty()) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(dst.st_mode & 07777));
      Fail(&dir_insecure,
           "refusing inventories: the config directory is writable by others (owner " +
               std::to_string(dst.st_uid) + ", mode " + mode +
               "; it must be owned by root and not group- or world-writable" +
               (why_not.empty() ? "" : ", or be a kubelet configMap volume, and " + why_not) + ")",
           dir);
    }
  }
  std::vector<std::string> all, names;
  if (!ListDirectory(dfd.get(), dir, &all, err)) return false;
  for (auto& n : all)
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0 && n[0] != '.')
      names.push_back(std::move(n));
  std::sort(names.begin(), names.end());

  for (const auto& n : names) {
    InventoryFile f;
    f.path = dir + (dir.empty() || dir.back() == '/' ? "" : "/") + n;
    // A symlink is followed, as ever; only a regular file is opened (files.h).
    UniqueFd fd;
    struct stat st;
    if (!OpenRegularFileAt(dfd.get(), n, LastSymlink::kFollow, &fd, &f.read_error, &st)) {
      f.read_error.path = f.path;  // "not a regular file (a FIFO): <dir>/x.json"
    } else {
      ReadAllFd(fd.get(), kMaxInventoryBytes, f.path, &f.bytes, &f.read_error);
      if (f.read_error.empty() && !dir_insecure.empty()) f.read_error = dir_insecure;
      if (f.read_error.empty() && !OwnedSafely(st))
        Fail(&f.read_error,
             "refusing inventory: writable by others (it must be owned by root "
             "and not group- or world-writable)",
             f.path);
    }
    out->push_back(std::move(f));
  }
  return true;
}

bool QuickActivationFlags(std::string_view bytes, std::vector<std::string>* flags) {
  flags->clear();
  if (bytes.find('\\') != std::string_view::npos) return false;
  // Blanks and ':' between key and value: one ':' in valid JSON, but
  // SalvageFlag takes a broken file's flag after none or several, and a
  // container asking for that flag must reach the parse (and fail).
  auto sep = [&](size_t p) {
    while (p < bytes.size() && (bytes[p] == ' ' || bytes[p] == '\t' || bytes[p] == '\n' ||
                                bytes[p] == '\r' || bytes[p] == ':'))
      ++p;
    return p;
  };
  const std::string_view key = "\"activation_flag\"";
  for (size_t p = bytes.find(key); p != std::string_view::npos; p = bytes.find(key, p + 1)) {
    size_t q = sep(p + key.size());
    // A value, not a key, or not a string (the parser rejects it).
    if (q >= bytes.size() || bytes[q] != '"') continue;
    size_t end = bytes.find('"', q + 1);
    if (end == std::string_view::npos) continue;
    flags->emplace_back(bytes.substr(q + 1, end - q - 1));
  }
  return true;
}

void ParseInventoryFiles(const std::vector<InventoryFile>& files, InventorySet* out) {
  *out = InventorySet{};
  for (const auto& f : files) {
    Error e = f.read_error;
    if (e.empty()) {
      Inventory inv;
      if (ParseInventory(f.bytes, f.path, &inv, &e)) {
        out->inventories.push_back(std::move(inv));
        continue;
      }
    }
    out->broken.push_back(BrokenInventory{f.path, SalvageFlag(f.bytes), e});
  }
}

bool LoadInventoryDir(const std::string& dir, InventorySet* out, Error* err,
                      const ConfigDirVouch& vouch) {
  std::vector<InventoryFile> files;
  if (!ReadInventoryDir(dir, &files, err, vouch)) return false;
  ParseInventoryFiles(files, out);
  return true;
}

}  // namespace ocid
