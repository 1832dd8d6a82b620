#include "container_root.h"

#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "files.h"
#include "log.h"

namespace ocid {
namespace {

// The kernel accepts at most 340 lines in a map (user_namespaces(7)).
constexpr size_t kMaxIdMapLines = 340;

// One decimal id after optional blanks, consumed from *rest; at most 10
// digits and no more than UINT32_MAX.
bool ParseId(std::string_view* rest, uint32_t* out) {
  while (!rest->empty() && (rest->front() == ' ' || rest->front() == '\t')) rest->remove_prefix(1);
  uint64_t v = 0;
  size_t n = 0;
  while (n < rest->size() && (*rest)[n] >= '0' && (*rest)[n] <= '9' && n < 11)
    v = v * 10 + static_cast<uint64_t>((*rest)[n++] - '0');
  if (n == 0 || v > UINT32_MAX) return false;
  if (n < rest->size() && (*rest)[n] >= '0' && (*rest)[n] <= '9') return false;
  rest->remove_prefix(n);
  *out = static_cast<uint32_t>(v);
  return true;
}

bool SameNamespace(int proc_fd, const char* ns, bool* same, Error* err) {
  struct stat ours, theirs;
  std::string self = std::string("/proc/self/ns/") + ns;
  if (::stat(self.c_str(), &ours) != 0) return Fail(err, "cannot stat", self, errno);
  if (::fstatat(proc_fd, (std::string("ns/") + ns).c_str(), &theirs, 0) != 0)
    return Fail(err, "cannot stat the container's namespace", std::string("ns/") + ns, errno);
  *same = ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
  return true;
}

// Host id of container id 0 in /proc/<pid>/<file>. An empty map (a user
// namespace whose map is not written yet) maps nothing.
bool RootIdIn(int proc_fd, const std::string& proc_path, const char* file, const char* kind,
              uint32_t* host, Error* err) {
  std::string text, where = proc_path + "/" + file;
  std::vector<IdMapping> map;
  if (!ReadFileAt(proc_fd, file, kMaxSmallFileBytes, &text, err) ||
      !ParseIdMap(text, where, &map, err))
    return false;
  if (map.empty() || !MapToHost(map, 0, host))
    return Fail(err,
                std::string("refusing: the container's user namespace maps no host ") + kind +
                    " to its root (" + kind +
                    " 0): the files it would create there could "
                    "have no owner",
                where);
  return true;
}

// This thread's capabilities (capget/capset, version 3: two words each).
bool GetCaps(__user_cap_data_struct* data) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return ::syscall(SYS_capget, &header, data) == 0;
}
bool SetCaps(__user_cap_data_struct* data) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return ::syscall(SYS_capset, &header, data) == 0;
}

// setfsuid/setfsgid return the previous id and report no error; asking
// for an invalid id (-1) changes nothing and returns the current one.
uint32_t CurrentFsuid() { return static_cast<uint32_t>(::setfsuid(static_cast<uid_t>(-1))); }
uint32_t CurrentFsgid() { return static_cast<uint32_t>(::setfsgid(static_cast<gid_t>(-1))); }

}  // namespace

bool ParseIdMap(std::string_view text, const std::string& what, std::vector<IdMapping>* out,
                Error* err) {
  out->clear();
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    IdMapping m;
    if (!ParseId(&line, &m.container_id) || !ParseId(&line, &m.host_id) ||
        !ParseId(&line, &m.size) || !line.empty() || m.size == 0)
      return Fail(err, "malformed id map line", what);
    if (out->size() == kMaxIdMapLines) return Fail(err, "id map has too many lines", what);
    out->push_back(m);
  }
  return true;
}

bool FindContainerRoot(int proc_fd, const std::string& proc_path, ContainerRoot* out, Error* err) {
  *out = ContainerRoot{};
  bool same = true;
  if (!SameNamespace(proc_fd, "user", &same, err)) return false;
  if (same) return true;
  out->user_namespace = true;
  // Read through the pinned /proc/<pid> directory: the maps of exactly the
  // container's process, as seen from the hook's (the host's) namespace.
  return RootIdIn(proc_fd, proc_path, "uid_map", "uid", &out->uid, err) &&
         RootIdIn(proc_fd, proc_path, "gid_map", "gid", &out->gid, err);
}

bool AsContainerRoot::Enter(const ContainerRoot& root, Error* err) {
  if (!root.user_namespace || entered_) return true;
  if (!GetCaps(saved_caps_)) return Fail(err, "cannot read the hook's capabilities", "", errno);
  saved_fsuid_ = CurrentFsuid();
  saved_fsgid_ = CurrentFsgid();
  entered_ = true;
  // Both need CAP_SETUID / CAP_SETGID, which are not among the filesystem
  // capabilities the kernel drops below: the order does not matter.
  ::setfsgid(root.gid);
  ::setfsuid(root.uid);
  if (CurrentFsuid() != root.uid || CurrentFsgid() != root.gid)
    return Fail(err, "cannot take the container root's filesystem ids (setfsuid/setfsgid)",
                std::to_string(root.uid) + ":" + std::to_string(root.gid), EPERM);
  // The kernel cleared CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_CHOWN... from the
  // effective set when the fsuid left 0: put back exactly what the hook
  // had, so that where it may create stays what it was.
  if (!SetCaps(saved_caps_))
    return Fail(err, "cannot keep the hook's capabilities under the container root's ids", "",
                errno);
  OCID_DEBUG("creating as the container's root: host uid " + std::to_string(root.uid) + ", gid " +
             std::to_string(root.gid));
  return true;
}

AsContainerRoot::~AsContainerRoot() {
  if (!entered_) return;
  ::setfsuid(saved_fsuid_);
  ::setfsgid(saved_fsgid_);
  // Setting the fsuid back to 0 raised the filesystem capabilities again;
  // capset makes the effective set exactly what it was.
  bool caps = SetCaps(saved_caps_);
  if (CurrentFsuid() != saved_fsuid_ || CurrentFsgid() != saved_fsgid_ || !caps) {
    // Cannot happen (the real uid is the one restored, and the saved
    // capabilities are within the permitted set): carrying on with the
    // container's ids would create host files as the container's root.
    log::Error("cannot restore the hook's filesystem ids or capabilities; aborting");
    std::abort();
  }
}

}  // namespace ocid
