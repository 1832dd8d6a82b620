// BuildPlan against a fake host tree: no root, arbitrary device numbers.
#include <doctest/doctest.h>

#include <fnmatch.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bundle_config.h"
#include "container_plan.h"
#include "fake_host.h"
#include "host_view.h"
#include "inventory.h"
#include "library_dirs.h"
#include "oci_state.h"
#include "plan.h"
#include "planner.h"

using ocid::BuildPlan;
using ocid::BundleConfig;
using ocid::DeviceRuleToV1;
using ocid::Error;
using ocid::FileType;
using ocid::HostMatch;
using ocid::Inventory;
using ocid::InventorySet;
using ocid::MountOp;
using ocid::OciState;
using ocid::Plan;
using ocid::PlanInputs;

namespace {

using Strings = std::vector<std::string>;

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// A host tree held in memory: path -> HostMatch. Symlinks are modelled by a
// `resolved` that differs from the path; files with the same resolved path
// share dev/ino, like the real thing.
class FakeHost : public ocid::HostView {
 public:
  FakeHost& File(const std::string& path, const std::string& resolved = "") {
    return Add(path, resolved, FileType::kRegular, 0);
  }
  FakeHost& Dir(const std::string& path, const std::string& resolved = "") {
    return Add(path, resolved, FileType::kDirectory, 0);
  }
  FakeHost& Chr(const std::string& path, unsigned maj, unsigned min) {
    return Add(path, "", FileType::kCharDevice, makedev(maj, min));
  }
  FakeHost& Blk(const std::string& path, unsigned maj, unsigned min) {
    return Add(path, "", FileType::kBlockDevice, makedev(maj, min));
  }
  FakeHost& Remove(const std::string& path) {
    tree_.erase(path);
    return *this;
  }
  void SetDisplayPrefix(const std::string& p) { prefix_ = p; }
  void FailOn(const std::string& pattern) { fail_on_ = pattern; }
  int calls() const { return calls_; }

  bool Match(const std::string& pattern, std::vector<HostMatch>* out, Error* err) const override {
    ++calls_;
    out->clear();
    if (pattern == fail_on_) return ocid::Fail(err, "cannot list host directory", pattern, EIO);
    size_t slash = pattern.rfind('/');
    std::string dir = pattern.substr(0, slash);
    std::string leaf = pattern.substr(slash + 1);
    if (!ocid::HasGlob(leaf)) {
      auto it = tree_.find(pattern);
      if (it != tree_.end()) out->push_back(it->second);
      return true;
    }
    for (const auto& [path, m] : tree_) {  // std::map: sorted by name
      size_t s = path.rfind('/');
      if (path.substr(0, s) != dir) continue;
      if (::fnmatch(leaf.c_str(), path.c_str() + s + 1, FNM_PERIOD) == 0) out->push_back(m);
    }
    return true;
  }
  std::string Display(const std::string& path) const override { return prefix_ + path; }
  // A view of names that reads nothing, but for the onload module's
  // parameters, which these hosts do not have (a module without a shrub
  // controller): missing, as the real view says.
  bool ReadChunks(const std::string& path, size_t limit, const ChunkSink& sink,
                  Error* err) const override {
    if (path.rfind("/sys/module/onload/parameters/", 0) == 0)
      return ocid::Fail(err, "cannot open", path, ENOENT);
    return HostView::ReadChunks(path, limit, sink, err);
  }

 private:
  FakeHost& Add(const std::string& path, const std::string& resolved, FileType t, uint64_t rdev) {
    HostMatch m;
    m.path = path;
    m.resolved = resolved.empty() ? path : resolved;
    m.type = t;
    m.rdev = rdev;
    m.dev = 0xfd00;
    auto it = inodes_.find(m.resolved);
    if (it == inodes_.end()) it = inodes_.emplace(m.resolved, 1000 + inodes_.size()).first;
    m.ino = it->second;
    tree_[path] = m;
    return *this;
  }

  std::map<std::string, HostMatch> tree_;
  std::map<std::string, uint64_t> inodes_;
  std::string prefix_;
  std::string fail_on_;
  mutable int calls_ = 0;
};

std::string ReadSource(const std::string& rel) {
  std::ifstream in(std::string(OCID_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kDir = "/etc/oci-decorator/oci-decorator.d/";

Inventory Parse(const std::string& json, const std::string& file) {
  Inventory inv;
  Error err;
  REQUIRE_MESSAGE(ocid::ParseInventory(json, file, &inv, &err), err.Line());
  return inv;
}

Inventory Shipped(const std::string& name) {
  return Parse(ReadSource("config/" + name), kDir + name);
}

// Onload installed RHEL-style, with version links, and a Debian-style copy of
// libonload.so that must lose to the first alternative.
FakeHost OnloadHost() {
  FakeHost h;
  h.Chr("/dev/onload", 300, 0)
      .Chr("/dev/onload_epoll", 301, 0)
      .Chr("/dev/sfc_char", 302, 0)
      .File("/usr/bin/onload")
      .File("/usr/bin/onload_stackdump")
      .File("/usr/sbin/onload_tool")
      .File("/usr/bin/zf_stackdump")
      .File("/usr/bin/zf_debug")
      .File("/usr/lib64/libonload.so")
      .File("/usr/lib64/libonload_ext.so", "/usr/lib64/libonload_ext.so.1.1.0")
      .File("/usr/lib64/libonload_ext.so.1", "/usr/lib64/libonload_ext.so.1.1.0")
      .File("/usr/lib64/libonload_ext.so.1.1.0")
      .File("/usr/lib64/libonload_zf.so", "/usr/lib64/libonload_zf.so.1.1.1")
      .File("/usr/lib64/libonload_zf.so.1.1.1")
      .File("/usr/lib64/libc.so.6")
      .File("/usr/lib/x86_64-linux-gnu/libonload.so")
      .Dir("/usr/libexec/onload/profiles")
      .File("/usr/libexec/onload/profiles/latency.opf");
  return h;
}

struct Run {
  OciState state;
  BundleConfig config;
  InventorySet set;
  Plan plan;
  Error err;
  bool ok = false;
  // Where libraries go: the image not seen unless a case sets it.
  ocid::LibraryDirs libraries = ocid::UnseenLibraryDirs();

  Run() {
    state.id = "ctr1";
    state.pid = 4242;
    state.status = "creating";
    state.bundle = "/run/bundles/ctr1";
    config.root_path = "rootfs";
  }
  bool Go(const FakeHost& host) {
    PlanInputs in;
    in.state = &state;
    in.config = &config;
    in.inventories = &set;
    in.host = &host;
    in.libraries = libraries;
    ok = BuildPlan(in, &plan, &err);
    return ok;
  }
};

Strings Targets(const Plan& p) {
  Strings t;
  for (const auto& m : p.mounts) t.push_back(m.target);
  return t;
}

Strings Rules(const Plan& p) {
  Strings r;
  for (const auto& d : p.device_rules) r.push_back(DeviceRuleToV1(d));
  return r;
}

const MountOp* Mount(const Plan& p, const std::string& target) {
  for (const auto& m : p.mounts)
    if (m.target == target) return &m;
  return nullptr;
}

size_t CountTarget(const Plan& p, const std::string& target) {
  return static_cast<size_t>(std::count_if(p.mounts.begin(), p.mounts.end(),
                                           [&](const MountOp& m) { return m.target == target; }));
}

}  // namespace

TEST_SUITE("planner") {
  TEST_CASE("not activated: empty plan, no error, host not even looked at") {
    FakeHost empty;  // nothing exists: a requested inventory would fail
    Run r;
    r.config.env = {"PATH=/bin", "XOCI_ONLOAD=all", "OCI_ONLOAD_X=all", "OCI_RDMA=none"};
    r.set.inventories = {Shipped("nvidia.json"), Shipped("onload.json"), Shipped("rdma.json")};
    REQUIRE_MESSAGE(r.Go(empty), r.err.Line());
    CHECK_FALSE(r.plan.Active());
    CHECK(r.plan.activated.empty());
    CHECK(r.plan.mounts.empty());
    CHECK(r.plan.device_rules.empty());
    CHECK(r.plan.preload.empty());
    CHECK(r.plan.skipped.empty());
    CHECK(r.plan.container_id == "ctr1");
    CHECK(r.plan.pid == 4242);
    CHECK(r.plan.rootfs == "/run/bundles/ctr1/rootfs");
    CHECK(empty.calls() == 0);
  }

  TEST_CASE("OCI_ONLOAD=all with the shipped onload.json") {
    FakeHost host = OnloadHost();
    Run r;
    r.config.env = {"PATH=/bin", "OCI_ONLOAD=all"};
    r.set.inventories = {Shipped("onload.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.Active());
    REQUIRE(r.plan.activated.size() == 1);
    CHECK(r.plan.activated[0].file == kDir + "onload.json");
    CHECK(r.plan.activated[0].activation_flag == "OCI_ONLOAD");
    CHECK(r.plan.activated[0].features == Strings{"onload", "zf"});
    CHECK(Contains(r.plan.activated[0].requested_by, "OCI_ONLOAD=all"));

    CHECK(Targets(r.plan) == Strings{
                                 "/dev/onload",
                                 "/dev/onload_epoll",
                                 "/dev/sfc_char",
                                 "/usr/bin/onload",
                                 "/usr/bin/onload_stackdump",
                                 "/usr/bin/zf_debug",
                                 "/usr/bin/zf_stackdump",
                                 "/usr/lib/x86_64-linux-gnu/libonload.so",
                                 "/usr/lib/x86_64-linux-gnu/libonload_ext.so",
                                 "/usr/lib/x86_64-linux-gnu/libonload_ext.so.1",
                                 "/usr/lib/x86_64-linux-gnu/libonload_ext.so.1.1.0",
                                 "/usr/lib/x86_64-linux-gnu/libonload_zf.so",
                                 "/usr/lib/x86_64-linux-gnu/libonload_zf.so.1.1.1",
                                 "/usr/lib64/libonload.so",
                                 "/usr/lib64/libonload_ext.so",
                                 "/usr/lib64/libonload_ext.so.1",
                                 "/usr/lib64/libonload_ext.so.1.1.0",
                                 "/usr/lib64/libonload_zf.so",
                                 "/usr/lib64/libonload_zf.so.1.1.1",
                                 "/usr/libexec/onload/profiles",
                                 "/usr/sbin/onload_tool",
                             });
    // sfc_char is in both features: one mount, one rule.
    CHECK(CountTarget(r.plan, "/dev/sfc_char") == 1);
    CHECK(Rules(r.plan) == Strings{"c 300:0 rw", "c 301:0 rw", "c 302:0 rw"});
    // The image not seen: the first library directory, Debian's.
    CHECK(r.plan.preload == Strings{"/usr/lib/x86_64-linux-gnu/libonload.so"});
    // No shrub controller on this host (issue 30): /run/onload is not made.
    CHECK(r.plan.skipped == Strings{"/run/onload (condition shrub_controller not met)"});
    CHECK(r.plan.library_dirs.dirs == Strings{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
    for (const auto& w : r.plan.warnings) CHECK_FALSE(Contains(w, "glibc"));

    const MountOp* dev = Mount(r.plan, "/dev/onload");
    REQUIRE(dev);
    CHECK(dev->type == FileType::kCharDevice);
    CHECK(dev->source == "/dev/onload");
    CHECK(dev->rdev == makedev(300, 0));
    CHECK_FALSE(dev->nodev);
    CHECK(dev->nosuid);
    CHECK(dev->readonly);
    CHECK(dev->inventory == kDir + "onload.json");
    CHECK(dev->feature == "onload");

    const MountOp* bin = Mount(r.plan, "/usr/bin/zf_debug");
    REQUIRE(bin);
    CHECK(bin->type == FileType::kRegular);
    CHECK(bin->nodev);
    CHECK(bin->nosuid);
    CHECK(bin->readonly);
    CHECK(bin->feature == "zf");

    const MountOp* dir = Mount(r.plan, "/usr/libexec/onload/profiles");
    REQUIRE(dir);
    CHECK(dir->type == FileType::kDirectory);
    CHECK(dir->nodev);
  }

  TEST_CASE("OCI_ONLOAD=zf: only the zf entries, no preload") {
    FakeHost host = OnloadHost();
    Run r;
    r.config.env = {"OCI_ONLOAD=zf"};
    r.set.inventories = {Shipped("onload.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    REQUIRE(r.plan.activated.size() == 1);
    CHECK(r.plan.activated[0].features == Strings{"zf"});
    CHECK(Targets(r.plan) == Strings{"/dev/sfc_char", "/usr/bin/zf_debug", "/usr/bin/zf_stackdump",
                                     "/usr/lib/x86_64-linux-gnu/libonload_zf.so",
                                     "/usr/lib/x86_64-linux-gnu/libonload_zf.so.1.1.1",
                                     "/usr/lib64/libonload_zf.so",
                                     "/usr/lib64/libonload_zf.so.1.1.1"});
    for (const auto& m : r.plan.mounts) CHECK(m.feature == "zf");
    CHECK(Rules(r.plan) == Strings{"c 302:0 rw"});
    CHECK(r.plan.preload.empty());
  }

  TEST_CASE("library alternatives: Debian layout") {
    FakeHost host;
    host.Chr("/dev/onload", 240, 0)
        .Chr("/dev/onload_epoll", 241, 0)
        .Chr("/dev/sfc_char", 242, 0)
        .File("/usr/bin/onload")
        .File("/usr/bin/onload_stackdump")
        .File("/sbin/onload_tool")
        .File("/usr/lib/x86_64-linux-gnu/libonload.so")
        .File("/usr/lib/x86_64-linux-gnu/libonload_ext.so",
              "/usr/lib/x86_64-linux-gnu/libonload_ext.so.1.1.0")
        .File("/usr/lib/x86_64-linux-gnu/libonload_ext.so.1.1.0")
        .Dir("/usr/libexec/onload/profiles");
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(Targets(r.plan) ==
          Strings{"/dev/onload", "/dev/onload_epoll", "/dev/sfc_char", "/sbin/onload_tool",
                  "/usr/bin/onload", "/usr/bin/onload_stackdump",
                  "/usr/lib/x86_64-linux-gnu/libonload.so",
                  "/usr/lib/x86_64-linux-gnu/libonload_ext.so",
                  "/usr/lib/x86_64-linux-gnu/libonload_ext.so.1.1.0", "/usr/lib64/libonload.so",
                  "/usr/lib64/libonload_ext.so", "/usr/lib64/libonload_ext.so.1.1.0",
                  "/usr/libexec/onload/profiles"});
    CHECK(r.plan.preload == Strings{"/usr/lib/x86_64-linux-gnu/libonload.so"});
    CHECK(Mount(r.plan, "/usr/lib64/libonload.so")->source ==
          "/usr/lib/x86_64-linux-gnu/libonload.so");
    CHECK(Rules(r.plan) == Strings{"c 240:0 rw", "c 241:0 rw", "c 242:0 rw"});
  }

  TEST_CASE("first matching alternative wins over later ones") {
    FakeHost host = OnloadHost();  // has /usr/lib64 and /usr/lib/x86_64-linux-gnu libonload.so
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    // Both library directories get the file of the first alternative; the
    // later one's file is mounted nowhere.
    for (const auto& m : r.plan.mounts) CHECK(m.source != "/usr/lib/x86_64-linux-gnu/libonload.so");
    for (const char* t : {"/usr/lib64/libonload.so", "/usr/lib/x86_64-linux-gnu/libonload.so"}) {
      CAPTURE(t);
      REQUIRE(Mount(r.plan, t) != nullptr);
      CHECK(Mount(r.plan, t)->source == "/usr/lib64/libonload.so");
    }
  }

  TEST_CASE("version symlinks: each name its own mount of the resolved file") {
    FakeHost host = OnloadHost();
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    const std::string real = "/usr/lib64/libonload_ext.so.1.1.0";
    for (const char* dir : {"/usr/lib64", "/usr/lib/x86_64-linux-gnu"})
      for (const char* name :
           {"libonload_ext.so", "libonload_ext.so.1", "libonload_ext.so.1.1.0"}) {
        CAPTURE(dir);
        CAPTURE(name);
        const MountOp* m = Mount(r.plan, std::string(dir) + "/" + name);
        REQUIRE(m);
        CHECK(m->source == std::string("/usr/lib64/") + name);
        CHECK(m->resolved == real);
        CHECK(m->type == FileType::kRegular);
        CHECK(m->library);
      }
    CHECK(Mount(r.plan, "/usr/lib64/libonload_ext.so")->ino ==
          Mount(r.plan, "/usr/lib64/libonload_ext.so.1.1.0")->ino);
  }

  TEST_CASE("missing required entry: error names the path and the inventory") {
    FakeHost host = OnloadHost();
    host.Remove("/usr/bin/onload_stackdump");
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    CHECK_FALSE(r.Go(host));
    const std::string line = r.err.Line();
    CAPTURE(line);
    CHECK(Contains(line, "/usr/bin/onload_stackdump"));
    CHECK(Contains(line, kDir + "onload.json"));
    CHECK(Contains(line, "onload"));
  }

  TEST_CASE("missing required entry with alternatives names every alternative") {
    FakeHost host = OnloadHost();
    host.Remove("/usr/sbin/onload_tool");
    host.SetDisplayPrefix("/srv/hostroot");
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    CHECK_FALSE(r.Go(host));
    const std::string line = r.err.Line();
    CAPTURE(line);
    CHECK(Contains(line, "/srv/hostroot/usr/sbin/onload_tool"));
    CHECK(Contains(line, "/srv/hostroot/sbin/onload_tool"));
    CHECK(Contains(line, kDir + "onload.json"));
  }

  TEST_CASE("missing required device: error names /dev/<name>") {
    FakeHost host = OnloadHost();
    host.Remove("/dev/onload_epoll");
    Run r;
    r.config.env = {"OCI_ONLOAD=all"};
    r.set.inventories = {Shipped("onload.json")};
    CHECK_FALSE(r.Go(host));
    CHECK(Contains(r.err.Line(), "/dev/onload_epoll"));
    CHECK(Contains(r.err.Line(), kDir + "onload.json"));
  }

  TEST_CASE("missing optional entries are skipped and listed; globs and big device numbers") {
    FakeHost host;
    host.Chr("/dev/infiniband/uverbs1", 4000, 70001)
        .Chr("/dev/infiniband/uverbs0", 1000, 70000)
        .Chr("/dev/infiniband/umad0", 231, 0);  // not matched by uverbs*
    Run r;
    r.config.env = {"OCI_RDMA=verbs"};
    r.set.inventories = {Shipped("rdma.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(Targets(r.plan) == Strings{"/dev/infiniband/uverbs0", "/dev/infiniband/uverbs1"});
    CHECK(r.plan.skipped == Strings{"/dev/infiniband/rdma_cm", "/dev/knem"});
    // No 8-bit truncation of majors or minors.
    CHECK(Rules(r.plan) == Strings{"c 1000:70000 rw", "c 4000:70001 rw"});
    REQUIRE(r.plan.device_rules.size() == 2);
    CHECK(r.plan.device_rules[0].major == 1000);
    CHECK(r.plan.device_rules[0].minor == 70000);
    CHECK(r.plan.mounts[1].rdev == makedev(4000, 70001));
  }

  TEST_CASE("block devices give b rules") {
    FakeHost host;
    host.Blk("/dev/nvme0n1", 259, 300);
    Run r;
    r.config.env = {"OCI_T=all"};
    r.set.inventories = {Parse(
        R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{"devices":["nvme0n1"]}}})",
        kDir + "t.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    REQUIRE(r.plan.mounts.size() == 1);
    CHECK(r.plan.mounts[0].type == FileType::kBlockDevice);
    CHECK(Rules(r.plan) == Strings{"b 259:300 rw"});
  }

  TEST_CASE("a required glob that matches nothing is missing") {
    FakeHost host;
    host.Chr("/dev/infiniband/umad0", 231, 0);
    Run r;
    r.config.env = {"OCI_RDMA=all"};
    r.set.inventories = {Shipped("rdma.json")};
    CHECK_FALSE(r.Go(host));
    CHECK(Contains(r.err.Line(), "/dev/infiniband/uverbs*"));
    CHECK(Contains(r.err.Line(), kDir + "rdma.json"));
  }

  TEST_CASE("wrong type: regular file where a directory is needed") {
    FakeHost host = OnloadHost();
    host.Remove("/usr/libexec/onload/profiles").File("/usr/libexec/onload/profiles");
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    CHECK_FALSE(r.Go(host));
    const std::string line = r.err.Line();
    CAPTURE(line);
    CHECK(Contains(line, "/usr/libexec/onload/profiles"));
    CHECK(Contains(line, "directory"));
    CHECK(Contains(line, kDir + "onload.json"));
  }

  TEST_CASE("wrong type: regular file where a device is needed") {
    FakeHost host = OnloadHost();
    host.Remove("/dev/onload").File("/dev/onload");
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    CHECK_FALSE(r.Go(host));
    CHECK(Contains(r.err.Line(), "/dev/onload"));
    CHECK(Contains(r.err.Line(), "device"));
  }

  TEST_CASE("wrong type: directory where a file is needed") {
    FakeHost host = OnloadHost();
    host.Remove("/usr/bin/onload").Dir("/usr/bin/onload");
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    CHECK_FALSE(r.Go(host));
    CHECK(Contains(r.err.Line(), "/usr/bin/onload"));
    CHECK(Contains(r.err.Line(), "regular file"));
  }

  TEST_CASE("two inventories activated independently; one not asked is not applied") {
    FakeHost host = OnloadHost();
    host.Chr("/dev/infiniband/uverbs0", 231, 192).Chr("/dev/knem", 10, 57);
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.config.annotations = {{"oci-decorator/OCI_RDMA", "all"}};
    // No NVIDIA files on this host: nvidia.json must not cause an error.
    r.set.inventories = {Shipped("nvidia.json"), Shipped("onload.json"), Shipped("rdma.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    REQUIRE(r.plan.activated.size() == 2);
    CHECK(r.plan.activated[0].file == kDir + "onload.json");
    CHECK(r.plan.activated[0].features == Strings{"onload"});
    CHECK(Contains(r.plan.activated[0].requested_by, "env"));
    CHECK(r.plan.activated[1].file == kDir + "rdma.json");
    CHECK(r.plan.activated[1].features == Strings{"verbs"});
    CHECK(Contains(r.plan.activated[1].requested_by, "annotation"));
    for (const auto& m : r.plan.mounts) CHECK(m.inventory != kDir + "nvidia.json");
    CHECK(Mount(r.plan, "/dev/infiniband/uverbs0") != nullptr);
    CHECK(Mount(r.plan, "/dev/knem") != nullptr);
    CHECK(Mount(r.plan, "/usr/bin/zf_debug") == nullptr);  // zf not asked
    CHECK(r.plan.skipped ==
          Strings{"/run/onload (condition shrub_controller not met)", "/dev/infiniband/rdma_cm"});
    CHECK(Rules(r.plan) ==
          Strings{"c 231:192 rw", "c 10:57 rw", "c 300:0 rw", "c 301:0 rw", "c 302:0 rw"});
  }

  TEST_CASE("annotations in the OCI state request too") {
    FakeHost host;
    host.Chr("/dev/infiniband/uverbs0", 231, 192);
    Run r;
    r.state.annotations = {{"oci-decorator/OCI_RDMA", "verbs"}};
    r.set.inventories = {Shipped("rdma.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.Active());
    CHECK(Targets(r.plan) == Strings{"/dev/infiniband/uverbs0"});
  }

  TEST_CASE("same target and same source across inventories: merged") {
    FakeHost host;
    host.Chr("/dev/sfc_char", 302, 0).File("/usr/lib64/libshared.so");
    const std::string a =
        R"({"activation_flag":"OCI_A","driver_feature":["f"],"inventory":{"f":{"devices":["sfc_char"],"libraries":["/usr/lib64/libshared.so"]}}})";
    const std::string b =
        R"({"activation_flag":"OCI_B","driver_feature":["g"],"inventory":{"g":{"devices":["/dev/sfc_char"],"libraries":["/usr/lib64/libshared.so"]}}})";
    Run r;
    r.config.env = {"OCI_A=all", "OCI_B=g"};
    r.set.inventories = {Parse(a, kDir + "a.json"), Parse(b, kDir + "b.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.activated.size() == 2);
    CHECK(Targets(r.plan) == Strings{"/dev/sfc_char", "/usr/lib/x86_64-linux-gnu/libshared.so",
                                     "/usr/lib64/libshared.so"});
    CHECK(Rules(r.plan) == Strings{"c 302:0 rw"});
  }

  TEST_CASE("same target with different sources: error") {
    FakeHost host;
    host.File("/opt/a/libx.so").File("/opt/b/libx.so");
    const std::string a =
        R"({"activation_flag":"OCI_A","driver_feature":["f"],"inventory":{"f":{"libraries":[{"source":"/opt/a/libx.so","target":"/usr/lib/libx.so"}]}}})";
    const std::string b =
        R"({"activation_flag":"OCI_B","driver_feature":["f"],"inventory":{"f":{"libraries":[{"source":"/opt/b/libx.so","target":"/usr/lib/libx.so"}]}}})";
    Run r;
    r.config.env = {"OCI_A=all", "OCI_B=all"};
    r.set.inventories = {Parse(a, kDir + "a.json"), Parse(b, kDir + "b.json")};
    CHECK_FALSE(r.Go(host));
    const std::string line = r.err.Line();
    CAPTURE(line);
    CHECK(Contains(line, "/usr/lib/libx.so"));
    CHECK(Contains(line, "/opt/a/libx.so"));
    CHECK(Contains(line, "/opt/b/libx.so"));
    CHECK(Contains(line, kDir + "a.json"));
    CHECK(Contains(line, kDir + "b.json"));

    // Only one of them asked: fine.
    Run r2;
    r2.config.env = {"OCI_B=all"};
    r2.set.inventories = r.set.inventories;
    REQUIRE_MESSAGE(r2.Go(host), r2.err.Line());
    REQUIRE(r2.plan.mounts.size() == 1);
    CHECK(r2.plan.mounts[0].source == "/opt/b/libx.so");
    CHECK(r2.plan.mounts[0].target == "/usr/lib/libx.so");
  }

  TEST_CASE("target and target_dir place mounts") {
    FakeHost host = OnloadHost();
    const std::string inv = R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{
      "libraries":[{"source":"/usr/lib64/libonload_ext.so*","target_dir":"/opt/onload/lib"},
                   {"source":"/usr/lib64/libonload.so","target":"/opt/onload/preload.so"}],
      "preload":["/opt/onload/preload.so"]}}})";
    Run r;
    r.config.env = {"OCI_T=f"};
    r.set.inventories = {Parse(inv, kDir + "t.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(Targets(r.plan) ==
          Strings{"/opt/onload/lib/libonload_ext.so", "/opt/onload/lib/libonload_ext.so.1",
                  "/opt/onload/lib/libonload_ext.so.1.1.0", "/opt/onload/preload.so"});
    const MountOp* m = Mount(r.plan, "/opt/onload/lib/libonload_ext.so.1");
    REQUIRE(m);
    CHECK(m->source == "/usr/lib64/libonload_ext.so.1");
    CHECK(Mount(r.plan, "/opt/onload/preload.so")->source == "/usr/lib64/libonload.so");
    CHECK(r.plan.preload == Strings{"/opt/onload/preload.so"});
  }

  TEST_CASE("preload naming no mounted file is an error") {
    FakeHost host = OnloadHost();
    const std::string inv = R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{
      "libraries":["/usr/lib64/libonload.so"], "preload":["libnothere.so"]}}})";
    Run r;
    r.config.env = {"OCI_T=f"};
    r.set.inventories = {Parse(inv, kDir + "t.json")};
    CHECK_FALSE(r.Go(host));
    CHECK(Contains(r.err.Line(), "libnothere.so"));
    CHECK(Contains(r.err.Line(), kDir + "t.json"));
  }

  TEST_CASE("parents are sorted before children") {
    FakeHost host;
    host.Dir("/opt/vendor")
        .File("/etc/vendor/custom.conf")
        .File("/opt/vendor-tools/x")
        .Dir("/opt/vendor/share", "/srv/share");  // not what /opt/vendor shows there
    // Children listed in an earlier feature than their parents.
    const std::string inv = R"({"activation_flag":"OCI_T","driver_feature":["files","dirs"],
    "inventory":{
      "files":{"miscellaneous":[{"source":"/etc/vendor/custom.conf","target":"/opt/vendor/share/custom.conf"},
                                "/opt/vendor-tools/x"]},
      "dirs":{"directories":["/opt/vendor/share","/opt/vendor"]}}})";
    Run r;
    r.config.env = {"OCI_T=all"};
    r.set.inventories = {Parse(inv, kDir + "t.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    Strings t = Targets(r.plan);
    REQUIRE(t.size() == 4);
    auto pos = [&](const std::string& s) { return std::find(t.begin(), t.end(), s) - t.begin(); };
    CHECK(pos("/opt/vendor") < pos("/opt/vendor/share"));
    CHECK(pos("/opt/vendor/share") < pos("/opt/vendor/share/custom.conf"));
    for (size_t i = 0; i < t.size(); ++i)
      for (size_t j = i + 1; j < t.size(); ++j) {
        CAPTURE(t[i]);
        CAPTURE(t[j]);
        CHECK_FALSE(t[i].rfind(t[j] + "/", 0) == 0);  // no child before its parent
      }
  }

  TEST_CASE("a file a directory entry already provides is elided") {
    FakeHost host = OnloadHost();
    host.File("/usr/libexec/onload/profiles/latency-best.opf");
    const std::string inv = R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{
      "directories":["/usr/libexec/onload/profiles"],
      "miscellaneous":["/usr/libexec/onload/profiles/latency.opf",
                       "/usr/libexec/onload/profiles/latency-best.opf"]}}})";
    Run r;
    r.config.env = {"OCI_T=all"};
    r.set.inventories = {Parse(inv, kDir + "t.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(Targets(r.plan) == Strings{"/usr/libexec/onload/profiles"});
  }

  TEST_CASE("a file whose resolved path is outside the directory is not elided") {
    FakeHost host;
    host.Dir("/usr/lib64/vendor")
        .File("/usr/lib64/vendor/libv.so", "/opt/vendor/lib/libv.so.1")
        .File("/usr/lib64/vendor/libw.so");
    // (miscellaneous: a library entry would go by name to the library
    // directories, "library entries go by name ..." below.)
    const std::string inv = R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{
      "directories":["/usr/lib64/vendor"],
      "miscellaneous":["/usr/lib64/vendor/libv.so", "/usr/lib64/vendor/libw.so"]}}})";
    Run r;
    r.config.env = {"OCI_T=all"};
    r.set.inventories = {Parse(inv, kDir + "t.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(Targets(r.plan) == Strings{"/usr/lib64/vendor", "/usr/lib64/vendor/libv.so"});
    CHECK(Mount(r.plan, "/usr/lib64/vendor/libv.so")->resolved == "/opt/vendor/lib/libv.so.1");
  }

  TEST_CASE("a file placed inside a directory mount from elsewhere is kept") {
    FakeHost host = OnloadHost();
    host.File("/etc/custom.opf");
    const std::string inv = R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{
      "directories":["/usr/libexec/onload/profiles"],
      "miscellaneous":[{"source":"/etc/custom.opf","target":"/usr/libexec/onload/profiles/custom.opf"}]}}})";
    Run r;
    r.config.env = {"OCI_T=all"};
    r.set.inventories = {Parse(inv, kDir + "t.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(Targets(r.plan) ==
          Strings{"/usr/libexec/onload/profiles", "/usr/libexec/onload/profiles/custom.opf"});
  }

  // oci-decorator.json(5): "different files for one target are an error". That
  // must hold whatever the entry order, also when one of the two is a file the
  // directory mount already provides.
  TEST_CASE("conflicting target is an error even when one side is elided by a directory") {
    FakeHost host;
    host.Dir("/opt/d").File("/opt/d/x").File("/etc/other-x");
    SUBCASE("elided entry first") {
      const std::string inv =
          R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{
        "directories":["/opt/d"],
        "miscellaneous":["/opt/d/x", {"source":"/etc/other-x","target":"/opt/d/x"}]}}})";
      Run r;
      r.config.env = {"OCI_T=all"};
      r.set.inventories = {Parse(inv, kDir + "t.json")};
      CHECK_FALSE(r.Go(host));
      CHECK(Contains(r.err.Line(), "/opt/d/x"));
    }
    SUBCASE("elided entry second") {
      const std::string inv =
          R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{
        "directories":["/opt/d"],
        "miscellaneous":[{"source":"/etc/other-x","target":"/opt/d/x"}, "/opt/d/x"]}}})";
      Run r;
      r.config.env = {"OCI_T=all"};
      r.set.inventories = {Parse(inv, kDir + "t.json")};
      CHECK_FALSE(r.Go(host));
      CHECK(Contains(r.err.Line(), "/opt/d/x"));
    }
  }

  TEST_CASE("seed NVIDIA inventory: libraries under the directory mounted once, with it") {
    FakeHost host;
    host.Chr("/dev/nvidia0", 195, 0)
        .Chr("/dev/nvidiactl", 195, 255)
        .Chr("/dev/nvidia-uvm", 507, 0)
        .Chr("/dev/nvidia-uvm-tools", 507, 1)
        .File("/usr/bin/nvidia-cuda-mps-control")
        .File("/usr/bin/nvidia-cuda-ms-server")
        .Dir("/usr/lib64/nvidia")
        .File("/usr/lib64/nvidia/libcuda.so")
        .File("/usr/lib64/nvidia/libcuda.so.396.26")
        .File("/usr/lib64/nvidia/libnvidia-opencl.so.396.26")
        .File("/usr/lib64/nvidia/libnvidia-ptxjitcompiler.so.396.26")
        .File("/usr/lib64/nvidia/libnvidia-fatbinaryloader.so.396.26")
        .File("/usr/lib64/nvidia/libnvidia-compiler.so.396.26")
        .File("/etc/ld.so.conf.d/nvidia-lib64.conf");
    const std::string seed = R"({
    "version": "396.26", "log_level": "LOG_DEBUG", "activation_flag": "OCI_NVIDIA",
    "driver_feature": ["compute"],
    "inventory": {"compute": {
      "devices": ["nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"],
      "binaries": ["/usr/bin/nvidia-cuda-mps-control", "/usr/bin/nvidia-cuda-ms-server"],
      "libraries": ["/usr/lib64/nvidia/libcuda.so", "/usr/lib64/nvidia/libcuda.so.396.26",
                    "/usr/lib64/nvidia/libnvidia-opencl.so.396.26",
                    "/usr/lib64/nvidia/libnvidia-ptxjitcompiler.so.396.26",
                    "/usr/lib64/nvidia/libnvidia-fatbinaryloader.so.396.26",
                    "/usr/lib64/nvidia/libnvidia-compiler.so.396.26"],
      "directories": ["/usr/lib64/nvidia"],
      "miscellaneous": ["/etc/ld.so.conf.d/nvidia-lib64.conf"]}}})";
    Run r;
    r.config.env = {"OCI_NVIDIA=all"};
    r.set.inventories = {Parse(seed, kDir + "oci-nvidia.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    // The libraries go by name where the image's loader looks (the seed's
    // ld.so.conf.d file would need an ldconfig run, which never happens);
    // the directory is mounted as listed.
    Strings libs;
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64"})
      for (const char* name : {"libcuda.so", "libcuda.so.396.26", "libnvidia-compiler.so.396.26",
                               "libnvidia-fatbinaryloader.so.396.26", "libnvidia-opencl.so.396.26",
                               "libnvidia-ptxjitcompiler.so.396.26"})
        libs.push_back(std::string(dir) + "/" + name);
    Strings want = {"/dev/nvidia-uvm",
                    "/dev/nvidia-uvm-tools",
                    "/dev/nvidia0",
                    "/dev/nvidiactl",
                    "/etc/ld.so.conf.d/nvidia-lib64.conf",
                    "/usr/bin/nvidia-cuda-mps-control",
                    "/usr/bin/nvidia-cuda-ms-server"};
    want.insert(want.end(), libs.begin(), libs.end());
    want.push_back("/usr/lib64/nvidia");
    CHECK(Targets(r.plan) == want);
    CHECK(Rules(r.plan) == Strings{"c 507:0 rw", "c 507:1 rw", "c 195:0 rw", "c 195:255 rw"});
  }

  TEST_CASE("broken inventory: fails only containers that request it") {
    FakeHost host = OnloadHost();
    ocid::BrokenInventory broken;
    broken.file = kDir + "broken.json";
    broken.activation_flag = "OCI_BROKEN";
    ocid::Fail(&broken.error, "invalid inventory " + broken.file, "\"inventory.f.x\" unknown key");

    SUBCASE("requested by env") {
      Run r;
      r.config.env = {"OCI_BROKEN=all", "OCI_ONLOAD=zf"};
      r.set.inventories = {Shipped("onload.json")};
      r.set.broken = {broken};
      CHECK_FALSE(r.Go(host));
      CHECK(r.err.Line() == broken.error.Line());
    }
    SUBCASE("requested by annotation") {
      Run r;
      r.config.annotations = {{"oci-decorator/OCI_BROKEN", "f"}};
      r.set.broken = {broken};
      CHECK_FALSE(r.Go(host));
      CHECK(Contains(r.err.Line(), kDir + "broken.json"));
    }
    SUBCASE("not requested") {
      Run r;
      r.config.env = {"OCI_ONLOAD=zf", "XOCI_BROKEN=all"};
      r.set.inventories = {Shipped("onload.json")};
      r.set.broken = {broken};
      REQUIRE_MESSAGE(r.Go(host), r.err.Line());
      CHECK(r.plan.activated.size() == 1);
    }
    SUBCASE("explicitly off") {
      Run r;
      r.config.env = {"OCI_BROKEN=none"};
      r.config.annotations = {{"oci-decorator/OCI_BROKEN", "false"}};
      r.set.broken = {broken};
      REQUIRE_MESSAGE(r.Go(host), r.err.Line());
      CHECK_FALSE(r.plan.Active());
    }
    SUBCASE("flag could not be salvaged: never fails anyone") {
      ocid::BrokenInventory anon = broken;
      anon.activation_flag.clear();
      Run r;
      r.config.env = {"OCI_BROKEN=all"};
      r.set.broken = {anon};
      REQUIRE_MESSAGE(r.Go(host), r.err.Line());
      CHECK_FALSE(r.plan.Active());
    }
  }

  TEST_CASE("unknown feature requested: error naming it and the inventory") {
    FakeHost host = OnloadHost();
    Run r;
    r.config.env = {"OCI_ONLOAD=onload,tcpdirect"};
    r.set.inventories = {Shipped("onload.json")};
    CHECK_FALSE(r.Go(host));
    CHECK(Contains(r.err.Line(), "\"tcpdirect\""));
    CHECK(Contains(r.err.Line(), kDir + "onload.json"));
    CHECK(Contains(r.err.Line(), "zf"));
  }

  TEST_CASE("a host I/O failure is reported, not treated as missing") {
    FakeHost host = OnloadHost();
    host.FailOn("/usr/lib64/libonload.so*");
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    CHECK_FALSE(r.Go(host));
    CHECK(r.err.errnum == EIO);
    CHECK(r.err.path == "/usr/lib64/libonload.so*");
  }

  TEST_CASE("rootfs from crun's state root") {
    FakeHost host;
    Run r;
    r.state.root = "/var/lib/crun/ctr1/merged";
    REQUIRE(r.Go(host));
    CHECK(r.plan.rootfs == "/var/lib/crun/ctr1/merged");
  }

  TEST_CASE("ProcessOnHost: process.user through the id mappings") {
    using ocid::HostCredentials;
    using ocid::ProcessOnHost;
    const uint32_t kNone = HostCredentials::kUnmapped;
    BundleConfig cfg;
    cfg.uid = 1000;
    cfg.gid = 100;
    cfg.additional_gids = {27, 5};
    // No user namespace: the ids are the host's.
    HostCredentials c = ProcessOnHost(cfg);
    CHECK(c.uid == 1000);
    CHECK(c.gid == 100);
    CHECK(c.groups == std::vector<uint32_t>{27, 5});
    // A new user namespace: mapped; ids no mapping covers are no one's.
    cfg.namespaces = {{"user", ""}, {"mount", ""}};
    cfg.uid_mappings = {{0, 100000, 65536}};
    cfg.gid_mappings = {{0, 100000, 50}};
    c = ProcessOnHost(cfg);
    CHECK(c.uid == 101000);
    CHECK(c.gid == kNone);
    CHECK(c.groups == std::vector<uint32_t>{100027, 100005});
    cfg.uid = 0;
    CHECK(ProcessOnHost(cfg).uid == 100000);  // container root is not host root
    // A joined user namespace: config.json gives no mappings, ids unknown.
    cfg.namespaces = {{"user", "/proc/42/ns/user"}};
    cfg.uid_mappings.clear();
    cfg.gid_mappings.clear();
    c = ProcessOnHost(cfg);
    CHECK(c.uid == kNone);
    CHECK(c.gid == kNone);
    CHECK(c.groups.empty());
  }

  // Issue 28: libraries go where the image's loader looks, by name.
  TEST_CASE("libraries: a Debian image seen gets them in its libc directory only") {
    FakeHost host = OnloadHost();  // a RHEL-layout host
    Run r;
    r.config.env = {"OCI_ONLOAD=all"};
    r.set.inventories = {Shipped("onload.json")};
    r.libraries = ocid::ImageLibraryDirs("/lib/x86_64-linux-gnu");
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    Strings libs;
    for (const auto& m : r.plan.mounts)
      if (m.library) libs.push_back(m.target);
    CHECK(libs == Strings{"/lib/x86_64-linux-gnu/libonload.so",
                          "/lib/x86_64-linux-gnu/libonload_ext.so",
                          "/lib/x86_64-linux-gnu/libonload_ext.so.1",
                          "/lib/x86_64-linux-gnu/libonload_ext.so.1.1.0",
                          "/lib/x86_64-linux-gnu/libonload_zf.so",
                          "/lib/x86_64-linux-gnu/libonload_zf.so.1.1.1"});
    for (const auto& m : r.plan.mounts) {
      CAPTURE(m.target);
      CHECK(m.target.rfind("/usr/lib64/", 0) != 0);  // not the host's place
    }
    CHECK(Mount(r.plan, "/lib/x86_64-linux-gnu/libonload_ext.so.1")->source ==
          "/usr/lib64/libonload_ext.so.1");
    CHECK(Mount(r.plan, "/lib/x86_64-linux-gnu/libonload_ext.so.1")->resolved ==
          "/usr/lib64/libonload_ext.so.1.1.0");
    CHECK(r.plan.preload == Strings{"/lib/x86_64-linux-gnu/libonload.so"});
    CHECK(r.plan.library_dirs.dirs == Strings{"/lib/x86_64-linux-gnu"});
    CHECK(r.plan.library_dirs.why == "the image's libc.so.6 is in /lib/x86_64-linux-gnu");
    // Binaries, devices and directories stay at their paths.
    CHECK(Mount(r.plan, "/usr/bin/onload") != nullptr);
    CHECK(Mount(r.plan, "/usr/libexec/onload/profiles") != nullptr);
    CHECK(Mount(r.plan, "/dev/onload") != nullptr);
  }

  TEST_CASE("libraries: a RHEL image seen on a Debian host gets them in /usr/lib64") {
    FakeHost host;
    host.Chr("/dev/onload", 240, 0)
        .Chr("/dev/onload_epoll", 241, 0)
        .Chr("/dev/sfc_char", 242, 0)
        .File("/usr/bin/onload")
        .File("/usr/bin/onload_stackdump")
        .File("/sbin/onload_tool")
        .File("/usr/lib/x86_64-linux-gnu/libonload.so")
        .File("/usr/lib/x86_64-linux-gnu/libonload_ext.so",
              "/usr/lib/x86_64-linux-gnu/libonload_ext.so.1.1.0")
        .File("/usr/lib/x86_64-linux-gnu/libonload_ext.so.1.1.0")
        .Dir("/usr/libexec/onload/profiles");
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    r.libraries = ocid::ImageLibraryDirs("/usr/lib64");
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(Targets(r.plan) ==
          Strings{"/dev/onload", "/dev/onload_epoll", "/dev/sfc_char", "/sbin/onload_tool",
                  "/usr/bin/onload", "/usr/bin/onload_stackdump", "/usr/lib64/libonload.so",
                  "/usr/lib64/libonload_ext.so", "/usr/lib64/libonload_ext.so.1.1.0",
                  "/usr/libexec/onload/profiles"});
    CHECK(Mount(r.plan, "/usr/lib64/libonload_ext.so")->source ==
          "/usr/lib/x86_64-linux-gnu/libonload_ext.so");
    CHECK(r.plan.preload == Strings{"/usr/lib64/libonload.so"});
  }

  TEST_CASE("libraries: the image not seen gets both standard directories, preload the first") {
    FakeHost host = OnloadHost();
    Run r;
    r.config.env = {"OCI_ONLOAD=onload"};
    r.set.inventories = {Shipped("onload.json")};
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.library_dirs.dirs == Strings{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
    CHECK(Contains(r.plan.library_dirs.why, "one answer for every image"));
    for (const char* t : {"/usr/lib/x86_64-linux-gnu/libonload.so", "/usr/lib64/libonload.so"}) {
      CAPTURE(t);
      REQUIRE(Mount(r.plan, t));
      CHECK(Mount(r.plan, t)->source == "/usr/lib64/libonload.so");
      CHECK(Mount(r.plan, t)->library);
    }
    CHECK(r.plan.preload == Strings{"/usr/lib/x86_64-linux-gnu/libonload.so"});

    // The same for a plan for no container (CDI, the device plugin).
    Plan p;
    Error err;
    REQUIRE_MESSAGE(ocid::BuildInventoryPlan(Shipped("onload.json"), {"onload"}, host, &p, &err),
                    err.Line());
    CHECK(p.library_dirs.dirs == Strings{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
    CHECK(p.preload == Strings{"/usr/lib/x86_64-linux-gnu/libonload.so"});
    CHECK(Mount(p, "/usr/lib64/libonload_ext.so.1") != nullptr);
    CHECK(Mount(p, "/usr/lib/x86_64-linux-gnu/libonload_ext.so.1") != nullptr);
  }

  TEST_CASE("libraries: an image without glibc gets the pair and one warning per inventory") {
    FakeHost host = OnloadHost();
    host.Chr("/dev/infiniband/uverbs0", 231, 192).Chr("/dev/knem", 10, 57);
    Run r;
    r.config.env = {"OCI_ONLOAD=all"};
    r.set.inventories = {Shipped("onload.json")};
    r.libraries = ocid::NoGlibcLibraryDirs();
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.library_dirs.dirs == Strings{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
    CHECK(Mount(r.plan, "/usr/lib64/libonload_zf.so") != nullptr);
    Strings glibc;
    for (const auto& w : r.plan.warnings)
      if (Contains(w, "glibc")) glibc.push_back(w);
    REQUIRE(glibc.size() == 1);
    CHECK(Contains(glibc[0], kDir + "onload.json"));
    CHECK(Contains(glibc[0], "the image has no glibc"));
    CHECK(Contains(glibc[0], "/lib/x86_64-linux-gnu"));  // where it looked
    CHECK(Contains(glibc[0], "dynamically linked glibc program"));

    // A plan that mounts no library says nothing about glibc.
    Run devices_only;
    devices_only.config.env = {"OCI_RDMA=verbs"};
    devices_only.set.inventories = {Shipped("rdma.json")};
    devices_only.libraries = ocid::NoGlibcLibraryDirs();
    REQUIRE_MESSAGE(devices_only.Go(host), devices_only.err.Line());
    CHECK(devices_only.plan.Active());
    CHECK(devices_only.plan.warnings.empty());

    // A library placed by the inventory itself is not the planner's to warn about.
    Run placed;
    placed.config.env = {"OCI_T=f"};
    placed.set.inventories = {Parse(R"({"activation_flag":"OCI_T","driver_feature":["f"],
      "inventory":{"f":{"libraries":[{"source":"/usr/lib64/libonload.so","target_dir":"/opt/lib"}]}}})",
                                    kDir + "t.json")};
    placed.libraries = ocid::NoGlibcLibraryDirs();
    REQUIRE_MESSAGE(placed.Go(host), placed.err.Line());
    CHECK(Targets(placed.plan) == Strings{"/opt/lib/libonload.so"});
    CHECK(placed.plan.warnings.empty());

    // Not asked: no plan, no warning.
    Run none;
    none.set.inventories = {Shipped("onload.json")};
    none.libraries = ocid::NoGlibcLibraryDirs();
    REQUIRE_MESSAGE(none.Go(host), none.err.Line());
    CHECK(none.plan.warnings.empty());
  }

  TEST_CASE("libraries: an image that could not be looked at gets the pair and a warning") {
    FakeHost host = OnloadHost();
    Run r;
    r.config.env = {"OCI_ONLOAD=zf"};
    r.set.inventories = {Shipped("onload.json")};
    r.libraries = ocid::UnseenLibraryDirs("the image could not be looked at");
    r.libraries.probe_error =
        "cannot look for the image's libc.so.6: /usr/lib64: Permission denied";
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.library_dirs.dirs == Strings{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
    Strings probe;
    for (const auto& w : r.plan.warnings)
      if (Contains(w, "libc.so.6")) probe.push_back(w);
    REQUIRE(probe.size() == 1);
    CHECK(Contains(probe[0], kDir + "onload.json"));
    CHECK(Contains(probe[0], "Permission denied"));
    CHECK(Contains(probe[0], "/usr/lib/x86_64-linux-gnu and /usr/lib64"));
    CHECK_FALSE(Contains(probe[0], "no glibc"));
  }

  TEST_CASE("libraries: target and target_dir, and other categories, keep their places") {
    FakeHost host = OnloadHost();
    host.File("/usr/lib64/libvendor.conf");
    const std::string inv = R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{
      "libraries":[{"source":"/usr/lib64/libonload_ext.so*","target_dir":"/usr/lib64"},
                   {"source":"/usr/lib64/libonload.so","target":"/opt/onload/preload.so"}],
      "miscellaneous":["/usr/lib64/libvendor.conf"],
      "binaries":["/usr/lib64/libonload_zf.so"],
      "preload":["libonload_ext.so"]}}})";
    Run r;
    r.config.env = {"OCI_T=f"};
    r.set.inventories = {Parse(inv, kDir + "t.json")};
    r.libraries = ocid::ImageLibraryDirs("/lib/x86_64-linux-gnu");
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(Targets(r.plan) == Strings{"/opt/onload/preload.so", "/usr/lib64/libonload_ext.so",
                                     "/usr/lib64/libonload_ext.so.1",
                                     "/usr/lib64/libonload_ext.so.1.1.0",
                                     "/usr/lib64/libonload_zf.so", "/usr/lib64/libvendor.conf"});
    for (const auto& m : r.plan.mounts) CHECK_FALSE(m.library);
    CHECK(r.plan.preload == Strings{"/usr/lib64/libonload_ext.so"});
  }

  TEST_CASE("libraries: a library inside a directory the inventory mounts still goes by name") {
    FakeHost host;
    host.Dir("/usr/lib64/vendor").File("/usr/lib64/vendor/libv.so");
    const std::string inv = R"({"activation_flag":"OCI_T","driver_feature":["f"],"inventory":{"f":{
      "directories":["/usr/lib64/vendor"], "libraries":["/usr/lib64/vendor/libv.so"]}}})";
    Run r;
    r.config.env = {"OCI_T=all"};
    r.set.inventories = {Parse(inv, kDir + "t.json")};
    r.libraries = ocid::ImageLibraryDirs("/usr/lib64");
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(Targets(r.plan) == Strings{"/usr/lib64/libv.so", "/usr/lib64/vendor"});
  }

  TEST_CASE("libraries: one name from two host files in two inventories is a clear conflict") {
    FakeHost host;
    host.File("/usr/lib64/libshared.so").File("/opt/b/lib/libshared.so");
    const std::string a =
        R"({"activation_flag":"OCI_A","driver_feature":["f"],"inventory":{"f":{"libraries":["/usr/lib64/libshared.so"]}}})";
    const std::string b =
        R"({"activation_flag":"OCI_B","driver_feature":["g"],"inventory":{"g":{"libraries":["/opt/b/lib/libshared.so"]}}})";
    Run r;
    r.config.env = {"OCI_A=all", "OCI_B=all"};
    r.set.inventories = {Parse(a, kDir + "a.json"), Parse(b, kDir + "b.json")};
    r.libraries = ocid::ImageLibraryDirs("/lib/x86_64-linux-gnu");
    CHECK_FALSE(r.Go(host));
    const std::string line = r.err.Line();
    CAPTURE(line);
    CHECK(Contains(line, "/lib/x86_64-linux-gnu/libshared.so"));
    CHECK(Contains(line, "/usr/lib64/libshared.so (" + kDir + "a.json)"));
    CHECK(Contains(line, "/opt/b/lib/libshared.so (" + kDir + "b.json)"));
    CHECK(Contains(line, "only one file of a name"));
    CHECK(Contains(line, "target_dir"));

    // Either alone is fine.
    Run one;
    one.config.env = {"OCI_B=all"};
    one.set.inventories = r.set.inventories;
    one.libraries = r.libraries;
    REQUIRE_MESSAGE(one.Go(host), one.err.Line());
    CHECK(Targets(one.plan) == Strings{"/lib/x86_64-linux-gnu/libshared.so"});
  }

}  // TEST_SUITE

// ---- conditions, create_if and groups (issue 30), on the fake host of
// fake_host.h, which reads file contents.
namespace {

using ShrubHost = ocid_test::FakeHost;

// Two features naming the same create_if directory and group, as the
// shipped onload.json's onload and zf do.
const char kShrubInventory[] = R"({
  "activation_flag": "OCI_T", "driver_feature": ["a", "b"],
  "conditions": {"c": {"exists_named_in": ["/sys/p"]}},
  "inventory": {
    "a": {"directories": [{"source": "/run/x", "optional": true, "create_if": "c"}],
          "groups": [{"gid_file": "/sys/gid", "mode_file": "/sys/mode", "default_mode": "0666",
                      "optional": true}]},
    "b": {"directories": [{"source": "/run/x", "optional": true, "create_if": "c"}],
          "groups": [{"gid_file": "/sys/gid", "mode_file": "/sys/mode", "default_mode": "0666",
                      "optional": true}]}
  }
})";

bool PlanShrub(const ShrubHost& host, Plan* p, Error* err,
               const std::string& json = kShrubInventory, const Strings& features = {"a", "b"}) {
  return ocid::BuildInventoryPlan(Parse(json, kDir + "t.json"), features, host, p, err);
}

}  // namespace

TEST_SUITE("planner: conditions and create_if") {
  TEST_CASE("not met: no named file, a named path missing, a relative or empty name") {
    for (const char* content : {"", "/usr/sbin/ctl\n", "usr/sbin/ctl\n", "\n/usr/sbin/ctl\n"}) {
      ShrubHost host;
      if (*content) host.Content("/sys/p", content);
      CAPTURE(content);
      Plan p;
      Error err;
      REQUIRE_MESSAGE(PlanShrub(host, &p, &err), err.Line());
      CHECK(p.mounts.empty());
      CHECK(p.skipped == Strings{"/run/x (condition c not met)"});  // once for both
      CHECK(p.met_conditions.empty());
    }
  }

  TEST_CASE("met: a missing directory becomes one create mount for both features") {
    ShrubHost host;
    host.Content("/sys/p", "/usr/sbin/ctl \n").File("/usr/sbin/ctl");
    Plan p;
    Error err;
    REQUIRE_MESSAGE(PlanShrub(host, &p, &err), err.Line());
    REQUIRE(p.mounts.size() == 1);
    const MountOp& m = p.mounts[0];
    CHECK(m.create);
    CHECK(m.type == FileType::kDirectory);
    CHECK(m.source == "/run/x");
    CHECK(m.target == "/run/x");
    CHECK(m.resolved.empty());
    CHECK(m.dev == 0);
    CHECK(m.ino == 0);
    CHECK(m.readonly);
    CHECK(m.nodev);
    CHECK(m.nosuid);
    CHECK(m.feature == "a");
    CHECK(p.skipped.empty());
    CHECK(p.met_conditions == Strings{"c"});
  }

  TEST_CASE("exists: met by a path that exists") {
    const std::string json = R"({"activation_flag":"OCI_T","driver_feature":["a"],
      "conditions":{"c":{"exists":["/nope","/etc/ctl"]},"d":{"exists":"/nope"}},
      "inventory":{"a":{"directories":[{"source":"/run/x","create_if":"c"}]}}})";
    ShrubHost host;
    host.File("/etc/ctl");
    Plan p;
    Error err;
    REQUIRE_MESSAGE(PlanShrub(host, &p, &err, json, {"a"}), err.Line());
    REQUIRE(p.mounts.size() == 1);
    CHECK(p.mounts[0].create);
    CHECK(p.met_conditions == Strings{"c"});
  }

  TEST_CASE("an existing directory is mounted whatever the condition says") {
    ShrubHost host;
    host.Dir("/run/x");
    Plan p;
    Error err;
    REQUIRE_MESSAGE(PlanShrub(host, &p, &err), err.Line());
    REQUIRE(p.mounts.size() == 1);
    CHECK_FALSE(p.mounts[0].create);
    CHECK(p.mounts[0].ino != 0);
    CHECK(p.warnings.empty());
    // One that others can write is mounted, with a warning.
    host.Perm("/run/x", 0777);
    REQUIRE_MESSAGE(PlanShrub(host, &p, &err), err.Line());
    REQUIRE(p.mounts.size() == 1);
    REQUIRE(p.warnings.size() == 1);  // once for both entries
    CHECK(Contains(p.warnings[0], "/run/x is writable by others (mode 0777)"));
    host.Perm("/run/x", 01777);
    REQUIRE_MESSAGE(PlanShrub(host, &p, &err), err.Line());
    CHECK(p.warnings.empty());
  }

  TEST_CASE("a required entry whose condition is not met fails, saying so") {
    const std::string json = R"({"activation_flag":"OCI_T","driver_feature":["a"],
      "conditions":{"c":{"exists":"/nope"}},
      "inventory":{"a":{"directories":[{"source":"/run/x","create_if":"c"}]}}})";
    ShrubHost host;
    Plan p;
    Error err;
    CHECK_FALSE(PlanShrub(host, &p, &err, json, {"a"}));
    CHECK(Contains(err.Line(), "/run/x (condition c not met)"));
  }

  TEST_CASE("a condition file that cannot be read fails the plan that needs it") {
    ShrubHost host;
    host.Dir("/sys/p");  // not a regular file: a read error, not a missing file
    Plan p;
    Error err;
    CHECK_FALSE(PlanShrub(host, &p, &err));
    CHECK(Contains(err.Line(), "/sys/p"));
    // Not needed (the directory exists): the plan goes on.
    host.Dir("/run/x");
    CHECK(PlanShrub(host, &p, &err));
    CHECK(p.met_conditions.empty());
  }

  TEST_CASE("a create mount conflicts with another source at the same target") {
    const std::string json = R"({"activation_flag":"OCI_T","driver_feature":["a","b"],
      "conditions":{"c":{"exists":"/etc/ctl"}},
      "inventory":{"a":{"directories":[{"source":"/run/x","create_if":"c"}]},
                   "b":{"directories":[{"source":"/srv/y","target":"/run/x"}]}}})";
    ShrubHost host;
    host.File("/etc/ctl").Dir("/srv/y");
    Plan p;
    Error err;
    CHECK_FALSE(PlanShrub(host, &p, &err, json, {"a", "b"}));
    CHECK(Contains(err.Line(), "same container path with different sources"));
    CHECK(PlanShrub(host, &p, &err, json, {"a"}));
    CHECK(PlanShrub(host, &p, &err, json, {"b"}));
  }

  TEST_CASE("condition unmet on a host without the file: evaluated once per plan") {
    ShrubHost host;
    host.Content("/sys/p", "/usr/sbin/ctl");
    Plan p;
    Error err;
    REQUIRE(PlanShrub(host, &p, &err));
    CHECK(host.reads_of["/sys/p"] == 1);
  }

  TEST_CASE("EvaluateCondition says what met it") {
    ocid::HostCondition c;
    c.name = "c";
    c.exists_named_in = {"/sys/p"};
    ShrubHost host;
    host.Content("/sys/p", "/usr/sbin/ctl\n").File("/usr/sbin/ctl");
    std::string by;
    Error err;
    CHECK(ocid::EvaluateCondition(c, host, &by, &err) == ocid::ConditionState::kMet);
    CHECK(by == "/usr/sbin/ctl");
    host.Remove("/usr/sbin/ctl");
    CHECK(ocid::EvaluateCondition(c, host, &by, &err) == ocid::ConditionState::kNotMet);
  }
}

TEST_SUITE("planner: groups") {
  ShrubHost GroupHost(const std::string& gid, const std::string& mode) {
    ShrubHost host;
    host.Dir("/run/x");
    if (!gid.empty()) host.Content("/sys/gid", gid);
    if (!mode.empty()) host.Content("/sys/mode", mode);
    return host;
  }

  TEST_CASE("gid 0 is no group; a default mode gives others access: not required") {
    Plan p;
    Error err;
    REQUIRE(PlanShrub(GroupHost("0\n", "432\n"), &p, &err));
    CHECK(p.groups.empty());
    REQUIRE(PlanShrub(GroupHost("4242\n", "0\n"), &p, &err));
    REQUIRE(p.groups.size() == 1);  // merged: both features name it
    CHECK(p.groups[0].gid == 4242);
    CHECK(p.groups[0].mode == 0666);
    CHECK(p.groups[0].mode_known);
    CHECK_FALSE(p.groups[0].required);
    CHECK(p.groups[0].gid_file == "/sys/gid");
    CHECK(p.groups[0].feature == "a");
    CHECK(ocid::HookModeWarnings(p).empty());
    REQUIRE(PlanShrub(GroupHost("4242\n", ""), &p, &err));  // mode file missing: default
    CHECK(p.groups[0].mode == 0666);
    CHECK_FALSE(p.groups[0].required);
  }

  TEST_CASE("a mode giving others nothing makes the group required; sysfs shows decimal") {
    Plan p;
    Error err;
    REQUIRE(PlanShrub(GroupHost("4242\n", "432\n"), &p, &err));
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].mode == 0660);
    CHECK(p.groups[0].required);
    CHECK_FALSE(p.groups[0].present);
    auto w = ocid::HookModeWarnings(p);
    REQUIRE(w.size() == 1);
    CHECK(w[0] ==
          "group 4242 (/sys/gid; client mode 0660 admits no others) is not among the container's "
          "groups: start it with --group-add 4242 (docker, podman) or "
          "securityContext.supplementalGroups [4242] (Kubernetes), or use the runtime shim or CDI");
    p.groups[0].present = true;
    CHECK(ocid::HookModeWarnings(p).empty());
  }

  TEST_CASE("an unknown mode makes a group required") {
    const std::string json = R"({"activation_flag":"OCI_T","driver_feature":["a"],
      "inventory":{"a":{"groups":[{"gid_file":"/sys/gid"}]}}})";
    Plan p;
    Error err;
    REQUIRE(PlanShrub(GroupHost("7\n", ""), &p, &err, json, {"a"}));
    REQUIRE(p.groups.size() == 1);
    CHECK_FALSE(p.groups[0].mode_known);
    CHECK(p.groups[0].required);
    auto w = ocid::HookModeWarnings(p);
    REQUIRE(w.size() == 1);
    CHECK(Contains(w[0], "client mode unknown"));
  }

  TEST_CASE("missing and unreadable group files") {
    Plan p;
    Error err;
    REQUIRE(PlanShrub(GroupHost("", ""), &p, &err));  // optional: none
    CHECK(p.groups.empty());
    const std::string required = R"({"activation_flag":"OCI_T","driver_feature":["a"],
      "inventory":{"a":{"groups":[{"gid_file":"/sys/gid"}]}}})";
    CHECK_FALSE(PlanShrub(GroupHost("", ""), &p, &err, required, {"a"}));
    CHECK(Contains(err.Line(), "required group file not found"));
    CHECK(Contains(err.Line(), "/sys/gid"));
    for (const char* bad : {"abc\n", "-1\n", "4294967295\n", "12 34\n", "\n"}) {
      CAPTURE(bad);
      CHECK_FALSE(PlanShrub(GroupHost(bad, ""), &p, &err));
      CHECK(Contains(err.Line(), "does not hold a decimal group id"));
      CHECK(Contains(err.Line(), "t.json"));
    }
    for (const char* bad : {"rw\n", "0660x\n", "99999\n"}) {
      CAPTURE(bad);
      CHECK_FALSE(PlanShrub(GroupHost("4242\n", bad), &p, &err));
      CHECK(Contains(err.Line(), "/sys/mode"));
    }
  }

  TEST_CASE("present: the process's gid or additional gids, mapped to the host") {
    ShrubHost host = GroupHost("104242\n", "432\n");
    OciState state;
    state.id = "c1";
    state.pid = 1;
    state.status = "creating";
    state.bundle = "/run/b";
    BundleConfig config;
    config.root_path = "rootfs";
    config.env = {"OCI_T=all"};
    InventorySet set;
    set.inventories.push_back(Parse(kShrubInventory, kDir + "t.json"));
    auto plan = [&](Plan* p) {
      PlanInputs in;
      in.state = &state;
      in.config = &config;
      in.inventories = &set;
      in.host = &host;
      Error err;
      REQUIRE_MESSAGE(BuildPlan(in, p, &err), err.Line());
      REQUIRE(p->groups.size() == 1);
    };
    Plan p;
    plan(&p);
    CHECK_FALSE(p.groups[0].present);
    config.additional_gids = {104242};
    plan(&p);
    CHECK(p.groups[0].present);
    CHECK(ocid::HookModeWarnings(p).empty());
    config.additional_gids = {};
    config.gid = 104242;
    plan(&p);
    CHECK(p.groups[0].present);
    // In a user namespace: container gid 4242 is host 104242.
    config.gid = 0;
    config.additional_gids = {4242};
    ocid::NamespaceEntry userns;
    userns.type = "user";
    config.namespaces = {userns};
    config.uid_mappings = {{0, 100000, 65536}};
    config.gid_mappings = {{0, 100000, 65536}};
    plan(&p);
    CHECK(p.groups[0].present);
    config.gid_mappings = {{0, 200000, 65536}};
    plan(&p);
    CHECK_FALSE(p.groups[0].present);
  }
}
