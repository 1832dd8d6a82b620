// The host side of an inventory: what its patterns match under --host-root.
// Every lookup resolves inside the host root (openat2 RESOLVE_IN_ROOT), so a
// simulated install under /tmp/x behaves exactly like one under /, absolute
// symlinks included.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "error.h"
#include "unique_fd.h"

namespace ocid {

enum class FileType { kRegular, kDirectory, kCharDevice, kBlockDevice, kOther };
const char* FileTypeName(FileType t);
FileType FileTypeOf(mode_t mode);

struct HostMatch {
  std::string path;       // as matched, absolute within the host root
  std::string resolved;   // after following symlinks inside the host root
  FileType type = FileType::kOther;
  uint64_t rdev = 0;      // st_rdev for devices
  uint64_t dev = 0;       // st_dev and st_ino identify the file, so the
  uint64_t ino = 0;       // executor can check it is still the one planned
};

class HostView {
 public:
  virtual ~HostView() = default;
  // Paths matching `pattern` (absolute; a glob is allowed in the last
  // component only), sorted by name. A missing directory or no match gives
  // an empty list; only real I/O failures return false.
  virtual bool Match(const std::string& pattern, std::vector<HostMatch>* out,
                     Error* err) const = 0;
  // How to name a host path in messages (with the host root prefix).
  virtual std::string Display(const std::string& path) const { return path; }
};

class HostRootView : public HostView {
 public:
  static bool Open(const std::string& host_root,
                   std::unique_ptr<HostRootView>* out, Error* err);
  bool Match(const std::string& pattern, std::vector<HostMatch>* out,
             Error* err) const override;
  std::string Display(const std::string& path) const override {
    return root_path_ == "/" ? path : root_path_ + path;
  }
  int fd() const { return root_.get(); }
  const std::string& root_path() const { return root_path_; }

 private:
  UniqueFd root_;
  std::string root_path_;
};

bool HasGlob(const std::string& s);

}  // namespace ocid
