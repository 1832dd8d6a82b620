// Is a directory a configMap (or projected) volume that the kubelet made
// for this pod, and mounted read-only? The device plugin asks, of a
// --config-dir that others could write (SECURITY.md 2.9, 2.13); the hook
// never does.
//
// Why it must ask: the kubelet writes a configMap volume into a plain
// directory of mode 0777 (configmap.go wraps a disk emptyDir, whose
// directory empty_dir.go chmods to 0777) and bind-mounts it read-only into
// the container. The rule for config directories ("not writable by group or
// others") refuses it, rightly for any directory a local user could change.
// This one no local user can change: on the host it lives at
//   <kubelet root>/pods/<pod uid>/volumes/kubernetes.io~configmap/<volume>
// (kubelet_getters.go getPodVolumeDir; the plugin name escaped, '/' as '~'),
// and the kubelet creates its root and pods directories 0750, root's
// (kubelet.go setupDataDirs); in the container the mount is read-only.
//
// How it is judged, from what the kernel reports, never from names the
// directory could choose:
//   1. the directory is the ROOT of a mount: its mount id (statx
//      STATX_MNT_ID) differs from that of its "..";
//   2. that mount is read-only (fstatvfs ST_RDONLY);
//   3. in /proc/self/mountinfo, the mount's "root" (field 4: the mounted
//      directory's path inside its filesystem, written by the kernel; only
//      root can make a mount in the plugin's mount namespace) is exactly
//        R/pods/<uid>/volumes/kubernetes.io~{configmap,projected}/<name>
//      where R is the kubelet root on the SAME filesystem (field 3,
//      major:minor) as --kubelet-dir, whose own path there is
//      R/device-plugins (the kubelet's layout). A look-alike path elsewhere,
//      a hostPath, a writable mount or a subPath is not a kubelet volume.
// The files in it (AtomicWriter's layout: name -> ..data/name, ..data ->
// ..<timestamp>/) are still held to the file rule by the reader
// (inventory.h), and its owner must still be root.
#pragma once
#include <string>
#include <string_view>

namespace ocid {

// What the kernel says of the two directories.
struct KubeletVolumeFacts {
  int dir_mnt = -1;         // the config directory's mount id
  int dir_parent_mnt = -1;  // ... and its ".."'s
  bool dir_read_only = false;
  int kubelet_mnt = -1;      // --kubelet-dir's mount id
  std::string kubelet_path;  // --kubelet-dir, absolute, symlinks resolved
};

// Pure: "" when `f` describes a kubelet configMap or projected volume root
// of this node's kubelet, as the header says, given the mount table
// `mountinfo`; otherwise why not (a clause: "its mount is not read-only").
std::string KubeletConfigVolumeWhyNot(std::string_view mountinfo, const KubeletVolumeFacts& f);

// The same for the open directory `dirfd`, with --kubelet-dir `kubelet_dir`,
// from the kernel (statx or fdinfo, fstatvfs, /proc/self/mountinfo).
std::string KubeletConfigVolumeWhyNot(int dirfd, const std::string& kubelet_dir);

}  // namespace ocid
