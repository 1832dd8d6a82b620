// oci-decorator: parse the command line, then one call.
//
// The hook runs for every container on a host, so the command line costs
// what it must and no more: the subcommand is picked from argv first (after
// the global options) and only that subcommand is registered with CLI11,
// which still does all the parsing and error reporting. Building every
// subcommand's options took more time than deciding that a container did
// not ask. An unknown or missing subcommand registers them all (for --help
// and the error message), and so does the hidden `completion`, which prints
// a shell completion script walked from all of them.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "cdi_cmd.h"
#include "check_cmd.h"
#include "completion_cli11.h"
#include "confinement.h"
#include "error.h"
#include "exit_codes.h"
#include "hook_cmd.h"
#include "log.h"
#include "log_setup.h"
#include "plan_cmd.h"
#include "runtime_cmd.h"
#include "setup_cmd.h"
#include "version.h"

namespace {

const char* const kGlobalOptionsWithValue[] = {"--config-dir", "--host-root", "--state-dir",
                                               "--log-level",  "--log-file",  "--log-target",
                                               "--log-format", "--config"};

// The first argument that is not a global option or its value: the
// subcommand CLI11 will see. "" when there is none.
std::string SubcommandIn(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool with_value = false;
    for (const char* o : kGlobalOptionsWithValue)
      if (a == o) with_value = true;
    if (with_value) {
      ++i;
      continue;
    }
    if (a.rfind('-', 0) == 0) continue;  // --opt=value, --version, -h ...
    return a;
  }
  return "";
}

// Whether CLI11 gets the whole command line: the log routing options
// (--log-target, --log-format, --config) and the value lists help and the
// shell completions show. For `hook` only when the command line names one of
// those options, or asks for help: a hooks.d entry rarely does (the config
// file is for that), and registering them cost the not-asked path 15% more
// instructions (bench/ab.sh), as building every subcommand did; the value
// lists cost another 1%.
bool WantsLogRouting(const std::string& sub, int argc, char** argv) {
  if (sub != "hook") return true;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    for (std::string_view o : {"--log-target", "--log-format", "--config", "--help", "-h"})
      if (a.substr(0, o.size()) == o && (a.size() == o.size() || a[o.size()] == '=')) return true;
  }
  return false;
}

struct Cli {
  ocid::Options opts;
  std::string level = "info", log_file, log_format, log_config, stage = "prestart", bundle;
  std::vector<std::string> log_targets;
  // The log options, to tell given from defaulted without a lookup by name
  // (CLI11's get_option costs as much as the option did).
  CLI::Option *level_opt = nullptr, *file_opt = nullptr, *target_opt = nullptr,
              *format_opt = nullptr;
  ocid::CdiOptions cdi;
  ocid::CheckOptions check;
  ocid::SetupOptions setup;
  std::string runtime_path;
  std::vector<std::string> runtime_args;
  std::string shell;
  bool full = true;  // WantsLogRouting: register everything help shows
  // For the runtime shim: its options (the engine's umask) and the
  // engine's environment, copied before it was cleared.
  ocid::ShimOptions shim;
  char** saved_env = nullptr;
  const CLI::App* app = nullptr;
};

void AddHook(CLI::App& app, Cli& c) {
  CLI::App* s = app.add_subcommand("hook", "Run as an OCI hook; the state is read on stdin");
  CLI::Option* stage =
      s->add_option("stage", c.stage, "prestart (default), createRuntime or poststop")
          ->capture_default_str();
  if (c.full) stage->check(ocid::cli::Suggests({"prestart", "createRuntime", "poststop"}));
}

void AddCheck(CLI::App& app, Cli& c) {
  CLI::App* s = app.add_subcommand(
      "check", "Can this node serve containers that ask? Exit 0 ready, 1 not ready, 2 bad input");
  s->add_flag("--json", c.check.json, "Print the report as JSON (schema in oci-decorator(8))");
  s->add_option("--binary", c.check.binary,
                "The oci-decorator binary hooks.d entries and engines must name, a host path "
                "under --host-root (default: this program)");
}

void AddPlan(CLI::App& app, Cli& c) {
  CLI::App* s = app.add_subcommand("plan", "Print what the hook would do for a bundle, as JSON");
  s->add_option("--bundle", c.bundle, "Bundle directory (holds config.json)")->required();
}

void AddCdi(CLI::App& app, Cli& c) {
  CLI::App* cdi =
      app.add_subcommand("cdi", "Container Device Interface specs from the inventories");
  cdi->require_subcommand(1);
  CLI::App* gen = cdi->add_subcommand(
      "generate", "Write a CDI spec per inventory: a device per feature, and one named all");
  CLI::Option* out = gen->add_option("--output,-o", c.cdi.output,
                                     "Write the spec to FILE (- for stdout; one inventory only)");
  gen->add_option("--output-dir", c.cdi.output_dir,
                  "Write DIR/oci-decorator-<inventory>.json for each inventory (e.g. /etc/cdi)")
      ->excludes(out);
  gen->add_option("--inventory", c.cdi.inventory, "Only the inventory NAME (file NAME.json)");
  gen->add_option("--cdi-version", c.cdi.max_version,
                  "The highest cdiVersion a spec may need (default: none); below 0.7.0 a spec "
                  "leaves its additionalGids out")
      ->check(CLI::IsMember(ocid::CdiVersionChoices()));
}

void AddSetup(CLI::App& app, Cli& c) {
  ocid::SetupOptions& o = c.setup;
  CLI::App* s = app.add_subcommand("setup", "Write the configuration an engine needs");
  s->add_option("engine", o.engine, "docker, containerd, crio or podman")
      ->required()
      ->check(CLI::IsMember({"docker", "containerd", "crio", "podman"}));
  s->add_option("--config", o.config,
                "The file to write (default " + std::string(ocid::kDockerConfig) + ", " +
                    ocid::kContainerdDropIn + ", " + ocid::kCrioDropIn + ")");
  s->add_option("--runtime-name", o.runtime_name, "The runtime's name in the engine")
      ->capture_default_str();
  s->add_option("--runtime-path", o.runtime_path, "The runtime shim")->capture_default_str();
  s->add_option("--containerd-config", o.containerd_main,
                "containerd's main config, checked for an import of the drop-in")
      ->capture_default_str();
  s->add_flag("--with-runtime", o.with_runtime, "crio: also register the runtime shim");
  CLI::Option* cdi = s->add_flag("--cdi", o.cdi, "podman: also write the CDI specs into --cdi-dir");
  s->add_option("--cdi-dir", o.cdi_dir, "Where --cdi writes")->capture_default_str();
  s->add_option("--cdi-version", o.cdi_version,
                "podman --cdi: the highest cdiVersion a spec may need (as cdi generate's)")
      ->check(CLI::IsMember(ocid::CdiVersionChoices()))
      ->needs(cdi);
  CLI::Option* set_default = s->add_flag_function(
      "--default-runtime", [&o](int64_t) { o.docker_default = ocid::DockerDefault::kSet; },
      "docker: make the runtime docker's default, so plain `docker run` reaches it");
  s->add_flag_function(
       "--no-default-runtime", [&o](int64_t) { o.docker_default = ocid::DockerDefault::kUnset; },
       "docker: give the default runtime back (runc, or the one --wrap-default ran)")
      ->excludes(set_default);
  s->add_flag("--wrap-default", o.wrap_default,
              "docker: over a default runtime of your own, make the shim the default and have it "
              "run yours")
      ->needs(set_default);
  s->add_flag("--dry-run", o.dry_run, "Print what would change, write nothing");
}

void AddRuntime(CLI::App& app, Cli& c) {
  CLI::App* s = app.add_subcommand(
      "runtime", "Run as an OCI runtime shim: edit config.json on create, then exec the runtime");
  s->add_option("--runtime", c.runtime_path,
                "The real runtime, an absolute path (default /usr/sbin/runc)");
  s->add_option("args", c.runtime_args, "The runtime's arguments, after --");
}

void AddGlobals(CLI::App& app, Cli& c, bool log_routing) {
  app.set_version_flag("--version", std::string("oci-decorator ") + OCID_VERSION);
  app.add_option("--config-dir", c.opts.config_dir, "Inventory directory")->capture_default_str();
  app.add_option("--host-root", c.opts.host_root,
                 "Prefix for every host path in the inventories, devices included")
      ->capture_default_str();
  app.add_option("--state-dir", c.opts.state_dir, "Per-container state on the host")
      ->capture_default_str();
  c.level_opt = app.add_option("--log-level", c.level, "trace, debug, info, warn, error or off")
                    ->capture_default_str();
  if (c.full)
    c.level_opt->check(ocid::cli::Suggests({"trace", "debug", "info", "warn", "error", "off"}));
  c.file_opt =
      app.add_option("--log-file", c.log_file,
                     "The file target's FILE (appended, O_NOFOLLOW, 0600); alone, the default "
                     "targets and FILE");
  if (log_routing) {
    c.target_opt = app.add_option("--log-target", c.log_targets,
                                  "stderr, file, syslog or journald; repeatable or comma-separated "
                                  "(default: stderr, and journald when its socket exists)")
                       ->check(ocid::cli::Suggests({"stderr", "file", "syslog", "journald"}));
    c.format_opt = app.add_option("--log-format", c.log_format,
                                  "text (default) or json, for stderr and the file")
                       ->check(ocid::cli::Suggests({"text", "json"}));
    app.add_option("--config", c.log_config,
                   "Log settings file (default " + std::string(OCID_DEFAULT_LOG_CONFIG) + ")");
  }
  app.require_subcommand(1);
}

// The log settings given on the command line. Given options only, so that
// the config file's value is not replaced by a default.
ocid::LogSettings CommandLineLogSettings(const Cli& c) {
  ocid::LogSettings s;
  if (c.level_opt->count() > 0) s.level = c.level;
  if (c.file_opt->count() > 0) s.file = c.log_file;
  if (c.format_opt && c.format_opt->count() > 0) s.format = c.log_format;
  if (c.target_opt && c.target_opt->count() > 0) {
    std::string list;
    for (const auto& t : c.log_targets) list += (list.empty() ? "" : ",") + t;
    s.target = list;
  }
  return s;
}

void InitLogging(const Cli& c) {
  // A logging problem is reported but never fails a container: the hook
  // runs for every container on the host, most of which did not ask.
  ocid::LogSetup setup;
  setup.given = CommandLineLogSettings(c);
  setup.config_file = c.log_config;
  ocid::WarnOnStderr("oci-decorator", ocid::SetUpLog(setup));
}

// --- the verbs: each runs its *_cmd.h ------------------------------------

int Hook(Cli& c) {
  // Confined before any input is read (confinement.h). If the kernel
  // cannot confine us, the hook still answers containers that did not ask,
  // but applies nothing: RunHook refuses activated containers.
  ocid::Error confine_err;
  bool confined = ocid::ConfineHook(&confine_err);
  if (!confined) ocid::log::Error("cannot confine the hook: " + confine_err.Line());
  return ocid::RunHook(c.opts, c.stage, STDIN_FILENO, confined);
}

int Check(Cli& c) { return ocid::RunCheck(c.opts, c.check); }
int Plan(Cli& c) { return ocid::RunPlan(c.opts, c.bundle); }
int Cdi(Cli& c) { return ocid::RunCdiGenerate(c.opts, c.cdi); }
int Setup(Cli& c) { return ocid::RunSetup(c.opts, c.setup); }

int Runtime(Cli& c) {
  // Global options given explicitly override the shim's config file.
  auto given = [&](const char* name) { return c.app->get_option(name)->count() > 0; };
  ocid::ShimOptions& shim = c.shim;
  if (!c.runtime_path.empty()) shim.runtime = c.runtime_path;
  if (given("--config-dir")) shim.config_dir = c.opts.config_dir;
  if (given("--host-root")) shim.host_root = c.opts.host_root;
  if (given("--log-level")) shim.log_level = c.level;
  if (given("--log-file")) shim.log_file = c.log_file;
  ocid::LogSettings log = CommandLineLogSettings(c);
  if (log.target) shim.log_target = log.target;
  if (log.format) shim.log_format = log.format;
  return ocid::RunShim(shim, c.runtime_args, c.saved_env);
}

void AddCompletion(CLI::App& app, Cli& c) { ocid::cli::AddCompletionCommand(app, &c.shell); }
int Completion(Cli& c) { return ocid::cli::PrintCompletion(*c.app, "oci-decorator", c.shell); }

// The subcommands: name, options, run. Each name is a file:
// src/hook/<name>_cmd.cc (check: src/check/check_cmd.cc; completion:
// src/cli/completion.cc).
struct Verb {
  const char* name;
  void (*add)(CLI::App&, Cli&);
  int (*run)(Cli&);
  bool own_log;  // sets up its own log (the shim) or none (completion)
  bool hidden;   // registered only when named
};
constexpr Verb kVerbs[] = {
    {"hook", AddHook, Hook, false, false},
    {"check", AddCheck, Check, false, false},
    {"plan", AddPlan, Plan, false, false},
    {"cdi", AddCdi, Cdi, false, false},
    {"setup", AddSetup, Setup, false, false},
    {"runtime", AddRuntime, Runtime, true, false},
    {"completion", AddCompletion, Completion, true, true},
};

const Verb* FindVerb(const std::string& name) {
  for (const Verb& v : kVerbs)
    if (name == v.name) return &v;
  return nullptr;
}

int Main(int argc, char** argv) {
  // The runtime shim hands the engine's environment and umask on to the real
  // runtime it execs; it reads neither itself. Copied (only for the shim)
  // before they are dropped.
  const bool shim_name = ocid::IsShimProgramName(argv[0]);
  const std::string sub = shim_name ? "runtime" : SubcommandIn(argc, argv);
  std::vector<std::string> env_copy;
  if (sub == "runtime")
    for (char** e = environ; e && *e; ++e) env_copy.emplace_back(*e);
  std::vector<char*> saved_env;
  saved_env.reserve(env_copy.size() + 1);
  for (auto& e : env_copy) saved_env.push_back(e.data());
  saved_env.push_back(nullptr);

  // Nothing from the environment is trusted or needed: a hook without an
  // explicit env may inherit the runtime's, or even the container's.
  ::clearenv();
  Cli c;
  c.shim.umask = ::umask(022);
  c.saved_env = saved_env.data();

  // Installed as oci-decorator-runtime: a runtime shim, every argument the
  // runtime's (after leading --ocid-* options). No CLI11 parsing.
  if (shim_name)
    return ocid::RunShim(c.shim, std::vector<std::string>(argv + 1, argv + argc), c.saved_env);

  CLI::App app{
      "OCI runtime hook that brings vendor user-space stacks (Onload, "
      "TCPDirect, RDMA, ...) into containers that ask for them",
      "oci-decorator"};
  c.app = &app;
  c.full = WantsLogRouting(sub, argc, argv);
  AddGlobals(app, c, c.full);
  // Only the picked subcommand is registered; all of them (but the hidden)
  // for an unknown or missing one, and for `completion`.
  const Verb* picked = FindVerb(sub);
  const bool all = !picked || picked->hidden;
  for (const Verb& v : kVerbs)
    if (sub == v.name || (all && !v.hidden)) v.add(app, c);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? ocid::kExitOk : ocid::kExitBadInput;
  }
  if (!picked) return ocid::kExitBadInput;  // CLI11 refused it already
  if (!picked->own_log) InitLogging(c);
  return picked->run(c);
}

}  // namespace

int main(int argc, char** argv) {
  // Every error is meant to be one line and an exit code; an exception that
  // escapes anyway (a bug, or memory exhausted) must not abort with a core
  // dump, which a runtime reports as a crash of the hook.
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    ocid::log::Error(ocid::Printable(std::string("internal error: ") + e.what()));
  } catch (...) {
    ocid::log::Error("internal error: unknown exception");
  }
  return ocid::kExitInternalError;
}
