#include "device_cgroup_v1.h"

#include <fcntl.h>

#include <cerrno>

#include "files.h"
#include "mountinfo.h"

namespace ocid {

bool DeviceCgroupV1::Open(int proc_pid_fd, DeviceCgroupV1* out, Error* err) {
  std::string cg, mi;
  if (!ReadFileAt(proc_pid_fd, "cgroup", kMaxSmallFileBytes, &cg, err)) return false;
  ProcCgroup pc = ParseProcCgroup(cg);
  auto it = pc.v1.find("devices");
  if (it == pc.v1.end())
    return Fail(err, pc.has_unified
                         ? "the container is on a pure cgroup v2 hierarchy; cgroup v2 "
                           "device control is not supported by this version"
                         : "the container has no devices cgroup");
  if (!ReadFileAt(AT_FDCWD, "/proc/self/mountinfo", 4 * kMaxSmallFileBytes, &mi, err))
    return false;
  std::vector<MountInfoEntry> mounts = ParseMountinfo(mi);
  std::string mount = FindCgroupV1Mount(mounts, "devices");
  if (mount.empty()) return Fail(err, "no cgroup v1 devices hierarchy is mounted on the host");
  std::string rel = it->second;
  for (const auto& m : mounts) {
    if (m.mount_point == mount && m.root != "/" && rel.rfind(m.root, 0) == 0) {
      rel = rel.substr(m.root.size());
      break;
    }
  }
  out->path_ = mount + (rel == "/" ? "" : rel);
  out->dir_.reset(::open(out->path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!out->dir_.valid())
    return Fail(err, "cannot open the container's devices cgroup", out->path_, errno);
  return true;
}

bool DeviceCgroupV1::ReadList(std::vector<DeviceRule>* list, Error* err) const {
  std::string text;
  if (!ReadFileAt(dir_.get(), "devices.list", kMaxSmallFileBytes, &text, err)) {
    err->path = path_ + "/devices.list";
    return false;
  }
  *list = ParseV1DevicesList(text);
  return true;
}

bool DeviceCgroupV1::Allow(const std::vector<DeviceRule>& rules, Error* err) {
  std::vector<DeviceRule> list;
  if (!ReadList(&list, err)) return false;
  std::vector<DeviceRule> todo;
  for (const auto& r : rules)
    if (!ListAllows(list, r)) todo.push_back(r);
  if (!todo.empty()) {
    UniqueFd allow(::openat(dir_.get(), "devices.allow", O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!allow.valid())
      return Fail(err, "cannot open", path_ + "/devices.allow", errno);
    for (const auto& r : todo) {
      // The v1 interface takes exactly one rule per write().
      std::string line = DeviceRuleToV1(r);
      if (::write(allow.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        return Fail(err, "cannot allow \"" + line + "\" in", path_ + "/devices.allow", errno);
      added_.push_back(r);
    }
  }
  // Verify: the kernel may refuse a rule silently (e.g. a parent cgroup
  // does not allow it), so re-read what is really in force.
  if (!ReadList(&list, err)) return false;
  for (const auto& r : rules)
    if (!ListAllows(list, r))
      return Fail(err, "device rule \"" + DeviceRuleToV1(r) +
                           "\" is not in force after writing it (a parent cgroup may deny it)",
                  path_ + "/devices.list");
  return true;
}

void DeviceCgroupV1::Undo() {
  if (added_.empty()) return;
  UniqueFd deny(::openat(dir_.get(), "devices.deny", O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!deny.valid()) return;
  for (const auto& r : added_) {
    std::string line = DeviceRuleToV1(r);
    (void)!::write(deny.get(), line.data(), line.size());
  }
  added_.clear();
}

}  // namespace ocid
