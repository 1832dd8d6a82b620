// The device plugin's settings: the options every mode shares, then each
// mode's own.
#pragma once
#include <string>

#include "options.h"
#include "view_snapshot.h"

namespace ocid {

struct PluginOptions {
  std::string config_dir = OCID_DEFAULT_CONFIG_DIR;
  // Where the plugin looks for the host's files (a DaemonSet mounts the
  // host at, say, /host) ...
  std::string host_root = "/";
  // ... and what the host calls that root, in every path handed out
  // (Allocate, Reserve, CDI specs). Defaults to host_root, so a simulated
  // install under a directory is handed out where it really is.
  std::string host_path_root;
  // Seconds between periodic health re-checks (changes seen by inotify are
  // acted on at once).
  int recheck_seconds = 60;
  // The environment profile every resource of an inventory with profiles
  // delivers (cluster.h); "" = none.
  std::string profile;
  // Where the view's CDI specs go (cluster.h BuildClusterCdi), kept there
  // by the CDI keeper (cdi_dir_keeper.h): the kubernetes mode's --cdi-dir;
  // "" = the view carries none (Nomad).
  std::string cdi_dir;
  // The kubelet's device-plugins directory: the kubernetes mode's
  // --kubelet-dir, where it serves and registers.
  std::string kubelet_dir = "/var/lib/kubelet/device-plugins";
  // Whether a read-only configMap (or projected) volume of kubelet_dir's
  // kubelet may be the config directory even though its mode lets others
  // write (kubelet_volume.h): set by the dispatch, true for kubernetes and
  // `resources`, false for Nomad.
  bool vouch_kubelet_volumes = false;
  // When set, the liveness file (health_file.h): the kubernetes mode's
  // --health-file.
  std::string health_file;
  // Whether each view rebuild creates the directories its resources' plans
  // create ("create_if", host_dirs.h) under the host root: the Nomad mode,
  // which runs as root on the host and whose reservations' mounts no one
  // else creates. Kubernetes leaves it to the DaemonSet's hostPath volume
  // and the container engine.
  bool create_planned_dirs = false;
};

// Where the view snapshot (view_snapshot.h) of these options reads from.
inline ViewSources ViewSourcesOf(const PluginOptions& opts) {
  return ViewSources{opts.config_dir, opts.host_path_root, opts.profile, opts.cdi_dir,
                     opts.vouch_kubelet_volumes ? opts.kubelet_dir : std::string()};
}

enum class AllocateMode { kCdi, kMounts, kBoth };

// The kubernetes mode's own settings; the rest are PluginOptions'.
struct KubernetesOptions {
  int slots = 64;
  AllocateMode allocate = AllocateMode::kBoth;
};

}  // namespace ocid
