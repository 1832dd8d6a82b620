#include "check_render.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine_files.h"
#include "error.h"
#include "nic_json.h"

namespace ocid {
namespace {

using ordered = nlohmann::ordered_json;

struct Row {
  CheckState state;
  std::string check, subject, detail;
};

const char* Label(CheckState s) {
  switch (s) {
    case CheckState::kOk: return "OK";
    case CheckState::kInfo: return "INFO";
    case CheckState::kWarn: return "WARN";
    case CheckState::kFail: return "FAIL";
  }
  return "FAIL";
}

std::string Octal(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

bool IsDevice(FileType t) { return t == FileType::kCharDevice || t == FileType::kBlockDevice; }

std::string DeviceDetail(const CheckedFile& f) {
  return std::string(f.type == FileType::kCharDevice ? "char" : "block") + " " +
         std::to_string(f.major) + ":" + std::to_string(f.minor) + ", mode " + Octal(f.mode) +
         ", owner " + std::to_string(f.uid) + ":" + std::to_string(f.gid);
}

std::string CgroupDetail(CgroupLayout l) {
  switch (l) {
    case CgroupLayout::kV1:
    case CgroupLayout::kHybrid: return "device rules: v1 devices.allow";
    case CgroupLayout::kV2: return "device rules: the container's eBPF program, replaced";
    case CgroupLayout::kUnknown: break;
  }
  return "no cgroup hierarchy under /sys/fs/cgroup";
}

bool AnyNeedsNic(const CheckReport& r) {
  for (const auto& i : r.inventories)
    for (const auto& f : i.features)
      if (f.needs_nic) return true;
  return false;
}

void InventoryRows(const InventoryCheck& i, std::vector<Row>* rows) {
  if (!i.loaded) {
    rows->push_back({CheckState::kFail, "inventory", i.file, "broken: " + i.error});
    return;
  }
  rows->push_back({i.state, "inventory", i.file, i.activation_flag + ", features " + [&] {
                     std::vector<std::string> n;
                     for (const auto& f : i.features) n.push_back(f.name);
                     return Join(n, ",");
                   }()});
  for (const auto& f : i.features) {
    std::string detail = f.plan_ok ? "plan builds: " + std::to_string(f.mounts) + " mounts, " +
                                         std::to_string(f.devices) + " device rules"
                                   : "";
    if (f.state == CheckState::kFail || f.state == CheckState::kWarn) {
      std::vector<std::string> all = f.reasons;
      all.insert(all.end(), f.warnings.begin(), f.warnings.end());
      detail = Join(all, "; ");
    }
    rows->push_back({f.state, "feature", f.name, detail});
    for (const auto& e : f.entries) {
      if (e.state == CheckState::kFail || e.state == CheckState::kInfo)
        // The reason lists every alternative; the subject stays short.
        rows->push_back(
            {e.state, e.category,
             e.tried.empty()
                 ? "-"
                 : e.tried[0] + (e.tried.size() > 1
                                     ? " (+" + std::to_string(e.tried.size() - 1) + " more)"
                                     : ""),
             e.reason});
      for (const auto& file : e.files) {
        if (IsDevice(file.type))
          rows->push_back({file.problem.empty() ? CheckState::kOk : CheckState::kWarn, "device",
                           file.path,
                           DeviceDetail(file) + (file.problem.empty() ? "" : ": " + file.problem)});
        else if (!file.problem.empty())
          rows->push_back({CheckState::kWarn, e.category, file.path, file.problem});
      }
    }
  }
  for (const auto& c : i.conditions) rows->push_back({c.state, "condition", c.name, c.why});
  for (const auto& g : i.groups)
    rows->push_back(
        {g.state, "group",
         (g.gid_known ? std::to_string(g.gid) : std::string("?")) + " (" + g.feature + ")",
         g.gid_file + ": " + g.why});
  if (i.version.state != VersionState::kNotConfigured) {
    const VersionReport& v = i.version;
    // Quoted: a version may hold spaces ("9.2.0.43 cloud", version_lock.h).
    auto shown = [](const std::string& s) { return s.empty() ? "?" : "\"" + s + "\""; };
    std::string detail =
        "module " + shown(v.module_version) + ", library " + shown(v.library_version) +
        (v.library_path.empty() ? "" : " (" + v.library_path + ")") + ": " +
        VersionStateName(v.state) + (i.version_enforced ? ", enforced" : ", not enforced");
    if (!v.why.empty()) detail += ": " + v.why;
    rows->push_back(
        {i.version_state, "version", v.module_path.empty() ? "-" : v.module_path, detail});
  }
  for (const auto& c : i.cdi)
    rows->push_back({c.state == "current"                                 ? CheckState::kOk
                     : c.state == "unsafe" || c.state == "missing_source" ? CheckState::kFail
                                                                          : CheckState::kWarn,
                     "cdi", c.path, c.state + (c.reason.empty() ? "" : ": " + c.reason)});
  if (i.cdi.empty())
    rows->push_back(
        {CheckState::kInfo, "cdi", "-", "no spec of this inventory in /etc/cdi or /var/run/cdi"});
}

void NodeRows(const CheckReport& r, std::vector<Row>* rows) {
  const NodeFacts& n = r.node;
  for (const auto& nic : n.nics)
    rows->push_back({nic.driver.empty() ? CheckState::kWarn : CheckState::kOk, "nic", nic.address,
                     nic.vendor + ":" + nic.device + ", driver " +
                         (nic.driver.empty() ? "none bound" : nic.driver) +
                         (nic.numa_node < 0 ? "" : ", NUMA node " + std::to_string(nic.numa_node)) +
                         (nic.interfaces.empty() ? "" : ", " + Join(nic.interfaces, " "))});
  if (n.nics.empty())
    rows->push_back({AnyNeedsNic(r) ? CheckState::kFail : CheckState::kInfo, "nic", "-",
                     "no NIC of PCI vendor " + Join(n.nic_vendors, ", ") + " in " + kPciDevices +
                         (n.nic_error.empty() ? std::string() : ": " + n.nic_error)});
  rows->push_back({n.cgroup == CgroupLayout::kUnknown ? CheckState::kWarn : CheckState::kOk,
                   "cgroup", CgroupLayoutName(n.cgroup), CgroupDetail(n.cgroup)});
  std::string k = kernel::Describe(n.kernel);
  rows->push_back({CheckState::kOk, "kernel", "interfaces", k.substr(k.find(' ') + 1)});
}

void DeliveryRows(const CheckReport& r, std::vector<Row>* rows) {
  const EngineSetup& e = r.node.engines;
  for (const auto& h : e.hooks)
    rows->push_back(
        {h.ours ? CheckState::kOk : CheckState::kWarn, "hooks.d", h.file,
         Join(h.stages, ",") + ": " + h.hook_path + (h.problem.empty() ? "" : ": " + h.problem)});
  if (e.hooks.empty())
    rows->push_back({CheckState::kInfo, "hooks.d", "-",
                     "no entry runs oci-decorator (podman, CRI-O): not set up"});
  for (const char* engine : {"docker", "containerd"}) {
    bool any = false;
    for (const auto& rt : e.runtimes) {
      if (rt.engine != engine) continue;
      any = true;
      rows->push_back({rt.ours ? CheckState::kOk : CheckState::kWarn, engine, rt.file,
                       (rt.name.empty() ? "" : "runtime " + rt.name + ": ") + rt.path +
                           (rt.problem.empty() ? "" : ": " + rt.problem)});
    }
    if (!any)
      rows->push_back(
          {CheckState::kInfo, engine, "-", "the runtime shim is not registered: not set up"});
  }
  if (const DockerDefaultRuntime& d = e.docker_default; d.read && !d.problem.empty())
    rows->push_back({CheckState::kFail, "docker", kDockerConfig,
                     "default runtime " + d.name +
                         ": the runtime shim, which would fail every container: " + d.problem});
  else if (d.read)
    rows->push_back(
        {CheckState::kInfo, "docker", kDockerConfig,
         "default runtime " + d.name +
             (d.shim ? ": the runtime shim (plain `docker run` reaches it" +
                           (d.shim_runs.empty() ? std::string() : ", running " + d.shim_runs) + ")"
                     : ": `docker run` needs --runtime to reach the shim")});
  for (const auto& w : e.warnings) rows->push_back({CheckState::kWarn, "engine", "-", w});
  if (!r.node.cdi_error.empty())
    rows->push_back(
        {CheckState::kWarn, "cdi", "-", "cannot list the CDI specs: " + r.node.cdi_error});
  for (const auto& c : r.orphan_cdi)
    rows->push_back({CheckState::kWarn, "cdi", c.path, c.state + ": " + c.reason});
  for (const auto& l : r.library_dirs)
    rows->push_back({CheckState::kInfo, "lib dirs", l.mode,
                     (l.image_libc ? "one of " : "all of ") + Join(l.dirs, ", ") + ": " + l.why});
}

std::string Pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

ordered FileJson(const CheckedFile& f) {
  ordered j = {{"path", f.path}, {"resolved", f.resolved}, {"type", FileTypeName(f.type)}};
  if (IsDevice(f.type)) {
    j["major"] = f.major;
    j["minor"] = f.minor;
  }
  j["mode"] = Octal(f.mode);
  j["uid"] = f.uid;
  j["gid"] = f.gid;
  j["problem"] = f.problem;
  return j;
}

ordered InventoryJson(const InventoryCheck& i) {
  ordered j = {
      {"file", i.file},          {"activation_flag", i.activation_flag}, {"loaded", i.loaded},
      {"error", i.error},        {"state", CheckStateName(i.state)},     {"reasons", i.reasons},
      {"delivered", i.delivered}};
  ordered features = ordered::array();
  for (const auto& f : i.features) {
    ordered entries = ordered::array();
    for (const auto& e : f.entries) {
      ordered files = ordered::array();
      for (const auto& file : e.files) files.push_back(FileJson(file));
      entries.push_back({{"category", e.category},
                         {"optional", e.optional},
                         {"create_if", e.create_if},
                         {"create", e.create},
                         {"state", CheckStateName(e.state)},
                         {"reason", e.reason},
                         {"tried", e.tried},
                         {"files", std::move(files)}});
    }
    features.push_back({{"name", f.name},
                        {"state", CheckStateName(f.state)},
                        {"reasons", f.reasons},
                        {"warnings", f.warnings},
                        {"plan_builds", f.plan_ok},
                        {"mounts", f.mounts},
                        {"device_rules", f.devices},
                        {"needs_nic", f.needs_nic},
                        {"entries", std::move(entries)}});
  }
  j["features"] = std::move(features);
  ordered conditions = ordered::array();
  for (const auto& c : i.conditions) {
    ordered named = ordered::array();
    for (const auto& n : c.named_in)
      named.push_back({{"file", n.file},
                       {"exists", n.exists},
                       {"names", n.names},
                       {"names_exists", n.names_exists}});
    conditions.push_back({{"name", c.name},
                          {"description", c.description},
                          {"met", c.met},
                          {"state", CheckStateName(c.state)},
                          {"by", c.by},
                          {"tried", c.tried},
                          {"named_in", std::move(named)},
                          {"why", c.why}});
  }
  j["conditions"] = std::move(conditions);
  ordered groups = ordered::array();
  for (const auto& g : i.groups)
    groups.push_back({{"feature", g.feature},
                      {"gid_file", g.gid_file},
                      {"gid", g.gid_known ? ordered(g.gid) : ordered(nullptr)},
                      {"mode_file", g.mode_file},
                      {"mode", g.mode_known ? ordered(Octal(g.mode)) : ordered(nullptr)},
                      {"required", g.required},
                      {"state", CheckStateName(g.state)},
                      {"why", g.why}});
  j["groups"] = std::move(groups);
  const VersionReport& v = i.version;
  j["version_lock"] = {
      {"state",
       v.state == VersionState::kNotConfigured ? "not_configured" : VersionStateName(v.state)},
      {"check_state", CheckStateName(i.version_state)},
      {"enforce", i.version_enforced},
      {"features", i.version_features},
      {"module_version", v.module_version},
      {"module_path", v.module_path},
      {"library_version", v.library_version},
      {"library_path", v.library_path},
      {"why", v.why}};
  ordered cdi = ordered::array();
  for (const auto& c : i.cdi)
    cdi.push_back({{"path", c.path}, {"state", c.state}, {"reason", c.reason}});
  j["cdi"] = std::move(cdi);
  return j;
}

}  // namespace

std::string CheckTable(const CheckReport& r) {
  std::vector<Row> rows;
  for (const auto& i : r.inventories) InventoryRows(i, &rows);
  NodeRows(r, &rows);
  DeliveryRows(r, &rows);
  size_t wc = 5, ws = 7;
  for (const auto& row : rows) {
    wc = std::max(wc, row.check.size());
    ws = std::max(ws, row.subject.size());
  }
  std::string out = Pad("STATE", 6) + Pad("CHECK", wc + 2) + Pad("SUBJECT", ws + 2) + "DETAIL\n";
  for (const auto& row : rows) {
    std::string line =
        Pad(Label(row.state), 6) + Pad(row.check, wc + 2) + Pad(row.subject, ws + 2) + row.detail;
    out += Printable(line) + "\n";
  }
  out +=
      r.ready ? "READY: an activated container would start with every feature\n" : "NOT READY:\n";
  for (const auto& why : r.reasons) out += "  " + Printable(why) + "\n";
  return out;
}

std::string CheckJson(const CheckReport& r) {
  ordered j;
  j["version"] = CheckReport::kSchemaVersion;
  j["ready"] = r.ready;
  j["reasons"] = r.reasons;
  j["config_dir"] = r.config_dir;
  j["host_root"] = r.host_root;
  ordered invs = ordered::array();
  for (const auto& i : r.inventories) invs.push_back(InventoryJson(i));
  j["inventories"] = std::move(invs);

  const NodeFacts& n = r.node;
  j["nics"] = NicsJson(n.nics);
  j["cgroup"] = {{"mode", CgroupLayoutName(n.cgroup)}};
  j["kernel"] = {{"openat2", n.kernel.openat2},
                 {"mount_api", n.kernel.mount_api},
                 {"statx_mnt_id", n.kernel.statx_mnt_id}};
  ordered hooks = ordered::array(), runtimes = ordered::array(), cdi = ordered::array();
  for (const auto& h : n.engines.hooks)
    hooks.push_back({{"file", h.file},
                     {"path", h.hook_path},
                     {"stages", h.stages},
                     {"set_up", h.ours},
                     {"problem", h.problem}});
  for (const auto& rt : n.engines.runtimes)
    runtimes.push_back({{"engine", rt.engine},
                        {"file", rt.file},
                        {"name", rt.name},
                        {"path", rt.path},
                        {"set_up", rt.ours},
                        {"problem", rt.problem}});
  for (const auto& c : r.orphan_cdi)
    cdi.push_back({{"path", c.path}, {"state", c.state}, {"reason", c.reason}});
  ordered libraries = ordered::object();
  for (const auto& l : r.library_dirs)
    libraries[l.mode] = {
        {"rule", l.image_libc ? "image_libc" : "all"}, {"dirs", l.dirs}, {"why", l.why}};
  const DockerDefaultRuntime& dd = n.engines.docker_default;
  ordered docker_default = nullptr;
  if (dd.read)
    docker_default = {
        {"name", dd.name}, {"shim", dd.shim}, {"shim_runs", dd.shim_runs}, {"problem", dd.problem}};
  j["delivery"] = {
      {"engine_set_up", r.engine_set_up}, {"hooks", std::move(hooks)},
      {"runtimes", std::move(runtimes)},  {"docker_default_runtime", std::move(docker_default)},
      {"orphan_cdi", std::move(cdi)},     {"cdi_error", n.cdi_error},
      {"warnings", n.engines.warnings},   {"library_dirs", std::move(libraries)}};
  // Host paths and file contents can hold bytes that are not UTF-8: shown
  // as U+FFFD rather than failing the whole report.
  return PrintableJson(j.dump(2, ' ', false, ordered::error_handler_t::replace)) + "\n";
}

}  // namespace ocid
