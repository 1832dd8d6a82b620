#include "bundle_config.h"

#include <nlohmann/json.hpp>

#include <cstdint>

#include "json_text.h"

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
bool IntMember(const json& j, const char* key, const std::string& name, bool* present,
               int64_t* out, const std::string& where, Error* err) {
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
bool ParseLinuxDevices(const json& list, const std::string& where,
                       std::vector<LinuxDevice>* out, Error* err) {
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
      if (c == 'r') r = true;
      else if (c == 'w') w = true;
      else if (c == 'm') m = true;
      else ok = false;
    }
    if (!ok)
      return Fail(err, "\"" + key + ".access\" is not a combination of r, w and m", where);
    out->access = std::string(r ? "r" : "") + (w ? "w" : "") + (m ? "m" : "");
  }
  return true;
}

// process.capabilities: only which sets hold CAP_SYS_ADMIN is kept.
bool ParseCapabilities(const json& caps, const std::string& where, BundleConfig* out,
                       Error* err) {
  if (!caps.is_object())
    return Fail(err, "\"process.capabilities\" is not an object", where);
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

bool ParseLinux(const json& lx, const std::string& where, BundleConfig* out, Error* err) {
  if (!lx.is_object()) return Fail(err, "\"linux\" is not an object", where);
  if (const json* devices = Member(lx, "devices"))
    if (!ParseLinuxDevices(*devices, where, &out->devices, err)) return false;
  const json* resources = Member(lx, "resources");
  if (!resources) return true;
  if (!resources->is_object())
    return Fail(err, "\"linux.resources\" is not an object", where);
  const json* rules = Member(*resources, "devices");
  if (!rules) return true;
  if (!rules->is_array())
    return Fail(err, "\"linux.resources.devices\" is not an array", where);
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

bool ParseBundleConfig(std::string_view bytes, const std::string& where,
                       BundleConfig* out, Error* err) {
  // Only root, process.{env,capabilities}, annotations and
  // linux.{devices,resources.devices} are kept: config.json is mostly mounts
  // and seccomp, which the hook never reads, and building them would double
  // the parse time.
  // The discarded parts are still fully checked as JSON.
  std::vector<std::string> keys;  // the key being parsed at each depth
  json::parser_callback_t keep = [&keys](int depth, json::parse_event_t event, json& parsed) {
    if (event != json::parse_event_t::key) return true;
    size_t d = static_cast<size_t>(depth);
    if (keys.size() < d) keys.resize(d);
    keys[d - 1] = parsed.get<std::string>();
    const std::string& k = keys[d - 1];
    if (d == 1) return k == "root" || k == "process" || k == "annotations" || k == "linux";
    if (d == 2 && keys[0] == "process") return k == "env" || k == "capabilities";
    if (d == 2 && keys[0] == "linux") return k == "devices" || k == "resources";
    if (d == 3 && keys[0] == "linux" && keys[1] == "resources") return k == "devices";
    return true;
  };
  json j;
  std::string why;
  if (!ParseJsonText(bytes, &j, &why, keep)) return Fail(err, "not valid JSON (" + why + ")", where);
  if (!j.is_object()) return Fail(err, "not a JSON object", where);
  *out = BundleConfig{};

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
  }

  if (const json* ann = Member(j, "annotations")) {
    if (!ann->is_object()) return Fail(err, "\"annotations\" is not an object", where);
    for (const auto& [k, v] : ann->items()) {
      if (!v.is_string())
        return Fail(err, "annotation \"" + k + "\" is not a string", where);
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
  std::string base = bundle;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string rel = root_path;
  while (rel.rfind("./", 0) == 0) rel.erase(0, 2);
  if (rel.empty() || rel == ".") return base;
  return base == "/" ? "/" + rel : base + "/" + rel;
}

bool LookupEnv(const std::vector<std::string>& env, std::string_view name,
               std::string* value) {
  bool found = false;
  for (const auto& e : env) {
    if (e.size() > name.size() && e[name.size()] == '=' &&
        std::string_view(e).substr(0, name.size()) == name) {
      *value = e.substr(name.size() + 1);
      found = true;
    } else if (e == name) {  // "NAME" without '=': present, empty
      value->clear();
      found = true;
    }
  }
  return found;
}

}  // namespace ocid
