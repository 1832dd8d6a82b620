// oci-decorator-device-plugin: the inventories as cluster resources, for
// the kubelet (`kubernetes`) or a Nomad client (`nomad`). A long-running
// program beside the static hook; it links the same core (inventories,
// planner, CDI) and no second planner.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "completion_cli11.h"
#include "env_profile.h"
#include "error.h"
#include "health_file.h"
#include "kubelet_plugin.h"
#include "log.h"
#include "nomad_plugin.h"
#include "plugin_options.h"
#include "resources_cmd.h"
#include "slot_ids.h"
#include "version.h"

int main(int argc, char** argv) try {
  ocid::PluginOptions opts;
  ocid::KubernetesOptions k8s;
  std::string level = "info", log_file, log_format = "text", allocate;
  std::vector<std::string> log_targets;

  CLI::App app{"oci-decorator-device-plugin: vendor inventories as Kubernetes and Nomad devices"};
  app.set_version_flag("--version", OCID_VERSION);
  app.require_subcommand(1);
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
  app.add_option("--log-level", level, "trace, debug, info, warn, error or off")
      ->check(ocid::cli::Suggests({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app.add_option("--log-file", log_file,
                 "The file target's FILE (appended, O_NOFOLLOW, 0600); alone, the default "
                 "targets and FILE");
  app.add_option("--log-target", log_targets,
                 "stderr, file, syslog or journald; repeatable or comma-separated (default: "
                 "stderr, and journald when its socket exists)")
      ->check(ocid::cli::Suggests({"stderr", "file", "syslog", "journald"}));
  app.add_option("--log-format", log_format, "text or json, for stderr and the file")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  CLI::App* kube = app.add_subcommand("kubernetes", "Serve the kubelet device plugin API v1beta1");
  kube->add_option("--kubelet-dir", k8s.kubelet_dir, "The kubelet's device plugin directory")
      ->capture_default_str();
  kube->add_option("--slots", k8s.slots, "Device IDs advertised per resource (shareable; at most 1024)")
      ->check([](const std::string& v) {
        // One line naming the value and the limit; CLI11 prefixes "--slots: ".
        bool digits = !v.empty() && v.size() <= 12;
        for (char c : v) digits = digits && c >= '0' && c <= '9';
        return digits ? ocid::SlotsRefusal(std::stod(v))
                      : "\"" + ocid::Printable(v, 40) + "\" is not a whole number from 1 to " +
                            std::to_string(ocid::kMaxSlots);
      })
      ->capture_default_str();
  kube->add_option("--allocate", allocate,
                   "What Allocate returns: cdi, mounts or both (default: both with --cdi-dir, "
                   "mounts without)")
      ->check(CLI::IsMember({"cdi", "mounts", "both"}));
  kube->add_option("--cdi-dir", k8s.cdi_dir,
                   "Keep the inventories' CDI specs present and current in DIR (e.g. /var/run/cdi)");
  kube->add_option("--health-file", k8s.health_file,
                   "Rewrite FILE every 5 s with the time and counts, for `probe`");
  std::string probe_file;
  int probe_max_age = ocid::kDefaultProbeMaxAge;
  bool probe_ready = false;
  CLI::App* probe = app.add_subcommand(
      "probe", "Exit 0 when the kubernetes mode's --health-file is fresh (a DaemonSet's exec probe)");
  probe->add_option("--health-file", probe_file, "The file the kubernetes mode writes")->required();
  probe->add_option("--max-age", probe_max_age, "Seconds the file may be old")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  probe->add_flag("--ready", probe_ready, "Also require every resource registered with the kubelet");
  CLI::App* nomad = app.add_subcommand("nomad", "Serve as a Nomad external device plugin");
  bool json = false;
  CLI::App* resources =
      app.add_subcommand("resources", "Print the resources this node would advertise, and their health");
  resources->add_flag("--json", json, "As JSON, with what each resource delivers");
  std::string shell;
  CLI::App* completion = ocid::cli::AddCompletionCommand(app, &shell);

  // Nomad runs a plugin binary from its plugin_dir without arguments (a
  // client's `plugin` block may add some): with Nomad's handshake cookie in
  // the environment and no subcommand given, the mode is nomad.
  std::vector<std::string> args(argv + 1, argv + argc);
  bool has_mode = false;
  for (const auto& a : args)
    has_mode = has_mode || a == "kubernetes" || a == "nomad" || a == "resources" || a == "completion" ||
                          a == "probe";
  if (!has_mode && std::getenv("NOMAD_PLUGIN_MAGIC_COOKIE") != nullptr) args.push_back("nomad");
  std::reverse(args.begin(), args.end());  // CLI11 takes them last-first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (*completion) return ocid::cli::PrintCompletion(app, "oci-decorator-device-plugin", shell);
  // Run by the kubelet every few seconds: no logger, no journald socket.
  if (*probe) return ocid::RunProbe(probe_file, probe_max_age, probe_ready);
  if (opts.host_path_root.empty()) opts.host_path_root = opts.host_root;
  static const std::map<std::string, ocid::AllocateMode> modes = {
      {"cdi", ocid::AllocateMode::kCdi},
      {"mounts", ocid::AllocateMode::kMounts},
      {"both", ocid::AllocateMode::kBoth}};
  // A CDI name is only worth giving when a spec resolves it: by default
  // only with --cdi-dir, where the plugin keeps the specs itself.
  const bool cdi_elsewhere = !allocate.empty() && allocate != "mounts" && k8s.cdi_dir.empty();
  if (allocate.empty()) allocate = k8s.cdi_dir.empty() ? "mounts" : "both";
  k8s.allocate = modes.at(allocate);

  ocid::log::Config log_config;
  if (!ocid::log::ParseLevel(level, &log_config.level))
    std::fprintf(stderr, "oci-decorator-device-plugin: warning: unknown --log-level %s, using info\n",
                 level.c_str());
  ocid::log::ParseFormat(log_format, &log_config.format);  // checked by CLI11
  log_config.file = log_file;
  std::string err;
  for (const auto& t : log_targets)
    if (!ocid::log::ParseTargets(t, &log_config.targets, &err)) {
      std::fprintf(stderr, "oci-decorator-device-plugin: %s\n", err.c_str());
      return 2;
    }
  ocid::log::SetProgram("oci-decorator-device-plugin", true);
  if (!ocid::log::Init(log_config, &err)) {
    std::fprintf(stderr, "oci-decorator-device-plugin: %s\n", err.c_str());
    return 2;
  }
  if (*kube && cdi_elsewhere)
    ocid::log::Warn("kubernetes: --allocate " + allocate +
                    " without --cdi-dir: the CDI devices Allocate names must resolve from specs "
                    "written elsewhere on this node (oci-decorator cdi generate)");
  if (*kube) return ocid::RunKubernetes(opts, k8s);
  if (*nomad) return ocid::RunNomad(opts);
  if (*resources) return ocid::RunResources(opts, json);
  return 2;
} catch (const std::exception& e) {
  // What an exception says may quote a client's bytes (error.h: the one rule).
  std::fprintf(stderr, "oci-decorator-device-plugin: internal error: %s\n",
               ocid::Printable(e.what()).c_str());
  return 70;
}
