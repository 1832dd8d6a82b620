#include "confinement_rules.h"

#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace ocid {
namespace {

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

}  // namespace

std::string CompileHookFilter(std::string* why) {
  std::unique_ptr<void, FilterDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return *why = "seccomp_init failed", "";
  // Refused with EPERM, not killed: a refusal surfaces as one error line.
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  const int refused[] = {
      SCMP_SYS(execve),           SCMP_SYS(execveat),
      SCMP_SYS(ptrace),           SCMP_SYS(process_vm_writev),
      SCMP_SYS(process_vm_readv), SCMP_SYS(init_module),
      SCMP_SYS(finit_module),     SCMP_SYS(delete_module),
      SCMP_SYS(kexec_load),       SCMP_SYS(kexec_file_load),
  };
  for (int sc : refused)
    if (int rc = seccomp_rule_add(ctx.get(), deny, sc, 0); rc != 0)
      return *why = std::string("seccomp_rule_add: ") + std::strerror(-rc), "";
  // Sockets: exactly what the log sinks need (log.h): an AF_UNIX datagram
  // socket for journald or syslog. Any other family, any other type (a
  // stream could reach a daemon's control socket), and socketpair are
  // refused. The type is compared with SOCK_CLOEXEC|SOCK_NONBLOCK masked
  // out; other flag bits the kernel refuses itself (EINVAL).
  auto add = [&](int sc, unsigned count, const scmp_arg_cmp* cmp) -> bool {
    int rc = seccomp_rule_add_array(ctx.get(), deny, sc, count, cmp);
    if (rc != 0) *why = std::string("seccomp_rule_add: ") + std::strerror(-rc);
    return rc == 0;
  };
  const scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(AF_UNIX));
  if (!add(SCMP_SYS(socket), 1, &not_unix) || !add(SCMP_SYS(socketpair), 0, nullptr)) return "";
  const scmp_datum_t type_mask = ~static_cast<uint32_t>(SOCK_CLOEXEC | SOCK_NONBLOCK);
  for (scmp_datum_t type = 0; type <= 0xf; ++type) {  // every value of SOCK_TYPE_MASK
    if (type == SOCK_DGRAM) continue;
    const scmp_arg_cmp other = SCMP_A1(SCMP_CMP_MASKED_EQ, type_mask, type);
    if (!add(SCMP_SYS(socket), 1, &other)) return "";
  }
  // Export through a memfd: libseccomp writes the program to an fd.
  int fd = ::memfd_create("ocid-seccomp", MFD_CLOEXEC);
  if (fd < 0) return *why = "memfd_create failed", "";
  std::string out;
  if (int rc = seccomp_export_bpf(ctx.get(), fd); rc == 0) {
    off_t size = ::lseek(fd, 0, SEEK_END);
    out.resize(static_cast<size_t>(size));
    if (::pread(fd, out.data(), out.size(), 0) != static_cast<ssize_t>(out.size())) out.clear();
  } else {
    *why = std::string("seccomp_export_bpf: ") + std::strerror(-rc);
  }
  ::close(fd);
  return out;
}

}  // namespace ocid
