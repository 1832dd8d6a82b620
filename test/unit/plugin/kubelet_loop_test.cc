// The Kubernetes mode's main loop: how long it may sleep (PollTimeoutMs).
// Issue 20: with the kubelet directory there and no kubelet.sock, a served
// resource's unset retry time counted as a deadline in the past and the loop
// polled with 0 ms, a core burnt for as long as the kubelet was away.
#include <doctest/doctest.h>

#include <chrono>

#include "kubelet_loop.h"

using namespace std::chrono_literals;
using ocid::LoopWait;
using ocid::PollTimeoutMs;

namespace {
LoopWait::Resource Serving(bool registered = false, bool attempting = false) {
  LoopWait::Resource r;
  r.serving = true;
  r.registered = registered;
  r.attempting = attempting;
  return r;  // next_start / next_attempt unset: the epoch, long past
}
}  // namespace

TEST_CASE("kubelet loop: no kubelet.sock: a registration is not a deadline") {
  auto now = LoopWait::Clock::now();
  LoopWait w;
  w.dir_watched = true;
  w.kubelet_present = false;
  w.resources = {Serving(), Serving()};
  CHECK(PollTimeoutMs(w, now) == -1);  // inotify on the directory wakes it
  w.health_due = now + 5s;
  CHECK(PollTimeoutMs(w, now) == 5000);
}

TEST_CASE("kubelet loop: an attempt in progress is not a deadline; a backoff is") {
  auto now = LoopWait::Clock::now();
  LoopWait w;
  w.dir_watched = true;
  w.kubelet_present = true;
  w.resources = {Serving(false, true), Serving(true)};
  CHECK(PollTimeoutMs(w, now) == -1);
  LoopWait::Resource backing_off = Serving();
  backing_off.next_attempt = now + 1500ms;
  w.resources.push_back(backing_off);
  CHECK(PollTimeoutMs(w, now) == 1500);
  // A deadline 0.3 ms away is 1 ms, not 0 (rounded up, never a spin).
  w.resources.back().next_attempt = now + 300us;
  CHECK(PollTimeoutMs(w, now) == 1);
}

TEST_CASE("kubelet loop: a due registration with a kubelet is 0 (it starts before the poll)") {
  auto now = LoopWait::Clock::now();
  LoopWait w;
  w.dir_watched = true;
  w.kubelet_present = true;
  w.resources = {Serving()};
  CHECK(PollTimeoutMs(w, now) == 0);
}

TEST_CASE("kubelet loop: waiting for the directory: a second, not 0") {
  auto now = LoopWait::Clock::now();
  LoopWait w;
  w.dir_watched = false;
  w.resources = {Serving()};  // from before the directory went away
  CHECK(PollTimeoutMs(w, now) == 1000);
  w.health_due = now + 200ms;
  CHECK(PollTimeoutMs(w, now) == 200);
}

TEST_CASE(
    "kubelet loop: a server that failed to start is retried at its time, at most a minute away") {
  auto now = LoopWait::Clock::now();
  LoopWait w;
  w.dir_watched = true;
  LoopWait::Resource r;
  r.serving = false;
  r.next_start = now + 2s;
  w.resources = {r};
  CHECK(PollTimeoutMs(w, now) == 2000);
  w.resources[0].next_start = now + 10min;
  CHECK(PollTimeoutMs(w, now) == 60000);
}
