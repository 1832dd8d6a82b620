#include "spec_editor.h"

#include <sys/sysmacros.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "bundle_config.h"
#include "path_text.h"

namespace ocid {
namespace {

// ordered_json keeps config.json's keys in the order they were written.
using ordered = nlohmann::ordered_json;

constexpr const char* kWhere = "config.json";
constexpr const char* kPreloadVar = "LD_PRELOAD";

bool IsDevice(const MountOp& m) {
  return m.type == FileType::kCharDevice || m.type == FileType::kBlockDevice;
}

// Where the runtime finds the source on the host: the path the planner
// resolved inside the host root (so an absolute symlink of a simulated
// install points into it, not at the real host), under the host root.
// Host paths are the operator's, not the image's: handing runc a string is
// safe here, unlike a path inside the rootfs.
std::string HostSource(const std::string& host_root, const MountOp& m) {
  const std::string& p = m.resolved.empty() ? m.source : m.resolved;
  return host_root == "/" ? p : WithoutTrailingSlashes(host_root) + p;
}

// The member `key` of the object `parent`, created empty when absent or
// null. Pointers into `parent` taken earlier may be invalidated.
bool Member(ordered* parent, const char* key, bool object, const std::string& name, ordered** out,
            Error* err) {
  ordered& v = (*parent)[key];
  if (v.is_null()) v = object ? ordered::object() : ordered::array();
  if (object ? !v.is_object() : !v.is_array())
    return Fail(err, "\"" + name + "\" is not " + (object ? "an object" : "an array"), kWhere);
  *out = &v;
  return true;
}

const ordered* Field(const ordered& o, const char* key) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

bool StringIs(const ordered* v, const std::string& s) {
  return v && v->is_string() && v->get_ref<const std::string&>() == s;
}

bool IntIs(const ordered* v, int64_t n) {
  if (!v || !v->is_number_integer()) return false;
  if (v->is_number_unsigned()) return n >= 0 && v->get<uint64_t>() == static_cast<uint64_t>(n);
  return v->get<int64_t>() == n;
}

// An unsigned 32-bit member of an id mapping.
bool MappingField(const ordered& e, const char* key, uint32_t* out) {
  const ordered* v = Field(e, key);
  if (!v || !v->is_number_unsigned() || v->get<uint64_t>() > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v->get<uint64_t>());
  return true;
}

class Editor {
 public:
  Editor(const Plan& plan, const std::string& host_root, SpecEditNotes* notes, Error* err)
      : plan_(plan), host_root_(host_root), notes_(notes), err_(err) {}

  bool Run(ordered* spec) {
    return AddMounts(spec) && AddDevices(spec) && AddDeviceRules(spec) && AddPreload(spec) &&
           AddProfileEnv(spec) && AddGroups(spec);
  }

 private:
  bool AddMounts(ordered* spec) {
    ordered* mounts = nullptr;
    for (const auto& m : plan_.mounts) {
      if (IsDevice(m)) continue;
      if (!mounts && !Member(spec, "mounts", false, "mounts", &mounts, err_)) return false;
      std::string source = HostSource(host_root_, m);
      bool present = false;
      for (const auto& e : *mounts) {
        const ordered* dest = Field(e, "destination");
        if (!dest || !dest->is_string() ||
            WithoutTrailingSlashes(dest->get<std::string>()) != m.target)
          continue;
        const ordered* src = Field(e, "source");
        if (!StringIs(src, source))
          return Fail(err_,
                      "config.json already mounts " +
                          (src && src->is_string() ? src->get<std::string>()
                                                   : std::string("something else")) +
                          " at this path, refusing to shadow it with " + source,
                      m.target);
        present = true;
      }
      if (present) continue;
      ordered entry = ordered::object();
      entry["destination"] = m.target;
      entry["type"] = "bind";
      entry["source"] = source;
      entry["options"] = ordered::array({"bind", "ro", "nosuid", "nodev"});
      mounts->push_back(std::move(entry));
    }
    return true;
  }

  bool AddDevices(ordered* spec) {
    ordered* devices = nullptr;
    for (const auto& m : plan_.mounts) {
      if (!IsDevice(m)) continue;
      if (!devices) {
        ordered* lx = nullptr;
        if (!Member(spec, "linux", true, "linux", &lx, err_) ||
            !Member(lx, "devices", false, "linux.devices", &devices, err_))
          return false;
      }
      std::string type = m.type == FileType::kCharDevice ? "c" : "b";
      int64_t maj = major(m.rdev), min = minor(m.rdev);
      bool present = false;
      for (const auto& e : *devices) {
        if (!StringIs(Field(e, "path"), m.target)) continue;
        if (!StringIs(Field(e, "type"), type) || !IntIs(Field(e, "major"), maj) ||
            !IntIs(Field(e, "minor"), min))
          return Fail(err_, "config.json already lists another device node at this path", m.target);
        present = true;
      }
      if (present) continue;
      ordered entry = ordered::object();
      entry["path"] = m.target;
      entry["type"] = type;
      entry["major"] = maj;
      entry["minor"] = min;
      entry["fileMode"] = m.mode & 07777;
      entry["uid"] = 0;
      entry["gid"] = 0;
      devices->push_back(std::move(entry));
    }
    return true;
  }

  // A rule is already in force when an identical allow rule is listed and no
  // deny rule comes after it (later rules win).
  static bool Allowed(const ordered& rules, const DeviceRule& r) {
    bool allowed = false;
    for (const auto& e : rules) {
      const ordered* allow = Field(e, "allow");
      if (!allow || !allow->is_boolean()) continue;
      if (!allow->get<bool>()) {
        allowed = false;
        continue;
      }
      if (StringIs(Field(e, "type"), std::string(1, r.type)) && IntIs(Field(e, "major"), r.major) &&
          IntIs(Field(e, "minor"), r.minor) && StringIs(Field(e, "access"), r.access))
        allowed = true;
    }
    return allowed;
  }

  bool AddDeviceRules(ordered* spec) {
    if (plan_.device_rules.empty()) return true;
    ordered *lx = nullptr, *res = nullptr, *rules = nullptr;
    if (!Member(spec, "linux", true, "linux", &lx, err_) ||
        !Member(lx, "resources", true, "linux.resources", &res, err_) ||
        !Member(res, "devices", false, "linux.resources.devices", &rules, err_))
      return false;
    for (const auto& r : plan_.device_rules) {
      if (Allowed(*rules, r)) continue;
      ordered entry = ordered::object();
      entry["allow"] = true;
      entry["type"] = std::string(1, r.type);
      entry["major"] = r.major;
      entry["minor"] = r.minor;
      entry["access"] = r.access;
      rules->push_back(std::move(entry));
    }
    return true;
  }

  // glibc splits LD_PRELOAD on spaces and colons; ours go after the
  // container's own entries, each once. The last LD_PRELOAD in the list is
  // the one the runtime keeps, so that is the one edited.
  bool AddPreload(ordered* spec) {
    if (plan_.preload.empty()) return true;
    auto pit = spec->find("process");
    if (pit == spec->end() || !pit->is_object())
      return Fail(err_, "no \"process\" object to set LD_PRELOAD in", kWhere);
    ordered* env = nullptr;
    if (!Member(&*pit, "env", false, "process.env", &env, err_)) return false;
    const std::string prefix = std::string(kPreloadVar) + "=";
    ordered* last = nullptr;
    for (auto& e : *env) {
      if (!e.is_string())
        return Fail(err_, "\"process.env\" has an entry that is not a string", kWhere);
      const std::string& s = e.get_ref<const std::string&>();
      if (s.rfind(prefix, 0) == 0 || s == kPreloadVar) last = &e;
    }
    std::string value;
    if (last) {
      const std::string& s = last->get_ref<const std::string&>();
      value = s.size() > prefix.size() ? s.substr(prefix.size()) : "";
    }
    std::vector<std::string> tokens;
    for (size_t i = 0; i <= value.size();) {
      size_t j = value.find_first_of(" :", i);
      if (j == std::string::npos) j = value.size();
      if (j > i) tokens.push_back(value.substr(i, j - i));
      i = j + 1;
    }
    for (const auto& p : plan_.preload) {
      if (std::find(tokens.begin(), tokens.end(), p) != tokens.end()) continue;
      value += (value.empty() ? "" : " ") + p;
      tokens.push_back(p);
    }
    if (last)
      *last = prefix + value;
    else
      env->push_back(prefix + value);
    return true;
  }

  // The profile's variables, each unless the container sets it itself:
  // the container's own value wins (and is reported in *kept_).
  bool AddProfileEnv(ordered* spec) {
    if (plan_.env.empty()) return true;
    auto pit = spec->find("process");
    if (pit == spec->end() || !pit->is_object())
      return Fail(err_, "no \"process\" object to set the profile's variables in", kWhere);
    ordered* env = nullptr;
    if (!Member(&*pit, "env", false, "process.env", &env, err_)) return false;
    std::vector<std::string> own;
    for (const auto& e : *env) {
      if (!e.is_string())
        return Fail(err_, "\"process.env\" has an entry that is not a string", kWhere);
      const std::string& s = e.get_ref<const std::string&>();
      own.push_back(s.substr(0, s.find('=')));
    }
    for (const auto& [k, v] : plan_.env) {
      if (std::find(own.begin(), own.end(), k) != own.end()) {
        notes_->kept_env.push_back(k);
        continue;
      }
      env->push_back(k + "=" + v);
    }
    return true;
  }

  // How a host gid is seen in the container, as ProcessOnHost judges the
  // other way (container_plan.h): through linux.gidMappings when there are
  // any; a user namespace without them (a joined one) maps nothing known;
  // otherwise the identity. *mapped false: no container gid is that group.
  bool ContainerGid(const ordered& spec, uint32_t host, uint32_t* inside, bool* mapped) {
    const ordered* lx = Field(spec, "linux");
    const ordered* ns = lx ? Field(*lx, "namespaces") : nullptr;
    const ordered* m = lx ? Field(*lx, "gidMappings") : nullptr;
    bool user_namespace = false;
    if (ns && ns->is_array())
      for (const auto& n : *ns)
        if (StringIs(Field(n, "type"), "user")) user_namespace = true;
    std::vector<IdMapping> mappings;
    if (m && !m->is_null()) {
      if (!m->is_array()) return Fail(err_, "\"linux.gidMappings\" is not an array", kWhere);
      for (const auto& e : *m) {
        IdMapping im;
        if (!MappingField(e, "containerID", &im.container_id) ||
            !MappingField(e, "hostID", &im.host_id) || !MappingField(e, "size", &im.size))
          return Fail(err_, "\"linux.gidMappings\" has an entry that is not an id mapping", kWhere);
        mappings.push_back(im);
      }
    }
    *mapped = !(user_namespace && mappings.empty()) && MapToContainer(mappings, host, inside);
    return true;
  }

  // Each required group the process lacks (the plan says, on the host), as
  // the container's gid, once, unless it is the primary gid.
  bool AddGroups(ordered* spec) {
    std::vector<const GroupOp*> wanted;
    for (const auto& g : plan_.groups)
      if (g.required && !g.present) wanted.push_back(&g);
    if (wanted.empty()) return true;
    auto pit = spec->find("process");
    if (pit == spec->end() || !pit->is_object())
      return Fail(err_, "no \"process\" object to add groups to", kWhere);
    ordered* user = nullptr;
    if (!Member(&*pit, "user", true, "process.user", &user, err_)) return false;
    std::optional<uint32_t> primary;
    if (uint32_t g = 0; MappingField(*user, "gid", &g)) primary = g;
    ordered* gids = nullptr;
    for (const GroupOp* g : wanted) {
      uint32_t inside = 0;
      bool mapped = false;
      if (!ContainerGid(*spec, g->gid, &inside, &mapped)) return false;
      const std::string gid = std::to_string(g->gid);
      if (!mapped) {
        notes_->warnings.push_back(
            "group " + gid + " (" + g->gid_file +
            ") not added to process.user.additionalGids: the container's user namespace does "
            "not map it; what needs the group fails with EACCES (Onload: stacks with "
            "EF_SHRUB_CONTROLLER)");
        continue;
      }
      if (primary == inside) continue;
      if (!gids &&
          !Member(user, "additionalGids", false, "process.user.additionalGids", &gids, err_))
        return false;
      bool present = false;
      for (const auto& e : *gids) present = present || IntIs(&e, inside);
      if (present) continue;
      gids->push_back(inside);
      notes_->added_gids.push_back(inside);
    }
    return true;
  }

  const Plan& plan_;
  const std::string& host_root_;
  SpecEditNotes* notes_;
  Error* err_;
};

// Keep the file's look: compact stays compact; an indented file is written
// indented, with tabs if it used tabs (`runc spec`), else two spaces.
std::string Dump(const ordered& spec, const std::string& original) {
  size_t last = original.find_last_not_of(" \t\r\n");
  size_t nl = original.find('\n');
  if (last == std::string::npos || nl == std::string::npos || nl > last) return spec.dump();
  bool tabs = nl + 1 < original.size() && original[nl + 1] == '\t';
  return spec.dump(tabs ? 1 : 2, tabs ? '\t' : ' ') + "\n";
}

}  // namespace

bool EditSpec(const Plan& plan, const std::string& host_root_path, std::string* config_json,
              Error* err, SpecEditNotes* notes) {
  ordered spec = ordered::parse(*config_json, nullptr, /*allow_exceptions=*/false);
  if (spec.is_discarded()) return Fail(err, "not valid JSON", kWhere);
  if (!spec.is_object()) return Fail(err, "not a JSON object", kWhere);
  SpecEditNotes edit_notes;
  Editor editor(plan, host_root_path, &edit_notes, err);
  if (!editor.Run(&spec)) return false;
  try {
    *config_json = Dump(spec, *config_json);
  } catch (const nlohmann::json::exception& e) {
    // A host path that is not UTF-8 cannot be written as JSON.
    return Fail(err, std::string("cannot write the edited config.json: ") + e.what(), kWhere);
  }
  if (notes) *notes = std::move(edit_notes);
  return true;
}

}  // namespace ocid
