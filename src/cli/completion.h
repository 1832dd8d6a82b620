// Shell completion scripts (bash, zsh) generated from the CLI definitions.
//
// Both programs build their command line with CLI11; this module is the one
// place that walks a CLI11 App (the other CLI11 users are the two mains).
// Decide, then act: DescribeCommandLine turns an App into a plain
// CommandLine value (subcommands, options, which options take a value, the
// values an option or positional accepts); BashScript and ZshScript render
// that value as text, and are tested without CLI11.
//
// The values offered for an option come from its validators' descriptions
// in CLI11's set form "{a,b,c}": CLI::IsMember (which also enforces them)
// or Suggests below (which only names the usual values, for options whose
// other values are handled by the program itself, e.g. --log-level warns
// and falls back to info). Any other option value completes as a file name.
//
// Hidden subcommands and options (empty group) are left out, the
// `completion` subcommand itself among them.
#pragma once
#include <string>
#include <vector>

namespace ocid::cli {

struct CompletionOption {
  std::vector<std::string> names;  // "--config-dir", "-o"
  std::string description;
  bool takes_value = false;
  std::vector<std::string> choices;  // empty: any value (a file name is offered)
};

struct CompletionPositional {
  std::string name;
  std::vector<std::string> choices;
};

struct CommandLine {
  std::string name;  // the program, or the subcommand
  std::string description;
  std::vector<CompletionOption> options;
  std::vector<CompletionPositional> positionals;  // in order
  std::vector<CommandLine> subcommands;
};

// The values of a validator description in CLI11's set form: "{a,b}" gives
// {a, b}; anything else gives none. `type_name` is Option::get_type_name()
// ("TEXT:{a,b}"): each ':'-separated part is looked at.
std::vector<std::string> ChoicesIn(const std::string& type_name);

// The scripts. Bash: a function registered with `complete -F` for
// root.name. Zsh: a #compdef file for a directory in $fpath, which also
// works when sourced (it then calls compdef).
std::string BashScript(const CommandLine& root);
std::string ZshScript(const CommandLine& root);

// "a", "b" -> "a,b".
std::string JoinWords(const std::vector<std::string>& words, char sep);

// In completion_cli11.h (inline, CLI11 in the mains' translation units only):
//   DescribeCommandLine(app, program)  the visible command line of `app`;
//   Suggests(values)    a validator that accepts every value but names the
//                       usual ones in the set form, for --help and completions;
//   AddCompletionCommand(app, &shell)  the hidden `completion bash|zsh`;
//   PrintCompletion(app, program, shell)  the script on stdout; 0, or 2 with
//                       one line on stderr for another shell.

}  // namespace ocid::cli
