#include "log_config.h"

#include <fcntl.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "error.h"
#include "files.h"
#include "json_text.h"

namespace ocid {

bool ParseLogConfig(std::string_view bytes, const std::string& where, LogSettings* out,
                    std::string* why) {
  nlohmann::json j;
  std::string parse_why;
  if (!ParseJsonText(bytes, &j, &parse_why)) return *why = where + ": " + parse_why, false;
  if (!j.is_object()) return *why = where + ": not a JSON object", false;
  LogSettings s;
  for (const auto& [key, value] : j.items()) {
    std::optional<std::string>* field = key == "log_level"    ? &s.level
                                        : key == "log_target" ? &s.target
                                        : key == "log_format" ? &s.format
                                        : key == "log_file"   ? &s.file
                                                              : nullptr;
    if (!field)
      return *why = where + ": unknown member \"" + Printable(key) +
                    "\" (known: log_level, log_target, log_format, log_file)",
             false;
    if (!value.is_string() || value.get_ref<const std::string&>().empty())
      return *why = where + ": \"" + key + "\" is not a non-empty string", false;
    *field = value.get<std::string>();
  }
  log::Config check;
  if (!ToLogConfig(s, &check, why)) return *why = where + ": " + *why, false;
  *out = s;
  return true;
}

void ReadLogConfig(const std::string& path, bool named, LogSettings* out, std::string* warning) {
  std::string bytes;
  Error err;
  if (!ReadFileAt(AT_FDCWD, path, kMaxLogConfigBytes, &bytes, &err)) {
    if (named || err.errnum != ENOENT) *warning = "ignoring the log config: " + err.Line();
    return;
  }
  std::string why;
  if (!ParseLogConfig(bytes, path, out, &why)) *warning = "ignoring the log config: " + why;
}

LogSettings Overlay(const LogSettings& base, const LogSettings& over) {
  LogSettings s = base;
  if (over.level) s.level = over.level;
  if (over.target) s.target = over.target;
  if (over.format) s.format = over.format;
  if (over.file) s.file = over.file;
  return s;
}

bool ToLogConfig(const LogSettings& s, log::Config* out, std::string* why) {
  bool ok = true;
  if (s.level && !log::ParseLevel(*s.level, &out->level)) {
    *why = "unknown log level \"" + *s.level + "\" (trace, debug, info, warn, error, off)";
    ok = false;
  }
  if (s.format && !log::ParseFormat(*s.format, &out->format)) {
    *why = "unknown log format \"" + *s.format + "\" (text, json)";
    ok = false;
  }
  if (s.file) out->file = *s.file;
  std::vector<log::Target> targets;
  std::string target_why;
  if (s.target && !log::ParseTargets(*s.target, &targets, &target_why)) {
    *why = target_why;
    ok = false;
  } else if (s.target) {
    out->targets = targets;
  }
  return ok;
}

}  // namespace ocid
