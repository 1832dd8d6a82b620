// The one way every program sets up its log: the hook's commands, the
// runtime shim and the device plugin. The settings file (log_config.h,
// OCID_DEFAULT_LOG_CONFIG unless --config names another), overlaid with the
// options given on the command line, handed to log::Init. The shim reads
// no settings file: its runtime.json carries its log settings, which it
// passes as given.
//
// Nothing here fails a program: a broken settings file is ignored, a value
// log.h does not know keeps its default, a file target that cannot be
// opened leaves the other targets. Each is one warning, for the program to
// show where its warnings go (stderr; the shim: the runtime's --log file).
#pragma once
#include <string>

#include "log_config.h"

namespace ocid {

struct LogSetup {
  LogSettings given;        // the command line's: only options given
  std::string config_file;  // --config; "" = OCID_DEFAULT_LOG_CONFIG
  bool read_config_file = true;
};

// What could not be honoured, each "" or one line saying why.
struct LogSetupIssues {
  std::string config;  // the settings file was ignored
  std::string value;   // a value log.h does not know: its default applies
  std::string file;    // the file target was not opened: the others apply
};

// Reads the settings file, overlays `setup.given`, and calls log::Init.
// log::SetProgram comes first, where a program sets one.
LogSetupIssues SetUpLog(const LogSetup& setup);

// Each issue as a warning on stderr, "<program>: warning: ...".
void WarnOnStderr(const std::string& program, const LogSetupIssues& issues);

}  // namespace ocid
