// The only user of spdlog. Sinks write straight to file descriptors we opened
// ourselves, because a log file opened by name would follow a planted
// symlink (threats.md: never write a predictable path as root by name).
#include "log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

namespace ocid::log {
namespace {

// A mutex sink: the device plugin logs from its gRPC, watch and main
// threads at once (an uncontended lock costs the hook nothing measurable).
class FdSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit FdSink(int fd) : fd_(fd) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    const char* p = buf.data();
    size_t left = buf.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  void flush_() override {}

 private:
  int fd_;
};

Level g_level = Level::kInfo;
Level g_stderr_level = Level::kTrace;
int g_file_fd = -1;
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

// Built on first use, so a container that did not ask never pays for it;
// under a lock, since the first use may come from two threads at once.
std::mutex g_logger_mu;
spdlog::logger& Logger() {
  std::lock_guard<std::mutex> lock(g_logger_mu);
  if (!g_logger) {
    auto err = std::make_shared<FdSink>(STDERR_FILENO);
    err->set_pattern(g_stderr_time ? "%Y-%m-%dT%H:%M:%S.%e%z " + g_program + ": %l: %v"
                                   : g_program + ": %l: %v");
    err->set_level(ToSpd(g_stderr_level));
    std::vector<spdlog::sink_ptr> sinks{err};
    if (g_file_fd >= 0) {
      auto file = std::make_shared<FdSink>(g_file_fd);
      file->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z " + g_program + "[%P] %l: %v");
      sinks.push_back(file);
    }
    g_logger = std::make_shared<spdlog::logger>(g_program, sinks.begin(), sinks.end());
    g_logger->set_level(ToSpd(g_level));
  }
  return *g_logger;
}

}  // namespace

bool ParseLevel(std::string_view name, Level* out) {
  if (name == "trace") *out = Level::kTrace;
  else if (name == "debug") *out = Level::kDebug;
  else if (name == "info") *out = Level::kInfo;
  else if (name == "warn" || name == "warning") *out = Level::kWarn;
  else if (name == "error") *out = Level::kError;
  else if (name == "off") *out = Level::kOff;
  else return false;
  return true;
}

void SetProgram(const std::string& name, bool stderr_timestamps) {
  g_program = name;
  g_stderr_time = stderr_timestamps;
  g_logger.reset();
}

bool Init(Level level, const std::string& file, std::string* err) {
  g_level = level;
  g_logger.reset();
  if (file.empty()) return true;
  int fd = ::open(file.c_str(),
                  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0) {
    *err = "cannot open log file: " + file + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    *err = "refusing log file (not a regular file owned by us): " + file;
    return false;
  }
  g_file_fd = fd;
  return true;
}

void SetStderrLevel(Level level) {
  g_stderr_level = level;
  g_logger.reset();
}

bool Enabled(Level level) {
  return level >= g_level && g_level != Level::kOff;
}

void Write(Level level, std::string_view message) {
  if (!Enabled(level)) return;
  Logger().log(ToSpd(level), "{}", message);
}

}  // namespace ocid::log
