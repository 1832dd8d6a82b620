// Keeps the CDI specs of the cluster view present and current in a
// directory (--cdi-dir), so that the cdi_devices Allocate names resolve on
// this node. The keeper plans nothing: the ResourceWatch builds each
// inventory's spec (cluster.h BuildClusterCdi: the core's BuildCdiSpec
// under --host-root, host paths under --host-path-root, its preload files,
// mounted at /etc/ld.so.preload, named under --cdi-dir) in the same
// rebuild, from the same inventories and host, as the resources; the keeper
// makes the directory match that view. The directory must have the same
// path on the host as in the plugin.
//
// One directory, one rule (SECURITY.md 2.9, 2.13). Each pass resolves
// --cdi-dir once by the writer's rule (atomic_file.h OpenWriteDir, missing
// components made 0755: from "/" with O_NOFOLLOW, a symlink followed only
// when root made it where others cannot change it, the directory and its
// ancestors root's and not writable by others unless sticky), and every
// listing, write, unlink and "is it current" of the pass goes through that
// fd; its identity (device, inode) is published with what the pass found.
// A pass that finds the directory failing the rule (chmod'ed 0777, a
// component swapped for a link another user made) writes nothing, removes
// nothing, says so in one line (once while it lasts) and publishes a
// snapshot under which nothing of the directory is handed out. An answer
// names paths under --cdi-dir, which the kubelet and the runtime resolve
// later: so Resolves and PreloadFileIfCurrent resolve the path again by
// the same rule at that moment, require the very directory of the last
// pass, and check the files through that fd. Once the path passes the
// rule, only root can change what it leads to (each component is root's,
// in directories only root can change or sticky ones), so what the answer
// names stays what was checked.
//
// The kubernetes mode refuses a --cdi-dir that fails the rule at start
// (kubernetes_cmd.cc), before the first pass.
//
// When. On its own thread, a pass runs at start (before Start returns), on
// every view change and every honoured Recheck (SIGHUP), on inotify events
// for our file names in the directory (a spec or preload file deleted,
// renamed, written or chmod'ed by anyone) and for the directory's own mode
// or owner (watched through the fd of the pass, never by path), and every
// --recheck-interval. A pass that finds everything current writes nothing,
// so the events of its own writes cause one more pass and no more.
//
// Each file is written (atomic_file.h: root's, 0644, in a directory only
// root can change) unless it is already current: the right bytes AND mode
// 0644 AND owned by root, so a file deleted, edited, made writable by
// others or given to someone else is replaced.
//
// What the keeper owns, and so reconciles, is its naming in --cdi-dir:
// oci-decorator-<stem>.json and oci-decorator-<stem>.<device>.preload
// (cdi.h), <stem> an inventory's file stem.
// - An inventory that parses but yields no spec (the version lock after a
//   module upgrade, every device gone), or whose CDI kind an earlier one
//   has (cdi.h CdiKindConflicts), has its spec removed, then its preload
//   files, with one log line why: an old spec would keep offering what the
//   plan no longer allows.
// - A device the spec no longer has (a feature removed from the
//   inventory) has its preload file removed (root's only).
// - An inventory that is gone has its spec and preload files removed; at
//   start (the first pass), so are those left by inventories removed while
//   the plugin was down. There, a spec is removed only when it is a
//   regular file owned by root that is byte for byte what this program
//   renders (cdi.h IsRenderedCdiSpec), a preload file only when it is
//   owned by root and the spec it belongs to is not left: an operator's
//   own file in the directory stays.
// - A broken (unparseable) inventory keeps its last spec, and the keeper
//   keeps it present: pods that got its devices keep starting while the
//   operator fixes the file.
//
// Allocate asks Resolves before it names a CDI device: only a device of a
// spec this keeper wrote or found current, whose files are still current
// at that moment, is named; and PreloadFileIfCurrent before it names a
// preload file (kubelet_allocate.h says what is answered otherwise).
//
// `cdi generate --output-dir` pointed at the same directory writes the
// same names: the keeper then owns them as above (rewrites them to its own
// rendering, removes those of inventories it has not got). One directory
// has one writer; CDI cannot tell two specs of one kind apart by file name
// (two defining one device in one directory disable it).
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cdi_dir.h"
#include "cluster.h"
#include "error.h"
#include "resource_watch.h"
#include "unique_fd.h"

namespace ocid {

class CdiDirKeeper {
 public:
  // `config_dir` is only named in log lines.
  CdiDirKeeper(std::string dir, std::string config_dir);
  ~CdiDirKeeper();
  CdiDirKeeper(const CdiDirKeeper&) = delete;
  CdiDirKeeper& operator=(const CdiDirKeeper&) = delete;

  // One pass: makes the directory match `view`, as the header says, and
  // publishes what is there for Resolves. A view without a CDI directory
  // (the inventories were never read) changes nothing. Each failure is one
  // log line (once while it lasts); returns false if any happened.
  bool Sync(const ClusterView& view);

  // Runs a first pass on `watch`'s view, then keeps the directory on its
  // own thread, as the header says; `period` is the periodic re-check.
  // Fails only when inotify or an eventfd cannot be created.
  bool Start(const ResourceWatch* watch, std::chrono::milliseconds period, Error* err);
  // Stops the thread; the files stay (pods still resolve them).
  void Stop();

  // Whether `cdi_device` ("amd.com/onload=onload") is in a spec the last
  // pass wrote or found current, --cdi-dir still leads by the writer's
  // rule to the directory that pass checked, and the spec and the device's
  // preload file in it are still current now; otherwise *why names the
  // spec (or the directory) and why, and the keeper is woken. Thread-safe.
  bool Resolves(const std::string& cdi_device, std::string* why) const;

  // Whether the preload file `name` (one component) holding `bytes` may be
  // named to the kubelet now: --cdi-dir leads by the writer's rule to the
  // directory the last pass checked, and `name` in it, opened O_NOFOLLOW
  // through that directory's fd, is current (the bytes, mode 0644,
  // root's). Then *path is --cdi-dir/name; otherwise false, and the keeper
  // is woken. Thread-safe.
  bool PreloadFileIfCurrent(const std::string& name, const std::string& bytes,
                            std::string* path) const;

  // Files written so far (tests: a pass that finds everything current
  // writes none).
  uint64_t files_written() const { return files_written_; }
  // Passes run so far (tests: a Recheck wakes the keeper).
  uint64_t passes() const { return passes_; }

 private:
  // What a pass leaves for Resolves, by CDI kind.
  struct OnDisk {
    std::string spec_path;
    std::string why;  // no spec: why (then nothing below)
    std::set<std::string> devices;
    std::vector<std::string> notes;     // devices left out, conflicts
    std::vector<CdiFileToWrite> files;  // names relative to the directory
  };
  struct Snapshot {
    // The directory failed the rule on the pass: why (then nothing below,
    // and nothing of it is handed out).
    std::string dir_why;
    dev_t dev = 0;  // the directory the pass checked
    ino_t ino = 0;
    std::map<std::string, OnDisk> kinds;
  };

  // The directory of `snap`, opened now by the writer's rule, into *dfd;
  // false with *why when the pass found it unsafe, it fails the rule now,
  // or the path now leads to another directory.
  bool OpenChecked(const Snapshot& snap, UniqueFd* dfd, std::string* why) const;
  std::shared_ptr<const Snapshot> Current() const;
  void Publish(std::shared_ptr<const Snapshot> snap);
  // Removes the spec of `stem` and the preload files that belong to it
  // (cdi_dir.h CdiDirWriter::RemoveStem: a.b's files are not a's); with
  // `keep`, only preload files not named there. Logs each removal.
  void RemoveStem(const CdiDirWriter& dir, const std::string& stem, const std::string& why,
                  const std::set<std::string>* keep = nullptr);
  // The first pass: files of stems not in `stems`, as the header says
  // (CdiDirWriter::Sweep). Logs each removal.
  void RemoveOrphans(const CdiDirWriter& dir, const std::set<std::string>& stems);
  // Logs `line` for `key` unless it is what was last said for it.
  void SayOnce(const std::string& key, const std::string& line, bool error);
  void Loop(const ResourceWatch* watch, std::chrono::milliseconds period);
  // Watches the directory `dfd` (the one the pass checked, by its fd).
  void WatchDir(int dfd);
  void Wake() const;

  std::string dir_;
  std::string config_dir_;
  // inventory file -> its files' names in the directory, the spec last
  std::map<std::string, std::vector<std::string>> written_;
  std::map<std::string, std::string> said_;  // inventory file -> last line logged
  std::string dir_said_;                     // the directory's refusal, while it lasts
  bool swept_ = false;
  std::atomic<uint64_t> files_written_{0};
  std::atomic<uint64_t> passes_{0};

  mutable std::mutex snap_mu_;
  std::shared_ptr<const Snapshot> snapshot_;

  std::atomic<bool> stopping_{false};
  int inotify_fd_ = -1;
  int wake_fd_ = -1;
  int dir_watch_ = -1;
  std::thread thread_, waiter_;
};

}  // namespace ocid
