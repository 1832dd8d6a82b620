// oci-decorator: parse the command line, then one call.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "hook.h"
#include "log.h"
#include "version.h"

int main(int argc, char** argv) {
  // Nothing from the environment is trusted or needed: a hook without an
  // explicit env may inherit the runtime's, or even the container's.
  ::clearenv();
  ::umask(022);

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
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
  if (*hook) return ocid::RunHook(opts, stage, STDIN_FILENO);
  if (*check) return ocid::RunCheck(opts);
  return ocid::RunPlan(opts, bundle);
}
