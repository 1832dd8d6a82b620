#include "activation.h"

#include <algorithm>
#include <cctype>

namespace ocid {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string ValidList(const Inventory& inv) {
  std::string s = "all";
  for (const auto& f : inv.driver_features) s += ", " + f;
  return s;
}

// Adds `add` to `features` keeping driver_feature order and uniqueness.
void Merge(const Inventory& inv, const std::vector<std::string>& add,
           std::vector<std::string>* features) {
  std::vector<std::string> merged;
  for (const auto& f : inv.driver_features)
    if (std::count(add.begin(), add.end(), f) || std::count(features->begin(), features->end(), f))
      merged.push_back(f);
  *features = std::move(merged);
}

}  // namespace

bool IsOffValue(std::string_view value) {
  std::string l = Lower(Trim(value));
  return l.empty() || l == "none" || l == "void" || l == "0" || l == "false";
}

bool ParseActivationValue(const Inventory& inv, std::string_view value,
                          std::vector<std::string>* features, Error* err) {
  features->clear();
  std::string v = Trim(value);
  if (IsOffValue(v)) return true;
  std::vector<std::string> wanted;
  size_t start = 0;
  while (start <= v.size()) {
    size_t end = v.find(',', start);
    if (end == std::string::npos) end = v.size();
    std::string item = Trim(std::string_view(v).substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    if (Lower(item) == "all") {
      wanted = inv.driver_features;
      continue;
    }
    if (std::find(inv.driver_features.begin(), inv.driver_features.end(), item) ==
        inv.driver_features.end())
      return Fail(err, "unknown feature \"" + item + "\" requested by " + inv.activation_flag +
                           " (valid: " + ValidList(inv) + "; off: none) in " + inv.file);
    wanted.push_back(item);
  }
  Merge(inv, wanted, features);
  return true;
}

std::vector<NamedSetting> NamedValue(std::string_view name, const std::vector<std::string>& env,
                                     const std::map<std::string, std::string>& annotations) {
  std::vector<NamedSetting> out;
  std::string value;
  if (LookupEnv(env, name, &value))
    out.push_back(NamedSetting{true, "env " + std::string(name) + "=" + value, value});
  auto it = annotations.find(std::string(kAnnotationPrefix) + std::string(name));
  if (it != annotations.end())
    out.push_back(NamedSetting{false, "annotation " + it->first + "=" + it->second, it->second});
  return out;
}

bool AsksFor(std::string_view flag, const std::vector<std::string>& env,
             const std::map<std::string, std::string>& annotations) {
  if (flag.empty()) return false;
  for (const auto& s : NamedValue(flag, env, annotations))
    if (!IsOffValue(s.value)) return true;
  return false;
}

bool AsksForAnywhere(std::string_view flag, const std::vector<std::string>& env_anywhere,
                     const std::vector<std::pair<std::string, std::string>>& annotations_anywhere,
                     const std::map<std::string, std::string>& state_annotations) {
  if (flag.empty()) return false;
  for (const auto& e : env_anywhere)
    if (e.size() > flag.size() && e[flag.size()] == '=' && e.compare(0, flag.size(), flag) == 0 &&
        !IsOffValue(std::string_view(e).substr(flag.size() + 1)))
      return true;
  const std::string key = std::string(kAnnotationPrefix) + std::string(flag);
  for (const auto& [k, v] : annotations_anywhere)
    if (k == key && !IsOffValue(v)) return true;
  auto it = state_annotations.find(key);
  return it != state_annotations.end() && !IsOffValue(it->second);
}

bool DecideActivation(const Inventory& inv, const std::vector<std::string>& env,
                      const std::map<std::string, std::string>& annotations, Activation* out,
                      Error* err) {
  *out = Activation{};
  auto append = [](std::string* list, const std::string& sep, const std::string& item) {
    if (!list->empty()) *list += sep;
    *list += item;
  };
  // One request: `what` names it ("env OCI_ONLOAD=all"); `refused` says why
  // the policy ignores its source, "" when it accepts it.
  auto consider = [&](const std::string& what, const std::string& value,
                      const std::string& refused) {
    if (!refused.empty()) {
      // Not parsed: a value the policy ignores cannot make the container fail.
      if (!IsOffValue(value)) append(&out->ignored, "; ", what + " (" + refused + ")");
      return true;
    }
    std::vector<std::string> f;
    if (!ParseActivationValue(inv, value, &f, err)) return false;
    if (!f.empty()) {
      Merge(inv, f, &out->features);
      append(&out->source, ", ", what);
    }
    return true;
  };
  for (const auto& s : NamedValue(inv.activation_flag, env, annotations)) {
    std::string refused;
    if (s.from_env && !inv.policy.accept_env)
      refused = inv.file + " accepts only the annotation " + std::string(kAnnotationPrefix) +
                inv.activation_flag;
    else if (!s.from_env && !inv.policy.accept_annotation)
      refused = inv.file + " accepts only the environment variable";
    if (!consider(s.what, s.value, refused)) return false;
  }
  out->active = !out->features.empty();
  return true;
}

std::string PrivilegedReason(const BundleConfig& cfg) {
  return PrivilegedReason(cfg.sys_admin_sets, cfg.device_rules);
}

std::string PrivilegedReason(const std::vector<std::string>& sys_admin_sets,
                             const std::vector<DeviceRule>& device_rules) {
  if (!sys_admin_sets.empty())
    return "it has CAP_SYS_ADMIN in process.capabilities." + sys_admin_sets.front();
  // The runtime applies the rules in order; the last one covering every
  // device decides for devices no later rule names.
  for (auto r = device_rules.rbegin(); r != device_rules.rend(); ++r)
    if (r->type == 'a' && r->major < 0 && r->minor < 0) {
      if (r->allow) return "its linux.resources.devices allows every device";
      break;
    }
  return "";
}

bool CheckPolicy(const Inventory& inv, const Activation& a, const BundleConfig& cfg,
                 const std::map<std::string, std::string>& annotations, Error* err) {
  return CheckPolicy(inv, a, cfg.sys_admin_sets, cfg.device_rules, annotations, err);
}

bool CheckPolicy(const Inventory& inv, const Activation& a,
                 const std::vector<std::string>& sys_admin_sets,
                 const std::vector<DeviceRule>& device_rules,
                 const std::map<std::string, std::string>& annotations, Error* err) {
  if (!a.active) return true;
  const ActivationPolicy& p = inv.policy;
  std::string asked = "container asks for " + inv.activation_flag + " (" + a.source + ")";
  for (const auto& [name, want] : p.require_annotations) {
    auto it = annotations.find(name);
    if (it == annotations.end() || it->second != want)
      return Fail(err, asked + " but " +
                           (it == annotations.end() ? "lacks" : "has a different value for") +
                           " the annotation " + name + "=" + want + " that " + inv.file +
                           " requires (activation_policy.require_annotations)");
  }
  if (p.refuse_privileged) {
    std::string why = PrivilegedReason(sys_admin_sets, device_rules);
    if (!why.empty())
      return Fail(err, asked + " but is privileged (" + why + "); " + inv.file +
                           " refuses privileged containers (activation_policy.refuse_privileged)");
  }
  return true;
}

}  // namespace ocid
