#include "bundle_config.h"

#include <nlohmann/json.hpp>

namespace ocid {
namespace {

using nlohmann::json;

const json* Member(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

bool ParseBundleConfig(std::string_view bytes, const std::string& where,
                       BundleConfig* out, Error* err) {
  json j = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded()) return Fail(err, "not valid JSON", where);
  if (!j.is_object()) return Fail(err, "not a JSON object", where);
  *out = BundleConfig{};

  const json* root = Member(j, "root");
  if (!root || !root->is_object()) return Fail(err, "missing \"root\" object", where);
  const json* path = Member(*root, "path");
  if (!path || !path->is_string() || path->get_ref<const std::string&>().empty())
    return Fail(err, "\"root.path\" is missing or not a string", where);
  out->root_path = path->get<std::string>();
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
  }

  if (const json* ann = Member(j, "annotations")) {
    if (!ann->is_object()) return Fail(err, "\"annotations\" is not an object", where);
    for (const auto& [k, v] : ann->items()) {
      if (!v.is_string())
        return Fail(err, "annotation \"" + k + "\" is not a string", where);
      out->annotations[k] = v.get<std::string>();
    }
  }
  return true;
}

std::string RootfsPath(const std::string& bundle, const std::string& state_root,
                       const std::string& root_path) {
  if (!state_root.empty()) return state_root;
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
