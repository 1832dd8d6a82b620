// Is a config directory a read-only kubelet configMap volume
// (kubelet_volume.h)? The pure judgment, on mount tables as a DaemonSet's
// container sees them; the kernel-facing half runs in
// integration.daemonset_cri, on real mounts made as the kubelet makes them.
#include <doctest/doctest.h>

#include <string>

#include "kubelet_volume.h"

using ocid::KubeletConfigVolumeWhyNot;
using ocid::KubeletVolumeFacts;

namespace {

// The container's mount table: its rootfs, the kubelet's device-plugins
// directory (hostPath, 8:1), and mount 602 at the config directory, of
// `root` on filesystem `dev`.
std::string Table(const std::string& root, const std::string& dev = "8:1",
                  const std::string& kubelet_line =
                      "601 600 8:1 /var/lib/kubelet/device-plugins /var/lib/kubelet/device-plugins "
                      "rw,relatime - ext4 /dev/sda1 rw") {
  return "600 500 0:50 / / rw,relatime - overlay overlay rw\n" + kubelet_line + "\n602 600 " + dev +
         " " + root + " /etc/oci-decorator/oci-decorator.d ro,relatime - ext4 /dev/sda1 rw\n";
}

KubeletVolumeFacts Facts() {
  KubeletVolumeFacts f;
  f.dir_mnt = 602;
  f.dir_parent_mnt = 600;
  f.dir_read_only = true;
  f.kubelet_mnt = 601;
  f.kubelet_path = "/var/lib/kubelet/device-plugins";
  return f;
}

const std::string kVolume =
    "/var/lib/kubelet/pods/7f1c2a52-3b1e-4c1d-9d1e-0a1b2c3d4e5f/volumes/kubernetes.io~configmap/"
    "inventories";

}  // namespace

TEST_CASE("kubelet volume: a read-only configMap volume of this kubelet is vouched for") {
  CHECK(KubeletConfigVolumeWhyNot(Table(kVolume), Facts()) == "");
  // projected volumes (a configMap among their sources) are the kubelet's too
  std::string projected = kVolume;
  projected.replace(projected.find("configmap"), 9, "projected");
  CHECK(KubeletConfigVolumeWhyNot(Table(projected), Facts()) == "");
}

TEST_CASE("kubelet volume: the kubelet root found through --kubelet-dir, however it is mounted") {
  SUBCASE("all of /var/lib/kubelet mounted: --kubelet-dir is below its mount point") {
    KubeletVolumeFacts f = Facts();
    std::string t = Table(kVolume, "8:1",
                          "601 600 8:1 /var/lib/kubelet /var/lib/kubelet rw - ext4 /dev/sda1 rw");
    CHECK(KubeletConfigVolumeWhyNot(t, f) == "");
  }
  SUBCASE("the kubelet root is a filesystem of its own") {
    std::string t = Table("/pods/u1/volumes/kubernetes.io~configmap/inv", "8:3",
                          "601 600 8:3 /device-plugins /var/lib/kubelet/device-plugins rw - xfs "
                          "/dev/sdc rw");
    CHECK(KubeletConfigVolumeWhyNot(t, Facts()) == "");
  }
  SUBCASE("k0s: /var/lib/k0s/kubelet on the host, the default path in the container") {
    std::string t = Table("/var/lib/k0s/kubelet/pods/u1/volumes/kubernetes.io~configmap/inv", "8:1",
                          "601 600 8:1 /var/lib/k0s/kubelet/device-plugins "
                          "/var/lib/kubelet/device-plugins rw - ext4 /dev/sda1 rw");
    CHECK(KubeletConfigVolumeWhyNot(t, Facts()) == "");
  }
}

TEST_CASE("kubelet volume: anything else is not vouched for, saying why") {
  KubeletVolumeFacts f = Facts();
  SUBCASE("not the root of a mount: a directory inside the image or a volume") {
    f.dir_mnt = 600;
    CHECK(KubeletConfigVolumeWhyNot(Table(kVolume), f).find("is not the root of a mount") !=
          std::string::npos);
  }
  SUBCASE("a writable mount (readOnly: false, or a hostPath)") {
    f.dir_read_only = false;
    CHECK(KubeletConfigVolumeWhyNot(Table(kVolume), f) == "its mount is not read-only");
  }
  SUBCASE("a hostPath of a directory a local user can write") {
    std::string why = KubeletConfigVolumeWhyNot(Table("/home/alice/inventories"), f);
    CHECK(why.find("its mount is of /home/alice/inventories, not of /var/lib/kubelet/pods/") == 0);
  }
  SUBCASE("the kubelet's layout, but not under this kubelet's root") {
    std::string why = KubeletConfigVolumeWhyNot(
        Table("/home/alice/pods/u/volumes/kubernetes.io~configmap/inv"), f);
    CHECK(why.find("not of /var/lib/kubelet/pods/") != std::string::npos);
  }
  SUBCASE("the right path on another filesystem") {
    std::string why = KubeletConfigVolumeWhyNot(Table(kVolume, "8:2"), f);
    CHECK(why == "it is on another filesystem (8:2) than the kubelet directory (8:1)");
  }
  SUBCASE("a subPath, a secret, an emptyDir, the pod's own volumes directory") {
    for (const char* root : {"/var/lib/kubelet/pods/u/volumes/kubernetes.io~configmap/inv/sub",
                             "/var/lib/kubelet/pods/u/volumes/kubernetes.io~secret/inv",
                             "/var/lib/kubelet/pods/u/volumes/kubernetes.io~empty-dir/inv",
                             "/var/lib/kubelet/pods/u/volumes/kubernetes.io~configmap",
                             "/var/lib/kubelet/pods/u/volumes/kubernetes.io~configmap/..",
                             "/var/lib/kubelet/pods/../volumes/kubernetes.io~configmap/inv",
                             "/var/lib/kubelet/pods//volumes/kubernetes.io~configmap/inv"}) {
      CAPTURE(root);
      CHECK(KubeletConfigVolumeWhyNot(Table(root), f).find("its mount is of") == 0);
    }
  }
  SUBCASE("--kubelet-dir that is not <kubelet root>/device-plugins") {
    std::string t =
        Table(kVolume, "8:1",
              "601 600 8:1 /srv/plugins /var/lib/kubelet/device-plugins rw - ext4 /dev/sda1 rw");
    CHECK(KubeletConfigVolumeWhyNot(t, f).find("not <kubelet root>/device-plugins") !=
          std::string::npos);
  }
  SUBCASE("mounts the table does not have") {
    f.dir_mnt = 999;
    CHECK(KubeletConfigVolumeWhyNot(Table(kVolume), f).find("not in /proc/self/mountinfo") !=
          std::string::npos);
  }
  SUBCASE("a mount root with spaces, as the kernel escapes them") {
    std::string t = Table("/var/lib/kubelet/pods/u/volumes/kubernetes.io~configmap/a\\040b");
    CHECK(KubeletConfigVolumeWhyNot(t, f) == "");
  }
}
