// The one log set-up (log_setup.h): the settings file, then the command
// line, handed to log::Init; nothing in it stops the log.
#include "log_setup.h"

#include <doctest/doctest.h>

#include <string>

#include "log.h"
#include "test_tree.h"

namespace {

// Back to the defaults after each test (the log is process-wide).
struct DefaultLogAfter {
  ~DefaultLogAfter() {
    std::string ignored;
    ocid::log::Init(ocid::log::Config{}, &ignored);
  }
};

}  // namespace

TEST_CASE("log set-up: the file's settings, the command line's over them") {
  DefaultLogAfter restore;
  ocid::test::TempTree t;
  // The file sends everything at error and above to its log file...
  t.File("log.conf", "{\"log_level\": \"error\", \"log_target\": \"file\", \"log_file\": \"" +
                         (t / "from-file.log") + "\"}");
  ocid::LogSetup setup;
  setup.config_file = t / "log.conf";
  // ... and the command line lowers the level only.
  setup.given.level = "info";
  ocid::LogSetupIssues issues = ocid::SetUpLog(setup);
  CHECK(issues.config.empty());
  CHECK(issues.value.empty());
  CHECK(issues.file.empty());
  ocid::log::Info("an info line");
  ocid::log::Debug("a debug line");
  std::string got = t.Read("from-file.log");
  CHECK(got.find("an info line") != std::string::npos);
  CHECK(got.find("a debug line") == std::string::npos);

  // A file named on the command line wins over the file's.
  setup.given.file = t / "from-command-line.log";
  issues = ocid::SetUpLog(setup);
  CHECK(issues.file.empty());
  ocid::log::Info("second line");
  CHECK(t.Read("from-command-line.log").find("second line") != std::string::npos);
  CHECK(t.Read("from-file.log").find("second line") == std::string::npos);
}

TEST_CASE("log set-up: a broken settings file warns, and the command line still logs") {
  DefaultLogAfter restore;
  ocid::test::TempTree t;
  t.File("log.conf", "{\"log_target\": \"kafka\"}");
  ocid::LogSetup setup;
  setup.config_file = t / "log.conf";
  setup.given.target = "file";
  setup.given.file = t / "out.log";
  ocid::LogSetupIssues issues = ocid::SetUpLog(setup);
  CHECK(issues.config.find("ignoring the log config") != std::string::npos);
  CHECK(issues.config.find("log.conf") != std::string::npos);
  CHECK(issues.file.empty());
  ocid::log::Warn("still logging");
  CHECK(t.Read("out.log").find("still logging") != std::string::npos);

  // A named file that is missing is a warning too; the default one is not.
  setup.config_file = t / "absent.conf";
  CHECK(!ocid::SetUpLog(setup).config.empty());
  setup.read_config_file = false;
  CHECK(ocid::SetUpLog(setup).config.empty());
}

TEST_CASE("log set-up: an unknown value keeps its default, an unopenable file the other targets") {
  DefaultLogAfter restore;
  ocid::test::TempTree t;
  ocid::LogSetup setup;
  setup.read_config_file = false;
  setup.given.level = "loud";
  setup.given.file = t / "no/such/dir/out.log";
  ocid::LogSetupIssues issues = ocid::SetUpLog(setup);
  CHECK(issues.value.find("unknown log level \"loud\"") != std::string::npos);
  CHECK(issues.file.find("cannot open log file") != std::string::npos);
  CHECK(ocid::log::Enabled(ocid::log::Level::kInfo));
  CHECK(!ocid::log::Enabled(ocid::log::Level::kDebug));
}
