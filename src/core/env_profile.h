// Environment profiles: named sets of tuning variables a container selects
// with "<activation_flag>_PROFILE=NAME" (Onload: OCI_ONLOAD_PROFILE=latency).
//
// A profile comes from the inventory's "profiles" map, else from the host's
// profile directory ("profile_dir", read under --host-root through the
// HostView, never from the image): NAME.opf, Onload's profile format. An .opf
// is a shell fragment that onload(1) sources; here it is PARSED, NEVER
// EXECUTED, and only straight-line files are accepted:
//   # comment, blank lines
//   onload_set VAR VALUE      VALUE one token, or one '...' or "..." string
//                             without $ ` \ (nothing to expand)
//   onload_import NAME        NAME.opf, else NAME.opf-fragment, same directory
// Anything else (an `if`, a variable reference, a command) is an error naming
// file:line: such a profile must be written into the inventory instead.
// Imports nest at most kMaxImportDepth deep and may not form a cycle.
//
// Threat model: the profile directory is the host's (root-owned), but the
// container picks the NAME: names are restricted to [A-Za-z0-9_.-]{1,64}
// without a leading '.', so a name is always one file in that directory.
// Variables must start with one of the inventory's prefixes (default "EF_")
// and be [A-Z0-9_]; values hold no NUL or newline. A file over
// kMaxProfileBytes, or a profile of more than kMaxProfileVars variables, is
// refused.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "error.h"

namespace ocid {

class HostView;

using EnvList = std::vector<std::pair<std::string, std::string>>;

constexpr size_t kMaxProfileBytes = size_t{64} * 1024;
constexpr size_t kMaxProfileVars = 256;
constexpr int kMaxImportDepth = 8;

// [A-Za-z0-9_.-]{1,64}, not starting with '.'.
bool IsProfileName(std::string_view name);
// [A-Z0-9_]+ starting with one of `prefixes`, at most 128 characters.
bool IsProfileVariable(std::string_view name, const std::vector<std::string>& prefixes);
// No NUL, CR or LF; at most 4096 bytes.
bool IsProfileValue(std::string_view value);

// One statement of an .opf file.
struct OpfStatement {
  enum Kind { kSet, kImport } kind = kSet;
  std::string name;   // variable (kSet) or profile (kImport)
  std::string value;  // kSet only
  int line = 0;
};

// Parses the bytes of one .opf. `file` names it in errors ("file:line: ...").
// CRLF line ends are accepted.
bool ParseOpf(std::string_view bytes, const std::string& file,
              const std::vector<std::string>& prefixes, std::vector<OpfStatement>* out, Error* err);

// Where the profiles of one inventory come from.
struct ProfileSources {
  std::string inventory;  // file, for messages
  std::map<std::string, EnvList> inline_profiles;
  std::string dir;                    // host directory, "" = none
  std::vector<std::string> prefixes;  // allowed variable prefixes
  // How to name a file of `dir` in messages (HostView::Display); unset = as is.
  std::function<std::string(const std::string&)> display;
};

// Reads a host file for ResolveProfile: true with the bytes; false with
// err->errnum ENOENT when there is no such file.
using ProfileReader = std::function<bool(const std::string& path, std::string* bytes, Error* err)>;

// The variables of profile `name`, in the order first set (a later
// onload_set of the same variable replaces the value). An unknown name is an
// error listing what `available` returns (called only then: pass a call of
// AvailableProfiles()).
bool ResolveProfile(const ProfileSources& src, const std::string& name, const ProfileReader& read,
                    const std::function<std::vector<std::string>()>& available, EnvList* out,
                    Error* err);

// The names a container may ask for: the inline ones and every NAME.opf in
// the directory with a valid NAME, sorted, unique.
std::vector<std::string> AvailableProfiles(const ProfileSources& src, const HostView& host);

// A ProfileReader over the HostView (regular files inside the host root).
ProfileReader HostProfileReader(const HostView& host);

}  // namespace ocid
