// The device plugin's serve loop (serve_loop.h).
//
// The signals are sent to this thread alone (pthread_kill): the binary may
// hold other threads (gRPC's) that never blocked them, and a signal sent to
// the process could be taken by one of those, with its default action. A
// signal sent to this thread, blocked here, waits for this thread's
// signalfd. Each test puts the thread's mask back, with nothing pending.
#include <doctest/doctest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "serve_loop.h"
#include "unique_fd.h"

using ocid::ServeLoop;

namespace {

// Keeps this thread's signal mask, and puts it back at the end with any
// SIGTERM, SIGINT or SIGHUP still pending for it taken first.
class MaskGuard {
 public:
  MaskGuard() { pthread_sigmask(SIG_BLOCK, nullptr, &saved_); }
  MaskGuard(const MaskGuard&) = delete;
  MaskGuard& operator=(const MaskGuard&) = delete;
  ~MaskGuard() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    const timespec now{0, 0};
    while (sigtimedwait(&set, nullptr, &now) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }

 private:
  sigset_t saved_{};
};

// Whether a thread of this process sleeps (in Run: in its poll), from
// /proc/self/task/<tid>/stat: "pid (comm) S ...".
bool Sleeping(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(") ");
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'S';
}

// A tick that ends a loop that has run too long: a failure is a failure,
// not a hang.
constexpr int kMaxTicks = 20;

}  // namespace

TEST_CASE("serve loop: a signal reaches the handler, whose answer stops or goes on") {
  MaskGuard guard;
  ServeLoop loop;
  ocid::Error err;
  REQUIRE(loop.Init(&err));
  CHECK(loop.signal_fd() >= 0);
  std::vector<int> seen;
  loop.OnSignal([&](int signo) {
    seen.push_back(signo);
    return signo == SIGINT;
  });
  int ticks = 0;
  bool gave_up = false;
  // Standard signals are read lowest number first: SIGHUP (goes on), then
  // SIGINT (stops).
  REQUIRE(pthread_kill(pthread_self(), SIGHUP) == 0);
  REQUIRE(pthread_kill(pthread_self(), SIGINT) == 0);
  int rc = loop.Run(
      [&] {
        if (++ticks > kMaxTicks) {
          gave_up = true;
          loop.Stop();
        }
        return 10;
      },
      &err);
  CHECK(rc == 0);
  CHECK_FALSE(gave_up);
  CHECK(seen == std::vector<int>{SIGHUP, SIGINT});
  // One signal per pass, each after a tick.
  CHECK(ticks == 2);
}

TEST_CASE("serve loop: a SIGHUP whose handler goes on does not stop; the next one may") {
  MaskGuard guard;
  ServeLoop loop;
  ocid::Error err;
  REQUIRE(loop.Init(&err));
  int hups = 0;
  loop.OnSignal([&](int signo) {
    CHECK(signo == SIGHUP);
    return ++hups == 2;
  });
  int ticks = 0;
  int rc = loop.Run(
      [&] {
        ++ticks;
        // A signal sent while the mask holds it waits for the next wait.
        if (ticks <= 2) pthread_kill(pthread_self(), SIGHUP);
        if (ticks > kMaxTicks) loop.Stop();
        return 10;
      },
      &err);
  CHECK(rc == 0);
  CHECK(hups == 2);
  CHECK(ticks == 2);
}

TEST_CASE("serve loop: without a handler, a signal stops it") {
  MaskGuard guard;
  ServeLoop loop;
  ocid::Error err;
  REQUIRE(loop.Init(&err));
  REQUIRE(pthread_kill(pthread_self(), SIGHUP) == 0);
  int ticks = 0;
  int rc = loop.Run(
      [&] {
        if (++ticks > kMaxTicks) loop.Stop();
        return 10;
      },
      &err);
  CHECK(rc == 0);
  CHECK(ticks == 1);
}

TEST_CASE("serve loop: Stop() from another thread ends a wait") {
  MaskGuard guard;
  ServeLoop loop;
  ocid::Error err;
  REQUIRE(loop.Init(&err));
  const pid_t tid = static_cast<pid_t>(::syscall(SYS_gettid));
  const pthread_t self = pthread_self();
  // A Stop() that does not wake the loop fails the test instead of hanging
  // it: 10 s after Stop(), the stopper sends a SIGINT, which ends the loop
  // through the handler.
  bool rescued = false;
  loop.OnSignal([&](int) {
    rescued = true;
    return true;
  });
  std::atomic<bool> returned{false};
  int ticks = 0;
  std::thread stopper;
  int rc = loop.Run(
      [&] {
        // Stop() once this thread sleeps in poll, which waits with no limit.
        // (Should it never be seen asleep, Stop() still comes, and the test
        // proves less.)
        if (++ticks == 1)
          stopper = std::thread([&loop, &returned, tid, self] {
            for (int i = 0; i < 5000 && !Sleeping(tid); ++i)
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
            loop.Stop();
            for (int i = 0; i < 10000 && !returned; ++i)
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (!returned) pthread_kill(self, SIGINT);
          });
        return -1;
      },
      &err);
  returned = true;
  stopper.join();
  CHECK(rc == 0);
  CHECK(ticks == 1);
  CHECK_FALSE(rescued);
}

TEST_CASE("serve loop: Stop() before Run or from a tick ends it before any wait") {
  MaskGuard guard;
  ServeLoop loop;
  ocid::Error err;
  REQUIRE(loop.Init(&err));
  int ticks = 0;
  CHECK(loop.Run(
            [&] {
              ++ticks;
              loop.Stop();
              return -1;
            },
            &err) == 0);
  CHECK(ticks == 1);
  // Stopped stays stopped: no tick at all.
  CHECK(loop.Run(
            [&] {
              ++ticks;
              return -1;
            },
            &err) == 0);
  CHECK(ticks == 1);
}

TEST_CASE("serve loop: a watched fd that is readable calls its callback, in order") {
  MaskGuard guard;
  ServeLoop loop;
  ocid::Error err;
  REQUIRE(loop.Init(&err));
  ocid::UniqueFd a(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  ocid::UniqueFd b(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  ocid::UniqueFd idle(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  REQUIRE(a.valid());
  REQUIRE(b.valid());
  REQUIRE(idle.valid());
  std::vector<char> calls;
  auto drain = [](int fd) {
    uint64_t count = 0;
    CHECK(::read(fd, &count, sizeof count) == sizeof count);
  };
  loop.Watch(a.get(), [&] {
    calls.push_back('a');
    drain(a.get());
  });
  loop.Watch(idle.get(), [&] { calls.push_back('i'); });
  loop.Watch(b.get(), [&] {
    calls.push_back('b');
    drain(b.get());
    loop.Stop();
  });
  uint64_t one = 1;
  REQUIRE(::write(b.get(), &one, sizeof one) == sizeof one);
  REQUIRE(::write(a.get(), &one, sizeof one) == sizeof one);
  int ticks = 0;
  int rc = loop.Run(
      [&] {
        if (++ticks > kMaxTicks) loop.Stop();
        return -1;
      },
      &err);
  CHECK(rc == 0);
  CHECK(calls == std::vector<char>{'a', 'b'});
  // The callback's Stop() ends the loop before another tick.
  CHECK(ticks == 1);
}

TEST_CASE("serve loop: the tick's timeout ends each wait") {
  MaskGuard guard;
  ServeLoop loop;
  ocid::Error err;
  REQUIRE(loop.Init(&err));
  int ticks = 0;
  // Nothing is ever readable: only the timeouts bring the loop back.
  int rc = loop.Run(
      [&] {
        if (++ticks == 3) loop.Stop();
        return ticks == 1 ? 0 : 5;
      },
      &err);
  CHECK(rc == 0);
  CHECK(ticks == 3);
}
