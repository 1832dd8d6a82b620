// What the ResourceWatch listens to (host_watch.h): only the inventories'
// names, no writes in device directories, attribute changes only when what
// a view used changed, and a debounce with a ceiling.
// Issue 20: a file in the host's /dev written 20 times a second (each a
// close-write event) kept the old 100 ms quiet-time debounce open forever.
// Issue 27: `touch /dev/onload` by any user (the node is 0666) was an
// IN_ATTRIB on a watched name, and so a rebuild.
#include <doctest/doctest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <chrono>
#include <string>

#include "fake_host.h"
#include "host_watch.h"

using namespace std::chrono_literals;
using ocid::Debounce;
using ocid::NameFacts;
using ocid::ViewFacts;

namespace {

// For events decided by their kind and name alone: a lookup is a mistake.
const ViewFacts kNothingUsed;
bool NoLookup(const std::string& path, NameFacts*) {
  FAIL_CHECK("looked up " << path);
  return false;
}

// /dev/onload as a view used it: a 0666 char device 240:0, root's.
NameFacts Onload() {
  NameFacts f;
  f.type = ocid::FileType::kCharDevice;
  f.rdev = makedev(240, 0);
  f.mode = S_IFCHR | 0666;
  f.dev = 5;
  f.ino = 100;
  return f;
}

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
  CHECK(dev.host_dir == "/dev");  // events are judged by paths within the host root
  CHECK(dev.PathOf("onload") == "/dev/onload");
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
  auto relevant = [&](uint32_t mask, const std::string& name) {
    return dev.Relevant(mask, name, kNothingUsed, NoLookup);
  };
  CHECK(relevant(IN_DELETE, "onload"));
  CHECK(relevant(IN_CREATE, "onload_epoll"));
  CHECK(relevant(IN_MOVED_FROM, "onload"));
  CHECK(relevant(IN_MOVED_TO, "onload"));
  CHECK_FALSE(relevant(IN_CLOSE_WRITE, "null"));    // >/dev/null
  CHECK_FALSE(relevant(IN_CLOSE_WRITE, "onload"));  // a write is no change of the node
  CHECK_FALSE(relevant(IN_CREATE, "pts7"));
  CHECK_FALSE(relevant(IN_ATTRIB, "tty1"));
  CHECK(relevant(IN_DELETE_SELF, ""));
  CHECK(relevant(IN_IGNORED, ""));
}

TEST_CASE("host watch: an attribute change of a node counts only when what the view used changed") {
  auto dirs = ocid::PlanWatches(OneInventory(), "/host", "/conf");
  const auto& dev = dirs.at("/host/dev");
  const ViewFacts used = {{"/dev/onload", {Onload(), false}}};
  int lookups = 0;
  // The event's IN_ATTRIB, with the node looked up again showing `now`.
  auto attrib = [&](const NameFacts& now) {
    return dev.Relevant(IN_ATTRIB, "onload", used, [&](const std::string& path, NameFacts* out) {
      ++lookups;
      CHECK(path == "/dev/onload");
      *out = now;
      return true;
    });
  };
  // touch: a timestamp is nothing a view uses.
  CHECK_FALSE(attrib(Onload()));
  CHECK(lookups == 1);
  NameFacts chmod = Onload();
  chmod.mode = S_IFCHR | 0600;
  CHECK(attrib(chmod));
  NameFacts chown = Onload();
  chown.uid = 1000;
  CHECK(attrib(chown));
  NameFacts chgrp = Onload();
  chgrp.gid = 27;
  CHECK(attrib(chgrp));
  NameFacts renumbered = Onload();  // another node at the name (a mknod, then a rename)
  renumbered.rdev = makedev(241, 0);
  CHECK(attrib(renumbered));
  NameFacts block = Onload();
  block.type = ocid::FileType::kBlockDevice;
  block.mode = S_IFBLK | 0666;
  CHECK(attrib(block));
  NameFacts other = Onload();
  other.ino = 101;
  CHECK(attrib(other));
  // Gone, or not to be looked up: the view may be wrong.
  CHECK(dev.Relevant(IN_ATTRIB, "onload", used,
                     [](const std::string&, NameFacts*) { return false; }));
  // A new node at the name (mknod, with any numbers) is a create or a
  // rename: no lookup needed.
  CHECK(dev.Relevant(IN_CREATE, "onload", used, NoLookup));
  CHECK(dev.Relevant(IN_MOVED_TO, "onload", used, NoLookup));
  // A watched name the view did not match (onload_epoll is an alternative
  // the view never needed): it read no attribute of it.
  CHECK_FALSE(dev.Relevant(IN_ATTRIB, "onload_epoll", used, NoLookup));
  // Changed while the view was built: the view may hold either facts.
  const ViewFacts mixed = {{"/dev/onload", {Onload(), true}}};
  CHECK(dev.Relevant(IN_ATTRIB, "onload", mixed, NoLookup));
}

TEST_CASE("host watch: a file directory: names the globs match, writes to them too") {
  auto dirs = ocid::PlanWatches(OneInventory(), "/", "/conf");
  const auto& lib = dirs.at("/usr/lib64");
  CHECK(lib.Relevant(IN_CREATE, "libonload.so.1.2", kNothingUsed, NoLookup));
  CHECK(lib.Relevant(IN_CLOSE_WRITE, "libonload.so", kNothingUsed, NoLookup));
  CHECK(lib.Relevant(IN_MOVED_TO, "libonload.so", kNothingUsed, NoLookup));
  CHECK_FALSE(lib.Relevant(IN_CLOSE_WRITE, "libc.so.6", kNothingUsed, NoLookup));
  // FNM_PERIOD, as the planner
  CHECK_FALSE(lib.Relevant(IN_CREATE, ".libonload.so.tmp", kNothingUsed, NoLookup));
  const auto& conf = dirs.at("/conf");
  CHECK(conf.Relevant(IN_CLOSE_WRITE, "anything.json", kNothingUsed, NoLookup));
  CHECK(conf.Relevant(IN_ATTRIB, "anything.json", kNothingUsed, NoLookup));
}

TEST_CASE("host watch: a library: touched is nothing, written or chmod'ed counts") {
  auto dirs = ocid::PlanWatches(OneInventory(), "/", "/conf");
  const auto& lib = dirs.at("/usr/lib64");
  NameFacts so;
  so.type = ocid::FileType::kRegular;
  so.mode = S_IFREG | 0644;
  so.ino = 7;
  const ViewFacts used = {{"/usr/lib64/libonload.so", {so, false}}};
  auto showing = [](const NameFacts& f) {
    return [f](const std::string&, NameFacts* out) {
      *out = f;
      return true;
    };
  };
  CHECK_FALSE(lib.Relevant(IN_ATTRIB, "libonload.so", used, showing(so)));  // touch
  NameFacts chmod = so;
  chmod.mode = S_IFREG | 0600;
  CHECK(lib.Relevant(IN_ATTRIB, "libonload.so", used, showing(chmod)));
  // Rewritten in place: the content (the version lock's banner) may differ,
  // whatever the attributes say.
  CHECK(lib.Relevant(IN_CLOSE_WRITE, "libonload.so", used, NoLookup));
}

TEST_CASE("host watch: RecordingView keeps what each match showed, by path and by target") {
  ocid_test::FakeHost host;
  host.Chr("/dev/onload", 240, 0).File("/usr/lib64/libonload.so", "/usr/lib64/libonload.so.1");
  ocid::RecordingView seen(host);
  std::vector<ocid::HostMatch> m;
  ocid::Error err;
  REQUIRE(seen.Match("/dev/onload", &m, &err));
  REQUIRE(m.size() == 1);
  REQUIRE(seen.Match("/usr/lib64/libonload.so*", &m, &err));
  const ViewFacts& used = seen.used();
  REQUIRE(used.count("/dev/onload"));
  std::vector<ocid::HostMatch> direct;
  REQUIRE(host.Match("/dev/onload", &direct, &err));
  CHECK(used.at("/dev/onload").facts == ocid::FactsOf(direct.at(0)));
  CHECK_FALSE(used.at("/dev/onload").mixed);
  // A symlink's target: a chmod through the link is reported on its name.
  CHECK(used.count("/usr/lib64/libonload.so"));
  CHECK(used.count("/usr/lib64/libonload.so.1"));
  CHECK(used.size() == 3);
  // Matched again, the same: still steady. Changed between two matches of
  // one rebuild: mixed.
  REQUIRE(seen.Match("/dev/onload", &m, &err));
  CHECK_FALSE(seen.used().at("/dev/onload").mixed);
  host.Perm("/dev/onload", 0600);
  REQUIRE(seen.Match("/dev/onload", &m, &err));
  CHECK(seen.used().at("/dev/onload").mixed);
  // Reads are forwarded.
  host.Content("/etc/x", "bytes");
  std::string bytes;
  CHECK(seen.Read("/etc/x", 100, &bytes, &err) == ocid::HostRead::kOk);
  CHECK(bytes == "bytes");
  CHECK(host.reads == 1);
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
