# Nomad client configuration for the oci-decorator device plugin.
#
# Nomad runs the plugins it finds in plugin_dir and matches each `plugin`
# block to an executable's file name. Put the packaged binary there:
#   ln -s /usr/bin/oci-decorator-device-plugin /opt/nomad/plugins/oci-decorator-device-plugin
# The client then fingerprints one device group per inventory feature
# (amd/onload, amd/zf) plus one of all of an inventory's features
# (amd/onloadzf); `nomad node status -verbose` lists them with their health.
plugin_dir = "/opt/nomad/plugins"

plugin "oci-decorator-device-plugin" {
  config {
    # The inventories the hook reads on this node.
    config_dir = "/etc/oci-decorator/oci-decorator.d"
    # Where to look for the host's files, and what the host calls that
    # directory in the paths handed to tasks (defaults: "/", and host_root).
    # host_root      = "/"
    # host_path_root = "/"
    # LD_PRELOAD=libonload.so in tasks given an Onload group.
    set_preload = true
    # Mount Onload's libraries, tools and profiles into tasks (the
    # inventory's plan). Other inventories' files are always mounted.
    mount_onload = true
    # Periodic health re-check; changes seen by inotify are acted on at once.
    fingerprint_period = "1m"
    # Tasks per node that can hold one group at once (Onload is shared).
    slots = 64
  }
}
