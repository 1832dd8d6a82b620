// Kernel feature detection and the fdinfo fallback for mount ids, checked
// against the kernel's own answers (statx STATX_MNT_ID on this kernel).
#include "kernel_features.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "legacy_kernel.h"
#include "syscalls.h"
#include "test_tree.h"
#include "unique_fd.h"

namespace ocid {
namespace {

TEST_CASE("ParseFdinfoMountId reads the mnt_id line and nothing else") {
  uint64_t id = 0;
  CHECK(kernel::ParseFdinfoMountId("pos:\t0\nflags:\t012100000\nmnt_id:\t29\nino:\t2\n", &id));
  CHECK(id == 29);
  CHECK(kernel::ParseFdinfoMountId("mnt_id: 18446744073709551615", &id));
  CHECK(id == 18446744073709551615ull);
  CHECK_FALSE(kernel::ParseFdinfoMountId("mnt_id: 18446744073709551616\n", &id));
  CHECK_FALSE(kernel::ParseFdinfoMountId("pos:\t0\nflags:\t0\n", &id));
  CHECK_FALSE(kernel::ParseFdinfoMountId("mnt_id:\t\n", &id));
  CHECK_FALSE(kernel::ParseFdinfoMountId("mnt_id:\t12x\n", &id));
  CHECK_FALSE(kernel::ParseFdinfoMountId("xmnt_id:\t12\n", &id));
  CHECK_FALSE(kernel::ParseFdinfoMountId("", &id));
}

TEST_CASE("the fdinfo mount id is the one statx reports, for every kind of fd") {
  test::TempTree t;
  t.File("file", "x");
  t.Dir("dir");
  for (const std::string& path :
       {std::string("/"), std::string("/proc"), std::string("/dev/null"), t / "file", t / "dir",
        std::string("/proc/self/status"), std::string("/sys")}) {
    for (int flags : {O_PATH, O_RDONLY}) {
      CAPTURE(path);
      CAPTURE(flags);
      UniqueFd fd(::open(path.c_str(), flags | O_CLOEXEC));
      REQUIRE(fd.valid());
      struct statx sx {};
      REQUIRE(::statx(fd.get(), "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0);
      REQUIRE((sx.stx_mask & STATX_MNT_ID));
      uint64_t id = 0;
      REQUIRE(kernel::MountIdFromFdinfo(fd.get(), &id));
      CHECK(id == sx.stx_mnt_id);
    }
  }
  CHECK_FALSE(kernel::MountIdFromFdinfo(-1, nullptr));
}

TEST_CASE("Describe names each interface; an ENOSYS filter turns them all to no") {
  // This kernel's own answer: each one as a direct call sees it.
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  int fd = sys::openat2(AT_FDCWD, "/", &how);
  bool have_openat2 = fd >= 0;
  if (fd >= 0) ::close(fd);
  std::string now = kernel::Describe();
  CHECK(now.rfind("kernel: openat2 ", 0) == 0);
  CHECK((now.find("openat2 yes,") != std::string::npos) == have_openat2);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  int rc = test::InLegacyKernelChild([&] {
    std::string s = kernel::Describe();
    return ::write(fds[1], s.data(), s.size()) == static_cast<ssize_t>(s.size()) ? 0 : 1;
  });
  ::close(fds[1]);
  char buf[256];
  ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  CHECK(rc == 0);
  REQUIRE(n > 0);
  CHECK(std::string(buf, static_cast<size_t>(n)) ==
        "kernel: openat2 no (userspace resolver), mount API no (legacy mount(2)), "
        "statx mnt_id no (fdinfo)");
}

}  // namespace
}  // namespace ocid
