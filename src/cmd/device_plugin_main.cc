// oci-decorator-device-plugin: the inventories as cluster resources, for
// the kubelet (`kubernetes`) or a Nomad client (`nomad`). A long-running
// program beside the static hook; it links the same core (inventories,
// planner, CDI) and no second planner.
//
// Parse the command line, set up the log as oci-decorator does (the global
// log config file, then the command line: log_setup.h), then one call: the
// mode's Run, in src/plugin/<mode>_cmd.cc.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "completion_cli11.h"
#include "env_profile.h"
#include "error.h"
#include "exit_codes.h"
#include "health_file.h"
#include "kubernetes_cmd.h"
#include "log.h"
#include "log_setup.h"
#include "nomad_cmd.h"
#include "plugin_options.h"
#include "probe_cmd.h"
#include "resources_cmd.h"
#include "slot_ids.h"
#include "version.h"

namespace {

constexpr const char* kProgram = "oci-decorator-device-plugin";

struct Cli {
  ocid::PluginOptions opts;
  ocid::KubernetesCommand kube;
  std::string level = "info", log_file, log_format = "text", log_config;
  std::vector<std::string> log_targets;
  // The log options, to tell given from defaulted: the config file's value
  // is replaced only by a given one.
  CLI::Option *level_opt = nullptr, *file_opt = nullptr, *target_opt = nullptr,
              *format_opt = nullptr;
  std::string probe_file;
  int probe_max_age = ocid::kDefaultProbeMaxAge;
  bool probe_ready = false;
  bool json = false;
  std::string shell;
  const CLI::App* app = nullptr;
};

void AddGlobals(CLI::App& app, Cli& c) {
  app.set_version_flag("--version", OCID_VERSION);
  app.require_subcommand(1);
  ocid::PluginOptions& opts = c.opts;
  app.add_option("--config-dir", opts.config_dir, "Directory of vendor inventories")
      ->capture_default_str();
  app.add_option("--host-root", opts.host_root,
                 "Where the host's files are seen (e.g. /host in a DaemonSet)")
      ->capture_default_str();
  app.add_option("--host-path-root", opts.host_path_root,
                 "What the host calls --host-root in the paths handed out (default: --host-root)");
  app.add_option("--profile", opts.profile,
                 "Environment profile every resource of an inventory with profiles delivers "
                 "(e.g. latency; the plugin cannot see a pod's OCI_ONLOAD_PROFILE)")
      ->check([](const std::string& v) {
        return ocid::IsProfileName(v) ? std::string()
                                      : "not a profile name ([A-Za-z0-9_.-], 1 to 64): " + v;
      });
  app.add_option("--recheck-interval", opts.recheck_seconds,
                 "Seconds between periodic health re-checks")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  c.level_opt = app.add_option("--log-level", c.level, "trace, debug, info, warn, error or off")
                    ->check(ocid::cli::Suggests({"trace", "debug", "info", "warn", "error", "off"}))
                    ->capture_default_str();
  c.file_opt = app.add_option("--log-file", c.log_file,
                              "The file target's FILE (appended, O_NOFOLLOW, 0600); alone, the "
                              "default targets and FILE");
  c.target_opt = app.add_option("--log-target", c.log_targets,
                                "stderr, file, syslog or journald; repeatable or comma-separated "
                                "(default: stderr, and journald when its socket exists)")
                     ->check(ocid::cli::Suggests({"stderr", "file", "syslog", "journald"}));
  c.format_opt =
      app.add_option("--log-format", c.log_format, "text or json, for stderr and the file")
          ->check(CLI::IsMember({"text", "json"}))
          ->capture_default_str();
  app.add_option("--config", c.log_config,
                 "Log settings file (default " + std::string(OCID_DEFAULT_LOG_CONFIG) + ")");
}

// --- the modes: each runs its *_cmd.h ------------------------------------

CLI::App* AddKubernetes(CLI::App& app, Cli& c) {
  ocid::KubernetesOptions& k8s = c.kube.k8s;
  CLI::App* kube = app.add_subcommand("kubernetes", "Serve the kubelet device plugin API v1beta1");
  kube->add_option("--kubelet-dir", c.opts.kubelet_dir, "The kubelet's device plugin directory")
      ->capture_default_str();
  kube->add_option("--slots", k8s.slots,
                   "Device IDs advertised per resource (shareable; at most 1024)")
      ->check([](const std::string& v) {
        // One line naming the value and the limit; CLI11 prefixes "--slots: ".
        bool digits = !v.empty() && v.size() <= 12;
        for (char ch : v) digits = digits && ch >= '0' && ch <= '9';
        return digits ? ocid::SlotsRefusal(std::stod(v))
                      : "\"" + ocid::Printable(v, 40) + "\" is not a whole number from 1 to " +
                            std::to_string(ocid::kMaxSlots);
      })
      ->capture_default_str();
  kube->add_option("--allocate", c.kube.allocate,
                   "What Allocate returns: cdi, mounts or both (default: both with --cdi-dir, "
                   "mounts without)")
      ->check(CLI::IsMember({"cdi", "mounts", "both"}));
  kube->add_option(
      "--cdi-dir", c.opts.cdi_dir,
      "Keep the inventories' CDI specs present and current in DIR (e.g. /var/run/cdi)");
  kube->add_option("--health-file", c.opts.health_file,
                   "Rewrite FILE every 5 s with the time and counts, for `probe`");
  return kube;
}

CLI::App* AddProbe(CLI::App& app, Cli& c) {
  CLI::App* probe = app.add_subcommand(
      "probe",
      "Exit 0 when the kubernetes mode's --health-file is fresh (a DaemonSet's exec probe)");
  probe->add_option("--health-file", c.probe_file, "The file the kubernetes mode writes")
      ->required();
  probe->add_option("--max-age", c.probe_max_age, "Seconds the file may be old")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  probe->add_flag("--ready", c.probe_ready,
                  "Also require every resource registered with the kubelet");
  return probe;
}

CLI::App* AddNomad(CLI::App& app, Cli&) {
  return app.add_subcommand("nomad", "Serve as a Nomad external device plugin");
}

CLI::App* AddResources(CLI::App& app, Cli& c) {
  CLI::App* resources = app.add_subcommand(
      "resources", "Print the resources this node would advertise, and their health");
  resources->add_flag("--json", c.json, "As JSON, with what each resource delivers");
  return resources;
}

CLI::App* AddCompletion(CLI::App& app, Cli& c) {
  return ocid::cli::AddCompletionCommand(app, &c.shell);
}

int Kubernetes(Cli& c) {
  // A kubelet configMap volume of --kubelet-dir may be the config directory.
  ocid::PluginOptions o = c.opts;
  o.vouch_kubelet_volumes = true;
  return ocid::RunKubernetes(o, c.kube);
}
int Probe(Cli& c) { return ocid::RunProbe(c.probe_file, c.probe_max_age, c.probe_ready); }
int Nomad(Cli& c) { return ocid::RunNomad(c.opts); }
int Resources(Cli& c) {
  // Run in the DaemonSet's container (kubectl exec), it reads the config
  // directory as the kubernetes mode does: a kubelet configMap volume of the
  // default kubelet directory counts (kubelet_volume.h).
  ocid::PluginOptions o = c.opts;
  o.vouch_kubelet_volumes = true;
  return ocid::RunResources(o, c.json);
}
int Completion(Cli& c) { return ocid::cli::PrintCompletion(*c.app, kProgram, c.shell); }

// The subcommands: name, options, run. Each name is a file:
// src/plugin/<name>_cmd.cc (completion: src/cli/completion.cc).
struct Mode {
  const char* name;
  CLI::App* (*add)(CLI::App&, Cli&);
  int (*run)(Cli&);
  // Whether it logs. `probe` runs every few seconds under the kubelet: no
  // logger, no journald socket; `completion` prints a script.
  bool logs;
};
constexpr Mode kModes[] = {
    {"kubernetes", AddKubernetes, Kubernetes, true},
    {"probe", AddProbe, Probe, false},
    {"nomad", AddNomad, Nomad, true},
    {"resources", AddResources, Resources, true},
    {"completion", AddCompletion, Completion, false},
};
constexpr size_t kModeCount = sizeof kModes / sizeof kModes[0];

// Nomad runs a plugin binary from its plugin_dir without arguments (a
// client's `plugin` block may add some): with Nomad's handshake cookie in
// the environment and no subcommand given, the mode is nomad.
std::vector<std::string> Arguments(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool has_mode = false;
  for (const auto& a : args)
    for (const Mode& m : kModes) has_mode = has_mode || a == m.name;
  if (!has_mode && std::getenv("NOMAD_PLUGIN_MAGIC_COOKIE") != nullptr) args.push_back("nomad");
  std::reverse(args.begin(), args.end());  // CLI11 takes them last-first
  return args;
}

// The log settings given on the command line, only those given.
ocid::LogSettings CommandLineLogSettings(const Cli& c) {
  ocid::LogSettings s;
  if (c.level_opt->count() > 0) s.level = c.level;
  if (c.file_opt->count() > 0) s.file = c.log_file;
  if (c.format_opt->count() > 0) s.format = c.log_format;
  if (c.target_opt->count() > 0) {
    std::string list;
    for (const auto& t : c.log_targets) list += (list.empty() ? "" : ",") + t;
    s.target = list;
  }
  return s;
}

// A long-running program started with a log option it cannot honour says so
// and exits 2: an unknown --log-target, or a --log-file it cannot open. What
// the shared settings file asks for is the hook's too, so its problems are
// warnings, as they are for the hook.
bool InitLogging(const Cli& c) {
  ocid::log::SetProgram(kProgram, true);
  ocid::LogSetup setup;
  setup.given = CommandLineLogSettings(c);
  setup.config_file = c.log_config;
  if (setup.given.target) {
    std::vector<ocid::log::Target> targets;
    std::string why;
    if (!ocid::log::ParseTargets(*setup.given.target, &targets, &why)) {
      std::fprintf(stderr, "%s: %s\n", kProgram, why.c_str());
      return false;
    }
  }
  ocid::LogSetupIssues issues = ocid::SetUpLog(setup);
  if (setup.given.file && !issues.file.empty()) {
    std::fprintf(stderr, "%s: %s\n", kProgram, issues.file.c_str());
    return false;
  }
  ocid::WarnOnStderr(kProgram, issues);
  return true;
}

int Main(int argc, char** argv) {
  Cli c;
  CLI::App app{"oci-decorator-device-plugin: vendor inventories as Kubernetes and Nomad devices"};
  c.app = &app;
  AddGlobals(app, c);
  CLI::App* sub[kModeCount];
  for (size_t i = 0; i < kModeCount; ++i) sub[i] = kModes[i].add(app, c);
  try {
    app.parse(Arguments(argc, argv));
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (size_t i = 0; i < kModeCount; ++i) {
    if (!*sub[i]) continue;
    if (kModes[i].logs) {
      if (c.opts.host_path_root.empty()) c.opts.host_path_root = c.opts.host_root;
      if (!InitLogging(c)) return ocid::kExitBadInput;
    }
    return kModes[i].run(c);
  }
  return ocid::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    // What an exception says may quote a client's bytes (error.h: the one rule).
    std::fprintf(stderr, "%s: internal error: %s\n", kProgram, ocid::Printable(e.what()).c_str());
  } catch (...) {
    std::fprintf(stderr, "%s: internal error: unknown exception\n", kProgram);
  }
  return ocid::kExitInternalError;
}
