// The CLI11 side of the shell completions (completion.h): walking an App,
// the Suggests validator, the hidden `completion` subcommand. Inline, and
// included only by the two programs' mains (and its unit test): CLI11's
// headers construct their validator objects in every translation unit that
// includes them, and the hook runs that for every container on the host,
// so CLI11 stays in one translation unit per program.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "completion.h"

namespace ocid::cli {
namespace cli11_detail {

inline CompletionOption DescribeOption(const CLI::Option& o) {
  CompletionOption d;
  for (const auto& n : o.get_lnames()) d.names.push_back("--" + n);
  for (const auto& n : o.get_snames()) d.names.push_back("-" + n);
  d.description = o.get_description();
  d.takes_value = o.get_items_expected_max() != 0;  // flags expect none
  if (d.takes_value) d.choices = ChoicesIn(o.get_type_name());
  return d;
}

inline bool Hidden(const std::string& group) { return group.empty(); }

}  // namespace cli11_detail

inline CommandLine DescribeCommandLine(const CLI::App& app, const std::string& program) {
  CommandLine c;
  c.name = program;
  c.description = app.get_description();
  for (const CLI::Option* o : app.get_options()) {
    if (cli11_detail::Hidden(o->get_group())) continue;
    if (o->get_lnames().empty() && o->get_snames().empty()) {
      if (o->get_positional())
        c.positionals.push_back({o->get_name(true), ChoicesIn(o->get_type_name())});
      continue;
    }
    c.options.push_back(cli11_detail::DescribeOption(*o));
  }
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (s->get_name().empty() || cli11_detail::Hidden(s->get_group()))
      continue;  // option groups, hidden
    c.subcommands.push_back(DescribeCommandLine(*s, s->get_name()));
  }
  return c;
}

inline CLI::Validator Suggests(const std::vector<std::string>& values) {
  // Accepts everything: the program checks the value itself.
  return CLI::Validator([](std::string&) { return std::string(); },
                        "{" + JoinWords(values, ',') + "}", "suggests");
}

inline CLI::App* AddCompletionCommand(CLI::App& app, std::string* shell) {
  CLI::App* s = app.add_subcommand("completion", "Print a bash or zsh completion script");
  s->group("");  // hidden: packages install the scripts
  s->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  return s;
}

inline int PrintCompletion(const CLI::App& app, const std::string& program,
                           const std::string& shell) {
  const CommandLine cl = DescribeCommandLine(app, program);
  std::string text;
  if (shell == "bash") {
    text = BashScript(cl);
  } else if (shell == "zsh") {
    text = ZshScript(cl);
  } else {
    std::fprintf(stderr, "%s: error: no completion for shell '%s' (bash or zsh)\n", program.c_str(),
                 shell.c_str());
    return 2;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace ocid::cli
