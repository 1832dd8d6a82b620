#include "device_cgroup.h"

#include <fcntl.h>

#include <map>

#include "files.h"
#include "mountinfo.h"

namespace ocid {
namespace {

// Is `prefix` the path `path` or one of its parents?
bool PathWithin(const std::string& path, const std::string& prefix) {
  if (prefix == "/") return true;
  return path.compare(0, prefix.size(), prefix) == 0 &&
         (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// Is mount `m` reachable by path? It is covered when another mount, not on
// its own chain of parents, was mounted on the same or a parent path onto
// that chain: on top of the mount itself (same path) or on one of its
// ancestors (e.g. cgroup2 mounted over the tmpfs at /sys/fs/cgroup hides the
// v1 hierarchies mounted inside that tmpfs). Asked only for the few cgroup
// mounts, so a host with hundreds of container mounts stays cheap.
bool Visible(const MountInfoEntry& m, const std::vector<MountInfoEntry>& all,
             const std::map<int, const MountInfoEntry*>& by_id) {
  std::map<int, bool> chain;  // m and its ancestors
  const MountInfoEntry* p = &m;
  for (size_t hops = 0; p && hops <= all.size() && !chain.count(p->id); ++hops) {
    chain[p->id] = true;
    auto it = by_id.find(p->parent);
    p = it == by_id.end() ? nullptr : it->second;
  }
  for (const auto& c : all) {
    if (chain.count(c.id) || !chain.count(c.parent)) continue;
    if (c.parent == m.id ? c.mount_point == m.mount_point
                         : PathWithin(m.mount_point, c.mount_point))
      return false;
  }
  return true;
}

// `group` (a path in a hierarchy) as seen through mount `m` of that
// hierarchy, or "" when the mount's root does not contain it.
std::string GroupPath(const MountInfoEntry& m, const std::string& group) {
  if (!PathWithin(group, m.root)) return "";
  std::string rel = m.root == "/" ? group : group.substr(m.root.size());
  std::string path = m.mount_point == "/" ? rel : m.mount_point + (rel == "/" ? "" : rel);
  return path.empty() ? "/" : path;
}

}  // namespace

bool LocateDeviceCgroup(std::string_view proc_pid_cgroup, std::string_view mountinfo,
                        DeviceCgroupLocation* out, Error* err) {
  ProcCgroup pc = ParseProcCgroup(proc_pid_cgroup);
  std::vector<MountInfoEntry> all = ParseMountinfo(mountinfo);
  std::map<int, const MountInfoEntry*> by_id;
  for (const auto& m : all) by_id[m.id] = &m;

  auto v1 = pc.v1.find("devices");
  bool v1_mounted = false;
  if (v1 != pc.v1.end()) {
    for (const auto& m : all) {
      if (m.fstype != "cgroup" || !HasMountOption(m.super_options, "devices") ||
          !Visible(m, all, by_id))
        continue;
      v1_mounted = true;
      std::string path = GroupPath(m, v1->second);
      if (path.empty()) continue;
      *out = DeviceCgroupLocation{CgroupMode::kV1, path};
      return true;
    }
  }
  if (!pc.has_unified)
    return Fail(err, v1 != pc.v1.end()
                         ? (v1_mounted ? "no mount of the cgroup v1 devices hierarchy shows "
                                         "the container's group " +
                                             v1->second
                                       : std::string("the container has a cgroup v1 devices "
                                                     "cgroup, but no v1 devices hierarchy is "
                                                     "mounted"))
                         : "the container has neither a cgroup v1 devices cgroup nor a cgroup v2 "
                           "one");
  // The cgroup2 mount the container's cgroup is reachable through: its root
  // must be the cgroup path or one of its parents.
  for (const auto& m : all) {
    if (m.fstype != "cgroup2" || !Visible(m, all, by_id)) continue;
    std::string path = GroupPath(m, pc.unified);
    if (path.empty()) continue;
    *out = DeviceCgroupLocation{CgroupMode::kV2, path};
    return true;
  }
  return Fail(
      err, "the container is in cgroup v2 group " + pc.unified + ", but no cgroup2 mount shows it");
}

bool DeviceCgroup::Open(int proc_pid_fd, DeviceCgroup* out, Error* err) {
  std::string cg, mi;
  if (!ReadFileAt(proc_pid_fd, "cgroup", kMaxSmallFileBytes, &cg, err) ||
      !ReadFileAt(AT_FDCWD, "/proc/self/mountinfo", 4 * kMaxSmallFileBytes, &mi, err))
    return false;
  DeviceCgroupLocation where;
  if (!LocateDeviceCgroup(cg, mi, &where, err)) return false;
  out->mode_ = where.mode;
  if (where.mode == CgroupMode::kV1) return DeviceCgroupV1::Open(where.path, &out->v1_, err);
  return DeviceCgroupV2::Open(where.path, &out->v2_, err);
}

bool DeviceCgroup::Allow(const std::vector<DeviceRule>& container,
                         const std::vector<DeviceRule>& ours, Error* err) {
  if (mode_ == CgroupMode::kV1) return v1_.Allow(ours, err);
  std::vector<DeviceRule> all = container;
  all.insert(all.end(), ours.begin(), ours.end());
  return v2_.Replace(all, err);
}

void DeviceCgroup::Undo() {
  if (mode_ == CgroupMode::kV1)
    v1_.Undo();
  else
    v2_.Undo();
}

}  // namespace ocid
