// The only user of spdlog, which formats the text lines on stderr and in the
// log file. The JSON lines and the two socket targets (journald's native
// protocol, syslog's datagrams) are small enough to write here directly.
// Sinks write straight to file descriptors we opened ourselves, because a
// log file opened by name would follow a planted symlink (threats.md: never
// write a predictable path as root by name).
//
// Nothing here may fail a container: a target that cannot be reached loses
// its lines (one warning on stderr when it was asked for by name), a
// datagram too big is cut, a full socket buffer drops the line rather than
// make a container's start wait on a stuck daemon.
#include "log.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "error.h"

namespace ocid::log {
namespace {

void WriteAll(int fd, const char* p, size_t left) {
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// Writes are serialized by g_mu in Write(): the device plugin logs from its
// gRPC, watch and main threads at once (an uncontended lock costs the hook
// nothing measurable).
//
// The text renderer: the message arrives as the caller gave it, and goes
// through Printable here, cut to what the line has left after this sink's
// prefix (time, program, level), so that the line is at most kMaxLineBytes.
class FdSink : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  explicit FdSink(int fd) : fd_(fd) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::details::log_msg line = msg;
    spdlog::memory_buf_t buf;
    line.payload = {};
    formatter_->format(line, buf);  // the prefix and the newline alone
    size_t framing = buf.size() > 0 ? buf.size() - 1 : 0;
    const std::string shown = Printable(std::string_view(msg.payload.data(), msg.payload.size()),
                                        kMaxLineBytes > framing ? kMaxLineBytes - framing : 0);
    line.payload = {shown.data(), shown.size()};
    buf.clear();
    formatter_->format(line, buf);
    WriteAll(fd_, buf.data(), buf.size());
  }
  void flush_() override {}

 private:
  int fd_;
};

// One socket target, connected on first use.
struct SocketSink {
  bool wanted = false;
  bool quiet = false;  // journald by default: absent is normal, say nothing
  bool tried = false;
  int fd = -1;
};

std::mutex g_mu;
Config g_cfg;
Level g_stderr_level = Level::kTrace;
bool g_to_stderr = true, g_to_file = false;
int g_file_fd = -1;
SocketSink g_journald, g_syslog;
std::shared_ptr<spdlog::logger> g_logger;
std::string g_program = "oci-decorator";
bool g_stderr_time = false;

spdlog::level::level_enum ToSpd(Level l) {
  switch (l) {
    case Level::kTrace: return spdlog::level::trace;
    case Level::kDebug: return spdlog::level::debug;
    case Level::kInfo: return spdlog::level::info;
    case Level::kWarn: return spdlog::level::warn;
    case Level::kError: return spdlog::level::err;
    case Level::kOff: return spdlog::level::off;
  }
  return spdlog::level::info;
}

const char* LevelName(Level l) {
  switch (l) {
    case Level::kTrace: return "trace";
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warning";
    case Level::kError: return "error";
    case Level::kOff: return "off";
  }
  return "info";
}

// The text lines, built on first use (under g_mu) so a container that did
// not ask never pays for it.
spdlog::logger& TextLogger() {
  if (!g_logger) {
    std::vector<spdlog::sink_ptr> sinks;
    if (g_to_stderr) {
      auto err = std::make_shared<FdSink>(g_cfg.stderr_fd);
      err->set_pattern(g_stderr_time ? "%Y-%m-%dT%H:%M:%S.%e%z " + g_program + ": %l: %v"
                                     : g_program + ": %l: %v");
      err->set_level(ToSpd(g_stderr_level));
      sinks.push_back(err);
    }
    if (g_to_file) {
      auto file = std::make_shared<FdSink>(g_file_fd);
      file->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z " + g_program + "[%P] %l: %v");
      sinks.push_back(file);
    }
    g_logger = std::make_shared<spdlog::logger>(g_program, sinks.begin(), sinks.end());
    g_logger->set_level(ToSpd(g_cfg.level));
  }
  return *g_logger;
}

std::string Rfc3339Now() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  ::gmtime_r(&ts.tv_sec, &t);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000000);
  return buf;
}

void JsonString(std::string* out, std::string_view s) {
  *out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += static_cast<char>(c);
    } else if (c == '\n') {
      *out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      *out += esc;
    } else {
      *out += static_cast<char>(c);
    }
  }
  *out += '"';
}

// KEY=value, the value through Printable and cut so that the field is at
// most kMaxLineBytes (so it holds no newline: journald's binary-safe form
// is never needed). `max_value` cuts it further.
void JournalField(std::string* out, std::string_view key, std::string_view raw,
                  size_t max_value = std::string::npos) {
  size_t room = kMaxLineBytes > key.size() + 1 ? kMaxLineBytes - key.size() - 1 : 0;
  *out += key;
  *out += '=';
  *out += Printable(raw, std::min(room, max_value));
  *out += '\n';
}

// Connects `sink` to `path` once. A datagram socket connected to the
// daemon's path keeps reaching it wherever the process goes later (a
// container's mount namespace included).
void Connect(SocketSink* sink, const std::string& path, const char* what) {
  if (!sink->wanted || sink->tried) return;
  sink->tried = true;
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  int e = 0;
  if (fd < 0) {
    e = errno;
  } else if (path.size() >= sizeof addr.sun_path) {
    e = ENAMETOOLONG;
  } else {
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) e = errno;
  }
  if (e == 0) {
    sink->fd = fd;
    return;
  }
  if (fd >= 0) ::close(fd);
  if (sink->quiet) return;
  std::string line = g_program + ": warning: cannot log to " + what + " at " + path + ": " +
                     std::strerror(e) + "\n";
  WriteAll(g_cfg.stderr_fd, line.data(), line.size());
}

void SendJournal(Level level, std::string_view message, const Fields& fields) {
  Connect(&g_journald, g_cfg.journald_socket, "journald");
  if (g_journald.fd < 0) return;
  size_t max = std::string::npos;
  for (;;) {
    std::string d = JournalDatagram(level, g_program, message, fields, max);
    ssize_t n;
    do n = ::send(g_journald.fd, d.data(), d.size(), MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    // Too big for one datagram (a tiny socket buffer): the message is cut
    // (halved) until it fits.
    if (n >= 0 || errno != EMSGSIZE || max < 256) return;
    max = std::min(kMaxLineBytes, max) / 2;
  }
}

void SendSyslog(Level level, std::string_view message) {
  Connect(&g_syslog, g_cfg.syslog_socket, "syslog");
  if (g_syslog.fd < 0) return;
  size_t max = std::string::npos;
  for (;;) {
    std::string d = SyslogDatagram(level, g_program, static_cast<int>(::getpid()), message,
                                   static_cast<long long>(::time(nullptr)), max);
    ssize_t n;
    do n = ::send(g_syslog.fd, d.data(), d.size(), MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    // Too big for one datagram (a tiny socket buffer): the message is cut
    // (halved) until it fits.
    if (n >= 0 || errno != EMSGSIZE || d.size() < 256) return;
    max = d.size() / 2;
  }
}

void CloseSockets() {
  for (SocketSink* s : {&g_journald, &g_syslog}) {
    if (s->fd >= 0) ::close(s->fd);
    *s = SocketSink{};
  }
}

}  // namespace

bool ParseLevel(std::string_view name, Level* out) {
  if (name == "trace")
    *out = Level::kTrace;
  else if (name == "debug")
    *out = Level::kDebug;
  else if (name == "info")
    *out = Level::kInfo;
  else if (name == "warn" || name == "warning")
    *out = Level::kWarn;
  else if (name == "error")
    *out = Level::kError;
  else if (name == "off")
    *out = Level::kOff;
  else
    return false;
  return true;
}

bool ParseFormat(std::string_view name, Format* out) {
  if (name == "text")
    *out = Format::kText;
  else if (name == "json")
    *out = Format::kJson;
  else
    return false;
  return true;
}

bool ParseTargets(std::string_view list, std::vector<Target>* out, std::string* why) {
  std::vector<Target> got;
  for (;;) {
    size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    if (name == "stderr")
      got.push_back(Target::kStderr);
    else if (name == "file")
      got.push_back(Target::kFile);
    else if (name == "syslog")
      got.push_back(Target::kSyslog);
    else if (name == "journald")
      got.push_back(Target::kJournald);
    else {
      *why = "unknown log target \"" + std::string(name) + "\" (stderr, file, syslog, journald)";
      return false;
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  out->insert(out->end(), got.begin(), got.end());
  return true;
}

void SetProgram(const std::string& name, bool stderr_timestamps) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_program = name;
  g_stderr_time = stderr_timestamps;
  g_logger.reset();
}

bool Init(const Config& config, std::string* err) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_cfg = config;
  g_logger.reset();
  CloseSockets();
  if (g_file_fd >= 0) ::close(g_file_fd);
  g_file_fd = -1;
  // No targets named: the defaults, and the file when one is named.
  bool file = config.targets.empty() && !config.file.empty();
  g_to_stderr = config.targets.empty();
  g_journald.wanted = g_journald.quiet = config.targets.empty();
  for (Target t : config.targets) {
    if (t == Target::kStderr) g_to_stderr = true;
    if (t == Target::kFile) file = true;
    if (t == Target::kSyslog) g_syslog.wanted = true;
    if (t == Target::kJournald) g_journald.wanted = true;
  }
  g_to_file = false;
  if (!file) return true;
  if (config.file.empty()) {
    *err = "the log target \"file\" needs a log file";
    return false;
  }
  int fd = ::open(config.file.c_str(),
                  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0) {
    *err = "cannot open log file: " + config.file + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    *err = "refusing log file (not a regular file owned by us): " + config.file;
    return false;
  }
  g_file_fd = fd;
  g_to_file = true;
  return true;
}

bool Init(Level level, const std::string& file, std::string* err) {
  Config c;
  c.level = level;
  c.file = file;
  return Init(c, err);
}

void SetStderrLevel(Level level) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_stderr_level = level;
  g_logger.reset();
}

void OpenSinks() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_cfg.level == Level::kOff) return;
  Connect(&g_journald, g_cfg.journald_socket, "journald");
  Connect(&g_syslog, g_cfg.syslog_socket, "syslog");
}

bool Enabled(Level level) { return level >= g_cfg.level && g_cfg.level != Level::kOff; }

int Failed(const ocid::Error& e, int code) {
  Error(e.Line());
  return code;
}

void Write(Level level, std::string_view message) { Write(level, message, Fields{}); }

void Write(Level level, std::string_view message, const Fields& fields) {
  if (!Enabled(level)) return;
  // The message and the fields go to every target as the caller gave them:
  // each target's renderer (FdSink for text, JsonLine, JournalDatagram,
  // SyslogDatagram) puts them through the one escaping rule and the one
  // bound (error.h Printable, kMaxLineBytes), whoever built them. A
  // container's bytes reach every target as the same visible escapes, never
  // as a control a terminal or a log reader obeys, and never as a line
  // longer than the bound.
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_cfg.format == Format::kText) {
    if (g_to_stderr || g_to_file)
      TextLogger().log(ToSpd(level), spdlog::string_view_t(message.data(), message.size()));
  } else if (g_to_file || (g_to_stderr && level >= g_stderr_level)) {
    std::string line = JsonLine(level, g_program, message, fields, Rfc3339Now());
    if (g_to_stderr && level >= g_stderr_level) WriteAll(g_cfg.stderr_fd, line.data(), line.size());
    if (g_to_file) WriteAll(g_file_fd, line.data(), line.size());
  }
  if (g_journald.wanted) SendJournal(level, message, fields);
  if (g_syslog.wanted) SendSyslog(level, message);
}

int SyslogPriority(Level level) {
  switch (level) {
    case Level::kError: return 3;
    case Level::kWarn: return 4;
    case Level::kInfo: return 6;
    default: return 7;
  }
}

std::string JournalDatagram(Level level, const std::string& program, std::string_view message,
                            const Fields& fields, size_t max_message) {
  std::string d;
  JournalField(&d, "MESSAGE", message, max_message);
  JournalField(&d, "PRIORITY", std::to_string(SyslogPriority(level)));
  JournalField(&d, "SYSLOG_FACILITY", "3");
  JournalField(&d, "SYSLOG_IDENTIFIER", program);
  const std::pair<const char*, const std::string*> named[] = {
      {"CONTAINER_ID", &fields.container_id},
      {"INVENTORY", &fields.inventory},
      {"FEATURE", &fields.feature},
      {"DECISION", &fields.decision},
      {"REASON", &fields.reason},
      {"OCI_DECORATOR_STAGE", &fields.stage}};
  for (const auto& [key, value] : named)
    if (!value->empty()) JournalField(&d, key, *value);
  return d;
}

std::string SyslogDatagram(Level level, const std::string& program, int pid,
                           std::string_view message, long long unix_time, size_t max_message) {
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  time_t t = static_cast<time_t>(unix_time);
  tm u{};
  ::gmtime_r(&t, &u);
  char head[96];
  std::snprintf(
      head, sizeof head, "<%d>%s %2d %02d:%02d:%02d %s[%d]: ", 3 * 8 + SyslogPriority(level),
      kMonths[u.tm_mon % 12], u.tm_mday, u.tm_hour, u.tm_min, u.tm_sec, program.c_str(), pid);
  std::string d = head;
  // One datagram is one record, one line: no newline (Printable escapes it).
  size_t room = kMaxLineBytes > d.size() ? kMaxLineBytes - d.size() : 0;
  return d + Printable(message, std::min(room, max_message));
}

std::string JsonLine(Level level, const std::string& program, std::string_view message,
                     const Fields& fields, const std::string& time) {
  // The message and the fields that are set share what the line has left
  // after its keys, time, level and program (JSON doubles '"' and '\\').
  std::vector<std::pair<const char*, std::string_view>> members = {{"message", message}};
  const std::pair<const char*, const std::string*> named[] = {
      {"container_id", &fields.container_id},
      {"inventory", &fields.inventory},
      {"feature", &fields.feature},
      {"decision", &fields.decision},
      {"reason", &fields.reason},
      {"stage", &fields.stage}};
  for (const auto& [key, value] : named)
    if (!value->empty()) members.emplace_back(key, *value);
  auto render = [&](const std::vector<std::string>& values) {
    std::string out = "{\"time\":";
    JsonString(&out, time);
    out += ",\"level\":";
    JsonString(&out, LevelName(level));
    out += ",\"program\":";
    JsonString(&out, program);
    for (size_t i = 0; i < members.size(); ++i) {
      out += ",\"";
      out += members[i].first;
      out += "\":";
      JsonString(&out, values[i]);
    }
    return out + "}";
  };
  size_t framing = render(std::vector<std::string>(members.size())).size();
  std::vector<std::string_view> raw;
  raw.reserve(members.size());
  for (const auto& m : members) raw.push_back(m.second);
  return render(PrintableParts(raw, kMaxLineBytes > framing ? kMaxLineBytes - framing : 0,
                               Quoting::kDoubled)) +
         "\n";
}

}  // namespace ocid::log
