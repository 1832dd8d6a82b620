#include "health_file.h"

#include <ctime>

#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "json_text.h"

namespace ocid {
namespace {

std::string Plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

bool HealthState::SameCounts(const HealthState& o) const {
  return pid == o.pid && kubelet_dir == o.kubelet_dir && kubelet == o.kubelet &&
         resources == o.resources && served == o.served && registered == o.registered &&
         healthy == o.healthy && unregistered == o.unregistered && why_none == o.why_none;
}

std::string HealthText(const HealthState& s) {
  nlohmann::json j = {{"time", s.time},
                      {"pid", s.pid},
                      {"kubelet_dir", s.kubelet_dir},
                      {"kubelet", s.kubelet},
                      {"resources", s.resources},
                      {"served", s.served},
                      {"registered", s.registered},
                      {"healthy", s.healthy},
                      {"unregistered", s.unregistered},
                      {"why_none", s.why_none}};
  // Resource names are the inventories' (checked names), but the dump must
  // not fail whatever they hold.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

bool ParseHealth(const std::string& text, HealthState* out, std::string* why) {
  nlohmann::json j;
  std::string perr;
  if (!ParseJsonText(text, &j, &perr)) {
    *why = "not JSON: " + perr;
    return false;
  }
  if (!j.is_object()) {
    *why = "not a JSON object";
    return false;
  }
  HealthState s;
  auto integer = [&](const char* key, auto* v) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) {
      *why = std::string("\"") + key + "\" missing or not an integer";
      return false;
    }
    *v = it->template get<std::remove_pointer_t<decltype(v)>>();
    return true;
  };
  auto boolean = [&](const char* key, bool* v) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_boolean()) {
      *why = std::string("\"") + key + "\" missing or not true/false";
      return false;
    }
    *v = it->get<bool>();
    return true;
  };
  if (!integer("time", &s.time) || !integer("pid", &s.pid) ||
      !boolean("kubelet_dir", &s.kubelet_dir) || !boolean("kubelet", &s.kubelet) ||
      !integer("resources", &s.resources) || !integer("served", &s.served) ||
      !integer("registered", &s.registered) || !integer("healthy", &s.healthy))
    return false;
  auto it = j.find("unregistered");
  if (it != j.end()) {
    if (!it->is_array()) {
      *why = "\"unregistered\" is not a list";
      return false;
    }
    for (const auto& n : *it)
      if (n.is_string()) s.unregistered.push_back(n.get<std::string>());
  }
  it = j.find("why_none");  // absent in files of older plugins
  if (it != j.end() && it->is_string()) s.why_none = it->get<std::string>();
  *out = std::move(s);
  return true;
}

std::string ProbeVerdict(const HealthState& s, int64_t now, int max_age, bool ready) {
  int64_t age = now - s.time;
  // A clock stepped back makes a fresh file look written in the future.
  if (age > max_age)
    return "stale: written " + std::to_string(age) + " s ago (more than --max-age " +
           std::to_string(max_age) + " s): the plugin's main loop is not running";
  if (!ready) return "";
  if (!s.kubelet_dir) return "not ready: the kubelet directory is missing or not yet owned";
  if (s.resources <= 0)
    return "not ready: no resource to serve: " +
           (s.why_none.empty() ? std::string("the inventories offer none") : Printable(s.why_none));
  if (s.registered < s.resources) {
    std::string names;
    for (const auto& n : s.unregistered) names += (names.empty() ? "" : ", ") + n;
    return "not ready: " + std::to_string(s.registered) + " of " +
           Plural(s.resources, "resource", "resources") + " registered with the kubelet" +
           (s.kubelet ? "" : " (no kubelet.sock)") + (names.empty() ? "" : "; waiting: " + names);
  }
  return "";
}

bool WriteHealthFile(const std::string& path, const HealthState& s, Error* err) {
  return WriteFileAtomic(path, HealthText(s), 0644, err);
}

}  // namespace ocid
