#include "version_lock.h"

#include <cerrno>
#include <cstring>

#include "error.h"
#include "host_view.h"
#include "inventory.h"
#include "path_text.h"

namespace ocid {
namespace {

// "Onload " also ends "CloudOnload ", "EnterpriseOnload " and "OpenOnload ":
// one needle finds every product's banner.
constexpr std::string_view kProduct = "Onload ";
constexpr std::string_view kAfter = "\nCopyright";
// Between the two: the version and ONLOAD_VERSION's trailing space (one
// upstream; a few more are tolerated).
constexpr size_t kMaxField = kMaxVersionChars + 16;
// The longest banner the scan must see whole: what a chunk boundary may cut.
constexpr size_t kOverlap = kProduct.size() + kMaxField + kAfter.size();

bool IsVersionChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '.' ||
         c == '_' || c == '-' || c == '/' || c == ' ';
}

std::string_view TrimTrailing(std::string_view s, std::string_view what) {
  while (!s.empty() && what.find(s.back()) != std::string_view::npos) s.remove_suffix(1);
  return s;
}

// The first banner's version in `bytes`, or "". Linear: the run of version
// characters after a hit is scanned once, however many hits fall inside it
// ("Onload Onload Onload ...").
std::string FindBanner(std::string_view bytes) {
  const char* base = bytes.data();
  size_t pos = 0, run_end = 0;
  while (pos < bytes.size()) {
    const void* hit = ::memmem(base + pos, bytes.size() - pos, kProduct.data(), kProduct.size());
    if (!hit) return "";
    size_t start = static_cast<size_t>(static_cast<const char*>(hit) - base) + kProduct.size();
    if (start >= run_end) {
      run_end = start;
      while (run_end < bytes.size() && IsVersionChar(bytes[run_end])) ++run_end;
    }
    std::string_view field = bytes.substr(start, run_end - start);
    std::string_view version = TrimTrailing(field, " ");
    if (field.size() <= kMaxField && IsVersion(version) &&
        bytes.substr(run_end, kAfter.size()) == kAfter)
      return std::string(version);
    pos = start;
  }
  return "";
}

// "onload" for /sys/module/onload/version.
std::string ModuleName(const std::string& path) {
  const std::string prefix = "/sys/module/";
  if (path.rfind(prefix, 0) == 0) {
    std::string rest = path.substr(prefix.size());
    size_t slash = rest.find('/');
    if (slash != std::string::npos && slash > 0) return rest.substr(0, slash);
  }
  return "kernel";
}

bool Missing(int e) { return e == ENOENT || e == ENOTDIR || e == ELOOP; }

// Reads the module's version (ModuleVersionFromBytes).
bool ReadModuleVersion(const VersionLock& lock, const HostView& host, VersionReport* r) {
  r->module_path = host.Display(lock.module_version);
  std::string bytes;
  Error e;
  if (!host.ReadChunks(
          lock.module_version, kMaxModuleVersionBytes,
          [&](std::string_view c) { return bytes.append(c), true; }, &e)) {
    r->why = Missing(e.errnum)
                 ? "the " + ModuleName(lock.module_version) + " module's version is unknown (" +
                       r->module_path + " does not exist: module not loaded?)"
                 : "the " + ModuleName(lock.module_version) +
                       " module's version is unknown: " + e.Line();
    return false;
  }
  std::string version = ModuleVersionFromBytes(bytes);
  if (version.empty()) {
    std::string_view line = std::string_view(bytes).substr(0, bytes.find('\n'));
    r->why = "the " + ModuleName(lock.module_version) + " module's version is unknown (" +
             r->module_path + " holds no version: \"" + Printable(line, kMaxVersionChars) + "\")";
    return false;
  }
  r->module_version = version;
  return true;
}

// Reads the first library alternative that exists and scans it for a banner.
bool ReadLibraryVersion(const VersionLock& lock, const HostView& host, VersionReport* r) {
  for (const auto& path : lock.library) {
    BannerScanner scan;
    Error e;
    if (!host.ReadChunks(
            path, kMaxLibraryBytes, [&](std::string_view c) { return scan.Feed(c); }, &e)) {
      if (Missing(e.errnum)) continue;
      r->library_path = host.Display(path);
      r->why = "the library's version is unknown: " + e.Line();
      return false;
    }
    r->library_path = host.Display(path);
    if (!scan.found()) {
      r->why = "the library's version is unknown (no version banner in " + r->library_path + ")";
      return false;
    }
    r->library_version = scan.version();
    return true;
  }
  std::string all;
  for (const auto& path : lock.library) all += (all.empty() ? "" : " or ") + host.Display(path);
  r->why = "the library's version is unknown (" + all + " not found)";
  return false;
}

}  // namespace

const char* VersionStateName(VersionState s) {
  switch (s) {
    case VersionState::kMatch: return "match";
    case VersionState::kMismatch: return "mismatch";
    case VersionState::kUnknown: return "unknown";
    case VersionState::kNotConfigured: return "not configured";
  }
  return "unknown";
}

bool IsVersion(std::string_view s) {
  if (s.empty() || s.size() > kMaxVersionChars || s.front() == ' ' || s.back() == ' ') return false;
  for (char c : s)
    if (!IsVersionChar(c)) return false;
  return true;
}

std::string ModuleVersionFromBytes(std::string_view bytes) {
  std::string_view line = TrimTrailing(bytes.substr(0, bytes.find('\n')), " \t\r");
  return IsVersion(line) ? std::string(line) : "";
}

bool BannerScanner::Feed(std::string_view chunk) {
  if (found()) return false;
  if (chunk.empty()) return true;
  // A banner cut by the boundary starts in the tail and ends in the first
  // kOverlap bytes of the chunk: the seam holds it whole. One found there
  // comes before any found in the chunk alone (banners cannot overlap).
  if (!tail_.empty()) {
    std::string seam = tail_;
    seam.append(chunk.substr(0, kOverlap));
    version_ = FindBanner(seam);
    if (found()) return false;
  }
  version_ = FindBanner(chunk);
  if (found()) return false;
  if (chunk.size() >= kOverlap) {
    tail_.assign(chunk.substr(chunk.size() - kOverlap));
  } else {
    tail_.append(chunk);
    if (tail_.size() > kOverlap) tail_.erase(0, tail_.size() - kOverlap);
  }
  return true;
}

std::string LibraryVersionFromBytes(std::string_view bytes) { return FindBanner(bytes); }

VersionReport CheckVersions(const Inventory& inv, const HostView& host) {
  VersionReport r;
  const VersionLock& lock = inv.version_lock;
  if (!lock.configured()) return r;
  r.state = VersionState::kUnknown;
  // Both sides are read (and reported) even when one is unknown.
  std::string why_module, why_library;
  bool module_ok = ReadModuleVersion(lock, host, &r);
  why_module = r.why;
  r.why.clear();
  bool library_ok = ReadLibraryVersion(lock, host, &r);
  why_library = r.why;
  if (!module_ok || !library_ok) {
    r.why = "version lock: " + (module_ok ? why_library : why_module);
    return r;
  }
  if (r.module_version == r.library_version) {
    r.state = VersionState::kMatch;
    r.why.clear();
    return r;
  }
  r.state = VersionState::kMismatch;
  r.why = "version lock: " + Basename(r.library_path) + " is \"" + Printable(r.library_version) +
          "\" (" + r.library_path + ") but the loaded " + ModuleName(lock.module_version) +
          " module is \"" + Printable(r.module_version) + "\" (" + r.module_path + ")";
  return r;
}

}  // namespace ocid
