#include "oci_state.h"

#include <nlohmann/json.hpp>

namespace ocid {
namespace {

using nlohmann::json;

bool GetString(const json& j, const char* key, bool required, std::string* out,
               Error* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return Fail(err, "OCI state: missing \"" + std::string(key) + "\"");
    return true;
  }
  if (!it->is_string())
    return Fail(err, "OCI state: \"" + std::string(key) + "\" is not a string");
  *out = it->get<std::string>();
  return true;
}

bool GetAnnotations(const json& j, std::map<std::string, std::string>* out,
                    const std::string& where, Error* err) {
  auto it = j.find("annotations");
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_object())
    return Fail(err, where + ": \"annotations\" is not an object");
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string())
      return Fail(err, where + ": annotation \"" + k + "\" is not a string");
    (*out)[k] = v.get<std::string>();
  }
  return true;
}

}  // namespace

bool ParseOciState(std::string_view bytes, OciState* out, Error* err) {
  json j = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded()) return Fail(err, "OCI state on stdin is not valid JSON");
  if (!j.is_object()) return Fail(err, "OCI state on stdin is not a JSON object");
  *out = OciState{};
  if (!GetString(j, "ociVersion", false, &out->oci_version, err) ||
      !GetString(j, "id", true, &out->id, err) ||
      !GetString(j, "status", false, &out->status, err) ||
      !GetString(j, "bundle", true, &out->bundle, err) ||
      !GetString(j, "root", false, &out->root, err))
    return false;
  if (out->id.empty()) return Fail(err, "OCI state: \"id\" is empty");
  if (out->bundle.empty() || out->bundle[0] != '/')
    return Fail(err, "OCI state: \"bundle\" is not an absolute path", out->bundle);
  auto pid = j.find("pid");
  if (pid != j.end() && !pid->is_null()) {
    if (!pid->is_number_integer())
      return Fail(err, "OCI state: \"pid\" is not an integer");
    // 0 means "no process": crun's poststop state carries "pid": 0.
    long long p = pid->get<long long>();
    if (p < 0 || p > (1 << 22))
      return Fail(err, "OCI state: \"pid\" is out of range: " + std::to_string(p));
    out->pid = static_cast<int>(p);
  }
  return GetAnnotations(j, &out->annotations, "OCI state", err);
}

bool IsSafeContainerId(std::string_view id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' ||
              c == '+';
    if (!ok) return false;
  }
  return true;
}

}  // namespace ocid
