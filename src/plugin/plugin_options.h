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
  // Where the view's CDI specs go (cluster.h BuildClusterCdi): the
  // kubernetes mode's --cdi-dir; "" = the view carries none (Nomad).
  std::string cdi_dir;
  // The kubelet's device-plugins directory whose pods' read-only configMap
  // (or projected) volumes may be the config directory even though their
  // mode lets others write (kubelet_volume.h): the kubernetes mode's
  // --kubelet-dir, and `resources`' default one; "" = none (Nomad).
  std::string kubelet_volumes_of;
};

// Where the view snapshot (view_snapshot.h) of these options reads from.
inline ViewSources ViewSourcesOf(const PluginOptions& opts) {
  return ViewSources{opts.config_dir, opts.host_path_root, opts.profile, opts.cdi_dir,
                     opts.kubelet_volumes_of};
}

enum class AllocateMode { kCdi, kMounts, kBoth };

struct KubernetesOptions {
  std::string kubelet_dir = "/var/lib/kubelet/device-plugins";
  int slots = 64;
  AllocateMode allocate = AllocateMode::kBoth;
  std::string cdi_dir;      // when set, the plugin keeps its CDI specs there
  std::string health_file;  // when set, the liveness file (health_file.h)
};

}  // namespace ocid
