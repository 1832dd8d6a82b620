// What the ResourceWatch listens to (host_watch.h): only the inventories'
// names, no writes in device directories, and a debounce with a ceiling.
// Issue 20: a file in the host's /dev written 20 times a second (each a
// close-write event) kept the old 100 ms quiet-time debounce open forever.
#include <doctest/doctest.h>
#include <sys/inotify.h>

#include <chrono>

#include "host_watch.h"

using namespace std::chrono_literals;
using ocid::Debounce;

namespace {
ocid::InventorySet OneInventory() {
  ocid::InventorySet set;
  ocid::Inventory inv;
  ocid::Feature f;
  f.name = "onload";
  ocid::InventoryEntry dev;
  dev.kind = ocid::EntryKind::kDevice;
  dev.sources = {"onload", "onload_epoll"};
  ocid::InventoryEntry lib;
  lib.kind = ocid::EntryKind::kFile;
  lib.sources = {"/usr/lib64/libonload.so*", "/opt/onload/lib/libonload.so"};
  f.entries = {dev, lib};
  inv.features = {f};
  set.inventories = {inv};
  return set;
}
}  // namespace

TEST_CASE("host watch: the directories, under the host root, and what counts in each") {
  auto dirs = ocid::PlanWatches(OneInventory(), "/host", "/etc/oci-decorator");
  REQUIRE(dirs.size() == 4);
  const auto& dev = dirs.at("/host/dev");
  CHECK((dev.mask & IN_CLOSE_WRITE) == 0);  // writes in /dev are never asked for
  CHECK((dev.mask & IN_ATTRIB) != 0);
  CHECK((dev.mask & IN_DELETE) != 0);
  CHECK((dirs.at("/host/usr/lib64").mask & IN_CLOSE_WRITE) != 0);
  CHECK(dirs.count("/host/opt/onload/lib"));
  CHECK(dirs.at("/etc/oci-decorator").any_name);
}

TEST_CASE("host watch: a device directory: the entries' names, no writes") {
  auto dirs = ocid::PlanWatches(OneInventory(), "/", "/conf");
  const auto& dev = dirs.at("/dev");
  CHECK(dev.Relevant(IN_DELETE, "onload"));
  CHECK(dev.Relevant(IN_CREATE, "onload_epoll"));
  CHECK(dev.Relevant(IN_ATTRIB, "onload"));  // chmod of the node
  CHECK(dev.Relevant(IN_MOVED_FROM, "onload"));
  CHECK_FALSE(dev.Relevant(IN_CLOSE_WRITE, "null"));    // >/dev/null
  CHECK_FALSE(dev.Relevant(IN_CLOSE_WRITE, "onload"));  // a write is no change of the node
  CHECK_FALSE(dev.Relevant(IN_CREATE, "pts7"));
  CHECK_FALSE(dev.Relevant(IN_ATTRIB, "tty1"));
  CHECK(dev.Relevant(IN_DELETE_SELF, ""));
  CHECK(dev.Relevant(IN_IGNORED, ""));
}

TEST_CASE("host watch: a file directory: names the globs match, writes to them too") {
  auto dirs = ocid::PlanWatches(OneInventory(), "/", "/conf");
  const auto& lib = dirs.at("/usr/lib64");
  CHECK(lib.Relevant(IN_CREATE, "libonload.so.1.2"));
  CHECK(lib.Relevant(IN_CLOSE_WRITE, "libonload.so"));
  CHECK(lib.Relevant(IN_MOVED_TO, "libonload.so"));
  CHECK_FALSE(lib.Relevant(IN_CLOSE_WRITE, "libc.so.6"));
  CHECK_FALSE(lib.Relevant(IN_CREATE, ".libonload.so.tmp"));  // FNM_PERIOD, as the planner
  const auto& conf = dirs.at("/conf");
  CHECK(conf.Relevant(IN_CLOSE_WRITE, "anything.json"));
}

TEST_CASE(
    "debounce: quiet time after the last event, never later than the ceiling after the first") {
  Debounce d;
  CHECK_FALSE(d.pending());
  auto t0 = Debounce::Clock::now();
  d.Event(t0);
  CHECK(d.pending());
  CHECK(d.Due() == t0 + Debounce::kQuiet);
  // Events every 20 ms for a second: the rebuild is still due at the ceiling.
  for (int i = 1; i <= 50; ++i) d.Event(t0 + i * 20ms);
  CHECK(d.Due() == t0 + Debounce::kMaxDelay);
  d.Clear();
  CHECK_FALSE(d.pending());
  d.Event(t0 + 2s);
  CHECK(d.Due() == t0 + 2s + Debounce::kQuiet);
}
