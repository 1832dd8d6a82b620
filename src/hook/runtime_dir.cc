#include "runtime_dir.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <vector>

#include "files.h"
#include "oci_state.h"

namespace ocid {
namespace {

// A directory we keep root's files in must be ours and writable by no one
// else, or another user could plant a symlink or swap files in it.
bool CheckPrivateDir(int fd, const std::string& path, Error* err) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Fail(err, "cannot stat", path, errno);
  if (!S_ISDIR(st.st_mode)) return Fail(err, "not a directory", path);
  if (st.st_uid != ::geteuid() || (st.st_mode & 022))
    return Fail(err, "state directory is not owned by us or is writable by others", path);
  return true;
}

bool OpenStateDir(const std::string& state_dir, bool create, UniqueFd* out, Error* err) {
  if (create && ::mkdir(state_dir.c_str(), 0711) != 0 && errno != EEXIST)
    return Fail(err, "cannot create state directory", state_dir, errno);
  out->reset(::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!out->valid()) return Fail(err, "cannot open state directory", state_dir, errno);
  return CheckPrivateDir(out->get(), state_dir, err);
}

}  // namespace

bool OpenContainerDir(const std::string& state_dir, const std::string& id, UniqueFd* out,
                      Error* err) {
  if (!IsSafeContainerId(id))
    return Fail(err, "container id is not usable as a directory name", id);
  UniqueFd sd;
  if (!OpenStateDir(state_dir, true, &sd, err)) return false;
  std::string path = state_dir + "/" + id;
  if (::mkdirat(sd.get(), id.c_str(), 0700) != 0 && errno != EEXIST)
    return Fail(err, "cannot create", path, errno);
  out->reset(::openat(sd.get(), id.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!out->valid()) return Fail(err, "cannot open", path, errno);
  return CheckPrivateDir(out->get(), path, err);
}

bool RemoveContainerDir(const std::string& state_dir, const std::string& id, Error* err) {
  if (!IsSafeContainerId(id)) return true;  // we never created one
  UniqueFd sd;
  Error e;
  if (!OpenStateDir(state_dir, false, &sd, &e)) {
    if (e.errnum == ENOENT) return true;
    *err = e;
    return false;
  }
  std::string path = state_dir + "/" + id;
  int cfd = ::openat(sd.get(), id.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (cfd < 0) {
    if (errno == ENOENT) return true;
    return Fail(err, "cannot open", path, errno);
  }
  UniqueFd container_dir(cfd);
  std::vector<std::string> names;
  if (!ListDirectory(cfd, path, &names, err)) return false;
  for (const auto& n : names) ::unlinkat(cfd, n.c_str(), 0);
  if (::unlinkat(sd.get(), id.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return Fail(err, "cannot remove", path, errno);
  return true;
}

}  // namespace ocid
