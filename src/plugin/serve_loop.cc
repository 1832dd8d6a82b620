#include "serve_loop.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "exit_codes.h"

namespace ocid {

bool ServeLoop::Init(Error* err) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  if (int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr); rc != 0)
    return Fail(err, "cannot block SIGTERM, SIGINT and SIGHUP", {}, rc);
  signal_fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signal_fd_.valid()) return Fail(err, "cannot create a signalfd", {}, errno);
  wake_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd_.valid()) return Fail(err, "cannot create an eventfd", {}, errno);
  return true;
}

void ServeLoop::OnSignal(std::function<bool(int signo)> handler) {
  on_signal_ = std::move(handler);
}

void ServeLoop::Watch(int fd, std::function<void()> on_readable) {
  watched_.emplace_back(fd, std::move(on_readable));
}

void ServeLoop::Stop() {
  stopped_ = true;
  uint64_t one = 1;
  if (::write(wake_fd_.get(), &one, sizeof one) < 0) { /* a wake-up is pending anyway */
  }
}

int ServeLoop::Run(const std::function<int()>& tick, Error* err) {
  std::vector<struct pollfd> fds;
  for (;;) {
    if (stopped_) return 0;
    int timeout_ms = tick();
    if (stopped_) return 0;
    fds.clear();
    fds.push_back({signal_fd_.get(), POLLIN, 0});
    fds.push_back({wake_fd_.get(), POLLIN, 0});
    for (const auto& w : watched_) fds.push_back({w.first, POLLIN, 0});
    int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) {
      Fail(err, "poll", {}, errno);
      return kExitFailure;
    }
    if (n <= 0) continue;
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo si {};
      if (::read(signal_fd_.get(), &si, sizeof si) != sizeof si) continue;
      if (!on_signal_ || on_signal_(static_cast<int>(si.ssi_signo))) return 0;
      continue;
    }
    if (fds[1].revents & POLLIN) {
      uint64_t count = 0;
      if (::read(wake_fd_.get(), &count, sizeof count) < 0) { /* nothing pending */
      }
      if (stopped_) return 0;
    }
    for (size_t i = 0; i < watched_.size(); ++i)
      if (fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) watched_[i].second();
  }
}

}  // namespace ocid
