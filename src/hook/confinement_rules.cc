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
      SCMP_SYS(ptrace),           SCMP_SYS(process_vm_writev), SCMP_SYS(process_vm_readv),
      SCMP_SYS(init_module),      SCMP_SYS(finit_module),      SCMP_SYS(delete_module),
      SCMP_SYS(kexec_load),       SCMP_SYS(kexec_file_load),
  };
  for (int sc : refused)
    if (int rc = seccomp_rule_add(ctx.get(), deny, sc, 0); rc != 0)
      return *why = std::string("seccomp_rule_add: ") + std::strerror(-rc), "";
  // Sockets: AF_UNIX only (a syslog sink is the one socket a logger may want).
  for (int sc : {SCMP_SYS(socket), SCMP_SYS(socketpair)})
    if (int rc = seccomp_rule_add(ctx.get(), deny, sc, 1,
                                  SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(AF_UNIX)));
        rc != 0)
      return *why = std::string("seccomp_rule_add: ") + std::strerror(-rc), "";
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
