// The executor's legacy strategy (kernels without open_tree, move_mount,
// mount_setattr) for real: in a forked child with its own mount namespace,
// under a seccomp filter answering ENOSYS for the new mount API and openat2,
// and under the hook's own confinement. Needs root (mounts).
#include "mounter.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <memory>
#include <sstream>

#include "confinement.h"
#include "host_view.h"
#include "kernel_features.h"
#include "legacy_kernel.h"
#include "plan.h"
#include "test_tree.h"

namespace ocid {
namespace {

using test::TempTree;

// The mounts below `dir` in this namespace: "mountpoint options optional-fields".
std::string MountsUnder(const std::string& dir) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line, out;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, devno, root, point, opts, field, optional;
    f >> id >> parent >> devno >> root >> point >> opts;
    while (f >> field && field != "-") optional += " " + field;
    if (point.rfind(dir + "/", 0) == 0) out += point + " " + opts + optional + "\n";
  }
  return out;
}

std::string ReadPath(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool HasOpt(const std::string& opts, const std::string& o) {
  return ("," + opts + ",").find("," + o + ",") != std::string::npos;
}

struct Setup {
  TempTree host, rootfs;
  Plan plan;
  Setup() {
    host.File("usr/lib64/libx.so", "host library");
    host.File("usr/bin/tool", "host tool");
    host.File("share/dir/a", "a");
    host.Link("usr/lib64/libx.so.1", "libx.so");
    rootfs.Dir("etc");
    rootfs.Dir("usr/bin/tool-as-dir");
    REQUIRE(::mknod((host / "dev-node").c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0);
    Add("/usr/lib64/libx.so.1", "/usr/lib64/libx.so", FileType::kRegular);
    Add("/usr/bin/tool", "/usr/bin/tool", FileType::kRegular);
    Add("/share/dir", "/usr/share/dir", FileType::kDirectory);
    Add("/dev-node", "/dev/node", FileType::kCharDevice);
  }
  void Add(const std::string& source, const std::string& target, FileType type) {
    struct stat st;
    REQUIRE(::stat((host / source.substr(1)).c_str(), &st) == 0);
    MountOp m;
    m.type = type;
    m.source = source;
    m.target = target;
    m.dev = st.st_dev;
    m.ino = st.st_ino;
    m.rdev = st.st_rdev;
    m.nodev = type != FileType::kCharDevice;
    plan.mounts.push_back(m);
  }
};

// Runs `body` in a child: own mount namespace (everything private but the
// host tree, a shared mount of its own, as / is on systemd hosts), the ENOSYS
// filter, the hook's confinement. Returns its exit code.
template <typename F>
int InLegacyMountChild(const std::string& host, F body) {
  return test::InLegacyKernelChild(
      [&] {
        return ::unshare(CLONE_NEWNS) == 0 &&
               ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
               ::mount(host.c_str(), host.c_str(), nullptr, MS_BIND, nullptr) == 0 &&
               ::mount(nullptr, host.c_str(), nullptr, MS_SHARED, nullptr) == 0;
      },
      [&] {
        Error err;
        if (!ConfineHook(&err)) return 99;
        return body();
      });
}

TEST_CASE("legacy mounts: attached read-only, nosuid, nodev, private; rollback detaches them") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: mounting needs root");
    return;
  }
  Setup s;
  std::string root = s.rootfs.path();
  int rc = InLegacyMountChild(s.host.path(), [&] {
    std::unique_ptr<HostRootView> host;
    Error err;
    if (!HostRootView::Open(s.host.path(), &host, &err)) return 2;
    std::string before = MountsUnder(root);
    std::vector<DetachedMount> mounts;
    // The last mount targets a directory where a file is needed: Attach
    // fails after three mounts, and rollback must take them all back.
    s.Add("/usr/bin/tool", "/usr/bin/tool-as-dir", FileType::kRegular);
    if (!PrepareSources(*host, s.plan, &mounts, &err)) return 3;
    if (!kernel::MountApiMissing()) return 4;
    for (const auto& m : mounts)
      if (m.tree.valid() || !m.host_source.valid()) return 5;
    UniqueFd rootfs(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    {
      MountAttacher a(rootfs.get(), {});
      if (a.Attach(&mounts, &err)) return 6;
      if (err.Line().find("directory where a file") == std::string::npos) return 7;
      if (MountsUnder(root).empty()) return 8;  // some were attached
      a.Rollback();
      if (MountsUnder(root) != before) return 9;
    }
    // Now the good plan, attached for real.
    s.plan.mounts.pop_back();
    mounts.clear();
    if (!PrepareSources(*host, s.plan, &mounts, &err)) return 10;
    MountAttacher a(rootfs.get(), {});
    if (!a.Attach(&mounts, &err)) return 11;
    std::string now = MountsUnder(root);
    std::istringstream lines(now);
    std::string point, opts, optional;
    int n = 0;
    while (lines >> point >> opts) {
      std::getline(lines, optional);
      ++n;
      bool device = point == root + "/dev/node";
      if (!HasOpt(opts, "ro") || !HasOpt(opts, "nosuid")) return 12;
      if (HasOpt(opts, "nodev") == device) return 13;
      // Private: no shared:N or master:N.
      if (optional.find(':') != std::string::npos) return 14;
    }
    if (n != 4) return 15;
    // The host files, read through the rootfs; writes refused.
    if (ReadPath(root + "/usr/lib64/libx.so") != "host library") return 16;
    if (ReadPath(root + "/usr/share/dir/a") != "a") return 17;
    if (::open((root + "/usr/bin/tool").c_str(), O_WRONLY | O_CLOEXEC) >= 0 || errno != EROFS)
      return 18;
    struct stat st;
    if (::stat((root + "/dev/node").c_str(), &st) != 0 || st.st_rdev != makedev(1, 3)) return 19;
    // Usable: the mount is not nodev.
    int dev = ::open((root + "/dev/node").c_str(), O_RDONLY | O_CLOEXEC);
    if (dev < 0) return 20;
    ::close(dev);
    a.Rollback();
    if (MountsUnder(root) != before) return 21;
    return 0;
  });
  CHECK(rc == 0);
  // The host tree is as it was.
  CHECK(s.host.Read("usr/lib64/libx.so") == "host library");
}

TEST_CASE("legacy mounts: a source replaced after planning is refused in the container") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: mounting needs root");
    return;
  }
  Setup s;
  std::string root = s.rootfs.path();
  std::string host_root = s.host.path();
  int rc = InLegacyMountChild(host_root, [&] {
    std::unique_ptr<HostRootView> host;
    Error err;
    if (!HostRootView::Open(host_root, &host, &err)) return 2;
    std::vector<DetachedMount> mounts;
    if (!PrepareSources(*host, s.plan, &mounts, &err)) return 3;
    // Between the host phase and the attach, another file takes the name.
    std::ofstream(host_root + "/usr/bin/tool.new") << "impostor";
    if (::rename((host_root + "/usr/bin/tool.new").c_str(),
                 (host_root + "/usr/bin/tool").c_str()) != 0)
      return 4;
    std::string before = MountsUnder(root);
    UniqueFd rootfs(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    MountAttacher a(rootfs.get(), {});
    if (a.Attach(&mounts, &err)) return 5;
    if (err.Line().find("not the planned file") == std::string::npos) return 6;
    a.Rollback();
    if (MountsUnder(root) != before) return 7;
    return 0;
  });
  CHECK(rc == 0);
}

}  // namespace
}  // namespace ocid
