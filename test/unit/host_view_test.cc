// HostRootView against a real tree standing for --host-root; the reading
// operations of the one HostView through a fake, and a view of names only.
#include "host_view.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fake_host.h"
#include "kernel_features.h"
#include "legacy_kernel.h"
#include "node_facts.h"
#include "test_tree.h"

namespace ocid {
namespace {

using test::TempTree;

std::vector<std::string> Paths(const std::vector<HostMatch>& ms) {
  std::vector<std::string> out;
  out.reserve(ms.size());
  for (const auto& m : ms) out.push_back(m.path);
  return out;
}

TEST_CASE("HostRootView: globs in the last component, version links resolved") {
  TempTree host;
  host.File("usr/lib64/libonload_ext.so.1.2.0", "ext");
  host.Link("usr/lib64/libonload_ext.so.1", "libonload_ext.so.1.2.0");
  host.Link("usr/lib64/libonload_ext.so", "/usr/lib64/libonload_ext.so.1");  // absolute
  host.File("usr/lib64/libonload_ext.a", "static");
  host.File("usr/lib64/.libonload_ext.so.hidden", "dotfile");
  std::unique_ptr<HostRootView> v;
  Error err;
  REQUIRE(HostRootView::Open(host.path(), &v, &err));
  std::vector<HostMatch> ms;
  REQUIRE(v->Match("/usr/lib64/libonload_ext.so*", &ms, &err));
  CHECK(Paths(ms) == std::vector<std::string>{"/usr/lib64/libonload_ext.so",
                                              "/usr/lib64/libonload_ext.so.1",
                                              "/usr/lib64/libonload_ext.so.1.2.0"});
  for (const auto& m : ms) {
    CHECK(m.resolved == "/usr/lib64/libonload_ext.so.1.2.0");
    CHECK(m.type == FileType::kRegular);
    CHECK(m.ino == ms[2].ino);
  }
  CHECK(v->Display("/usr/lib64/x") == host.path() + "/usr/lib64/x");
}

TEST_CASE("HostRootView: absolute links resolve inside the host root, not /") {
  TempTree host;
  host.Link("usr/bin/onload", "/etc/hostname");  // exists on the real host
  std::unique_ptr<HostRootView> v;
  Error err;
  REQUIRE(HostRootView::Open(host.path(), &v, &err));
  std::vector<HostMatch> ms;
  REQUIRE(v->Match("/usr/bin/onload", &ms, &err));
  CHECK(ms.empty());  // dangling inside the host root
  host.File("etc/hostname", "simulated");
  REQUIRE(v->Match("/usr/bin/onload", &ms, &err));
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].resolved == "/etc/hostname");
}

TEST_CASE("HostRootView: missing directories and no match give an empty list") {
  TempTree host;
  host.Dir("dev");
  std::unique_ptr<HostRootView> v;
  Error err;
  REQUIRE(HostRootView::Open(host.path(), &v, &err));
  std::vector<HostMatch> ms;
  CHECK(v->Match("/dev/infiniband/uverbs*", &ms, &err));
  CHECK(ms.empty());
  CHECK(v->Match("/dev/nvidia[0-9]*", &ms, &err));
  CHECK(ms.empty());
  CHECK(v->Match("/usr/bin/absent", &ms, &err));
  CHECK(ms.empty());
}

TEST_CASE("HostRootView: types are reported as found") {
  TempTree host;
  host.Dir("usr/libexec/onload/profiles");
  host.File("usr/bin/onload", "#!/bin/sh\n");
  std::unique_ptr<HostRootView> v;
  Error err;
  REQUIRE(HostRootView::Open(host.path(), &v, &err));
  std::vector<HostMatch> ms;
  REQUIRE(v->Match("/usr/libexec/onload/profiles", &ms, &err));
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].type == FileType::kDirectory);
  REQUIRE(v->Match("/usr/bin/onload", &ms, &err));
  CHECK(ms[0].type == FileType::kRegular);
  CHECK_FALSE(HostRootView::Open(host / "nonexistent", &v, &err));
  CHECK(err.Line().find("nonexistent") != std::string::npos);
}

TEST_CASE("HostRootView without openat2 (seccomp ENOSYS) matches exactly what it does with it") {
  TempTree host;
  host.File("usr/lib64/libonload_ext.so.1.2.0", "ext");
  host.Link("usr/lib64/libonload_ext.so.1", "libonload_ext.so.1.2.0");
  host.Link("usr/lib64/libonload_ext.so", "/usr/lib64/libonload_ext.so.1");
  host.Link("usr/lib64/escape.so", "../../../../../../../../etc/hostname");
  host.Link("usr/bin/onload", "/etc/hostname");
  host.Link("lib64", "usr/lib64");
  const std::vector<std::string> patterns = {"/usr/lib64/*", "/lib64/libonload_ext.so*",
                                             "/usr/bin/onload", "/usr/lib64/escape.so",
                                             "/missing/*"};
  auto describe = [&](std::string* out) {
    std::unique_ptr<HostRootView> v;
    Error err;
    if (!HostRootView::Open(host.path(), &v, &err)) return false;
    for (const auto& p : patterns) {
      std::vector<HostMatch> ms;
      if (!v->Match(p, &ms, &err)) return false;
      for (const auto& m : ms)
        *out += m.path + " -> " + m.resolved + " " + std::to_string(m.ino) + "\n";
    }
    return true;
  };
  std::string with;
  REQUIRE(describe(&with));
  CHECK(with.find("escape.so") == std::string::npos);  // dangling inside the host root
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  int rc = test::InLegacyKernelChild([&] {
    std::string without;
    if (!describe(&without) || !kernel::Openat2Missing()) return 1;
    return ::write(fds[1], without.data(), without.size()) == static_cast<ssize_t>(without.size())
               ? 0
               : 2;
  });
  ::close(fds[1]);
  std::string without;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    without.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  CHECK(rc == 0);
  CHECK(without == with);
}

TEST_CASE("HostRootView: lists, links, owners and identities inside the host root") {
  TempTree host;
  host.File("etc/cdi/b.json", "{}");
  host.File("etc/cdi/a.json", "{}");
  host.Link("run", "/etc");  // absolute: resolved inside the host root
  host.Link("usr/bin/runtime", "/etc/cdi/a.json");
  REQUIRE(::chmod((host / "etc/cdi/a.json").c_str(), 0600) == 0);
  std::unique_ptr<HostRootView> v;
  Error err;
  REQUIRE(HostRootView::Open(host.path(), &v, &err));
  std::vector<std::string> names;
  REQUIRE(v->List("/run/cdi", &names, &err) == HostRead::kOk);
  CHECK(names == std::vector<std::string>{"a.json", "b.json"});
  CHECK(v->List("/etc/none", &names, &err) == HostRead::kMissing);
  std::string target;
  REQUIRE(v->ReadLink("/usr/bin/runtime", &target, &err) == HostRead::kOk);
  CHECK(target == "/etc/cdi/a.json");
  FileOwner owner;
  REQUIRE(v->Owner("/usr/bin/runtime", &owner, &err) == HostRead::kOk);  // followed
  CHECK(owner.uid == ::geteuid());
  CHECK(owner.mode == 0600);
  FileIdentity link, file;
  REQUIRE(v->Identity("/usr/bin/runtime", &link, &err) == HostRead::kOk);
  REQUIRE(v->Identity("/run/cdi/a.json", &file, &err) == HostRead::kOk);
  CHECK(link == file);
  CHECK(v->Exists("/run/cdi/b.json"));
  CHECK_FALSE(v->Exists("/run/cdi/c.json"));
  Error none;
  CHECK(v->Identity("/gone", &file, &none) == HostRead::kMissing);
  CHECK(none.empty());  // missing is no error
}

TEST_CASE("HostRootView: Read and ReadChunks say the same of the same file") {
  TempTree host;
  host.File("sys/module/onload/version", "9.0.1\n");
  std::unique_ptr<HostRootView> v;
  Error err;
  REQUIRE(HostRootView::Open(host.path(), &v, &err));
  std::string whole, chunks;
  REQUIRE(v->Read("/sys/module/onload/version", 64, &whole, &err) == HostRead::kOk);
  REQUIRE(v->ReadChunks(
      "/sys/module/onload/version", 64,
      [&](std::string_view c) {
        chunks.append(c);
        return true;
      },
      &err));
  CHECK(whole == "9.0.1\n");
  CHECK(chunks == whole);
  CHECK_FALSE(v->ReadChunks(
      "/sys/module/onload/gone", 64, [](std::string_view) { return true; }, &err));
  CHECK(err.errnum == ENOENT);
  CHECK(err.path == host.path() + "/sys/module/onload/gone");
}

TEST_CASE("HostView: node facts read through a fake host") {
  ocid_test::FakeHost h;
  const std::string d = "/sys/bus/pci/devices/0000:01:00.0";
  h.Content(d + "/vendor", "0x1924\n").Content(d + "/device", "0x0b03\n");
  h.Content(d + "/numa_node", "1\n").Link(d + "/driver", "../../../bus/pci/drivers/sfc");
  h.Dir(d + "/net/eth0");
  h.Content("/sys/bus/pci/devices/0000:02:00.0/vendor", "0x8086\n");
  std::vector<PciNic> nics;
  Error err;
  REQUIRE_MESSAGE(ReadPciNics(h, {"0x1924"}, &nics, &err), err.Line());
  REQUIRE(nics.size() == 1);
  CHECK(nics[0].address == "0000:01:00.0");
  CHECK(nics[0].device == "0x0b03");
  CHECK(nics[0].driver == "sfc");
  CHECK(nics[0].numa_node == 1);
  CHECK(nics[0].interfaces == std::vector<std::string>{"eth0"});

  CHECK(ReadCgroupLayout(h) == CgroupLayout::kUnknown);
  h.Dir("/sys/fs/cgroup/devices");
  CHECK(ReadCgroupLayout(h) == CgroupLayout::kV1);
  h.File("/sys/fs/cgroup/cgroup.controllers");
  CHECK(ReadCgroupLayout(h) == CgroupLayout::kV2);

  h.Content("/etc/cdi/oci-decorator-onload.json", "{}")
      .Perm("/etc/cdi/oci-decorator-onload.json", 0666, 1000);
  h.Content("/etc/cdi/other.json", "{}");
  std::vector<CdiFile> cdi;
  REQUIRE(ReadCdiFiles(h, &cdi, &err));
  REQUIRE(cdi.size() == 1);
  CHECK(cdi[0].bytes == "{}");
  CHECK(cdi[0].owner.uid == 1000);
  CHECK(cdi[0].owner.mode == 0666);
  std::vector<CdiDir> dirs;
  REQUIRE(ReadCdiDirs(h, &dirs, &err));
  REQUIRE(dirs.size() == 1);  // /var/run/cdi is not there
  CHECK(dirs[0].dir == "/etc/cdi");
  REQUIRE(dirs[0].steps.size() == 3);  // /etc/cdi, /etc, /
  CHECK(dirs[0].steps[0].kind == DirStep::Kind::kDir);
  CHECK(dirs[0].steps[2].path == "/");
}

// Issue 27, finding 5: what `check` holds a CDI directory to is the walk
// of root's writer (dir_trust.h), made inside the host root: the links met
// (each with the directory holding it), the directory reached, and its
// real ancestors by "..", up to the host root and never above it.
TEST_CASE("HostRootView::DirSteps: the writer's walk, inside the host root") {
  TempTree host;
  host.Dir("srv/real");
  host.Link("srv/cdi", "real");        // relative
  host.Link("etc/cdi", "/srv/cdi");    // absolute: from the host root
  host.Link("etc/up", "../../../..");  // ".." stops at the host root
  host.Link("etc/loop", "loop");
  host.File("etc/file", "x");
  std::unique_ptr<HostRootView> v;
  Error err;
  REQUIRE(HostRootView::Open(host.path(), &v, &err));
  std::vector<DirStep> steps;
  REQUIRE(v->DirSteps("/etc/cdi", &steps, &err) == HostRead::kOk);
  auto kinds = [&] {
    std::string k;
    for (const auto& s : steps)
      k += s.kind == DirStep::Kind::kLink ? "L" : s.kind == DirStep::Kind::kDir ? "D" : "A";
    return k;
  };
  CHECK(kinds() == "LLDAA");
  CHECK(steps[0].path == "/etc/cdi");
  CHECK(steps[0].parent == "/etc");
  CHECK(steps[1].path == "/srv/cdi");
  CHECK(steps[1].parent == "/srv");
  CHECK(steps[2].path == "/srv/real");
  CHECK(steps[3].path == "/srv");
  CHECK(steps[4].path == "/");
  CHECK(steps[2].mode == 0755);
  CHECK(UnsafeStepsReason(steps).empty());

  REQUIRE(v->DirSteps("/etc/up/srv/real", &steps, &err) == HostRead::kOk);
  CHECK(kinds() == "LDAA");
  CHECK(steps[1].path == "/srv/real");
  REQUIRE(v->DirSteps("/", &steps, &err) == HostRead::kOk);
  CHECK(kinds() == "D");
  CHECK(v->DirSteps("/etc/missing", &steps, &err) == HostRead::kMissing);
  CHECK(v->DirSteps("/etc/file", &steps, &err) == HostRead::kMissing);
  CHECK(v->DirSteps("/etc/loop", &steps, &err) == HostRead::kMissing);
  CHECK(steps.empty());

  // A link the rule refuses ends the walk there; it is the reason.
  REQUIRE(::chmod((host / "srv").c_str(), 0777) == 0);
  REQUIRE(v->DirSteps("/etc/cdi", &steps, &err) == HostRead::kOk);
  CHECK(kinds() == "LL");
  CHECK(UnsafeStepsReason(steps) ==
        "not following symbolic link /srv/cdi: directory /srv is writable by others and not "
        "sticky (owner " +
            std::to_string(::geteuid()) + ", mode 0777)");
}

TEST_CASE("HostView: a view of names only cannot read, and finds nothing") {
  struct Names : HostView {
    bool Match(const std::string&, std::vector<HostMatch>* out, Error*) const override {
      out->clear();
      return true;
    }
  } v;
  Error err;
  std::string s;
  std::vector<std::string> names;
  FileIdentity id;
  FileOwner owner;
  CHECK_FALSE(v.ReadChunks(
      "/x", 10, [](std::string_view) { return true; }, &err));
  CHECK(err.errnum == ENOTSUP);
  err = Error{};
  CHECK(v.Read("/x", 10, &s, &err) == HostRead::kError);
  CHECK(err.errnum == ENOTSUP);
  err = Error{};
  CHECK(v.ReadLink("/x", &s, &err) == HostRead::kError);
  CHECK(err.errnum == ENOTSUP);
  err = Error{};
  CHECK(v.List("/x", &names, &err) == HostRead::kError);
  CHECK(err.errnum == ENOTSUP);
  err = Error{};
  CHECK(v.Identity("/x", &id, &err) == HostRead::kError);
  CHECK(err.errnum == ENOTSUP);
  err = Error{};
  CHECK(v.Owner("/x", &owner, &err) == HostRead::kError);
  CHECK(err.errnum == ENOTSUP);
  CHECK(err.Line() == "cannot read host file: /x: " + std::string(std::strerror(ENOTSUP)));
  err = Error{};
  std::vector<DirStep> steps;
  CHECK(v.DirSteps("/x", &steps, &err) == HostRead::kError);
  CHECK(err.errnum == ENOTSUP);
  CHECK_FALSE(v.Exists("/x"));
}

}  // namespace
}  // namespace ocid
