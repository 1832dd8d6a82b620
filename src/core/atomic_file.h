// Writing configuration files that other programs read (CDI specs, engine
// drop-ins, docker's daemon.json) so that a reader never sees half a file:
// a temporary file in the same directory, fsync, rename over the target,
// fsync the directory. A symbolic link at the target is refused (never
// written through), as is anything but a regular file.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>

#include "error.h"

namespace ocid {

// Reads `path` (O_NOFOLLOW: a symlink is refused) up to `limit` bytes.
// A missing file is not an error: *exists is false and *out empty.
bool ReadFileIfExists(const std::string& path, size_t limit, std::string* out,
                      bool* exists, Error* err);

// Replaces `path` with `data`. Missing parent directories are created 0755.
// The new file gets the old file's mode and owner when it existed, else
// `mode`. The temporary name (".<name>.tmp.<pid>.<n>") ends in no config
// extension, so directory scanners (CDI, conf.d globs) never pick it up.
bool WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode,
                     Error* err);

// Writes `data` (the file's current content) to a new file `path`.bak.<UTC
// time>, never overwriting one (a -N suffix is added), with the mode of
// `path`. Returns the backup's name in *backup.
bool WriteBackup(const std::string& path, const std::string& data, std::string* backup,
                 Error* err);

}  // namespace ocid
