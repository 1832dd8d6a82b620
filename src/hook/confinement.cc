#include "confinement.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "seccomp_filter.h"  // generated at build time: kHookSeccompFilter

namespace ocid {

bool ConfineHook(Error* err) {
  // no_new_privs lets the filter load without CAP_SYS_ADMIN and guarantees
  // no exec could ever gain privileges anyway.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return Fail(err, "cannot set no_new_privs", "", errno);
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(sizeof kHookSeccompFilter / sizeof kHookSeccompFilter[0]);
  prog.filter = const_cast<sock_filter*>(kHookSeccompFilter);
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    return Fail(err, "cannot load the seccomp filter", "", errno);
  return true;
}

}  // namespace ocid
