#include "host_dirs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "dir_trust.h"
#include "unique_fd.h"

namespace ocid {
namespace {

// The directory the walk reached: its kDir step's path, within the root.
std::string Reached(const std::vector<DirStep>& steps, const std::string& fallback) {
  for (const DirStep& s : steps)
    if (s.kind == DirStep::Kind::kDir) return s.path.empty() ? "/" : s.path;
  return fallback;
}

bool CreateOne(int root_fd, MountOp* m, std::vector<std::string>* created, Error* err) {
  const std::string where = " (inventory " + m->inventory + ", feature \"" + m->feature + "\")";
  UniqueFd fd;
  std::vector<DirStep> steps;
  Error walk_err;
  // Already there (a controller made it, or an earlier container): taken
  // as it is, under the same rule. Missing: made.
  bool existed = WalkDir(root_fd, m->source, /*create=*/false, &fd, &steps, &walk_err);
  if (!existed) {
    if (walk_err.errnum != ENOENT) return Fail(err, walk_err.Line() + where);
    if (!WalkDir(root_fd, m->source, /*create=*/true, &fd, &steps, &walk_err))
      return Fail(err, walk_err.Line() + where);
  }
  if (std::string why = UnsafeStepsReason(steps); !why.empty())
    return Fail(err, "not creating directory " + m->source + ": " + why + where);
  if (!fd.valid()) return Fail(err, "cannot create directory" + where, m->source);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return Fail(err, "cannot stat directory" + where, m->source, errno);
  if (!S_ISDIR(st.st_mode)) return Fail(err, "not a directory" + where, m->source, ENOTDIR);
  m->dev = static_cast<uint64_t>(st.st_dev);
  m->ino = static_cast<uint64_t>(st.st_ino);
  m->mode = st.st_mode;
  m->uid = st.st_uid;
  m->gid = st.st_gid;
  m->resolved = Reached(steps, m->source);
  if (!existed) created->push_back(m->source);
  return true;
}

}  // namespace

bool CreatePlannedDirectories(int root_fd, Plan* plan, std::vector<std::string>* created,
                              Error* err) {
  for (auto& m : plan->mounts)
    if (m.create && !CreateOne(root_fd, &m, created, err)) return false;
  return true;
}

void AddDirectoriesToCreate(const std::vector<MountOp>& mounts, std::vector<MountOp>* out) {
  for (const MountOp& m : mounts)
    if (m.create && std::none_of(out->begin(), out->end(),
                                 [&](const MountOp& o) { return o.source == m.source; }))
      out->push_back(m);
}

}  // namespace ocid
