// The host as the hook, the planner, `check` and the device plugin see it:
// one reader over --host-root. It matches inventory patterns (with the fds
// the executor later mounts), reads regular files whole or in chunks (the
// version lock, profiles, engine configs, CDI specs, sysfs attributes),
// reads links, lists directories, and says what a file is and who owns it.
// Every lookup resolves inside the host root (openat2 RESOLVE_IN_ROOT), so
// a simulated install under /tmp/x behaves exactly like one under /,
// absolute symlinks included. Nothing is written, nothing executed, and a
// file is only opened for reading when it is a regular file (never a FIFO
// or a device: files.h). Tests hand the pure code a fake (test/unit/
// fake_host.h) or a real tree under a temporary directory.
#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dir_trust.h"
#include "error.h"
#include "unique_fd.h"

namespace ocid {

enum class FileType { kRegular, kDirectory, kCharDevice, kBlockDevice, kOther };
const char* FileTypeName(FileType t);
FileType FileTypeOf(mode_t mode);

struct HostMatch {
  std::string path;      // as matched, absolute within the host root
  std::string resolved;  // after following symlinks inside the host root
  FileType type = FileType::kOther;
  uint64_t rdev = 0;          // st_rdev for devices
  uint32_t mode = 0;          // st_mode
  uint32_t uid = 0, gid = 0;  // st_uid, st_gid (what `check` reports)
  uint64_t dev = 0;           // st_dev and st_ino identify the file, so the
  uint64_t ino = 0;           // executor can check it is still the one planned
};
// `st`'s facts into *m (all but its path and resolved path).
void SetStatFacts(const struct stat& st, HostMatch* m);

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

// Paths are absolute within the host root. A view of names only (a test's
// fake) need not read: the defaults of the reading operations fail with
// ENOTSUP, and Exists says no.
class HostView {
 public:
  virtual ~HostView() = default;
  // Paths matching `pattern` (absolute; a glob is allowed in the last
  // component only), sorted by name. A missing directory or no match gives
  // an empty list; only real I/O failures return false.
  virtual bool Match(const std::string& pattern, std::vector<HostMatch>* out, Error* err) const = 0;
  // How to name a host path in messages (with the host root prefix).
  virtual std::string Display(const std::string& path) const { return path; }
  // `path` after following symlinks inside the host root, for views that
  // leave HostMatch::resolved empty; "" when unknown.
  virtual std::string Resolve(const std::string& path) const {
    (void)path;
    return "";
  }
  // Shows the bytes of the regular host file `path` to `sink`, in order, in
  // chunks of at most 64 KiB, until the sink returns false (enough seen).
  // A file of more than `limit` bytes fails (reading stops there); a
  // missing one, or a dangling link, fails with err->errnum ENOENT (or
  // ENOTDIR, ELOOP). A view of names only cannot read: this default fails
  // with ENOTSUP.
  using ChunkSink = std::function<bool(std::string_view)>;
  virtual bool ReadChunks(const std::string& path, size_t limit, const ChunkSink& sink,
                          Error* err) const;

  // A regular file's bytes, up to `limit` (more is an error). This default
  // gathers what ReadChunks shows.
  virtual HostRead Read(const std::string& path, size_t limit, std::string* out, Error* err) const;
  // The target of the symlink `path` (its last component not followed).
  virtual HostRead ReadLink(const std::string& path, std::string* out, Error* err) const;
  // The names in directory `dir`, sorted.
  virtual HostRead List(const std::string& dir, std::vector<std::string>* names, Error* err) const;
  // st_dev and st_ino of `path`, symlinks followed inside the host root.
  virtual HostRead Identity(const std::string& path, FileIdentity* out, Error* err) const;
  // The owner and mode of `path` (symlinks followed inside the host root).
  virtual HostRead Owner(const std::string& path, FileOwner* out, Error* err) const;
  // Whether `path` exists (symlinks followed inside the host root).
  virtual bool Exists(const std::string& path) const {
    (void)path;
    return false;
  }
  // The walk of root's writer to the directory `dir` inside the host root
  // and up from it to the host root (WalkDir, dir_trust.h): each link met,
  // the directory reached, its real ancestors, what `check` judges with the
  // writer's rule. A link the rule refuses ends the steps. kMissing when
  // `dir`, or a directory on the way, is missing or not a directory.
  virtual HostRead DirSteps(const std::string& dir, std::vector<DirStep>* out, Error* err) const;
};

class HostRootView : public HostView {
 public:
  static bool Open(const std::string& host_root, std::unique_ptr<HostRootView>* out, Error* err);
  bool Match(const std::string& pattern, std::vector<HostMatch>* out, Error* err) const override;
  // Fill HostMatch::resolved in Match (one readlink per match). The hook
  // turns it off and resolves only the few paths the planner asks about.
  void set_resolve_paths(bool on) { resolve_paths_ = on; }
  std::string Resolve(const std::string& path) const override;
  bool ReadChunks(const std::string& path, size_t limit, const ChunkSink& sink,
                  Error* err) const override;
  HostRead Read(const std::string& path, size_t limit, std::string* out, Error* err) const override;
  HostRead ReadLink(const std::string& path, std::string* out, Error* err) const override;
  HostRead List(const std::string& dir, std::vector<std::string>* names, Error* err) const override;
  HostRead Identity(const std::string& path, FileIdentity* out, Error* err) const override;
  HostRead Owner(const std::string& path, FileOwner* out, Error* err) const override;
  bool Exists(const std::string& path) const override;
  HostRead DirSteps(const std::string& dir, std::vector<DirStep>* out, Error* err) const override;
  std::string Display(const std::string& path) const override {
    return root_path_ == "/" ? path : root_path_ + path;
  }
  // The O_PATH fd of a host path, moved out of what Match opened (so the
  // executor mounts exactly the file that was planned, without a second
  // lookup), or opened afresh inside the host root if Match did not see it.
  bool OpenSource(const std::string& path, UniqueFd* out, Error* err) const;
  int fd() const { return root_.get(); }
  const std::string& root_path() const { return root_path_; }

 private:
  UniqueFd root_;
  std::string root_path_;
  mutable std::map<std::string, UniqueFd> opened_;
  bool resolve_paths_ = true;
  std::string ResolvedOf(int fd, const std::string& path) const;
  // `path` resolved inside the root and opened with `flags`.
  HostRead OpenPath(const std::string& path, int flags, UniqueFd* fd, Error* err) const;
  // The regular file at `path` opened for reading (files.h), its fstat in
  // *st when asked. *err says why it failed, kMissing included (its errno).
  HostRead OpenRegular(const std::string& path, UniqueFd* fd, struct stat* st, Error* err) const;
  // fstat of the file at `path` (resolved as OpenPath does), never opened.
  HostRead Stat(const std::string& path, struct stat* st, Error* err) const;
};

bool HasGlob(const std::string& s);

}  // namespace ocid
