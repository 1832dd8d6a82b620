#include "confinement.h"

#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <memory>

namespace ocid {
namespace {

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

}  // namespace

bool ConfineHook(Error* err) {
  // no_new_privs lets an unprivileged filter load and guarantees no exec
  // could ever gain privileges anyway.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return Fail(err, "cannot set no_new_privs", "", errno);
  std::unique_ptr<void, FilterDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Fail(err, "cannot create the seccomp filter");
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  const int refused[] = {
      SCMP_SYS(execve),        SCMP_SYS(execveat),          SCMP_SYS(ptrace),
      SCMP_SYS(process_vm_writev), SCMP_SYS(process_vm_readv),
      SCMP_SYS(init_module),   SCMP_SYS(finit_module),      SCMP_SYS(delete_module),
      SCMP_SYS(kexec_load),    SCMP_SYS(kexec_file_load),
  };
  for (int sc : refused) {
    int rc = seccomp_rule_add(ctx.get(), deny, sc, 0);
    if (rc != 0) return Fail(err, "cannot add a seccomp rule", "", -rc);
  }
  // Sockets: AF_UNIX only (a syslog sink is the one socket a logger may want).
  int rc = seccomp_rule_add(ctx.get(), deny, SCMP_SYS(socket), 1,
                            SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(AF_UNIX)));
  if (rc == 0)
    rc = seccomp_rule_add(ctx.get(), deny, SCMP_SYS(socketpair), 1,
                          SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(AF_UNIX)));
  if (rc != 0) return Fail(err, "cannot add a seccomp rule", "", -rc);
  rc = seccomp_load(ctx.get());
  if (rc != 0) return Fail(err, "cannot load the seccomp filter", "", -rc);
  return true;
}

}  // namespace ocid
