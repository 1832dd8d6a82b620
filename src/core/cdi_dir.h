// The one writer of a CDI directory: `cdi generate` (cdi_cmd.cc) and the
// device plugin's keeper (cdi_dir_keeper.h) write and remove our spec and
// preload files through it.
//
// A writer is one directory, opened once by the writer's rule
// (atomic_file.h OpenWriteDir: from "/" with O_NOFOLLOW, links followed
// only where root made them and others cannot change them, the directory
// and its ancestors root's and not writable by others unless sticky).
// Every listing, write, unlink and "is it current" goes through that fd,
// never the path again; its identity (device, inode) is kept for callers
// that check later that the path still leads there.
//
// Which names are ours is cdi_names.h's (oci-decorator-<stem>.json and
// its preload files); nothing else in the directory is touched. Which of
// our names are removed, and whose files, each function below says.
//
// The writer logs nothing: it says which names it wrote or removed, and
// each caller logs them in its own words.
#pragma once
#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

#include "cdi.h"
#include "error.h"
#include "unique_fd.h"

namespace ocid {

class CdiDirWriter {
 public:
  // Opens `path` by the writer's rule (missing components made 0755 when
  // `create`) into *out. On failure *err is the rule's own error, which
  // each caller words as it did.
  static bool Open(const std::string& path, bool create, CdiDirWriter* out, Error* err);

  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  dev_t dev() const { return dev_; }
  ino_t ino() const { return ino_; }

  // Whether `name` already holds `bytes`, mode 0644, root's (the
  // effective user's), and is no symlink.
  bool IsCurrent(const std::string& name, const std::string& bytes) const;

  // The files of one spec, in CdiFilesOf order (the preload files, the spec
  // last), each replaced atomically unless it is current; every one when
  // `always`. *written: the names written, in order, also when a write
  // fails (false with *err; the files after it are not written).
  bool WriteSpecFiles(const std::vector<CdiFileToWrite>& files, bool always,
                      std::vector<std::string>* written, Error* err) const;

  // Removes the spec of `stem` and then the preload files that belong to it
  // (CdiPreloadStem: a.b's files are not a's), whoever's they are. With
  // `keep`, the spec stays and so do the preload files named in `keep`; of
  // the others only root's are removed. *removed: the names removed, in
  // order. Nothing when the directory cannot be listed.
  void RemoveStem(const std::string& stem, const std::set<std::string>* keep,
                  std::vector<std::string>* removed) const;

  // Our files whose stem is not in `keep_stems`: a spec when it is root's,
  // regular and rendered by us (IsRenderedCdiSpec), then a preload file
  // when it is root's and its spec is gone. *removed: the names removed,
  // specs first. False with *err when the directory cannot be listed.
  bool Sweep(const std::set<std::string>& keep_stems, std::vector<std::string>* removed,
             Error* err) const;

 private:
  std::string path_;
  UniqueFd fd_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace ocid
