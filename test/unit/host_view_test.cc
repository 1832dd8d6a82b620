// HostRootView against a real tree standing for --host-root.
#include "host_view.h"

#include <doctest/doctest.h>

#include "kernel_features.h"
#include "legacy_kernel.h"
#include "test_tree.h"

namespace ocid {
namespace {

using test::TempTree;

std::vector<std::string> Paths(const std::vector<HostMatch>& ms) {
  std::vector<std::string> out;
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
    return ::write(fds[1], without.data(), without.size()) ==
                   static_cast<ssize_t>(without.size())
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

}  // namespace
}  // namespace ocid
