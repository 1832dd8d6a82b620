// The global log settings file, /etc/oci-decorator/oci-decorator.conf
// (OCID_DEFAULT_LOG_CONFIG), so that where lines go can change without
// touching a hooks.d entry or an engine's runtime registration. A JSON
// object with any of these string members and nothing else:
//   {"log_level": "info", "log_target": "stderr,journald",
//    "log_format": "text", "log_file": "/var/log/oci-decorator.log"}
// The hook reads it for every container, so it is one small read; and it
// can never fail a container: a missing file is normal, a broken one is a
// warning and the defaults apply. Options on the command line win.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "log.h"

namespace ocid {

constexpr size_t kMaxLogConfigBytes = size_t{64} * 1024;

struct LogSettings {
  std::optional<std::string> level, target, format, file;
};

// Parses the file's bytes; false with `why` (naming `where`) for a text that
// is not a JSON object of known string members with values log.h accepts.
bool ParseLogConfig(std::string_view bytes, const std::string& where, LogSettings* out,
                    std::string* why);

// Reads and parses `path`. A missing file leaves *out empty and is no
// warning unless `named` (given on the command line); an unreadable,
// oversized or broken one sets `warning` (and leaves *out empty): the
// defaults apply.
void ReadLogConfig(const std::string& path, bool named, LogSettings* out, std::string* warning);

// Members of `over` replace those of `base`.
LogSettings Overlay(const LogSettings& base, const LogSettings& over);

// The log.h configuration for `s` (a file without a target: the default
// targets and the file); false with `why` for a value log.h does
// not know (the fields that were valid are still set).
bool ToLogConfig(const LogSettings& s, log::Config* out, std::string* why);

}  // namespace ocid
