// The runtime shim's own settings and its one output format besides
// config.json: lines for the runtime's --log file.
//
// Settings come, in increasing precedence, from built-in defaults, the
// config file (OCID_DEFAULT_SHIM_CONFIG, /etc/oci-decorator/runtime.json)
// and options the engine passes (--ocid-*, docker's "runtimeArgs"), which
// ResolveShimSettings (runtime_shim.h) reads as the shim starts and `check`
// reads under the host root where docker's default runtime is the shim. The file is a JSON object
// with any of these string members and nothing else:
//   {"runtime": "/usr/sbin/runc", "config_dir": "...", "host_root": "/",
//    "log_level": "info", "log_file": "/var/log/oci-decorator.log",
//    "log_target": "file,journald", "log_format": "json"}
#pragma once
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "version.h"

namespace ocid {

// Debian's runc. Absolute, like every runtime path the shim accepts.
constexpr const char* kDefaultShimRuntime = "/usr/sbin/runc";

struct ShimSettings {
  std::string runtime = kDefaultShimRuntime;  // the real runtime, absolute
  std::string config_dir = OCID_DEFAULT_CONFIG_DIR;
  std::string host_root = "/";
  std::string log_level = "info";
  std::string log_file;    // "" = none
  std::string log_target;  // "" = the defaults (log.h)
  std::string log_format = "text";
};

// Overrides *settings with the members present in the file's bytes. Unknown
// members, non-strings and empty strings are errors naming `where`.
bool ParseShimConfig(std::string_view bytes, const std::string& where, ShimSettings* settings,
                     Error* err);

// Checks what cannot be used: a runtime that is not an absolute path (the
// shim never searches PATH), an unknown log level, target or format.
bool ValidateShimSettings(const ShimSettings& s, Error* err);

// Settings given explicitly (command line, --ocid-* options); unset ones come
// from the config file or the defaults.
struct ShimOptions {
  std::optional<std::string> config_file;
  std::optional<std::string> runtime, config_dir, host_root, log_level, log_file, log_target,
      log_format;
  mode_t umask = 022;  // the engine's umask, given back to the runtime
};

// The leading --ocid-* options of a runtime's arguments, as the shim takes
// them: each with its value, joined by '=' or as the next argument. Calls
// f(index of the option, how many arguments it spans, name, value) for
// each; stops at the first argument that is not one. False with *err when
// an option lacks its value, or when f returns false (f fills *err).
using ShimOptionVisitor = std::function<bool(size_t index, size_t span, const std::string& name,
                                             const std::string& value)>;
bool ForEachShimOption(const std::vector<std::string>& args, const ShimOptionVisitor& f,
                       Error* err);

// Moves the leading --ocid-* options out of `args` into *opts. Stops at the
// first argument that is not one. An unknown --ocid- option or a missing
// value is an error.
bool TakeShimOptions(std::vector<std::string>* args, ShimOptions* opts, Error* err);

// The options over *settings (what the file and the defaults gave), then
// ValidateShimSettings.
bool ApplyShimOptions(const ShimOptions& opts, ShimSettings* settings, Error* err);

// One line for a runtime's --log file in its --log-format, as runc's logrus
// writes them: "json" -> {"level":..,"msg":..,"time":RFC3339}; anything else
// -> time="..." level=... msg="...". containerd reads the last "error" line of
// the JSON log to say why a create failed. `time` must be RFC 3339. `raw`
// goes through Printable (error.h) first, in both formats: the text format's
// quoting escapes only '"' and '\\', and JSON leaves DEL, C1 and bidi raw.
// The line is at most kMaxLineBytes before its newline, whatever `raw` holds:
// the one bound of every line a container's bytes reach (error.h).
std::string RuntimeLogLine(const std::string& format, const std::string& level,
                           const std::string& raw, const std::string& time);

}  // namespace ocid
