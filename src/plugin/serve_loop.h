// The one serve-until-told loop of the device plugin's long-running modes
// (kubernetes, nomad): one thread waits in poll() on the signals, a wake-up
// eventfd and the fds a mode watches; each mode says what a signal does and
// what to do before each wait.
//
// SIGTERM, SIGINT and SIGHUP are blocked (Init) and read from a signalfd,
// so they arrive only here, at a known point of the loop, never in the
// middle of a gRPC thread's work. Init must run before the program starts
// any thread: a thread inherits its creator's mask, and a thread that
// leaves them unblocked would take them with their default action (exit).
//
// Run, until a signal's handler says stop, Stop() is called or poll fails:
//   1. tick(): the mode's work due now; it returns how long poll may wait
//      (ms, -1 for no limit). A tick may call Stop().
//   2. poll() on the signalfd, the wake-up eventfd and the watched fds.
//   3. a signal: the handler, then back to 1 (the watched fds are looked at
//      on the next pass); otherwise each watched fd that is readable, in
//      the order they were watched.
// One signal is read per pass.
#pragma once
#include <atomic>
#include <functional>
#include <utility>
#include <vector>

#include "error.h"
#include "unique_fd.h"

namespace ocid {

class ServeLoop {
 public:
  ServeLoop() = default;
  ServeLoop(const ServeLoop&) = delete;
  ServeLoop& operator=(const ServeLoop&) = delete;

  // Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (call it before
  // any thread exists), opens the signalfd and the wake-up eventfd. Run
  // must be called on the same thread: a signal sent to that thread alone
  // (pthread_kill) is read by it only.
  bool Init(Error* err);

  // What a signal does (its number): true stops Run. Without a handler,
  // every signal stops it. Each mode logs its own line here.
  void OnSignal(std::function<bool(int signo)> handler);

  // Calls on_readable whenever fd is readable (or at its end: POLLHUP,
  // POLLERR). The callback reads what is there; fd stays the caller's.
  // Before Run.
  void Watch(int fd, std::function<void()> on_readable);

  // The loop above. 0 when a handler or Stop() ended it; kExitFailure when
  // poll failed (*err says why). Once Stop() was called, Run returns at its
  // next look: before and after each tick (a wait ends at once).
  int Run(const std::function<int()>& tick, Error* err);

  // Ends Run from any thread, or from a tick or callback.
  void Stop();

  // For a wait outside Run that a signal must also end (the Kubernetes
  // mode's wait for the kubelet directory's lock).
  int signal_fd() const { return signal_fd_.get(); }

 private:
  UniqueFd signal_fd_;
  UniqueFd wake_fd_;
  std::function<bool(int)> on_signal_;
  std::vector<std::pair<int, std::function<void()>>> watched_;
  std::atomic<bool> stopped_{false};
};

}  // namespace ocid
