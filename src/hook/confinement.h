// Self-confinement of the hook with a seccomp filter (the only user of
// libseccomp). Installed before the hook reads any input, so whatever a
// parser bug might lead to, the process can never:
//   - execute a program (execve, execveat);
//   - trace or write another process's memory (ptrace, process_vm_writev,
//     process_vm_readv);
//   - load or remove kernel modules, or kexec;
//   - open network sockets other than AF_UNIX.
// Each is refused with EPERM rather than killing the process, so a refusal
// shows up as one clear error line. Everything the hook needs (setns, the
// mount API, bpf for cgroup v2 device programs, setfsuid/setfsgid/capset
// for creating mountpoints as a user namespace's root: container_root.h)
// stays allowed. Not used by
// the runtime shim, whose job ends in exec'ing the real runtime.
#pragma once
#include "error.h"

namespace ocid {

// Sets no_new_privs and loads the filter. Fails closed: callers must not go
// on if this fails.
bool ConfineHook(Error* err);

}  // namespace ocid
