#include "bundle_config.h"

#include <nlohmann/json.hpp>

#include <cstdint>

#include "json_text.h"
#include "path_text.h"
#include "spec_keys.h"

namespace ocid {
namespace {

using nlohmann::json;

const json* Member(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

// An integer member: *present=false when absent or null. Values beyond
// int64 are refused like any other non-integer.
bool IntMember(const json& j, const char* key, const std::string& name, bool* present, int64_t* out,
               const std::string& where, Error* err) {
  const json* v = Member(j, key);
  *present = v != nullptr;
  if (!v) return true;
  if (v->is_number_unsigned() && v->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
    *out = static_cast<int64_t>(v->get<uint64_t>());
    return true;
  }
  if (v->is_number_integer() && !v->is_number_unsigned()) {
    *out = v->get<int64_t>();
    return true;
  }
  return Fail(err, "\"" + name + "\" is not an integer", where);
}

// linux.devices: the nodes the runtime creates. Only their identity matters
// here (runc drops a default device rule whose path is listed).
bool ParseLinuxDevices(const json& list, const std::string& where, std::vector<LinuxDevice>* out,
                       Error* err) {
  if (!list.is_array()) return Fail(err, "\"linux.devices\" is not an array", where);
  for (size_t i = 0; i < list.size(); ++i) {
    const json& d = list[i];
    std::string key = "linux.devices[" + std::to_string(i) + "]";
    if (!d.is_object()) return Fail(err, "\"" + key + "\" is not an object", where);
    LinuxDevice dev;
    const json* path = Member(d, "path");
    if (!path || !path->is_string() || path->get_ref<const std::string&>().empty())
      return Fail(err, "\"" + key + ".path\" is missing or not a string", where);
    dev.path = path->get<std::string>();
    const json* type = Member(d, "type");
    std::string t = type && type->is_string() ? type->get<std::string>() : "";
    if (t != "c" && t != "b" && t != "u" && t != "p")
      return Fail(err, "\"" + key + ".type\" is missing or not one of c, b, u, p", where);
    dev.type = t[0];
    bool has_major = false, has_minor = false;
    if (!IntMember(d, "major", key + ".major", &has_major, &dev.major, where, err) ||
        !IntMember(d, "minor", key + ".minor", &has_minor, &dev.minor, where, err))
      return false;
    if (dev.type != 'p' && (!has_major || !has_minor))
      return Fail(err, "\"" + key + "\" has no \"major\" or \"minor\"", where);
    out->push_back(std::move(dev));
  }
  return true;
}

// One linux.resources.devices entry, read as runc 1.1 reads it: a missing
// type is "a", a missing (or negative) major or minor is the wildcard.
bool ParseDeviceCgroupRule(const json& d, const std::string& key, const std::string& where,
                           DeviceRule* out, Error* err) {
  if (!d.is_object()) return Fail(err, "\"" + key + "\" is not an object", where);
  const json* allow = Member(d, "allow");
  if (!allow || !allow->is_boolean())
    return Fail(err, "\"" + key + ".allow\" is missing or not a boolean", where);
  out->allow = allow->get<bool>();
  out->type = 'a';
  if (const json* type = Member(d, "type")) {
    std::string t = type->is_string() ? type->get<std::string>() : "";
    if (t != "a" && t != "b" && t != "c")
      return Fail(err, "\"" + key + ".type\" is not one of a, b, c", where);
    out->type = t[0];
  }
  const char* names[] = {"major", "minor"};
  int64_t* fields[] = {&out->major, &out->minor};
  for (int k = 0; k < 2; ++k) {
    bool present = false;
    int64_t v = -1;
    if (!IntMember(d, names[k], key + "." + names[k], &present, &v, where, err)) return false;
    if (v > static_cast<int64_t>(UINT32_MAX))
      return Fail(err, "\"" + key + "." + names[k] + "\" is out of range", where);
    *fields[k] = v < 0 ? -1 : v;
  }
  out->access = "rwm";
  if (const json* access = Member(d, "access")) {
    std::string a = access->is_string() ? access->get<std::string>() : "";
    bool r = false, w = false, m = false, ok = !a.empty();
    for (char c : a) {
      if (c == 'r')
        r = true;
      else if (c == 'w')
        w = true;
      else if (c == 'm')
        m = true;
      else
        ok = false;
    }
    if (!ok) return Fail(err, "\"" + key + ".access\" is not a combination of r, w and m", where);
    out->access = std::string(r ? "r" : "") + (w ? "w" : "") + (m ? "m" : "");
  }
  return true;
}

// process.capabilities: only which sets hold CAP_SYS_ADMIN is kept.
bool ParseCapabilities(const json& caps, const std::string& where, BundleConfig* out, Error* err) {
  if (!caps.is_object()) return Fail(err, "\"process.capabilities\" is not an object", where);
  for (const auto& [set, list] : caps.items()) {
    if (!list.is_array())
      return Fail(err, "\"process.capabilities." + set + "\" is not an array", where);
    bool sys_admin = false;
    for (const auto& c : list) {
      if (!c.is_string())
        return Fail(err, "\"process.capabilities." + set + "\" has an entry that is not a string",
                    where);
      sys_admin = sys_admin || c.get_ref<const std::string&>() == "CAP_SYS_ADMIN";
    }
    if (sys_admin) out->sys_admin_sets.push_back(set);
  }
  return true;
}

// A non-negative integer below 2^32, as runc reads uid, gid and mapping
// fields (uint32).
bool Uint32Value(const json& v, const std::string& name, const std::string& where, uint32_t* out,
                 Error* err) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
    return Fail(err, "\"" + name + "\" is not an integer from 0 to 4294967295", where);
  *out = static_cast<uint32_t>(v.get<uint64_t>());
  return true;
}

bool ParseUser(const json& user, const std::string& where, BundleConfig* out, Error* err) {
  if (!user.is_object()) return Fail(err, "\"process.user\" is not an object", where);
  if (const json* uid = Member(user, "uid"))
    if (!Uint32Value(*uid, "process.user.uid", where, &out->uid, err)) return false;
  if (const json* gid = Member(user, "gid"))
    if (!Uint32Value(*gid, "process.user.gid", where, &out->gid, err)) return false;
  if (const json* extra = Member(user, "additionalGids")) {
    if (!extra->is_array())
      return Fail(err, "\"process.user.additionalGids\" is not an array", where);
    for (const auto& g : *extra) {
      uint32_t v = 0;
      if (!Uint32Value(g, "process.user.additionalGids[]", where, &v, err)) return false;
      out->additional_gids.push_back(v);
    }
  }
  return true;
}

bool ParseNamespaces(const json& list, const std::string& where, BundleConfig* out, Error* err) {
  if (!list.is_array()) return Fail(err, "\"linux.namespaces\" is not an array", where);
  for (size_t i = 0; i < list.size(); ++i) {
    std::string key = "linux.namespaces[" + std::to_string(i) + "]";
    const json& n = list[i];
    if (!n.is_object()) return Fail(err, "\"" + key + "\" is not an object", where);
    const json* type = Member(n, "type");
    if (!type || !type->is_string() || type->get_ref<const std::string&>().empty())
      return Fail(err, "\"" + key + ".type\" is missing or not a string", where);
    NamespaceEntry e;
    e.type = type->get<std::string>();
    if (const json* path = Member(n, "path")) {
      if (!path->is_string()) return Fail(err, "\"" + key + ".path\" is not a string", where);
      e.path = path->get<std::string>();
      if (e.path.find('\0') != std::string::npos)
        return Fail(err, "\"" + key + ".path\" contains a NUL", where);
    }
    out->namespaces.push_back(std::move(e));
  }
  return true;
}

bool ParseIdMappings(const json& list, const std::string& name, const std::string& where,
                     std::vector<IdMapping>* out, Error* err) {
  if (!list.is_array()) return Fail(err, "\"" + name + "\" is not an array", where);
  for (size_t i = 0; i < list.size(); ++i) {
    std::string key = name + "[" + std::to_string(i) + "]";
    const json& m = list[i];
    if (!m.is_object()) return Fail(err, "\"" + key + "\" is not an object", where);
    IdMapping e;
    const char* fields[] = {"containerID", "hostID", "size"};
    uint32_t* values[] = {&e.container_id, &e.host_id, &e.size};
    for (int k = 0; k < 3; ++k) {
      const json* v = Member(m, fields[k]);
      if (!v) return Fail(err, "\"" + key + "." + fields[k] + "\" is missing", where);
      if (!Uint32Value(*v, key + "." + fields[k], where, values[k], err)) return false;
    }
    out->push_back(e);
  }
  return true;
}

bool ParseLinux(const json& lx, const std::string& where, BundleConfig* out, Error* err) {
  if (!lx.is_object()) return Fail(err, "\"linux\" is not an object", where);
  if (const json* ns = Member(lx, "namespaces"))
    if (!ParseNamespaces(*ns, where, out, err)) return false;
  if (const json* m = Member(lx, "uidMappings"))
    if (!ParseIdMappings(*m, "linux.uidMappings", where, &out->uid_mappings, err)) return false;
  if (const json* m = Member(lx, "gidMappings"))
    if (!ParseIdMappings(*m, "linux.gidMappings", where, &out->gid_mappings, err)) return false;
  if (const json* devices = Member(lx, "devices"))
    if (!ParseLinuxDevices(*devices, where, &out->devices, err)) return false;
  const json* resources = Member(lx, "resources");
  if (!resources) return true;
  if (!resources->is_object()) return Fail(err, "\"linux.resources\" is not an object", where);
  const json* rules = Member(*resources, "devices");
  if (!rules) return true;
  if (!rules->is_array()) return Fail(err, "\"linux.resources.devices\" is not an array", where);
  for (size_t i = 0; i < rules->size(); ++i) {
    DeviceRule r;
    if (!ParseDeviceCgroupRule((*rules)[i], "linux.resources.devices[" + std::to_string(i) + "]",
                               where, &r, err))
      return false;
    out->device_rules.push_back(r);
  }
  return true;
}

}  // namespace

bool ParseBundleConfig(std::string_view bytes, const std::string& where, BundleConfig* out,
                       Error* err, const ConfigInterest* interest) {
  // Only the keys of spec_keys.h's schema are kept: config.json is mostly
  // mounts and seccomp, which the hook never reads, and building them would
  // double the parse time. The discarded parts are still fully checked as
  // JSON, and for keys runtimes would read differently.
  SpecKeyReport report;
  JsonKeep keep = SpecKeyFilter(interest, &report);
  json j;
  std::string why;
  if (!ParseJsonText(bytes, &j, &why, keep))
    return Fail(err, "not valid JSON (" + why + ")", where);
  if (!j.is_object()) return Fail(err, "not a JSON object", where);
  *out = BundleConfig{};
  out->ambiguity = std::move(report.ambiguity);
  out->env_anywhere = std::move(report.env_anywhere);
  out->annotations_anywhere = std::move(report.annotations_anywhere);

  const json* root = Member(j, "root");
  if (!root || !root->is_object()) return Fail(err, "missing \"root\" object", where);
  const json* path = Member(*root, "path");
  if (!path || !path->is_string() || path->get_ref<const std::string&>().empty())
    return Fail(err, "\"root.path\" is missing or not a string", where);
  out->root_path = path->get<std::string>();
  // A NUL would cut the path short at the kernel: another directory.
  if (out->root_path.find('\0') != std::string::npos)
    return Fail(err, "\"root.path\" contains a NUL", where);
  if (const json* ro = Member(*root, "readonly")) {
    if (!ro->is_boolean()) return Fail(err, "\"root.readonly\" is not a boolean", where);
    out->root_readonly = ro->get<bool>();
  }

  if (const json* process = Member(j, "process")) {
    if (!process->is_object()) return Fail(err, "\"process\" is not an object", where);
    if (const json* env = Member(*process, "env")) {
      if (!env->is_array()) return Fail(err, "\"process.env\" is not an array", where);
      out->env.reserve(env->size());
      for (const auto& e : *env) {
        if (!e.is_string())
          return Fail(err, "\"process.env\" has an entry that is not a string", where);
        out->env.push_back(e.get<std::string>());
      }
    }
    if (const json* caps = Member(*process, "capabilities"))
      if (!ParseCapabilities(*caps, where, out, err)) return false;
    if (const json* user = Member(*process, "user"))
      if (!ParseUser(*user, where, out, err)) return false;
  }

  if (const json* ann = Member(j, "annotations")) {
    if (!ann->is_object()) return Fail(err, "\"annotations\" is not an object", where);
    for (const auto& [k, v] : ann->items()) {
      if (!v.is_string()) return Fail(err, "annotation \"" + k + "\" is not a string", where);
      out->annotations[k] = v.get<std::string>();
    }
  }

  if (const json* lx = Member(j, "linux"))
    if (!ParseLinux(*lx, where, out, err)) return false;
  return true;
}

std::string RootfsPath(const std::string& bundle, const std::string& state_root,
                       const std::string& root_path_in) {
  // crun's state carries root.path as written; it wins over config.json.
  const std::string& root_path = state_root.empty() ? root_path_in : state_root;
  if (!root_path.empty() && root_path[0] == '/') return root_path;
  std::string base = WithoutTrailingSlashes(bundle);
  std::string rel = root_path;
  while (rel.rfind("./", 0) == 0) rel.erase(0, 2);
  if (rel.empty() || rel == ".") return base;
  return base == "/" ? "/" + rel : base + "/" + rel;
}

const NamespaceEntry* BundleConfig::Namespace(std::string_view type) const {
  // runc refuses a type listed twice; the last one is what crun keeps.
  const NamespaceEntry* found = nullptr;
  for (const auto& n : namespaces)
    if (n.type == type) found = &n;
  return found;
}

bool MapToHost(const std::vector<IdMapping>& mappings, uint32_t id, uint32_t* host) {
  if (mappings.empty()) {
    *host = id;
    return true;
  }
  for (const auto& m : mappings) {
    if (id >= m.container_id && id - m.container_id < m.size) {
      *host = m.host_id + (id - m.container_id);
      return true;
    }
  }
  return false;
}

bool MapToContainer(const std::vector<IdMapping>& mappings, uint32_t host, uint32_t* id) {
  if (mappings.empty()) {
    *id = host;
    return true;
  }
  for (const auto& m : mappings) {
    if (host >= m.host_id && host - m.host_id < m.size) {
      *id = m.container_id + (host - m.host_id);
      return true;
    }
  }
  return false;
}

bool EnvEntryIs(std::string_view entry, std::string_view name, std::string_view* value) {
  if (entry.size() < name.size() || entry.substr(0, name.size()) != name) return false;
  if (entry.size() == name.size()) {  // "NAME" without '=': present, empty
    if (value) *value = std::string_view();
    return true;
  }
  if (entry[name.size()] != '=') return false;
  if (value) *value = entry.substr(name.size() + 1);
  return true;
}

bool LookupEnv(const std::vector<std::string>& env, std::string_view name, std::string* value) {
  bool found = false;
  for (const auto& e : env) {
    std::string_view v;
    if (EnvEntryIs(e, name, &v)) {
      value->assign(v);
      found = true;
    }
  }
  return found;
}

}  // namespace ocid
