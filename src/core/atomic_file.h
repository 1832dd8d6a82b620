// Writing configuration files that other programs read (CDI specs and their
// preload files, engine drop-ins, docker's daemon.json, hooks.d entries) so
// that a reader never sees half a file, and no one but root gets a say in
// what root wrote (SECURITY.md 2.9):
//
// - The directory is resolved into a file descriptor, component by
//   component from "/" (openat O_NOFOLLOW; a missing component is created
//   0755 with mkdirat from its parent's fd; a symbolic link is followed
//   only when root or the effective user made it, in a directory others
//   cannot change), and everything after that goes through that fd.
// - It must belong to root or the effective user and be writable by
//   neither group nor others; each of its ancestors (walked up with "..",
//   not by name) must belong to root or the effective user and be
//   writable by group or others only when sticky (then others cannot
//   rename what root made in it). Otherwise the write is refused with one
//   line naming the directory, its owner and its mode.
//   The walk and this rule are dir_trust.h's, the same `check` applies.
// - The file is always created fresh: a temporary name (O_EXCL), written,
//   fchown'd to the effective uid and gid (a setgid directory does not
//   pick the group), fchmod'ed to exactly the mode the caller states (the
//   umask plays no part), fsync'ed, renamed over the name, and the
//   directory fsync'ed. Whatever was at the name before (its owner, its
//   mode) is replaced; a symbolic link or a non-regular file there is
//   refused, never written through.
//
// The one exception is the runtime shim's rewrite of a bundle's
// config.json (ReplaceBundleFile).
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>

#include "dir_trust.h"
#include "error.h"
#include "unique_fd.h"

namespace ocid {

// Reads `path` (O_NOFOLLOW: a symlink is refused) up to `limit` bytes.
// A missing file is not an error: *exists is false and *out empty.
bool ReadFileIfExists(const std::string& path, size_t limit, std::string* out, bool* exists,
                      Error* err);

// Opens `dir` (relative: to the current directory) as the header says,
// creating missing components 0755 when `create`, and checks it and its
// ancestors. The fd is opened O_RDONLY | O_DIRECTORY.
bool OpenWriteDir(const std::string& dir, bool create, UniqueFd* out, Error* err);

// Why the rule above refuses `dir` for WriteFileAtomic ("" when it does
// not): "directory /run/x is writable by others and not sticky (owner 0,
// mode 0777)". A missing directory would be made 0755: its nearest existing
// ancestor is judged as an ancestor. Other failures (a permission, a file
// in the way) are not the rule's and give "". Creates nothing.
std::string WriteDirRefusal(const std::string& dir);

// Replaces `path` with `data`, mode `mode`, owned by the effective user,
// as the header says. Missing parent directories are created 0755. The
// temporary name (".<name>.tmp.<pid>.<n>") ends in no config extension, so
// directory scanners (CDI, conf.d globs) never pick it up.
bool WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode, Error* err);
// The same in `dfd`, a directory OpenWriteDir opened (`dir` is its path,
// only named in errors): for a caller that resolves the directory once and
// does everything else through that fd. `name` is one component (no '/').
bool WriteFileAtomicAt(int dfd, const std::string& dir, const std::string& name,
                       const std::string& data, mode_t mode, Error* err);

// Whether `path` already is what WriteFileAtomic(path, data, mode) leaves:
// a regular file (not a symlink) holding exactly `data`, with permission
// bits exactly `mode`, owned by the effective user. A file with the right
// bytes but another mode or owner is not current: write it again.
bool FileIsCurrent(const std::string& path, const std::string& data, mode_t mode);
// The same for `name` (one component, no '/') in the directory `dfd`,
// opened O_NOFOLLOW relative to it: what the path to `dfd` resolves to
// now plays no part.
bool FileIsCurrentAt(int dfd, const std::string& name, const std::string& data, mode_t mode);

// The runtime shim's rewrite of a bundle's config.json: atomically, never
// through a symlink, but keeping the existing file's mode and owner, and
// with no rule on the directory. The bundle belongs to the engine, which
// may be rootless or run the runtime for another user: whoever can write
// the bundle directory already decides the config.json that the runtime
// runs, so a rule there protects nothing, and it would refuse bundles that
// are not root's (a user's `runc run --bundle ~/b` run by root, rootless
// podman's under $XDG_RUNTIME_DIR). Keeping the owner and mode lets the
// engine read and remove its bundle as before.
bool ReplaceBundleFile(const std::string& path, const std::string& data, Error* err);

// Writes `data` (the file's current content) to a new file `path`.bak.<UTC
// time>, never overwriting one (a -N suffix is added), in the directory of
// `path` checked as OpenWriteDir does, with the mode of `path` less any
// bit beyond 0644, owned by the effective user. Returns its name in
// *backup.
bool WriteBackup(const std::string& path, const std::string& data, std::string* backup, Error* err);

}  // namespace ocid
