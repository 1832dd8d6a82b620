// The host's procfs, for everything the hook reads or names under /proc once
// it has entered a container's mount namespace.
//
// Threat model: after setns(CLONE_NEWNS) the string "/proc" is looked up in
// the container's mount tree. A container that joins another container's
// mount namespace (linux.namespaces "mount" with a path) hands that tree to
// the other container, which may have mounted a tmpfs or a directory of its
// own over /proc: a fake mountinfo, a fake thread-self/fd/N that is a FIFO
// or a device node the hook would open as host root, outside any device
// cgroup. So /proc is opened once, on the host, before setns; it must be a
// procfs root; and every later access is relative to that fd. An fd keeps
// its mount whatever namespace its holder enters, and "thread-self" in it
// resolves to the calling thread in the host's pid namespace.
#pragma once
#include <string>

#include "error.h"
#include "unique_fd.h"

namespace ocid::host_proc {

// The host's /proc as an O_PATH directory fd: opened and checked (fstatfs
// f_type PROC_SUPER_MAGIC, the procfs root inode) by the first call, the
// same fd for every later one. The executor makes the first call before it
// enters a container's mount namespace (reading a host file makes it
// earlier, files.h); the fd is never closed. Safe from any thread.
bool Fd(int* fd, Error* err);

// What Fd() does on its first call, every time: opens /proc and refuses
// anything but the root of a procfs (a tmpfs or a directory mounted there,
// or a procfs subdirectory bound over it, would answer with whatever its
// owner wrote). For the tests: Fd() is usually open already, since the
// first host file read (files.h) opens it.
bool OpenChecked(UniqueFd* out, Error* err);

// "thread-self/fd/N" and "thread-self/fdinfo/N", relative to Fd(): the
// magic link naming exactly the object that fd N holds, and its fdinfo.
std::string ThreadSelfFd(int fd);
std::string ThreadSelfFdinfo(int fd);

}  // namespace ocid::host_proc
