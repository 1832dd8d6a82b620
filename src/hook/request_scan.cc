#include "request_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "files.h"
#include "unique_fd.h"

namespace ocid {
namespace {

bool IsFlagCharacter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool EscapesFlagCharacter(std::string_view bytes) {
  for (size_t p = bytes.find("\\u00"); p != std::string_view::npos && p + 6 <= bytes.size();
       p = bytes.find("\\u00", p + 1)) {
    int hi = HexDigit(bytes[p + 4]), lo = HexDigit(bytes[p + 5]);
    if (hi >= 0 && lo >= 0 && IsFlagCharacter(static_cast<char>(hi * 16 + lo))) return true;
  }
  return false;
}

}  // namespace

FlagScanner::FlagScanner(std::vector<std::string> flags) {
  for (auto& f : flags)
    if (!f.empty()) flags_.push_back(std::move(f));
  for (const auto& f : flags_) keep_ = std::max(keep_, f.size() - 1);
}

void FlagScanner::Search(std::string_view window) {
  if (EscapesFlagCharacter(window)) {
    mentioned_ = true;
    return;
  }
  for (const auto& f : flags_)
    if (window.find(f) != std::string_view::npos) {
      mentioned_ = true;
      return;
    }
}

void FlagScanner::Feed(std::string_view chunk) {
  if (mentioned_ || flags_.empty() || chunk.empty()) return;
  if (carry_.empty()) {
    Search(chunk);
  } else {
    // Only the seam needs the carried bytes: carry + the chunk's first
    // keep_ bytes holds every match that straddles it.
    std::string seam = carry_;
    seam.append(chunk.substr(0, keep_));
    Search(seam);
    if (!mentioned_) Search(chunk);
  }
  if (chunk.size() >= keep_) {
    carry_.assign(chunk.substr(chunk.size() - keep_));
  } else {
    carry_.append(chunk);
    if (carry_.size() > keep_) carry_.erase(0, carry_.size() - keep_);
  }
}

bool ScanFileForFlags(const std::string& path, FlagScanner* scanner, RequestReader* reader,
                      Error* err) {
  // A symlink followed, as the runtime followed it; only a regular file is
  // opened (files.h).
  UniqueFd fd;
  if (!OpenRegularFileAt(AT_FDCWD, path, LastSymlink::kFollow, &fd, err)) return false;
  char buf[65536];
  int errnum = 0;
  // Pass 1 feeds the scanner until a mention; pass 2 the reader from the
  // start until it has its answer.
  auto scan = [&](std::string_view chunk) {
    scanner->Feed(chunk);
    return !scanner->mentioned();
  };
  if (ReadInChunks(fd.get(), buf, sizeof buf, kNoChunkLimit, scan, &errnum) == ChunkEnd::kError)
    return Fail(err, "cannot read", path, errnum);
  if (!reader || !scanner->mentioned()) return true;
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) return Fail(err, "cannot read", path, errno);
  auto parse = [&](std::string_view chunk) {
    reader->Feed(chunk);
    return !reader->done();
  };
  if (ReadInChunks(fd.get(), buf, sizeof buf, kNoChunkLimit, parse, &errnum) == ChunkEnd::kError)
    return Fail(err, "cannot read", path, errnum);
  return true;
}

}  // namespace ocid
