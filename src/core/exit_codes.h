// The exit codes of both programs, in one place. Each program's man page
// (EXIT STATUS) says which command gives which; a command that needs a code
// not listed here adds it here, and to the man page, in the same change.
#pragma once

namespace ocid {

// Done: the container was decorated or did not ask, the node is ready, the
// long-running program was asked to stop.
constexpr int kExitOk = 0;

// A command that failed: the exit code of every subcommand whose error is
// one line (log::Failed), unless the command gives its own meaning to codes
// (`check`: 1 not ready).
constexpr int kExitFailure = 1;

// A bad command line (CLI11 refused it, an invalid --runtime-name), or an
// input the command line names that cannot be read where the command
// documents it so (`check`, `resources`: the host root or the config
// directory).
constexpr int kExitBadInput = 2;

// The exit code of every program when an exception escapes (a bug, or
// memory exhausted): EX_SOFTWARE, apart from the codes commands give on
// purpose.
constexpr int kExitInternalError = 70;

// The runtime shim could not execute the runtime: the shell's code for a
// command that cannot be run.
constexpr int kExitCannotExec = 127;

}  // namespace ocid
