#include "device_cgroup_v1.h"

#include <fcntl.h>

#include <cerrno>

#include "files.h"

namespace ocid {

bool DeviceCgroupV1::Open(const std::string& path, DeviceCgroupV1* out, Error* err) {
  out->path_ = path;
  out->dir_.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!out->dir_.valid())
    return Fail(err, "cannot open the container's devices cgroup", path, errno);
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
    if (!allow.valid()) return Fail(err, "cannot open", path_ + "/devices.allow", errno);
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
      return Fail(err,
                  "device rule \"" + DeviceRuleToV1(r) +
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
