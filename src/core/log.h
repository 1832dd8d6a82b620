// Logging. This module is the only owner of spdlog; the rest of the hook
// builds plain strings and checks Enabled() first so a container that did
// not ask pays nothing for messages nobody reads.
//
// Lines go to targets: stderr, a file, syslog (/dev/log) and journald (its
// native protocol on /run/systemd/journal/socket), as text or, on stderr
// and the file, one JSON object per line. Whatever the caller passes, every
// target's renderer shows it through the one escaping rule and within the
// one bound (error.h: Printable, kMaxLineBytes): no line it writes, and no
// journald field, is longer than kMaxLineBytes. The sockets are opened lazily, on
// the first message that passes the level, or by OpenSinks(); a container
// that did not ask and logs nothing opens no socket.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace ocid {
struct Error;
}  // namespace ocid

namespace ocid::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };
enum class Target { kStderr, kFile, kSyslog, kJournald };
enum class Format { kText, kJson };

constexpr const char* kJournaldSocket = "/run/systemd/journal/socket";
constexpr const char* kSyslogSocket = "/dev/log";

// Parses "trace|debug|info|warn|warning|error|off"; false if unknown.
bool ParseLevel(std::string_view name, Level* out);
// Parses "text|json".
bool ParseFormat(std::string_view name, Format* out);
// Appends the targets of a comma-separated list ("stderr,journald") to *out;
// false with `why` naming an unknown or empty one.
bool ParseTargets(std::string_view list, std::vector<Target>* out, std::string* why);

// What a line is about, for the structured targets (journald fields, JSON
// members). Empty members are left out. A decision is "applied", "refused"
// or "ignored"; `reason` says why for the last two.
struct Fields {
  std::string container_id, inventory, feature, decision, reason, stage;
};

struct Config {
  Level level = Level::kInfo;
  // Empty: stderr, plus journald when its socket exists (checked lazily),
  // plus `file` when one is named.
  std::vector<Target> targets;
  Format format = Format::kText;
  std::string file;  // the file target's path (required by kFile)
  // Where the sockets are; tests point them into a temporary directory.
  std::string journald_socket = kJournaldSocket;
  std::string syslog_socket = kSyslogSocket;
  int stderr_fd = 2;
};

// Takes `config` for every later line. The file (when a target) is opened
// now: O_APPEND|O_NOFOLLOW, mode 0600, refused unless a regular file owned
// by us; on failure the other targets still apply and `err` says why.
bool Init(const Config& config, std::string* err);
// The default targets at `level`, and `file` when not empty.
bool Init(Level level, const std::string& file, std::string* err);

// The name lines start with ("oci-decorator" by default; the journald
// SYSLOG_IDENTIFIER and syslog tag), and whether stderr lines carry a
// timestamp (for a long-running program: a hook's lines land in its
// runtime's log, which has its own).
void SetProgram(const std::string& name, bool stderr_timestamps);

// Messages below `level` go to the other targets only, not to stderr. The
// runtime shim keeps stderr for errors: under containerd a runtime's stderr
// during `create` is the container's own.
void SetStderrLevel(Level level);

// Opens the socket targets now rather than on the first line: the hook
// calls it in the host's mount namespace before it enters a container's,
// where the socket paths would be the container's.
void OpenSinks();

bool Enabled(Level level);
// The message and every field go through Printable (error.h) in each
// target's renderer: the one escaping rule, and lines cut to kMaxLineBytes,
// whatever the caller did.
void Write(Level level, std::string_view message, const Fields& fields);
void Write(Level level, std::string_view message);

inline void Debug(std::string_view m) { Write(Level::kDebug, m); }
inline void Info(std::string_view m) { Write(Level::kInfo, m); }
inline void Warn(std::string_view m) { Write(Level::kWarn, m); }
inline void Error(std::string_view m) { Write(Level::kError, m); }

// The error convention of a command: its error's one line at error level,
// and `code` to exit with (kExitFailure in exit_codes.h, unless the command gives
// codes their own meaning, as `check` does).
int Failed(const ocid::Error& e, int code);

// The encodings, pure, for the sinks and their tests. Each takes the
// message and fields as callers gave them and applies Printable and the
// bound itself.
// syslog severity: error 3, warn 4, info 6, debug and trace 7.
int SyslogPriority(Level level);
// One journald native-protocol datagram: KEY=value\n per field, each field
// at most kMaxLineBytes before its newline (a value through Printable holds
// no newline). MESSAGE is cut further to `max_message` bytes when given.
std::string JournalDatagram(Level level, const std::string& program, std::string_view message,
                            const Fields& fields, size_t max_message = std::string::npos);
// One RFC 3164 datagram for /dev/log, facility daemon: "<pri>Mmm dd
// hh:mm:ss program[pid]: message", at most kMaxLineBytes, the message
// cut further to `max_message` when given. `unix_time` is in seconds.
std::string SyslogDatagram(Level level, const std::string& program, int pid,
                           std::string_view message, long long unix_time,
                           size_t max_message = std::string::npos);
// One JSON object and a newline: time, level, program, message, then the
// non-empty fields; at most kMaxLineBytes before the newline (the message
// and fields share what the rest leaves). `time` is RFC 3339.
std::string JsonLine(Level level, const std::string& program, std::string_view message,
                     const Fields& fields, const std::string& time);

}  // namespace ocid::log

// Evaluates the message expression only when the level is enabled.
#define OCID_DEBUG(expr)                                      \
  do {                                                        \
    if (::ocid::log::Enabled(::ocid::log::Level::kDebug))     \
      ::ocid::log::Write(::ocid::log::Level::kDebug, (expr)); \
  } while (0)
