// Small reads of host files for `check`, rooted at --host-root like
// HostView: sysfs attributes and links, engine configuration files, CDI
// specs. Every lookup resolves inside the host root (OpenInRoot), so a fake
// tree under /tmp/x answers exactly like the real host under /, absolute
// symlinks included. Nothing is written, nothing executed; a file is only
// read when it is a regular file (never a FIFO or a device).
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "error.h"
#include "unique_fd.h"

namespace ocid {

// What a lookup found. kMissing covers an absent path, a dangling link and
// a non-directory in the middle: "not there" for every caller.
enum class HostRead { kOk, kMissing, kError };

struct FileIdentity {
  uint64_t dev = 0, ino = 0;
  bool operator==(const FileIdentity& o) const { return dev == o.dev && ino == o.ino; }
};

// Who owns a file and its permission bits (st_uid, st_mode & 07777).
struct FileOwner {
  uint32_t uid = 0;
  uint32_t mode = 0644;
};

class HostFiles {
 public:
  static bool Open(const std::string& host_root, std::unique_ptr<HostFiles>* out, Error* err);

  // A regular file's bytes, up to `limit` (more is an error).
  HostRead Read(const std::string& path, size_t limit, std::string* out, Error* err) const;
  // The target of the symlink `path` (its last component not followed).
  HostRead ReadLink(const std::string& path, std::string* out, Error* err) const;
  // The names in directory `path`, sorted.
  HostRead List(const std::string& dir, std::vector<std::string>* names, Error* err) const;
  // st_dev and st_ino of `path`, symlinks followed inside the host root.
  HostRead Identity(const std::string& path, FileIdentity* out, Error* err) const;
  // The owner and mode of `path` (symlinks followed inside the host root).
  HostRead Owner(const std::string& path, FileOwner* out, Error* err) const;
  // Whether `path` exists (symlinks followed inside the host root).
  bool Exists(const std::string& path) const;

  // How to name a host path in messages (with the host root prefix).
  std::string Display(const std::string& path) const {
    return root_path_ == "/" ? path : root_path_ + path;
  }
  const std::string& root_path() const { return root_path_; }

 private:
  HostRead OpenPath(const std::string& path, int flags, UniqueFd* fd, Error* err) const;
  // fstat of the file at `path` (resolved as OpenPath does), never opened.
  HostRead Stat(const std::string& path, struct stat* st, Error* err) const;
  UniqueFd root_;
  std::string root_path_;
};

}  // namespace ocid
