#include "plan_json.h"

#include <sys/sysmacros.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "error.h"

namespace ocid {

std::string PlanToJson(const Plan& plan) {
  using nlohmann::json;
  using ordered = nlohmann::ordered_json;
  ordered j;
  j["container"] = {{"id", plan.container_id}, {"pid", plan.pid}, {"rootfs", plan.rootfs}};
  j["active"] = plan.Active();
  j["activated"] = ordered::array();
  for (const auto& a : plan.activated) {
    ordered one = {{"file", a.file},
                   {"activation_flag", a.activation_flag},
                   {"features", a.features},
                   {"requested_by", a.requested_by}};
    if (!a.profile.empty()) {
      one["profile"] = a.profile;
      one["profile_requested_by"] = a.profile_by;
    }
    j["activated"].push_back(std::move(one));
  }
  // Where libraries land and why (library_dirs.h): the image's own libc
  // directory, or both standard directories.
  j["library_dirs"] = {{"dirs", plan.library_dirs.dirs}, {"why", plan.library_dirs.why}};
  j["mounts"] = ordered::array();
  j["devices"] = ordered::array();
  for (const auto& m : plan.mounts) {
    std::vector<std::string> flags = {"bind"};
    if (m.readonly) flags.push_back("ro");
    if (m.nosuid) flags.push_back("nosuid");
    if (m.nodev) flags.push_back("nodev");
    flags.push_back("private");
    ordered one = {{"type", FileTypeName(m.type)}, {"source", m.source}, {"resolved", m.resolved},
                   {"target", m.target},           {"flags", flags},     {"inventory", m.inventory},
                   {"feature", m.feature}};
    if (m.create) one["create"] = true;
    j["mounts"].push_back(std::move(one));
    if (m.type == FileType::kCharDevice || m.type == FileType::kBlockDevice)
      j["devices"].push_back({{"path", m.target},
                              {"type", m.type == FileType::kCharDevice ? "c" : "b"},
                              {"major", major(m.rdev)},
                              {"minor", minor(m.rdev)}});
  }
  j["cgroup_rules"] = ordered::array();
  for (const auto& r : plan.device_rules) j["cgroup_rules"].push_back(DeviceRuleToV1(r));
  j["preload"] = plan.preload;
  j["preload_file"] = plan.preload.empty() ? "" : "/etc/ld.so.preload";
  j["env"] = ordered::object();
  for (const auto& [k, v] : plan.env) j["env"][k] = v;
  if (!plan.groups.empty()) {
    j["groups"] = ordered::array();
    for (const auto& g : plan.groups) {
      char mode[16];
      std::snprintf(mode, sizeof mode, "%04o", g.mode);
      j["groups"].push_back({{"gid", g.gid},
                             {"gid_file", g.gid_file},
                             {"mode", g.mode_known ? ordered(mode) : ordered(nullptr)},
                             {"required", g.required},
                             {"present", g.present},
                             {"inventory", g.inventory},
                             {"feature", g.feature}});
    }
  }
  j["skipped"] = plan.skipped;
  if (!plan.ignored.empty()) j["ignored"] = plan.ignored;
  if (!plan.warnings.empty()) j["warnings"] = plan.warnings;
  // Host file names need not be UTF-8; never throw over one. The bundle's
  // strings reach a terminal: DEL, C1 and bidi controls escaped too (nlohmann
  // escapes only C0).
  return PrintableJson(j.dump(2, ' ', false, ordered::error_handler_t::replace)) + "\n";
}

}  // namespace ocid
