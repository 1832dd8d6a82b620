// Thin file reading wrappers. Parsers take bytes; these get the bytes.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "error.h"

namespace ocid {

// Upper bounds on what the hook reads; anything larger is refused.
constexpr size_t kMaxStateBytes = 1 << 20;         // OCI state on stdin
constexpr size_t kMaxConfigBytes = 32 << 20;       // bundle config.json
constexpr size_t kMaxInventoryBytes = 1 << 20;     // one inventory file
constexpr size_t kMaxSmallFileBytes = 1 << 20;     // /proc files, devices.list
constexpr size_t kMaxPreloadBytes = 64 << 10;      // an image's /etc/ld.so.preload
// How much more than its limit is read from a pipe before giving up on EOF.
constexpr size_t kMaxDrainBytes = 64 << 20;

// Reads fd to EOF. Drains a pipe (a runtime writing the state must never
// see EPIPE), up to limit + kMaxDrainBytes, but keeps at most `limit` bytes
// and fails if there were more; a regular file larger than `limit` is
// refused without being read. `what` names the input in the error ("OCI
// state on stdin"), which names the limit.
bool ReadAllFd(int fd, size_t limit, const std::string& what, std::string* out,
               Error* err);

// Opens `path` relative to dirfd (AT_FDCWD for plain paths) with O_NOFOLLOW
// on the last component and reads it whole, up to `limit` bytes. Only a
// regular file is read: a symlink, FIFO, directory or device is refused
// (a FIFO without waiting for a writer).
bool ReadFileAt(int dirfd, const std::string& path, size_t limit,
                std::string* out, Error* err);

// The names in an open directory (O_RDONLY|O_DIRECTORY), without "." and
// "..", unsorted. getdents64 directly: no DIR stream, no extra fcntl calls.
bool ListDirectory(int dirfd, const std::string& what, std::vector<std::string>* names,
                   Error* err);

// Writes all of `data` to fd.
bool WriteAllFd(int fd, const std::string& data, const std::string& what,
                Error* err);

}  // namespace ocid
