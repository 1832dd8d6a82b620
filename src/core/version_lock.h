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
// size caps; nothing is executed. Either side unknown (file missing,
// unreadable, no banner) is never a failure: the planner warns and goes on.
//
// Onload's version is one string, ONLOAD_VERSION, that the library and the
// module are both built with; the lock compares the two copies as exact
// strings. Its two upstream formats (Xilinx-CNS/onload):
//   release:   "<version> " ONLOAD_BUILD_PROFILE   "9.2.0.43 ", "9.2.0.43 cloud"
//              (scripts/lib/mkdist/preprocess_source, update_product_strings)
//   git build: "<hash> <date> <branch or tag> " ONLOAD_BUILD_PROFILE
//              "ef17681d 2026-07-22 master " (scripts/onload_version_gen)
// The library holds it in its banner, the text it prints when run as a
// program (src/lib/transport/unix/startup.c, onload_version_msg):
//   ONLOAD_PRODUCT " " ONLOAD_VERSION "\n" ONLOAD_COPYRIGHT "\n" "Built: ..."
// where the product ends in "Onload" (Onload, CloudOnload, EnterpriseOnload,
// OpenOnload); the module exports it as MODULE_VERSION(ONLOAD_VERSION)
// (src/driver/linux_onload/driver.c), which sysfs shows with a newline. The
// version is that string without its trailing whitespace; a build profile is
// part of it.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace ocid {

struct Inventory;  // its VersionLock is the description (inventory.h)
class HostView;

enum class VersionState { kMatch, kMismatch, kUnknown, kNotConfigured };
const char* VersionStateName(VersionState s);  // "match", "mismatch", ...

struct VersionReport {
  VersionState state = VersionState::kNotConfigured;
  std::string module_version, module_path;  // what was read, from where (host path)
  std::string library_version, library_path;
  std::string why;  // one line: mismatch or why unknown
};

// Size caps: a sysfs attribute is one short line; a libonload.so is a few MB.
constexpr size_t kMaxModuleVersionBytes = 4096;
constexpr size_t kMaxLibraryBytes = size_t{64} << 20;

VersionReport CheckVersions(const Inventory& inv, const HostView& host);

// The user-space version from a libonload image's bytes ("" when none found):
// everything between the first banner's "Onload " and the newline before
// "Copyright", trailing spaces trimmed.
std::string LibraryVersionFromBytes(std::string_view bytes);

// The module's version from its sysfs file's bytes ("" when none): the first
// line, trailing whitespace trimmed.
std::string ModuleVersionFromBytes(std::string_view bytes);

// The same scan as LibraryVersionFromBytes over a file read in chunks: feed
// each chunk in order. A banner cut by any chunk boundary is found.
class BannerScanner {
 public:
  // Returns whether to go on (false once a banner is found).
  bool Feed(std::string_view chunk);
  bool found() const { return !version_.empty(); }
  const std::string& version() const { return version_; }

 private:
  std::string tail_;  // the last bytes seen, where a cut banner may start
  std::string version_;
};

// The longest version read: 1 to 128 characters of [0-9A-Za-z._/-] and
// spaces, first and last not a space ('/': a git branch such as
// "feature/x", which onload_version_gen writes as it is).
constexpr size_t kMaxVersionChars = 128;
bool IsVersion(std::string_view s);

}  // namespace ocid
