#include "kubelet_cdi.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <set>

#include "atomic_file.h"
#include "cdi.h"
#include "files.h"
#include "host_view.h"
#include "inventory.h"
#include "log.h"

namespace ocid {

namespace {

const std::string kPrefix = "oci-decorator-";
constexpr size_t kMaxCdiSpecFileBytes = 4 << 20;  // as `check` reads them

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "a.b" for "oci-decorator-a.b.json"; "" for a name not of that form.
std::string SpecStem(const std::string& name) {
  if (name.rfind(kPrefix, 0) != 0 || !EndsWith(name, ".json") ||
      name.size() <= kPrefix.size() + 5)
    return "";
  return name.substr(kPrefix.size(), name.size() - kPrefix.size() - 5);
}

// The stem of the spec a preload file belongs to ("a.b" for
// "oci-decorator-a%2Eb.onload.preload", cdi.h); "" for another name.
std::string PreloadStem(const std::string& name) { return SpecStem(CdiSpecOfPreloadFile(name)); }

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

}  // namespace

CdiDirWriter::CdiDirWriter(const PluginOptions& opts, std::string dir)
    : opts_(opts), dir_(std::move(dir)) {}

void CdiDirWriter::RemoveStem(const std::string& stem, const std::string& why) {
  UniqueFd dfd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::vector<std::string> names;
  Error err;
  if (!dfd.valid() || !ListDirectory(dfd.get(), dir_, &names, &err)) return;
  // The spec first: an engine then no longer names the preload files.
  const std::string spec = kPrefix + stem + ".json";
  if (::unlinkat(dfd.get(), spec.c_str(), 0) == 0)
    log::Info("removed " + dir_ + "/" + spec + ": " + why);
  for (const auto& n : names)
    if (PreloadStem(n) == stem && ::unlinkat(dfd.get(), n.c_str(), 0) == 0)
      log::Info("removed " + dir_ + "/" + n + ": " + why);
}

void CdiDirWriter::RemoveOrphans(const std::set<std::string>& stems) {
  UniqueFd dfd;
  Error err;
  if (!OpenWriteDir(dir_, /*create=*/false, &dfd, &err)) {
    if (err.errnum != ENOENT) log::Warn("CDI specs in " + dir_ + " not cleaned up: " + err.Line());
    return;
  }
  std::vector<std::string> names;
  if (!ListDirectory(dfd.get(), dir_, &names, &err)) {
    log::Warn("CDI specs in " + dir_ + " not cleaned up: " + err.Line());
    return;
  }
  std::set<std::string> specs_left;
  for (const auto& n : names) {
    std::string stem = SpecStem(n), bytes;
    if (stem.empty()) continue;
    if (stems.count(stem) || !RootFile(dfd.get(), n, &bytes) || !IsRenderedCdiSpec(bytes)) {
      specs_left.insert(stem);
      continue;
    }
    if (::unlinkat(dfd.get(), n.c_str(), 0) == 0)
      log::Info("removed " + dir_ + "/" + n + ": no inventory " + stem + ".json in " +
                opts_.config_dir);
  }
  for (const auto& n : names) {
    std::string owner = PreloadStem(n);
    if (owner.empty() || stems.count(owner) || specs_left.count(owner) ||
        !RootFile(dfd.get(), n, nullptr))
      continue;
    if (::unlinkat(dfd.get(), n.c_str(), 0) == 0)
      log::Info("removed " + dir_ + "/" + n + ": no inventory in " + opts_.config_dir +
                " writes it");
  }
}

bool CdiDirWriter::Sync() {
  InventorySet set;
  Error err;
  if (!LoadInventoryDir(opts_.config_dir, &set, &err)) {
    log::Error("CDI specs in " + dir_ + " not updated: " + err.Line());
    return false;
  }
  std::unique_ptr<HostRootView> host;
  if (!HostRootView::Open(opts_.host_root, &host, &err)) {
    log::Error("CDI specs in " + dir_ + " not updated: " + err.Line());
    return false;
  }
  host->set_resolve_paths(true);
  bool ok = true;
  std::set<std::string> present;  // inventories still in the directory
  std::set<std::string> stems;    // and their stems, loaded or broken
  for (const BrokenInventory& b : set.broken) {
    present.insert(b.file);
    stems.insert(InventoryStem(b.file));
  }
  for (const Inventory& inv : set.inventories) stems.insert(InventoryStem(inv.file));
  if (!swept_) {
    RemoveOrphans(stems);
    swept_ = true;
  }
  std::map<std::string, std::string> conflicts = CdiKindConflicts(set);
  for (const Inventory& inv : set.inventories) {
    present.insert(inv.file);
    if (auto c = conflicts.find(inv.file); c != conflicts.end()) {
      log::Warn("CDI spec of " + inv.file + " not written: " + c->second);
      RemoveStem(InventoryStem(inv.file), inv.file + " has another inventory's CDI kind");
      written_.erase(inv.file);
      continue;
    }
    CdiSpec spec;
    if (!BuildCdiSpec(inv, *host, opts_.host_path_root, dir_ + "/" + CdiFileName(inv), &spec, &err)) {
      // No device on this host (the resources are unhealthy anyway): an old
      // spec would still offer what the plan now refuses.
      log::Warn("CDI spec of " + inv.file + " not written: " + err.Line());
      RemoveStem(InventoryStem(inv.file), inv.file + " yields no CDI spec now");
      written_.erase(inv.file);
      continue;
    }
    // The preload files first, the spec last (cdi.h CdiFilesOf); each only
    // when it is not current (bytes, mode 0644, root's).
    std::vector<std::string> paths;
    bool spec_changed = false, failed = false;
    for (const auto& f : CdiFilesOf(spec)) {
      std::string path = dir_ + "/" + f.name;
      paths.push_back(path);
      if (FileIsCurrent(path, f.bytes, 0644)) continue;
      if (!WriteFileAtomic(path, f.bytes, 0644, &err)) {
        log::Error("CDI spec of " + inv.file + " not written: " + err.Line());
        failed = true;
        break;
      }
      if (f.name == spec.file_name)
        spec_changed = true;
      else
        log::Info("wrote " + path + ": the preload file of " + inv.file);
    }
    if (failed) {
      ok = false;
      continue;
    }
    written_[inv.file] = paths;
    if (!spec_changed) continue;
    log::Info("wrote " + paths.back() + ": " + CdiSpecSummary(spec));
  }
  for (auto it = written_.begin(); it != written_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    // The spec first (an engine then no longer names the preload files).
    for (auto p = it->second.rbegin(); p != it->second.rend(); ++p)
      if (::unlink(p->c_str()) == 0) log::Info("removed " + *p + ": " + it->first + " is gone");
    it = written_.erase(it);
  }
  return ok;
}

}  // namespace ocid
