#include "oci_state.h"

#include <nlohmann/json.hpp>

#include <cstdint>

#include "json_text.h"

namespace ocid {
namespace {

using nlohmann::json;

bool GetString(const json& j, const char* key, bool required, std::string* out, Error* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return Fail(err, "OCI state: missing \"" + std::string(key) + "\"");
    return true;
  }
  if (!it->is_string()) return Fail(err, "OCI state: \"" + std::string(key) + "\" is not a string");
  *out = it->get<std::string>();
  return true;
}

bool GetAnnotations(const json& j, std::map<std::string, std::string>* out,
                    const std::string& where, Error* err) {
  auto it = j.find("annotations");
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_object()) return Fail(err, where + ": \"annotations\" is not an object");
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) return Fail(err, where + ": annotation \"" + k + "\" is not a string");
    (*out)[k] = v.get<std::string>();
  }
  return true;
}

}  // namespace

bool ParseOciState(std::string_view bytes, OciState* out, Error* err) {
  FdInput in(bytes);
  return ParseOciState(&in, out, err);
}

bool ParseOciState(FdInput* in, OciState* out, Error* err, std::string* bundle_seen) {
  // Keeps the fields below and the annotations (all while the input is
  // within kStateAnnotationBytes, then only requests); the rest of a state
  // is never built, so its size does not matter.
  std::string top;  // the current key of the top-level object
  bool pruned = false;
  JsonKeep keep = [&](int depth, JsonEvent event, json& parsed) {
    if (event == JsonEvent::kKey && depth == 1) {
      top = parsed.get<std::string>();
      return top == "ociVersion" || top == "id" || top == "status" || top == "pid" ||
             top == "bundle" || top == "root" || top == "annotations";
    }
    if (event == JsonEvent::kKey && depth == 2 && top == "annotations") {
      if (in->consumed() <= kStateAnnotationBytes ||
          parsed.get_ref<const std::string&>().rfind("oci-decorator/", 0) == 0)
        return true;
      pruned = true;
      return false;
    }
    if (event == JsonEvent::kValue && depth == 1 && top == "bundle" && bundle_seen &&
        parsed.is_string())
      *bundle_seen = parsed.get<std::string>();
    return true;
  };
  json j;
  std::string why;
  if (!ParseJsonStream(in, &j, &why, keep))
    return Fail(err, "OCI state on stdin is not valid JSON (" + why + ")");
  if (!j.is_object()) return Fail(err, "OCI state on stdin is not a JSON object");
  *out = OciState{};
  out->annotations_pruned = pruned;
  if (!GetString(j, "ociVersion", false, &out->oci_version, err) ||
      !GetString(j, "id", true, &out->id, err) ||
      !GetString(j, "status", false, &out->status, err) ||
      !GetString(j, "bundle", true, &out->bundle, err) ||
      !GetString(j, "root", false, &out->root, err))
    return false;
  if (out->id.empty()) return Fail(err, "OCI state: \"id\" is empty");
  if (out->bundle.empty() || out->bundle[0] != '/')
    return Fail(err, "OCI state: \"bundle\" is not an absolute path", out->bundle);
  // Paths go to the kernel as C strings: a NUL would cut them short, so the
  // file opened would not be the one named.
  if (out->bundle.find('\0') != std::string::npos)
    return Fail(err, "OCI state: \"bundle\" contains a NUL");
  if (out->root.find('\0') != std::string::npos)
    return Fail(err, "OCI state: \"root\" contains a NUL");
  auto pid = j.find("pid");
  if (pid != j.end() && !pid->is_null()) {
    if (!pid->is_number_integer())
      return Fail(err, std::string("OCI state: \"pid\" is not an integer (it is ") +
                           (pid->is_array() || pid->is_object() ? "an " : "a ") + pid->type_name() +
                           ")");
    // 0 means "no process": crun's poststop state carries "pid": 0.
    // Unsigned first: above INT64_MAX would read as negative.
    if (pid->is_number_unsigned() ? pid->get<uint64_t>() > (1u << 22)
                                  : (pid->get<int64_t>() < 0 || pid->get<int64_t>() > (1 << 22)))
      return Fail(err, "OCI state: \"pid\" is out of range (0.." + std::to_string(1 << 22) + ")",
                  pid->dump());
    out->pid = static_cast<int>(pid->get<int64_t>());
  }
  return GetAnnotations(j, &out->annotations, "OCI state", err);
}

bool IsSafeContainerId(std::string_view id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-' || c == '+';
    if (!ok) return false;
  }
  return true;
}

}  // namespace ocid
