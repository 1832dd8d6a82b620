// Keeps the inventories' CDI specs current in a directory (--cdi-dir), so
// the cdi_devices that Allocate names always resolve on this node: one
// spec per inventory, the core's BuildCdiSpec under --host-root with host
// paths named under --host-path-root, with its preload files (mounted at
// /etc/ld.so.preload: cdi.h) before it. The spec names them under
// --cdi-dir: the directory must have the same path on the host as in the
// plugin.
//
// Each file is written (atomic_file.h: root's, 0644, in a directory only
// root can change) unless it is already current: the right bytes AND
// mode 0644 AND owned by root, so a file others can write, or that
// someone else owns, is replaced on the next Sync.
//
// What the writer owns, and so reconciles, is its naming in --cdi-dir:
// oci-decorator-<stem>.json and oci-decorator-<stem>.<device>.preload
// (cdi.h), <stem> an inventory's file stem.
// - An inventory that parses but yields no spec (the version lock after a
//   module upgrade, every device gone) has its spec removed, then its
//   preload files, with one log line why: an old spec would keep offering
//   what the plan no longer allows.
// - An inventory that is gone has its spec and preload files removed; at
//   start (the first Sync), so are those left by inventories removed while
//   the plugin was down. There, a spec is removed only when it is a
//   regular file owned by root that is byte for byte what this program
//   renders (cdi.h IsRenderedCdiSpec), a preload file only when it is
//   owned by root and the spec it belongs to is not left:
//   an operator's own file in the directory stays.
// - An inventory whose CDI kind an earlier one has (cdi.h
//   CdiKindConflicts) gets no spec, and one it had is removed.
// - A broken (unparseable) inventory keeps its last spec: pods that got
//   its devices keep starting while the operator fixes the file.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "plugin_options.h"

namespace ocid {

class CdiDirWriter {
 public:
  CdiDirWriter(const PluginOptions& opts, std::string dir);
  // Rebuilds every spec and writes those that differ from the file. Each
  // failure is one log line; returns false if any happened.
  bool Sync();

 private:
  PluginOptions opts_;
  std::string dir_;
  // Removes the spec of `stem` and the preload files that belong to it
  // (cdi.h CdiSpecOfPreloadFile: a.b's files are not a's).
  void RemoveStem(const std::string& stem, const std::string& why);
  // The first Sync: files of stems not in `stems`, as the header says.
  void RemoveOrphans(const std::set<std::string>& stems);

  // inventory file -> its preload files' paths, then its spec's
  std::map<std::string, std::vector<std::string>> written_;
  bool swept_ = false;
};

}  // namespace ocid
