// The confinement is tested in a forked child: once loaded, a filter can
// never be removed from a process.
#include "confinement.h"
#include "confinement_rules.h"
#include "seccomp_filter.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace {

// Runs `body` in a child after confining it; returns the child's exit code.
template <typename F>
int InConfinedChild(F body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ocid::Error err;
    if (!ocid::ConfineHook(&err)) ::_exit(100);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

}  // namespace

TEST_CASE("a confined process cannot execute a program") {
  int rc = InConfinedChild([] {
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    char* const envp[] = {nullptr};
    ::execve("/bin/true", argv, envp);
    return errno == EPERM ? 0 : 1;  // only reached when exec failed
  });
  CHECK(rc == 0);
  // The same program outside confinement does run: the refusal is the filter's.
  pid_t pid = ::fork();
  if (pid == 0) {
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    char* const envp[] = {nullptr};
    ::execve("/bin/true", argv, envp);
    ::_exit(1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

TEST_CASE("a confined process can open an AF_UNIX datagram socket and no other socket") {
  // Each refusal is EPERM (the filter's), not the kernel's EINVAL or
  // EAFNOSUPPORT: every call below succeeds unconfined (checked first).
  auto attempts = [] {
    int sv[2];
    struct {
      int family, type;
    } const refused[] = {{AF_INET, SOCK_STREAM},    {AF_INET6, SOCK_DGRAM},
                         {AF_NETLINK, SOCK_RAW},    {AF_UNIX, SOCK_STREAM},
                         {AF_UNIX, SOCK_SEQPACKET}, {AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC}};
    int code = 1;
    for (const auto& r : refused) {
      int fd = ::socket(r.family, r.type, 0);
      if (fd >= 0) ::close(fd);
      if (fd >= 0 || errno != EPERM) return code;
      ++code;
    }
    if (::socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0 || errno != EPERM) return 20;
    for (int type : {static_cast<int>(SOCK_DGRAM), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK}) {
      int fd = ::socket(AF_UNIX, type, 0);
      if (fd < 0) return 30;
      ::close(fd);
    }
    return 0;
  };
  // Unconfined, the refused calls all work (so EPERM below is the filter's).
  for (auto [family, type] : {std::pair{AF_INET, SOCK_STREAM}, std::pair{AF_UNIX, SOCK_STREAM},
                              std::pair{AF_NETLINK, SOCK_RAW}}) {
    int fd = ::socket(family, type, 0);
    CHECK(fd >= 0);
    if (fd >= 0) ::close(fd);
  }
  CHECK(InConfinedChild(attempts) == 0);
}

TEST_CASE("a confined process still does its own file work") {
  CHECK(InConfinedChild([] {
          int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
          if (fd < 0) return 1;
          char buf[64];
          return ::read(fd, buf, sizeof buf) > 0 ? 0 : 2;
        }) == 0);
}

TEST_CASE("the embedded filter is exactly what the policy compiles to") {
  std::string why;
  std::string fresh = ocid::CompileHookFilter(&why);
  REQUIRE_MESSAGE(!fresh.empty(), why);
  REQUIRE(fresh.size() == sizeof ocid::kHookSeccompFilter);
  CHECK(std::memcmp(fresh.data(), ocid::kHookSeccompFilter, fresh.size()) == 0);
}
