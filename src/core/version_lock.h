// The version lock: an inventory whose user-space library must match the
// kernel module that is loaded (Onload: libonload.so and the onload module).
// A mismatched libonload does not fail, it silently falls back to the kernel
// stack; a container that asked for Onload then runs slow without a word.
// The planner refuses it instead (planner.h), for every delivery mode.
//
//   "version_lock": {
//     "enforce": true,                                // refuse on mismatch
//     "module_version": "/sys/module/onload/version", // host path
//     "library": ["/usr/lib64/libonload.so", ...],    // first that exists
//     "features": ["onload"]                          // default: all
//   }
//
// Pure: both files are read through the HostView (inside --host-root), with
// size caps; nothing is executed. The library's version is its banner, the
// text it prints when run as a program: "<product> <version>\nCopyright ..."
// where the product ends in "Onload" (Onload, OpenOnload, EnterpriseOnload).
// Either side unknown (file missing, unreadable, no banner) is never a
// failure: the planner warns and goes on.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ocid {

struct Inventory;
class HostView;

struct VersionLock {
  bool enforce = false;               // refuse on mismatch
  std::string module_version;         // host path; "" = no version lock
  std::vector<std::string> library;   // alternatives, first that exists wins
  std::vector<std::string> features;  // features it guards; empty = all

  bool configured() const { return !module_version.empty(); }
  // Whether asking for `requested` features needs the check.
  bool Guards(const std::vector<std::string>& requested) const;
};

enum class VersionState { kMatch, kMismatch, kUnknown, kNotConfigured };
const char* VersionStateName(VersionState s);  // "match", "mismatch", ...

struct VersionReport {
  VersionState state = VersionState::kNotConfigured;
  std::string module_version, module_path;    // what was read, from where (host path)
  std::string library_version, library_path;
  std::string why;                            // one line: mismatch or why unknown
};

// Size caps: a sysfs attribute is one short line; a libonload.so is a few MB.
constexpr size_t kMaxModuleVersionBytes = 4096;
constexpr size_t kMaxLibraryBytes = size_t{64} << 20;

VersionReport CheckVersions(const Inventory& inv, const HostView& host);

// The user-space version from a libonload image's bytes ("" when none found).
std::string LibraryVersionFromBytes(std::string_view bytes);

// The same over a file read in chunks: feed each chunk in order.
class BannerScanner {
 public:
  // Returns whether to go on (false once a banner is found).
  bool Feed(std::string_view chunk);
  bool found() const { return !version_.empty(); }
  const std::string& version() const { return version_; }

 private:
  std::string tail_;     // the last bytes seen, where a cut banner may start
  std::string version_;
};

// A version string as read: [0-9A-Za-z._-], 1 to 64 characters.
bool IsVersionToken(std::string_view s);

}  // namespace ocid
