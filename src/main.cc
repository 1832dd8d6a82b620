// oci-decorator: parse the command line, then one call.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "cdi.h"
#include "confinement.h"
#include "engine_setup.h"
#include "hook.h"
#include "log.h"
#include "runtime_shim.h"
#include "version.h"

int main(int argc, char** argv) {
  // The runtime shim hands the engine's environment and umask on to the real
  // runtime it execs; it reads neither itself. Copied before they are dropped.
  std::vector<std::string> env_copy;
  for (char** e = environ; e && *e; ++e) env_copy.emplace_back(*e);
  std::vector<char*> saved_env;
  for (auto& e : env_copy) saved_env.push_back(e.data());
  saved_env.push_back(nullptr);

  // Nothing from the environment is trusted or needed: a hook without an
  // explicit env may inherit the runtime's, or even the container's.
  ::clearenv();
  ocid::ShimOptions shim;
  shim.umask = ::umask(022);

  // Installed as oci-decorator-runtime: a runtime shim, every argument the
  // runtime's (after leading --ocid-* options). No CLI11 parsing.
  if (ocid::IsShimProgramName(argv[0]))
    return ocid::RunShim(shim, std::vector<std::string>(argv + 1, argv + argc), saved_env.data());

  ocid::Options opts;
  std::string level = "info", log_file, stage = "prestart", bundle;

  CLI::App app{"OCI runtime hook that brings vendor user-space stacks (Onload, "
               "TCPDirect, RDMA, ...) into containers that ask for them",
               "oci-decorator"};
  app.set_version_flag("--version", std::string("oci-decorator ") + OCID_VERSION);
  app.add_option("--config-dir", opts.config_dir, "Inventory directory")
      ->capture_default_str();
  app.add_option("--host-root", opts.host_root,
                 "Prefix for every host path in the inventories, devices included")
      ->capture_default_str();
  app.add_option("--state-dir", opts.state_dir, "Per-container state on the host")
      ->capture_default_str();
  app.add_option("--log-level", level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  app.add_option("--log-file", log_file, "Also log to FILE (appended, O_NOFOLLOW, 0600)");
  app.require_subcommand(1);

  CLI::App* hook = app.add_subcommand("hook", "Run as an OCI hook; the state is read on stdin");
  hook->add_option("stage", stage, "prestart (default), createRuntime or poststop")
      ->capture_default_str();
  CLI::App* check = app.add_subcommand("check", "Validate the inventories in the config directory");
  CLI::App* plan = app.add_subcommand("plan", "Print what the hook would do for a bundle, as JSON");
  plan->add_option("--bundle", bundle, "Bundle directory (holds config.json)")->required();
  ocid::CdiOptions cdi_opts;
  CLI::App* cdi = app.add_subcommand("cdi", "Container Device Interface specs from the inventories");
  cdi->require_subcommand(1);
  CLI::App* cdi_gen = cdi->add_subcommand(
      "generate", "Write a CDI spec per inventory: a device per feature, and one named all");
  CLI::Option* cdi_out = cdi_gen->add_option(
      "--output,-o", cdi_opts.output, "Write the spec to FILE (- for stdout; one inventory only)");
  cdi_gen->add_option("--output-dir", cdi_opts.output_dir,
                      "Write DIR/oci-decorator-<inventory>.json for each inventory (e.g. /etc/cdi)")
      ->excludes(cdi_out);
  cdi_gen->add_option("--inventory", cdi_opts.inventory, "Only the inventory NAME (file NAME.json)");
  ocid::SetupOptions setup_opts;
  CLI::App* setup = app.add_subcommand("setup", "Write the configuration an engine needs");
  setup->add_option("engine", setup_opts.engine, "docker, containerd, crio or podman")
      ->required()
      ->check(CLI::IsMember({"docker", "containerd", "crio", "podman"}));
  setup->add_option("--config", setup_opts.config,
                    "The file to write (default " + std::string(ocid::kDockerConfig) + ", " +
                        ocid::kContainerdDropIn + ", " + ocid::kCrioDropIn + ")");
  setup->add_option("--runtime-name", setup_opts.runtime_name, "The runtime's name in the engine")
      ->capture_default_str();
  setup->add_option("--runtime-path", setup_opts.runtime_path, "The runtime shim")
      ->capture_default_str();
  setup->add_option("--containerd-config", setup_opts.containerd_main,
                    "containerd's main config, checked for an import of the drop-in")
      ->capture_default_str();
  setup->add_flag("--with-runtime", setup_opts.with_runtime, "crio: also register the runtime shim");
  setup->add_flag("--cdi", setup_opts.cdi, "podman: also write the CDI specs into --cdi-dir");
  setup->add_option("--cdi-dir", setup_opts.cdi_dir, "Where --cdi writes")->capture_default_str();
  setup->add_flag("--dry-run", setup_opts.dry_run, "Print what would change, write nothing");
  CLI::App* runtime = app.add_subcommand(
      "runtime", "Run as an OCI runtime shim: edit config.json on create, then exec the runtime");
  std::string runtime_path;
  std::vector<std::string> runtime_args;
  runtime->add_option("--runtime", runtime_path,
                      "The real runtime, an absolute path (default /usr/sbin/runc)");
  runtime->add_option("args", runtime_args, "The runtime's arguments, after --");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  if (*runtime) {
    // Global options given explicitly override the shim's config file.
    auto given = [&](const char* name) { return app.get_option(name)->count() > 0; };
    if (!runtime_path.empty()) shim.runtime = runtime_path;
    if (given("--config-dir")) shim.config_dir = opts.config_dir;
    if (given("--host-root")) shim.host_root = opts.host_root;
    if (given("--log-level")) shim.log_level = level;
    if (given("--log-file")) shim.log_file = log_file;
    return ocid::RunShim(shim, runtime_args, saved_env.data());
  }

  // A logging problem is reported but never fails a container: the hook
  // runs for every container on the host, most of which did not ask.
  ocid::log::Level lvl = ocid::log::Level::kInfo;
  if (!ocid::log::ParseLevel(level, &lvl))
    std::fprintf(stderr, "oci-decorator: warning: unknown --log-level %s, using info\n",
                 level.c_str());
  std::string err;
  if (!ocid::log::Init(lvl, log_file, &err)) {
    std::fprintf(stderr, "oci-decorator: warning: %s; logging to stderr only\n", err.c_str());
    ocid::log::Init(lvl, "", &err);
  }
  if (*hook) {
    // Confined before any input is read (confinement.h). If the kernel
    // cannot confine us, the hook still answers containers that did not ask,
    // but applies nothing: RunHook refuses activated containers.
    ocid::Error confine_err;
    bool confined = ocid::ConfineHook(&confine_err);
    if (!confined) ocid::log::Error("cannot confine the hook: " + confine_err.Line());
    return ocid::RunHook(opts, stage, STDIN_FILENO, confined);
  }
  if (*check) return ocid::RunCheck(opts);
  if (*cdi) return ocid::RunCdiGenerate(opts, cdi_opts);
  if (*setup) return ocid::RunSetup(opts, setup_opts);
  return ocid::RunPlan(opts, bundle);
}
