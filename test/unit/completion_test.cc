// The completion module's walk of a CLI11 App: what it takes from the
// definitions (subcommands, options, which take a value, the values) and
// what it leaves out (hidden subcommands and options). The scripts
// themselves run in bash and zsh in test/completion/completion.sh.
#include <doctest/doctest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "completion_cli11.h"

using ocid::cli::ChoicesIn;
using ocid::cli::CommandLine;
using ocid::cli::CompletionOption;
using ocid::cli::DescribeCommandLine;

namespace {

const CompletionOption* Find(const CommandLine& c, const std::string& name) {
  for (const auto& o : c.options)
    for (const auto& n : o.names)
      if (n == name) return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("ChoicesIn reads CLI11's set form") {
  CHECK(ChoicesIn("TEXT:{docker,containerd}") == std::vector<std::string>{"docker", "containerd"});
  CHECK(ChoicesIn("{a}") == std::vector<std::string>{"a"});
  CHECK(ChoicesIn("TEXT").empty());
  CHECK(ChoicesIn("INT in [1 - 86400]").empty());
  CHECK(ChoicesIn("").empty());
}

TEST_CASE("DescribeCommandLine walks subcommands, options and values; hidden ones are left out") {
  CLI::App app{"test program"};
  std::string level, engine, dir, shell, secret;
  bool dry = false;
  app.add_option("--log-level", level)->check(ocid::cli::Suggests({"info", "off"}));
  app.add_option("--dir,-d", dir, "A directory");
  app.add_option("--secret", secret)->group("");
  CLI::App* setup = app.add_subcommand("setup", "Write things");
  setup->add_option("engine", engine)->check(CLI::IsMember({"docker", "podman"}));
  setup->add_flag("--dry-run", dry);
  CLI::App* gen = app.add_subcommand("cdi")->add_subcommand("generate");
  gen->add_option("--output", dir);
  ocid::cli::AddCompletionCommand(app, &shell);

  const CommandLine c = DescribeCommandLine(app, "prog");
  CHECK(c.name == "prog");
  REQUIRE(c.subcommands.size() == 2);  // not the hidden "completion"
  CHECK(c.subcommands[0].name == "setup");
  CHECK(c.subcommands[0].description == "Write things");
  CHECK(c.subcommands[1].name == "cdi");
  REQUIRE(c.subcommands[1].subcommands.size() == 1);
  CHECK(c.subcommands[1].subcommands[0].name == "generate");
  CHECK(Find(c.subcommands[1].subcommands[0], "--output") != nullptr);

  const CompletionOption* lvl = Find(c, "--log-level");
  REQUIRE(lvl != nullptr);
  CHECK(lvl->takes_value);
  CHECK(lvl->choices == std::vector<std::string>{"info", "off"});
  const CompletionOption* d = Find(c, "-d");
  REQUIRE(d != nullptr);
  CHECK(d->names == std::vector<std::string>{"--dir", "-d"});
  CHECK(d->takes_value);
  CHECK(d->choices.empty());
  CHECK(Find(c, "--secret") == nullptr);
  const CompletionOption* help = Find(c, "--help");
  REQUIRE(help != nullptr);
  CHECK_FALSE(help->takes_value);

  const CommandLine& s = c.subcommands[0];
  REQUIRE(s.positionals.size() == 1);
  CHECK(s.positionals[0].choices == std::vector<std::string>{"docker", "podman"});
  const CompletionOption* dr = Find(s, "--dry-run");
  REQUIRE(dr != nullptr);
  CHECK_FALSE(dr->takes_value);
  CHECK(Find(s, "--log-level") == nullptr);  // the parent's options are the parent's
}

TEST_CASE("Suggests accepts any value: the program checks it") {
  CLI::App app;
  std::string level;
  app.add_option("--log-level", level)->check(ocid::cli::Suggests({"info", "off"}));
  CHECK_NOTHROW(app.parse(std::vector<std::string>{"warning", "--log-level"}));
  CHECK(level == "warning");
}

TEST_CASE("The scripts name the program's function and register it") {
  CommandLine c;
  c.name = "oci-decorator";
  c.subcommands.push_back(CommandLine{"check", "Validate", {}, {}, {}});
  const std::string bash = ocid::cli::BashScript(c);
  CHECK(bash.find("complete -F _oci_decorator oci-decorator\n") != std::string::npos);
  CHECK(bash.find("'') echo 'check' ;;") != std::string::npos);
  const std::string zsh = ocid::cli::ZshScript(c);
  CHECK(zsh.rfind("#compdef oci-decorator\n", 0) == 0);
  CHECK(zsh.find("'check:Validate'") != std::string::npos);
  CHECK(zsh.find("compdef _oci-decorator oci-decorator") != std::string::npos);
}
