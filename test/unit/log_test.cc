// The log targets and formats (log.h) and the log settings file
// (log_config.h). The socket targets are tested against real AF_UNIX
// datagram sockets bound in a temporary directory.
#include "log.h"
#include "log_config.h"

#include <dirent.h>
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "error.h"

#include "test_tree.h"

namespace {

using ocid::log::Level;

// A bound datagram socket: what journald or syslogd listens on.
class Receiver {
 public:
  explicit Receiver(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~Receiver() { ::close(fd_); }
  // The next datagram, or "" when none is waiting.
  std::string Next() {
    std::string buf(1 << 20, '\0');
    ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
    return n < 0 ? "" : buf.substr(0, static_cast<size_t>(n));
  }

 private:
  int fd_ = -1;
};

std::string ReadPipe(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

int OpenFds() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (::readdir(d)) ++n;
  ::closedir(d);
  return n;
}

// Puts the logger back as the other tests expect it.
struct RestoreLog {
  ~RestoreLog() {
    std::string ignored;
    ocid::log::SetStderrLevel(Level::kTrace);
    ocid::log::Init(ocid::log::Config{}, &ignored);
  }
};

}  // namespace

TEST_CASE("log config: a good file, every member") {
  ocid::LogSettings s;
  std::string why;
  REQUIRE(ocid::ParseLogConfig(
      R"({"log_level": "debug", "log_target": "stderr,journald", "log_format": "json",
          "log_file": "/var/log/x.log"})",
      "/etc/c.conf", &s, &why));
  ocid::log::Config c;
  REQUIRE(ocid::ToLogConfig(s, &c, &why));
  CHECK(c.level == Level::kDebug);
  CHECK(c.format == ocid::log::Format::kJson);
  CHECK(c.file == "/var/log/x.log");
  CHECK(c.targets ==
        std::vector<ocid::log::Target>{ocid::log::Target::kStderr, ocid::log::Target::kJournald});
}

TEST_CASE("log config: broken files are refused, naming the file and why") {
  const std::pair<const char*, const char*> bad[] = {
      {"{", "/etc/c.conf: line"},
      {"[]", "not a JSON object"},
      {R"({"log_levle": "debug"})", "unknown member \"log_levle\""},
      {R"({"log_level": 3})", "\"log_level\" is not a non-empty string"},
      {R"({"log_level": ""})", "\"log_level\" is not a non-empty string"},
      {R"({"log_level": "loud"})", "unknown log level \"loud\""},
      {R"({"log_target": "stderr,kafka"})", "unknown log target \"kafka\""},
      {R"({"log_target": "stderr,"})", "unknown log target \"\""},
      {R"({"log_format": "xml"})", "unknown log format \"xml\""},
  };
  for (const auto& entry : bad) {
    // Not a structured binding: CAPTURE's lambda cannot capture one in C++17.
    const auto& text = entry.first;
    const auto& expected = entry.second;
    CAPTURE(text);
    ocid::LogSettings s;
    std::string why;
    CHECK_FALSE(ocid::ParseLogConfig(text, "/etc/c.conf", &s, &why));
    CHECK(why.find("/etc/c.conf") != std::string::npos);
    CHECK(why.find(expected) != std::string::npos);
    CHECK_FALSE(s.level);
  }
}

TEST_CASE("log config: missing is normal, huge or broken is a warning and nothing applies") {
  ocid::test::TempTree t;
  ocid::LogSettings s;
  std::string warning;
  ocid::ReadLogConfig(t / "absent.conf", false, &s, &warning);
  CHECK(warning.empty());
  CHECK_FALSE(s.level);
  // Named on the command line (--config), a missing file is worth a warning.
  ocid::ReadLogConfig(t / "absent.conf", true, &s, &warning);
  CHECK(warning.find("absent.conf") != std::string::npos);
  warning.clear();

  t.File("huge.conf",
         "{\"log_level\": \"debug\"" + std::string(ocid::kMaxLogConfigBytes, ' ') + "}");
  ocid::ReadLogConfig(t / "huge.conf", false, &s, &warning);
  CHECK(warning.find("ignoring the log config") != std::string::npos);
  CHECK_FALSE(s.level);

  warning.clear();
  t.File("bad.conf", R"({"log_level": "debug", "colour": "red"})");
  ocid::ReadLogConfig(t / "bad.conf", false, &s, &warning);
  CHECK(warning.find("unknown member \"colour\"") != std::string::npos);
  CHECK_FALSE(s.level);

  warning.clear();
  t.Dir("dir.conf");
  ocid::ReadLogConfig(t / "dir.conf", false, &s, &warning);
  CHECK(warning.find("not a regular file") != std::string::npos);

  warning.clear();
  t.File("good.conf", R"({"log_level": "debug", "log_target": "syslog"})");
  ocid::ReadLogConfig(t / "good.conf", true, &s, &warning);
  CHECK(warning.empty());
  CHECK(*s.level == "debug");
}

TEST_CASE("log config: the command line wins over the file") {
  ocid::LogSettings file, cli;
  file.level = "debug";
  file.target = "journald";
  cli.target = "stderr";
  ocid::LogSettings s = ocid::Overlay(file, cli);
  CHECK(*s.level == "debug");
  CHECK(*s.target == "stderr");
}

TEST_CASE("journald datagram: one KEY=value line per field, a newline escaped") {
  ocid::log::Fields f;
  f.container_id = "c1";
  f.inventory = "onload";
  f.decision = "refused";
  f.reason = "line one\nline two";
  std::string d = ocid::log::JournalDatagram(Level::kError, "oci-decorator", "container c1: no", f);
  std::string expected =
      "MESSAGE=container c1: no\nPRIORITY=3\nSYSLOG_FACILITY=3\n"
      "SYSLOG_IDENTIFIER=oci-decorator\nCONTAINER_ID=c1\nINVENTORY=onload\nDECISION=refused\n"
      "REASON=line one\\x0aline two\n";
  CHECK(d == expected);
  // A cut message says so.
  std::string cut = ocid::log::JournalDatagram(Level::kInfo, "p", std::string(1000, 'a'), {}, 100);
  CHECK(cut.rfind("MESSAGE=aaa", 0) == 0);
  CHECK(cut.find("[... ") != std::string::npos);
  CHECK(cut.find("\nPRIORITY=6\n") <= 8 + 100);
}

TEST_CASE("syslog datagram: daemon facility, identifier, pid, one line") {
  std::string d = ocid::log::SyslogDatagram(Level::kWarn, "oci-decorator", 42, "a\nb", 0);
  CHECK(d == "<28>Jan  1 00:00:00 oci-decorator[42]: a\\x0ab");
}

TEST_CASE("json line: one object per line with the fields that are set") {
  ocid::log::Fields f;
  f.container_id = "c\"1";
  f.decision = "applied";
  std::string line =
      ocid::log::JsonLine(Level::kInfo, "oci-decorator", "x\ny\x01", f, "2026-01-01T00:00:00.000Z");
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  nlohmann::json j = nlohmann::json::parse(line);
  CHECK(j["time"] == "2026-01-01T00:00:00.000Z");
  CHECK(j["level"] == "info");
  CHECK(j["program"] == "oci-decorator");
  CHECK(j["message"] == "x\\x0ay\\x01");  // the one escaping rule, then JSON's
  CHECK(j["container_id"] == "c\"1");
  CHECK(j["decision"] == "applied");
  CHECK_FALSE(j.contains("inventory"));
}

TEST_CASE("targets: each gets the lines at or above its level; sockets open lazily") {
  RestoreLog restore;
  ocid::test::TempTree t;
  Receiver journal(t / "journal"), syslog(t / "log");
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
  ocid::log::Config c;
  c.level = Level::kInfo;
  std::string why;
  REQUIRE(ocid::log::ParseTargets("stderr,journald", &c.targets, &why));
  REQUIRE(ocid::log::ParseTargets("syslog", &c.targets, &why));
  c.journald_socket = t / "journal";
  c.syslog_socket = t / "log";
  c.stderr_fd = p[1];
  c.format = ocid::log::Format::kJson;
  int before = OpenFds();
  REQUIRE(ocid::log::Init(c, &why));
  ocid::log::SetStderrLevel(Level::kError);

  ocid::log::Debug("below every level");
  CHECK(OpenFds() == before);  // nothing passed the level: no socket
  CHECK(journal.Next().empty());
  CHECK(ReadPipe(p[0]).empty());

  ocid::log::Fields f;
  f.container_id = "c1";
  f.decision = "applied";
  ocid::log::Write(Level::kInfo, "container c1: applied", f);
  CHECK(OpenFds() == before + 2);
  std::string d = journal.Next();
  CHECK(d.find("MESSAGE=container c1: applied\n") != std::string::npos);
  CHECK(d.find("DECISION=applied\n") != std::string::npos);
  CHECK(d.find("PRIORITY=6\n") != std::string::npos);
  CHECK(syslog.Next().find("oci-decorator[" + std::to_string(::getpid()) +
                           "]: container c1: applied") != std::string::npos);
  CHECK(ReadPipe(p[0]).empty());  // stderr: errors only

  ocid::log::Error("bad");
  CHECK(journal.Next().find("PRIORITY=3\n") != std::string::npos);
  CHECK(syslog.Next().rfind("<27>", 0) == 0);
  nlohmann::json j = nlohmann::json::parse(ReadPipe(p[0]));
  CHECK(j["message"] == "bad");
  CHECK(j["level"] == "error");
  ::close(p[0]);
  ::close(p[1]);
}

TEST_CASE("journald: a huge message is cut, not lost") {
  RestoreLog restore;
  ocid::test::TempTree t;
  Receiver journal(t / "journal");
  ocid::log::Config c;
  c.targets = {ocid::log::Target::kJournald};
  c.journald_socket = t / "journal";
  std::string why;
  REQUIRE(ocid::log::Init(c, &why));
  ocid::log::Info(std::string(4 << 20, 'm'));
  std::string d = journal.Next();
  REQUIRE_FALSE(d.empty());
  CHECK(d.rfind("MESSAGE=mmm", 0) == 0);
  CHECK(d.find(" bytes ...]mmm") != std::string::npos);
  CHECK(d.find("mmm\nPRIORITY=6\n") != std::string::npos);
  CHECK(d.size() < 2 * ocid::kMaxLineBytes);
}

TEST_CASE("an unreachable socket target loses its lines and says so once, nothing more") {
  RestoreLog restore;
  ocid::test::TempTree t;
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
  ocid::log::Config c;
  c.targets = {ocid::log::Target::kSyslog};
  c.syslog_socket = t / "nobody";
  c.stderr_fd = p[1];
  std::string why;
  REQUIRE(ocid::log::Init(c, &why));
  ocid::log::Info("one");
  ocid::log::Info("two");
  std::string err = ReadPipe(p[0]);
  CHECK(err == "oci-decorator: warning: cannot log to syslog at " + (t / "nobody") +
                   ": No such file or directory\n");
  // journald by default (no targets named) is quiet when absent.
  c.targets.clear();
  c.journald_socket = t / "nobody";
  REQUIRE(ocid::log::Init(c, &why));
  ocid::log::Info("three");
  CHECK(ReadPipe(p[0]) == "oci-decorator: info: three\n");
  ::close(p[0]);
  ::close(p[1]);
}

// Issue 19, finding 5: the runtime shim logged a container's activation
// value raw, so its CR, VT and FF reached the text log (and journald, and
// stderr). Write() applies the one escaping rule (error.h) on every target,
// whatever the caller passed.
TEST_CASE("every target shows a container's control bytes as escapes, never raw") {
  RestoreLog restore;
  ocid::test::TempTree t;
  Receiver journal(t / "journal"), syslog(t / "log");
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
  ocid::log::Config c;
  std::string why;
  REQUIRE(ocid::log::ParseTargets("stderr,file,journald,syslog", &c.targets, &why));
  c.journald_socket = t / "journal";
  c.syslog_socket = t / "log";
  c.stderr_fd = p[1];
  c.file = t / "shim.log";
  REQUIRE(ocid::log::Init(c, &why));
  const std::string value =
      "all\r\x0b\x0c\x1b[2J\x7f\xc2\x9b\xe2\x80\xae";  // NOLINT(misc-misleading-bidirectional)
  const std::string shown = "all\\x0d\\x0b\\x0c\\x1b[2J\\x7f\\xc2\\x9b\\xe2\\x80\\xae";
  ocid::log::Fields f;
  f.container_id = "c1\r";
  f.reason = "request env OCI_ONLOAD=" + value;
  ocid::log::Write(Level::kInfo, "container c1: edited: env OCI_ONLOAD=" + value, f);

  std::string text = ReadPipe(p[0]);
  std::string file = t.Read("shim.log");
  std::string d = journal.Next(), s = syslog.Next();
  for (const std::string* out : {&text, &file, &d, &s}) {
    CAPTURE(*out);
    CHECK(out->find("env OCI_ONLOAD=" + shown) != std::string::npos);
    for (std::string raw : {"\r", "\x0b", "\x0c", "\x1b", "\x7f", "\xc2\x9b",
                            "\xe2\x80\xae"})  // NOLINT(misc-misleading-bidirectional)
      CHECK(out->find(raw) == std::string::npos);
  }
  CHECK(d.find("CONTAINER_ID=c1\\x0d\n") != std::string::npos);
  CHECK(d.find("REASON=request env OCI_ONLOAD=" + shown + "\n") != std::string::npos);

  // The JSON format: the same message once decoded.
  c.format = ocid::log::Format::kJson;
  c.targets = {ocid::log::Target::kStderr};
  REQUIRE(ocid::log::Init(c, &why));
  ocid::log::Write(Level::kInfo, "v=" + value, f);
  std::string line = ReadPipe(p[0]);
  CHECK(line.find("\xc2\x9b") == std::string::npos);
  CHECK(nlohmann::json::parse(line)["message"] == "v=" + shown);
  ::close(p[0]);
  ::close(p[1]);
}

// Issue 27, finding 3: the runtime shim's "edited" line quoted a 1 MiB
// activation value whole (4 MB of \x09 in its log). Every target's renderer
// now cuts what it writes to the one bound, whatever the caller passed: a
// message and every field of 1 MiB each give no line (no journald field)
// longer than kMaxLineBytes, on every target, in both formats.
TEST_CASE("every target: a 1 MiB message and fields give no line longer than the bound") {
  RestoreLog restore;
  ocid::test::TempTree t;
  Receiver journal(t / "journal"), syslog(t / "log");
  const std::string value = "OCI_ONLOAD=all" + std::string(1 << 20, '\t') + "\"\\END";
  ocid::log::Fields f{value, value, value, value, value, value};
  auto longest = [](const std::string& text) {
    size_t n = 0;
    for (size_t at = 0; at < text.size();) {
      size_t nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      n = std::max(n, nl - at);
      at = nl + 1;
    }
    return n;
  };
  for (auto format : {ocid::log::Format::kText, ocid::log::Format::kJson}) {
    CAPTURE(static_cast<int>(format));
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
    ocid::log::Config c;
    std::string why;
    REQUIRE(ocid::log::ParseTargets("stderr,file,journald,syslog", &c.targets, &why));
    c.journald_socket = t / "journal";
    c.syslog_socket = t / "log";
    c.stderr_fd = p[1];
    c.file = t / "shim.log";
    c.format = format;
    REQUIRE(ocid::log::Init(c, &why));
    ocid::log::SetProgram("oci-decorator-runtime", /*stderr_timestamps=*/true);
    ocid::log::Write(Level::kInfo,
                     "container c1: edited config.json: onload.json (env " + value + ")", f);
    ocid::log::Write(Level::kError, value, f);
    ocid::log::SetProgram("oci-decorator", false);

    std::string text = ReadPipe(p[0]);
    std::string file = t.Read("shim.log");
    for (const std::string* out : {&text, &file}) {
      CHECK(std::count(out->begin(), out->end(), '\n') == 2);
      CHECK(longest(*out) <= ocid::kMaxLineBytes);
      CHECK(longest(*out) > ocid::kMaxLineBytes - 256);      // cut, not dropped
      const bool json = format == ocid::log::Format::kJson;  // JSON doubles the backslash
      CHECK(out->find(json ? "OCI_ONLOAD=all\\\\x09" : "OCI_ONLOAD=all\\x09") != std::string::npos);
      CHECK(out->find(" bytes ...]") != std::string::npos);
      if (json) {
        size_t nl = out->find('\n');
        nlohmann::json j = nlohmann::json::parse(out->substr(0, nl));
        CHECK(j["container_id"].get<std::string>().rfind("OCI_ONLOAD=all\\x09", 0) == 0);
        CHECK(j["reason"].get<std::string>().find(" bytes ...]") != std::string::npos);
      }
    }
    for (int i = 0; i < 2; ++i) {
      std::string d = journal.Next(), s = syslog.Next();
      REQUIRE_FALSE(d.empty());
      REQUIRE_FALSE(s.empty());
      CHECK(longest(d) <= ocid::kMaxLineBytes);  // each KEY=value field
      CHECK(d.find("\nCONTAINER_ID=OCI_ONLOAD=all\\x09") != std::string::npos);
      CHECK(d.find("\nREASON=OCI_ONLOAD=all\\x09") != std::string::npos);
      CHECK(s.size() <= ocid::kMaxLineBytes);
      CHECK(s.find('\n') == std::string::npos);
      CHECK(s.find(" bytes ...]") != std::string::npos);
    }
    ::close(p[0]);
    ::close(p[1]);
    ::unlink((t / "shim.log").c_str());
  }
}

TEST_CASE("the pure renderers: a 1 MiB message and fields stay within the bound") {
  const std::string value = std::string(1 << 20, '\t') + "\"\\\xc2\x9b";
  ocid::log::Fields f{value, value, value, value, value, value};
  std::string json = ocid::log::JsonLine(Level::kWarn, "p", value, f, "2026-01-01T00:00:00.000Z");
  CHECK(json.size() <= ocid::kMaxLineBytes + 1);
  CHECK(json.find('\n') == json.size() - 1);
  nlohmann::json j = nlohmann::json::parse(json);
  CHECK(j["message"].get<std::string>().rfind("\\x09\\x09", 0) == 0);
  CHECK(j["stage"].get<std::string>().find("\"\\\\xc2\\x9b") != std::string::npos);  // the tail
  std::string d = ocid::log::JournalDatagram(Level::kWarn, "p", value, f);
  for (size_t at = 0, nl; (nl = d.find('\n', at)) != std::string::npos; at = nl + 1)
    CHECK(nl - at <= ocid::kMaxLineBytes);
  CHECK(ocid::log::SyslogDatagram(Level::kWarn, "p", 1, value, 0).size() <= ocid::kMaxLineBytes);
}
