// A HostView over an in-memory tree of files, directories and device
// nodes, for tests of the pure planning code (CDI, cluster resources).
// Regular files may have contents (Content), read in chunks of chunk_size.
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
  FakeHost& Remove(const std::string& path) {
    tree_.erase(path);
    contents_.erase(path);
    return *this;
  }
  size_t chunk_size = 65536;
  mutable int reads = 0;          // ReadChunks calls
  mutable size_t bytes_read = 0;  // bytes shown to sinks
  bool ReadChunks(const std::string& path, size_t limit, const ChunkSink& sink,
                  Error* err) const override {
    ++reads;
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
  bool Match(const std::string& pattern, std::vector<HostMatch>* out,
             Error*) const override {
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
  FakeHost& Add(const std::string& path, const std::string& resolved, FileType t,
                uint32_t mode, uint64_t rdev) {
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
  std::map<std::string, HostMatch> tree_;
  std::map<std::string, std::string> contents_;
};

}  // namespace ocid_test
