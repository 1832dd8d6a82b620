// A HostView over an in-memory tree of files, directories, device nodes
// and symlinks, for tests of the pure code (planning, CDI, cluster
// resources, node facts). Regular files may have contents (Content), read
// in chunks of chunk_size; Read gathers them (HostView's default). A
// directory exists when it was added or holds anything; a symlink (Link)
// is only seen by ReadLink and List.
#pragma once
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "host_view.h"

namespace ocid_test {

using ocid::Error;
using ocid::FileType;
using ocid::HostMatch;

// path -> match; globs only in the last component, like the real view.
class FakeHost : public ocid::HostView {
 public:
  FakeHost& File(const std::string& path, const std::string& resolved = "") {
    return Add(path, resolved, FileType::kRegular, S_IFREG | 0755, 0);
  }
  FakeHost& Dir(const std::string& path) {
    return Add(path, "", FileType::kDirectory, S_IFDIR | 0755, 0);
  }
  FakeHost& Chr(const std::string& path, unsigned maj, unsigned min, unsigned perm = 0666) {
    return Add(path, "", FileType::kCharDevice, S_IFCHR | perm, makedev(maj, min));
  }
  // A regular file holding `bytes`.
  FakeHost& Content(const std::string& path, const std::string& bytes) {
    File(path);
    contents_[path] = bytes;
    return *this;
  }
  // Sets an entry's permission bits and owner (node_check's permission
  // problems); the type is kept.
  FakeHost& Perm(const std::string& path, unsigned perm, uint32_t uid = 0, uint32_t gid = 0) {
    HostMatch& m = tree_.at(path);
    m.mode = (m.mode & ~07777u) | perm;
    m.uid = uid;
    m.gid = gid;
    return *this;
  }
  // A symlink to `target`, for ReadLink (sysfs driver links).
  FakeHost& Link(const std::string& path, const std::string& target) {
    links_[path] = target;
    return *this;
  }
  FakeHost& Remove(const std::string& path) {
    tree_.erase(path);
    contents_.erase(path);
    links_.erase(path);
    return *this;
  }
  size_t chunk_size = 65536;
  mutable int reads = 0;                        // ReadChunks calls
  mutable std::map<std::string, int> reads_of;  // ReadChunks calls by path
  mutable size_t bytes_read = 0;                // bytes shown to sinks
  bool ReadChunks(const std::string& path, size_t limit, const ChunkSink& sink,
                  Error* err) const override {
    ++reads;
    ++reads_of[path];
    auto it = tree_.find(path);
    if (it == tree_.end()) return ocid::Fail(err, "cannot open", path, ENOENT);
    if (it->second.type != FileType::kRegular)
      return ocid::Fail(err, "host path is not a regular file", path);
    auto c = contents_.find(path);
    std::string bytes = c == contents_.end() ? "" : c->second;
    if (bytes.size() > limit) return ocid::Fail(err, "host file is too large", path);
    for (size_t off = 0; off < bytes.size(); off += chunk_size) {
      bytes_read += std::min(chunk_size, bytes.size() - off);
      if (!sink(std::string_view(bytes).substr(off, chunk_size))) break;
    }
    return true;
  }
  ocid::HostRead ReadLink(const std::string& path, std::string* out, Error*) const override {
    auto it = links_.find(path);
    if (it == links_.end()) return ocid::HostRead::kMissing;  // absent, or not a link
    *out = it->second;
    return ocid::HostRead::kOk;
  }
  ocid::HostRead List(const std::string& dir, std::vector<std::string>* names,
                      Error*) const override {
    names->clear();
    if (!IsDir(dir)) return ocid::HostRead::kMissing;
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    auto add = [&](const std::string& path) {
      if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size()) return;
      std::string name = path.substr(prefix.size(), path.find('/', prefix.size()) - prefix.size());
      if (names->empty() || names->back() != name) names->push_back(name);
    };
    for (const auto& entry : tree_) add(entry.first);
    for (const auto& entry : links_) add(entry.first);
    std::sort(names->begin(), names->end());
    names->erase(std::unique(names->begin(), names->end()), names->end());
    return ocid::HostRead::kOk;
  }
  ocid::HostRead Identity(const std::string& path, ocid::FileIdentity* out, Error*) const override {
    auto it = tree_.find(path);
    if (it == tree_.end()) return ocid::HostRead::kMissing;
    *out = ocid::FileIdentity{it->second.dev, it->second.ino};
    return ocid::HostRead::kOk;
  }
  ocid::HostRead Owner(const std::string& path, ocid::FileOwner* out, Error*) const override {
    auto it = tree_.find(path);
    if (it == tree_.end()) {
      if (!IsDir(path)) return ocid::HostRead::kMissing;
      *out = ocid::FileOwner{0, 0755};  // a directory only implied by what it holds
      return ocid::HostRead::kOk;
    }
    *out = ocid::FileOwner{it->second.uid, it->second.mode & 07777};
    return ocid::HostRead::kOk;
  }
  bool Exists(const std::string& path) const override { return tree_.count(path) || IsDir(path); }
  // The directory and each directory above it, by the path's prefixes: the
  // fake follows no symbolic link (the real walk, links included, is tested
  // on real trees: host_view_test.cc, node_check_test.cc).
  ocid::HostRead DirSteps(const std::string& dir, std::vector<ocid::DirStep>* out,
                          Error* err) const override {
    out->clear();
    for (std::string p = dir;; p = p.rfind('/') == 0 ? "/" : p.substr(0, p.rfind('/'))) {
      ocid::FileOwner o;
      if (Owner(p, &o, err) != ocid::HostRead::kOk) {
        out->clear();
        return ocid::HostRead::kMissing;
      }
      ocid::DirStep s;
      s.kind = out->empty() ? ocid::DirStep::Kind::kDir : ocid::DirStep::Kind::kAncestor;
      s.path = p;
      s.uid = o.uid;
      s.mode = o.mode;
      out->push_back(s);
      if (p == "/") return ocid::HostRead::kOk;
    }
  }
  bool Match(const std::string& pattern, std::vector<HostMatch>* out, Error*) const override {
    out->clear();
    size_t slash = pattern.rfind('/');
    std::string dir = pattern.substr(0, slash), leaf = pattern.substr(slash + 1);
    for (const auto& [path, m] : tree_) {
      size_t s = path.rfind('/');
      if (path.substr(0, s) == dir && ::fnmatch(leaf.c_str(), path.c_str() + s + 1, 0) == 0)
        out->push_back(m);
    }
    return true;
  }

 private:
  FakeHost& Add(const std::string& path, const std::string& resolved, FileType t, uint32_t mode,
                uint64_t rdev) {
    HostMatch m;
    m.path = path;
    m.resolved = resolved.empty() ? path : resolved;
    m.type = t;
    m.mode = mode;
    m.rdev = rdev;
    m.dev = 0xfd00;
    m.ino = 1000 + std::hash<std::string>()(m.resolved) % 100000;
    tree_[path] = m;
    return *this;
  }
  // Added with Dir, or holding any entry or link.
  bool IsDir(const std::string& path) const {
    auto it = tree_.find(path);
    if (it != tree_.end()) return it->second.type == FileType::kDirectory;
    const std::string prefix = path == "/" ? "/" : path + "/";
    auto under = [&](const auto& m) {
      auto at = m.lower_bound(prefix);
      return at != m.end() && at->first.rfind(prefix, 0) == 0;
    };
    return under(tree_) || under(links_);
  }
  std::map<std::string, HostMatch> tree_;
  std::map<std::string, std::string> contents_;
  std::map<std::string, std::string> links_;
};

}  // namespace ocid_test
