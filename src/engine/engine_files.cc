#include "engine_files.h"

#include <nlohmann/json.hpp>

#include "containerd_config.h"
#include "json_text.h"

namespace ocid {

bool CheckRuntimeName(const std::string& name, std::string* why) {
  if (name.empty() || name.size() > 64) return *why = "must have 1 to 64 characters", false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return *why = "may hold only letters, digits, '-' and '_'", false;
  }
  return true;
}

bool ParseHooksEntry(std::string_view bytes, const std::string& file, HooksEntryFacts* out,
                     Error* err) {
  *out = HooksEntryFacts{};
  nlohmann::json j;
  std::string why;
  if (!ParseJsonText(bytes, &j, &why))
    return Fail(err, "hooks.d entry is not valid JSON (" + why + ")", file);
  if (!j.is_object() || !j.contains("hook") || !j["hook"].is_object() ||
      !j["hook"].contains("path") || !j["hook"]["path"].is_string())
    return Fail(err, "hooks.d entry has no string hook.path", file);
  const auto& h = j["hook"];
  out->hook_path = h["path"].get<std::string>();
  if (h.contains("args") && h["args"].is_array())
    for (const auto& a : h["args"])
      if (a.is_string()) out->args.push_back(a.get<std::string>());
  if (j.contains("stages") && j["stages"].is_array())
    for (const auto& s : j["stages"])
      if (s.is_string()) out->stages.push_back(s.get<std::string>());
  return true;
}

std::string CrioDropIn(const std::string& name, const std::string& shim_path) {
  std::string dirs;
  for (const char* d : kHooksDirs) dirs += (dirs.empty() ? "" : ", ") + TomlString(d);
  std::string s =
      "# Written by `oci-decorator setup crio`: CRI-O runs oci-decorator's hooks.d\n"
      "# entries (installed in the first directory) for every container; the hook\n"
      "# acts only for containers that ask (OCI_ONLOAD=..., or the pod annotation\n"
      "# oci-decorator/OCI_ONLOAD). hooks_dir replaces CRI-O's default list, so\n"
      "# both default directories are named.\n"
      "[crio.runtime]\n"
      "hooks_dir = [" +
      dirs + "]\n";
  if (!shim_path.empty())
    s += "\n"
         "# The runtime shim, for pods with a RuntimeClass whose handler is " +
         name +
         ".\n"
         "[crio.runtime.runtimes." +
         name +
         "]\n"
         "runtime_path = " +
         TomlString(shim_path) +
         "\n"
         "runtime_type = \"oci\"\n";
  return s;
}

}  // namespace ocid
