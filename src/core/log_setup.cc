#include "log_setup.h"

#include <cstdio>

#include "log.h"
#include "version.h"

namespace ocid {

LogSetupIssues SetUpLog(const LogSetup& setup) {
  // The config file is one small read (log_config.h): the hook pays it for
  // every container.
  LogSetupIssues issues;
  LogSettings file;
  if (setup.read_config_file) {
    const bool named = !setup.config_file.empty();
    ReadLogConfig(named ? setup.config_file : OCID_DEFAULT_LOG_CONFIG, named, &file,
                  &issues.config);
  }
  log::Config config;
  ToLogConfig(Overlay(file, setup.given), &config, &issues.value);
  log::Init(config, &issues.file);
  return issues;
}

void WarnOnStderr(const std::string& program, const LogSetupIssues& issues) {
  const char* p = program.c_str();
  if (!issues.config.empty()) std::fprintf(stderr, "%s: warning: %s\n", p, issues.config.c_str());
  if (!issues.value.empty())
    std::fprintf(stderr, "%s: warning: %s; using the default for it\n", p, issues.value.c_str());
  if (!issues.file.empty())
    std::fprintf(stderr, "%s: warning: %s; not logging to a file\n", p, issues.file.c_str());
}

}  // namespace ocid
