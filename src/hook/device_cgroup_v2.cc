#include "device_cgroup_v2.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "device_program.h"
#include "log.h"

namespace ocid {
namespace {

// --- the bpf() calls: the only ones in the hook ---------------------------

constexpr const char* kProgramName = "ocid_devices";  // shown by bpftool
constexpr uint32_t kMaxQueried = 64;                  // the kernel's limit per cgroup and type

uint64_t Ptr(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

int Bpf(int cmd, bpf_attr* attr) {
  return static_cast<int>(::syscall(SYS_bpf, cmd, attr, sizeof *attr));
}

// Ids of the device programs attached to the cgroup itself (not inherited),
// and the attach flags they were attached with.
bool QueryPrograms(int cgroup_fd, std::vector<uint32_t>* ids, uint32_t* flags) {
  uint32_t buf[kMaxQueried] = {};
  bpf_attr a{};
  a.query.target_fd = static_cast<uint32_t>(cgroup_fd);
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = Ptr(buf);
  a.query.prog_cnt = kMaxQueried;
  if (Bpf(BPF_PROG_QUERY, &a) != 0) return false;
  ids->assign(buf, buf + std::min(a.query.prog_cnt, kMaxQueried));
  *flags = a.query.attach_flags;
  return true;
}

// Loads the program; on failure *log gets the verifier's last line, if any.
int LoadProgram(const std::vector<bpf_insn>& insns, std::string* log) {
  bpf_attr a{};
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = Ptr(insns.data());
  a.insn_cnt = static_cast<uint32_t>(insns.size());
  a.license = Ptr(kDeviceProgramLicense);
  std::strncpy(a.prog_name, kProgramName, sizeof a.prog_name - 1);
  int fd = Bpf(BPF_PROG_LOAD, &a);
  if (fd >= 0 || errno == EPERM) return fd;
  // Only on failure: load again with a log buffer, for the error message.
  int saved = errno;
  std::string buf(16 << 10, '\0');
  a.log_level = 1;
  a.log_buf = Ptr(buf.data());
  a.log_size = static_cast<uint32_t>(buf.size());
  fd = Bpf(BPF_PROG_LOAD, &a);
  if (fd >= 0) return fd;
  buf.resize(std::strlen(buf.c_str()));
  while (!buf.empty() && buf.back() == '\n') buf.pop_back();
  *log = buf.substr(buf.rfind('\n') == std::string::npos ? 0 : buf.rfind('\n') + 1);
  errno = saved;
  return -1;
}

int ProgramFdById(uint32_t id) {
  bpf_attr a{};
  a.prog_id = id;
  return Bpf(BPF_PROG_GET_FD_BY_ID, &a);
}

bool ProgramId(int prog_fd, uint32_t* id) {
  bpf_prog_info info{};
  bpf_attr a{};
  a.info.bpf_fd = static_cast<uint32_t>(prog_fd);
  a.info.info_len = sizeof info;
  a.info.info = Ptr(&info);
  if (Bpf(BPF_OBJ_GET_INFO_BY_FD, &a) != 0) return false;
  *id = info.id;
  return true;
}

// Attaches prog_fd to the cgroup in place of replace_fd, atomically.
bool AttachReplacing(int cgroup_fd, int prog_fd, int replace_fd) {
  bpf_attr a{};
  a.target_fd = static_cast<uint32_t>(cgroup_fd);
  a.attach_bpf_fd = static_cast<uint32_t>(prog_fd);
  a.attach_type = BPF_CGROUP_DEVICE;
  a.attach_flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE;
  a.replace_bpf_fd = static_cast<uint32_t>(replace_fd);
  return Bpf(BPF_PROG_ATTACH, &a) == 0;
}

bool Contains(const std::vector<uint32_t>& ids, uint32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

bool DeviceCgroupV2::Open(const std::string& path, DeviceCgroupV2* out, Error* err) {
  out->path_ = path;
  // BPF_PROG_QUERY/ATTACH need a real (not O_PATH) directory fd.
  out->dir_.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!out->dir_.valid()) return Fail(err, "cannot open the container's cgroup", path, errno);
  struct statfs fs;
  if (::fstatfs(out->dir_.get(), &fs) != 0)
    return Fail(err, "cannot stat the container's cgroup", path, errno);
  if (fs.f_type != CGROUP2_SUPER_MAGIC)
    return Fail(err, "the container's cgroup is not on a cgroup2 file system", path);
  return true;
}

bool DeviceCgroupV2::Replace(const std::vector<DeviceRule>& rules, Error* err) {
  std::vector<uint32_t> ids;
  uint32_t flags = 0;
  if (!QueryPrograms(dir_.get(), &ids, &flags))
    return Fail(err, "cannot list the device programs attached to", path_, errno);
  if (ids.empty()) {
    OCID_DEBUG("no device program is attached to " + path_ +
               ": device access is not restricted, nothing to replace");
    return true;
  }
  if (ids.size() > 1)
    return Fail(err, std::to_string(ids.size()) + " device programs are attached to " + path_ +
                         "; refusing to replace (only a single one can be replaced: all "
                         "must allow an access, and removing another could widen access)");
  if (!(flags & BPF_F_ALLOW_MULTI))
    return Fail(err, "the device program on " + path_ +
                         " was attached without BPF_F_ALLOW_MULTI; refusing to replace it");
  old_id_ = ids[0];
  old_prog_.reset(ProgramFdById(old_id_));
  if (!old_prog_.valid())
    return Fail(err, "cannot open device program " + std::to_string(old_id_) + " attached to",
                path_, errno);

  std::string log;
  new_prog_.reset(LoadProgram(DeviceProgram(rules), &log));
  if (!new_prog_.valid())
    return Fail(err,
                "cannot load the device program for the container's cgroup" +
                    (log.empty() ? std::string() : " (verifier: " + log + ")"),
                path_, errno);
  if (!AttachReplacing(dir_.get(), new_prog_.get(), old_prog_.get()))
    return Fail(err, "cannot replace device program " + std::to_string(old_id_) + " of", path_,
                errno);
  attached_ = true;
  return Verify(err);
}

// The kernel's own view after the attach: ours in force, the old one gone.
bool DeviceCgroupV2::Verify(Error* err) {
  uint32_t new_id = 0;
  if (!ProgramId(new_prog_.get(), &new_id))
    return Fail(err, "cannot read the id of our device program for", path_, errno);
  std::vector<uint32_t> ids;
  uint32_t flags = 0;
  if (!QueryPrograms(dir_.get(), &ids, &flags))
    return Fail(err, "cannot list the device programs attached to", path_, errno);
  if (!Contains(ids, new_id) || Contains(ids, old_id_) || ids.size() != 1)
    return Fail(err, "device program " + std::to_string(new_id) +
                         " is not the only one in force "
                         "after replacing " +
                         std::to_string(old_id_) + " on " + path_);
  OCID_DEBUG("replaced device program " + std::to_string(old_id_) + " with " +
             std::to_string(new_id) + " on " + path_);
  return true;
}

void DeviceCgroupV2::Undo() {
  if (!attached_) return;
  if (!AttachReplacing(dir_.get(), old_prog_.get(), new_prog_.get()))
    log::Warn("cannot put device program " + std::to_string(old_id_) + " back on " + path_ + ": " +
              std::strerror(errno));
  attached_ = false;
}

}  // namespace ocid
