// Who besides root can change what a directory holds: the one rule for a
// directory root writes files in that others read, and for those files
// (SECURITY.md 2.9). Root's
// writer (atomic_file.h) applies it before it writes, `check` (node_check.h)
// to the CDI directories; both over the same facts, gathered by the same
// walk, so they cannot disagree.
//
// The walk (WalkDir) resolves a directory from a root directory's fd ("/"
// for the writer, --host-root for `check`), component by component
// (openat O_PATH | O_NOFOLLOW; ".." never above the root; an absolute link
// target starts again at the root), then goes up from the directory it
// reached by "..", to the root: its real ancestors, not its path's
// prefixes. Each thing it met is a step, and the rule is a pure function of
// the steps (UnsafeStepsReason):
//   - every directory a name is looked up in must pass the ancestor rule
//     below, whether or not it ends up above the directory reached (a link
//     can lead away from it: /x/y/link -> /etc/cdi with /x writable by
//     anyone, who could swap y later); the walk stops at one that does not;
//   - a symbolic link is followed only when root or the effective user owns
//     it and the directory holding it is one others cannot change (judged
//     as an ancestor, below): fs.protected_symlinks' rule, whatever the
//     sysctl says. The walk stops at a link the rule refuses;
//   - the directory reached must belong to root or the effective user and
//     be writable by neither its group nor others;
//   - each ancestor must belong to root or the effective user, and be
//     writable by its group or others only when sticky (then others cannot
//     rename what root made in it).
// Steps are named as the walk met them, below the root: a link by the path
// it was found at, a directory by its real path.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "error.h"
#include "unique_fd.h"

namespace ocid {

struct DirStep {
  enum class Kind { kLink, kDir, kAncestor };
  Kind kind = Kind::kDir;
  std::string path;   // "/etc/cdi" (a link), "/srv/cdi" (the directory reached), "/srv"
  uint32_t uid = 0;   // its owner
  uint32_t mode = 0;  // a directory's permission bits (st_mode & 07777); unused for a link
  // A link only: the directory holding it.
  std::string parent;
  uint32_t parent_uid = 0, parent_mode = 0;
};

// Why root must not write files in a directory owned by `uid` with `mode`
// ("" when it may): "directory /tmp/cdi is writable by others (owner 0,
// mode 1777)". `ancestor`: a directory above it, where sticky is enough.
std::string UnsafeDirReason(const std::string& dir, uid_t uid, mode_t mode, bool ancestor);

// Why a file root wrote for others is not safe as it is ("" when it is):
// owned by someone other than root or the effective user, or writable by
// its group or others.
std::string UnsafeFileReason(const std::string& path, uid_t uid, mode_t mode);

// Why the rule refuses this step ("" when it does not): a directory's as
// UnsafeDirReason says; a link's "not following symbolic link /etc/cdi:
// directory /etc is writable by others and not sticky (owner 0, mode
// 0777)", or "...: it belongs to another user (owner 1000)".
std::string UnsafeStepReason(const DirStep& step);

// The first step the rule refuses, in the walk's order (the links, the
// directory, its ancestors upward): "" when root may write there.
std::string UnsafeStepsReason(const std::vector<DirStep>& steps);

// Walks the absolute `dir` from the directory `root` as the header says:
// *steps gets a kLink step for each link met, then the kDir step of the
// directory reached and a kAncestor step for each directory above it up to
// the root (the root included, unless it is the directory). A link or a
// directory on the way that the rule refuses is the last step: the walk
// stops there and *out stays invalid. Otherwise *out is the directory, opened O_PATH. With
// `create`, a missing component is made 0755 with mkdirat from its parent's fd. False with *err
// when a component cannot be opened (errno ENOENT: missing, and not created), is not a directory
// (ENOTDIR), or there are too many links (ELOOP).
bool WalkDir(int root, const std::string& dir, bool create, UniqueFd* out,
             std::vector<DirStep>* steps, Error* err);

}  // namespace ocid
