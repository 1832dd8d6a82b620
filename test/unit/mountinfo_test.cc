// /proc/<pid>/mountinfo and /proc/<pid>/cgroup parsing.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "mountinfo.h"

using ocid::MountInfoEntry;
using ocid::ParseMountinfo;
using ocid::ParseProcCgroup;

namespace {

// The hybrid layout of the build machine (cat /proc/self/mountinfo), plus a
// mount point with an escaped space, optional fields, and a joined
// cpu,cpuacct hierarchy as systemd mounts it.
const char kHybrid[] =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n"
    "24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs "
    "rw,size=12334464k,nr_inodes=3083616,mode=755\n"
    "25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k\n"
    "26 24 0:24 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000\n"
    "27 1 254:0 / / rw,relatime shared:1 master:2 - ext4 /dev/vda "
    "rw,discard,resv_strict,resuid=65534,resgid=65534\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:7 - cgroup "
    "cgroup rw,cpu,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
    "50 27 0:40 / /mnt/my\\040disk rw,relatime shared:30 - ext4 /dev/sdb1 rw\n"
    "51 27 0:41 /sub\\040dir /mnt/tab\\011here\\134x rw - xfs /dev/sdc rw\n";

const MountInfoEntry* At(const std::vector<MountInfoEntry>& ms, const std::string& mp) {
  for (const auto& m : ms)
    if (m.mount_point == mp) return &m;
  return nullptr;
}

}  // namespace

TEST_SUITE("mountinfo") {
  TEST_CASE("ParseMountinfo: fields of a realistic hybrid sample") {
    auto ms = ParseMountinfo(kHybrid);
    REQUIRE(ms.size() == 18);

    const MountInfoEntry& proc = ms[0];
    CHECK(proc.id == 22);
    CHECK(proc.parent == 27);
    CHECK(proc.root == "/");
    CHECK(proc.mount_point == "/proc");
    CHECK(proc.mount_options == "rw,relatime");
    CHECK(proc.optional_fields.empty());
    CHECK(proc.fstype == "proc");
    CHECK(proc.source == "proc");
    CHECK(proc.super_options == "rw");

    const MountInfoEntry* root = At(ms, "/");
    REQUIRE(root);
    CHECK(root->id == 27);
    CHECK(root->parent == 1);
    CHECK(root->optional_fields == "shared:1 master:2");
    CHECK(root->fstype == "ext4");
    CHECK(root->source == "/dev/vda");
    CHECK(root->super_options == "rw,discard,resv_strict,resuid=65534,resgid=65534");

    const MountInfoEntry* unified = At(ms, "/sys/fs/cgroup/unified");
    REQUIRE(unified);
    CHECK(unified->fstype == "cgroup2");
    CHECK(unified->super_options == "rw,nsdelegate");
  }

  TEST_CASE("ParseMountinfo: octal escapes are decoded") {
    auto ms = ParseMountinfo(kHybrid);
    const MountInfoEntry* disk = At(ms, "/mnt/my disk");
    REQUIRE(disk);
    CHECK(disk->optional_fields == "shared:30");
    CHECK(disk->source == "/dev/sdb1");
    const MountInfoEntry* odd = At(ms, "/mnt/tab\there\\x");
    REQUIRE(odd);
    CHECK(odd->root == "/sub dir");
    CHECK(odd->fstype == "xfs");
    CHECK(At(ms, "/mnt/my\\040disk") == nullptr);
  }

  TEST_CASE("ParseMountinfo: escape at the very end of a mount point") {
    auto ms = ParseMountinfo("60 27 0:50 / /mnt/end\\040 rw - tmpfs tmpfs rw\n");
    REQUIRE(ms.size() == 1);
    CHECK(ms[0].mount_point == "/mnt/end ");
  }

  TEST_CASE("ParseMountinfo: malformed lines are skipped") {
    const std::string text =
        "\n"
        "garbage\n"
        "1 2 0:1 / /no-separator rw ext4 /dev/x rw\n"
        "1 2 0:1 / /short rw - ext4\n"
        "x 2 0:1 / /bad-id rw - ext4 /dev/x rw\n"
        "70 27 0:60 / /ok rw - tmpfs tmpfs rw\n";
    auto ms = ParseMountinfo(text);
    REQUIRE(ms.size() == 1);
    CHECK(ms[0].mount_point == "/ok");
    CHECK(ms[0].id == 70);
  }

  TEST_CASE("HasMountOption matches whole comma-separated options only") {
    CHECK(ocid::HasMountOption("rw,cpu,cpuacct", "cpu"));
    CHECK(ocid::HasMountOption("rw,cpu,cpuacct", "cpuacct"));
    CHECK(ocid::HasMountOption("rw,name=systemd", "name=systemd"));
    CHECK(ocid::HasMountOption("devices", "devices"));
    // "cpus" is not "cpuset", "dev" is not "devices".
    CHECK_FALSE(ocid::HasMountOption("rw,cpuset", "cpus"));
    CHECK_FALSE(ocid::HasMountOption("rw,devices", "dev"));
    CHECK_FALSE(ocid::HasMountOption("", "rw"));
  }

  TEST_CASE("ParseProcCgroup: hybrid (this machine)") {
    const std::string text =
        "9:name=systemd:/\n"
        "8:pids:/\n"
        "7:blkio:/\n"
        "6:freezer:/\n"
        "5:devices:/a/b\n"
        "4:memory:/process_api/727cc9460cd2144d6427a1371da2d361\n"
        "3:cpuset:/\n"
        "2:cpuacct:/\n"
        "1:cpu:/\n"
        "0::/x\n";
    auto cg = ParseProcCgroup(text);
    CHECK(cg.v1.size() == 9);
    CHECK(cg.v1.at("devices") == "/a/b");
    CHECK(cg.v1.at("memory") == "/process_api/727cc9460cd2144d6427a1371da2d361");
    CHECK(cg.v1.at("name=systemd") == "/");
    CHECK(cg.has_unified);
    CHECK(cg.unified == "/x");
  }

  TEST_CASE("ParseProcCgroup: pure v1 with joined controllers") {
    const std::string text =
        "11:devices:/system.slice/docker-abc.scope\n"
        "4:cpu,cpuacct:/x\n"
        "3:net_cls,net_prio:/y\n"
        "1:name=systemd:/system.slice/docker-abc.scope\n";
    auto cg = ParseProcCgroup(text);
    CHECK_FALSE(cg.has_unified);
    CHECK(cg.unified.empty());
    CHECK(cg.v1.size() == 6);
    CHECK(cg.v1.at("devices") == "/system.slice/docker-abc.scope");
    CHECK(cg.v1.at("cpu") == "/x");
    CHECK(cg.v1.at("cpuacct") == "/x");
    CHECK(cg.v1.at("net_cls") == "/y");
    CHECK(cg.v1.at("net_prio") == "/y");
    CHECK(cg.v1.count("cpu,cpuacct") == 0);
  }

  TEST_CASE("ParseProcCgroup: pure v2") {
    auto cg = ParseProcCgroup("0::/user.slice/user-1000.slice/session-3.scope\n");
    CHECK(cg.v1.empty());
    CHECK(cg.has_unified);
    CHECK(cg.unified == "/user.slice/user-1000.slice/session-3.scope");
    auto root = ParseProcCgroup("0::/");
    CHECK(root.has_unified);
    CHECK(root.unified == "/");
  }

  TEST_CASE("ParseProcCgroup: a path containing ':' and malformed lines") {
    auto cg = ParseProcCgroup("5:devices:/a:b\nnonsense\n7:pids\n\n");
    CHECK(cg.v1.size() == 1);
    CHECK(cg.v1.at("devices") == "/a:b");
    CHECK_FALSE(cg.has_unified);
  }

}  // TEST_SUITE

TEST_CASE("SharedMountIds finds exactly the mounts tagged shared") {
  const char* text =
      "22 27 0:21 / /proc rw,relatime shared:5 - proc proc rw\n"
      "23 27 0:22 / /sys rw,relatime master:3 - sysfs sysfs rw\n"
      "24 27 0:23 / /mnt/a\\040b rw shared:7 master:2 - tmpfs tmpfs rw\n"
      "25 27 0:24 / /srv rw - ext4 /dev/vda rw,shared:9\n"
      "garbage line\n";
  CHECK(ocid::SharedMountIds(text) == std::vector<int>{22, 24});
}
