#include "cdi_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "atomic_file.h"
#include "cdi_names.h"
#include "files.h"

namespace ocid {
namespace {

constexpr size_t kMaxCdiSpecFileBytes = 4 << 20;  // as `check` reads them

// `name` in `dfd` is a regular file (not a symlink) of root's (the
// effective user's); *bytes gets its content when asked.
bool RootFile(int dfd, const std::string& name, std::string* bytes) {
  UniqueFd fd;
  struct stat st;
  Error ignored;
  if (!OpenRegularFileAt(dfd, name, LastSymlink::kRefuse, &fd, &ignored, &st) ||
      st.st_uid != ::geteuid())
    return false;
  return !bytes || ReadAllFd(fd.get(), kMaxCdiSpecFileBytes, name, bytes, &ignored);
}

// The names in the directory `dfd` from its start: a writer lists its one
// fd more than once, and getdents goes on from where the last call ended.
bool ListNames(int dfd, const std::string& what, std::vector<std::string>* names, Error* err) {
  if (::lseek(dfd, 0, SEEK_SET) != 0) return Fail(err, "cannot list directory", what, errno);
  return ListDirectory(dfd, what, names, err);
}

}  // namespace

bool CdiDirWriter::Open(const std::string& path, bool create, CdiDirWriter* out, Error* err) {
  UniqueFd fd;
  struct stat st {};
  if (!OpenWriteDir(path, create, &fd, err)) return false;
  if (::fstat(fd.get(), &st) != 0) return Fail(err, "cannot stat", path, errno);
  out->path_ = path;
  out->fd_ = std::move(fd);
  out->dev_ = st.st_dev;
  out->ino_ = st.st_ino;
  return true;
}

bool CdiDirWriter::IsCurrent(const std::string& name, const std::string& bytes) const {
  return FileIsCurrentAt(fd_.get(), name, bytes, 0644);
}

bool CdiDirWriter::WriteSpecFiles(const std::vector<CdiFileToWrite>& files, bool always,
                                  std::vector<std::string>* written, Error* err) const {
  for (const auto& f : files) {
    if (!always && IsCurrent(f.name, f.bytes)) continue;
    if (!WriteFileAtomicAt(fd_.get(), path_, f.name, f.bytes, 0644, err)) return false;
    written->push_back(f.name);
  }
  return true;
}

void CdiDirWriter::RemoveStem(const std::string& stem, const std::set<std::string>* keep,
                              std::vector<std::string>* removed) const {
  std::vector<std::string> names;
  Error err;
  if (!ListNames(fd_.get(), path_, &names, &err)) return;
  // The spec first: an engine then no longer names the preload files.
  const std::string spec = CdiFileName(stem);
  if (!keep && ::unlinkat(fd_.get(), spec.c_str(), 0) == 0) removed->push_back(spec);
  for (const auto& n : names) {
    if (CdiPreloadStem(n) != stem || (keep && keep->count(n))) continue;
    // A preload file next to a spec we keep: only root's is ours to remove.
    if (keep && !RootFile(fd_.get(), n, nullptr)) continue;
    if (::unlinkat(fd_.get(), n.c_str(), 0) == 0) removed->push_back(n);
  }
}

bool CdiDirWriter::Sweep(const std::set<std::string>& keep_stems, std::vector<std::string>* removed,
                         Error* err) const {
  std::vector<std::string> names;
  if (!ListNames(fd_.get(), path_, &names, err)) return false;
  std::set<std::string> specs_left;
  for (const auto& n : names) {
    std::string stem = CdiSpecStem(n), bytes;
    if (stem.empty()) continue;
    if (keep_stems.count(stem) || !RootFile(fd_.get(), n, &bytes) || !IsRenderedCdiSpec(bytes)) {
      specs_left.insert(stem);
      continue;
    }
    if (::unlinkat(fd_.get(), n.c_str(), 0) == 0) removed->push_back(n);
  }
  for (const auto& n : names) {
    std::string owner = CdiPreloadStem(n);
    if (owner.empty() || keep_stems.count(owner) || specs_left.count(owner) ||
        !RootFile(fd_.get(), n, nullptr))
      continue;
    if (::unlinkat(fd_.get(), n.c_str(), 0) == 0) removed->push_back(n);
  }
  return true;
}

}  // namespace ocid
