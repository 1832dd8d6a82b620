// Logging. This module is the only owner of spdlog; the rest of the hook
// builds plain strings and checks Enabled() first so a container that did
// not ask pays nothing for messages nobody reads.
#pragma once
#include <string>
#include <string_view>

namespace ocid::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Parses "trace|debug|info|warn|warning|error|off"; false if unknown.
bool ParseLevel(std::string_view name, Level* out);

// Logs to stderr, and to `file` when not empty (opened O_APPEND|O_NOFOLLOW,
// mode 0600, refused if it is not a regular file owned by us).
bool Init(Level level, const std::string& file, std::string* err);

// The name lines start with ("oci-decorator" by default), and whether
// stderr lines carry a timestamp (for a long-running program: a hook's
// lines land in its runtime's log, which has its own).
void SetProgram(const std::string& name, bool stderr_timestamps);

// Messages below `level` go to the log file only, not to stderr. The
// runtime shim keeps stderr for errors: under containerd a runtime's stderr
// during `create` is the container's own.
void SetStderrLevel(Level level);

bool Enabled(Level level);
void Write(Level level, std::string_view message);

inline void Debug(std::string_view m) { Write(Level::kDebug, m); }
inline void Info(std::string_view m) { Write(Level::kInfo, m); }
inline void Warn(std::string_view m) { Write(Level::kWarn, m); }
inline void Error(std::string_view m) { Write(Level::kError, m); }

}  // namespace ocid::log

// Evaluates the message expression only when the level is enabled.
#define OCID_DEBUG(expr)                                           \
  do {                                                             \
    if (::ocid::log::Enabled(::ocid::log::Level::kDebug))          \
      ::ocid::log::Write(::ocid::log::Level::kDebug, (expr));      \
  } while (0)
