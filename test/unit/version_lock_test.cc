// The version lock: parsing the inventory key, finding the banner in a
// library's bytes (whole or in chunks), and CheckVersions on fake host trees
// and on a real host root (HostRootView::ReadChunks).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bundle_config.h"
#include "cdi.h"
#include "cluster.h"
#include "fake_host.h"
#include "host_view.h"
#include "inventory.h"
#include "oci_state.h"
#include "plan_json.h"
#include "planner.h"
#include "test_tree.h"
#include "version_lock.h"

using ocid::CheckVersions;
using ocid::Error;
using ocid::Inventory;
using ocid::LibraryVersionFromBytes;
using ocid::ParseInventory;
using ocid::VersionReport;
using ocid::VersionState;
using ocid_test::FakeHost;

namespace {

std::string InventoryWith(const std::string& lock) {
  return R"({"activation_flag": "OCI_ONLOAD", "driver_feature": ["onload", "zf"],
             "version_lock": )" + lock + R"(,
             "inventory": {"onload": {"devices": ["onload"]}, "zf": {"devices": ["sfc_char"]}}})";
}

const char* kLock = R"({"enforce": true, "module_version": "/sys/module/onload/version",
                        "library": ["/usr/lib64/libonload.so",
                                    "/opt/onload/usr/lib64/libonload.so"]})";

Inventory Parsed(const std::string& lock = kLock) {
  Inventory inv;
  Error err;
  REQUIRE_MESSAGE(ParseInventory(InventoryWith(lock), "onload.json", &inv, &err), err.Line());
  return inv;
}

std::string ParseError(const std::string& lock) {
  Inventory inv;
  Error err;
  if (ParseInventory(InventoryWith(lock), "onload.json", &inv, &err)) return "";
  return err.Line();
}

// Bytes like a libonload.so: ELF noise, format strings, then the banner.
std::string Library(const std::string& banner, size_t noise = 200000) {
  std::string s = "\x7f" "ELF\x02\x01\x01";
  for (size_t i = 0; s.size() < noise; ++i) s.push_back(static_cast<char>((i * 131) % 251));
  s += std::string("Using Onload %s [%s]\0oo:%s", 27);
  s += banner;
  s += std::string("\0Built: Nov 24 2026", 19);
  for (size_t i = 0; i < 5000; ++i) s.push_back(static_cast<char>(i % 7));
  return s;
}

const std::string kBanner8 =
    "Onload 8.1.2.26\nCopyright 2019-2024 Advanced Micro Devices, Inc.\n";

}  // namespace

TEST_CASE("version_lock: parsed with alternatives, a single path and features") {
  Inventory inv = Parsed();
  CHECK(inv.version_lock.configured());
  CHECK(inv.version_lock.enforce);
  CHECK(inv.version_lock.module_version == "/sys/module/onload/version");
  CHECK(inv.version_lock.library ==
        std::vector<std::string>{"/usr/lib64/libonload.so", "/opt/onload/usr/lib64/libonload.so"});
  CHECK(inv.version_lock.features.empty());

  inv = Parsed(R"({"module_version": "/sys/module/onload/version",
                   "library": "/usr/lib64/libonload.so", "features": ["onload"],
                   "x-note": "comment keys are allowed"})");
  CHECK_FALSE(inv.version_lock.enforce);
  CHECK(inv.version_lock.library == std::vector<std::string>{"/usr/lib64/libonload.so"});
  CHECK(inv.version_lock.features == std::vector<std::string>{"onload"});
  CHECK(inv.version_lock.Guards({"onload"}));
  CHECK(inv.version_lock.Guards({"zf", "onload"}));
  CHECK_FALSE(inv.version_lock.Guards({"zf"}));
  CHECK(Parsed().version_lock.Guards({"zf"}));  // no features: all of them

  Inventory none;
  Error err;
  REQUIRE(ParseInventory(R"({"activation_flag": "OCI_X", "driver_feature": ["x"],
                              "inventory": {"x": {}}})", "x.json", &none, &err));
  CHECK_FALSE(none.version_lock.configured());
  CHECK_FALSE(none.version_lock.Guards({"x"}));
}

TEST_CASE("version_lock: every invalid value is one line naming the file and the key") {
  struct Case { const char* lock; const char* want; };
  const Case cases[] = {
      {R"("yes")", R"("version_lock" must be an object)"},
      {R"({"enforce": "true", "module_version": "/a", "library": "/b"})",
       R"("version_lock.enforce" must be true or false)"},
      {R"({"library": "/b"})", R"("version_lock.module_version" is missing)"},
      {R"({"module_version": "/a"})", R"("version_lock.library" is missing)"},
      {R"({"module_version": "sys/module/onload/version", "library": "/b"})",
       R"("version_lock.module_version" "sys/module/onload/version" is not an absolute path)"},
      {R"({"module_version": "/sys/module/../version", "library": "/b"})",
       R"("version_lock.module_version" "/sys/module/../version" has a "." or ".." component)"},
      {R"({"module_version": "/a", "library": "/usr/lib64/libonload.so*"})",
       R"("version_lock.library" "/usr/lib64/libonload.so*" has a glob outside its last component)"},
      {R"({"module_version": "/a", "library": []})",
       R"("version_lock.library" must be a path or a non-empty list of paths)"},
      {R"({"module_version": "/a", "library": [3]})",
       R"("version_lock.library" must be a string (an absolute host path))"},
      {R"({"module_version": 1, "library": "/b"})",
       R"("version_lock.module_version" must be a string (an absolute host path))"},
      {R"({"module_version": "/a", "library": "/b", "features": "onload"})",
       R"("version_lock.features" must be a list of feature names)"},
      {R"({"module_version": "/a", "library": "/b", "features": ["rdma"]})",
       R"("version_lock.features" names "rdma", which is not in driver_feature)"},
      {R"({"module_version": "/a", "library": "/b", "enforced": true})",
       R"("version_lock.enforced" unknown key)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.lock);
    std::string line = ParseError(c.lock);
    CHECK(line == std::string("invalid inventory onload.json: ") + c.want);
  }
}

TEST_CASE("LibraryVersionFromBytes: the banner of every product, nothing else") {
  CHECK(LibraryVersionFromBytes(Library(kBanner8)) == "8.1.2.26");
  CHECK(LibraryVersionFromBytes(Library("OpenOnload 201811-u1\nCopyright 2006-2018 Solarflare")) ==
        "201811-u1");
  CHECK(LibraryVersionFromBytes(Library("EnterpriseOnload 7.1.2.141\nCopyright 2006-2021 Xilinx")) ==
        "7.1.2.141");
  CHECK(LibraryVersionFromBytes("Onload 8.1.2.26\nCopyright") == "8.1.2.26");  // at both edges
  // Not a banner: a format string, no Copyright line, a space, a bad
  // character, a token over 64 characters, a truncated banner.
  CHECK(LibraryVersionFromBytes(Library("Onload %s\nCopyright x")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload 8.1.2.26\nBuilt: today")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload 8.1.2.26 \nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload 8.1.2.26/x\nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload " + std::string(65, '1') + "\nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload " + std::string(64, '1') + "\nCopyright")) ==
        std::string(64, '1'));
  CHECK(LibraryVersionFromBytes("Onload 8.1.2.26\nCopyrig") == "");
  CHECK(LibraryVersionFromBytes("Onload ") == "");
  CHECK(LibraryVersionFromBytes("") == "");
  CHECK(LibraryVersionFromBytes(Library("")) == "");
  // The first valid banner wins over invalid ones before it.
  CHECK(LibraryVersionFromBytes(Library("Onload %s\nCopyright\nOnload 9.0.0.1\nCopyright")) ==
        "9.0.0.1");
  // Garbage of every byte value, and a huge run of near misses.
  std::string garbage;
  for (uint32_t i = 0; i < (1u << 20); ++i) garbage.push_back(static_cast<char>((i * 7919u) & 0xffu));
  CHECK(LibraryVersionFromBytes(garbage) == "");
  std::string misses;
  while (misses.size() < (8u << 20)) misses += "Onload Onload 1.2\nCopy";
  CHECK(LibraryVersionFromBytes(misses) == "");
  CHECK(LibraryVersionFromBytes(misses + kBanner8) == "8.1.2.26");
}

TEST_CASE("BannerScanner: a banner cut by any chunk boundary is still found") {
  const std::string lib = Library(kBanner8, 1000);
  const size_t at = lib.find("Onload 8.1");
  for (size_t cut = at - 2; cut < at + kBanner8.size() + 2; ++cut) {
    for (size_t chunk : {size_t{1}, size_t{3}, size_t{64}, size_t{4096}}) {
      ocid::BannerScanner scan;
      scan.Feed(std::string_view(lib).substr(0, cut));
      for (size_t off = cut; off < lib.size(); off += chunk)
        scan.Feed(std::string_view(lib).substr(off, chunk));
      CAPTURE(cut);
      CAPTURE(chunk);
      CHECK(scan.version() == "8.1.2.26");
    }
  }
}

TEST_CASE("CheckVersions: match, mismatch, unknown and not configured on a fake host") {
  Inventory inv = Parsed();
  FakeHost host;
  host.chunk_size = 4096;
  host.Content("/sys/module/onload/version", "8.1.2.26\n")
      .Content("/usr/lib64/libonload.so", Library(kBanner8));

  VersionReport r = CheckVersions(inv, host);
  CHECK(r.state == VersionState::kMatch);
  CHECK(r.module_version == "8.1.2.26");
  CHECK(r.module_path == "/sys/module/onload/version");
  CHECK(r.library_version == "8.1.2.26");
  CHECK(r.library_path == "/usr/lib64/libonload.so");
  CHECK(r.why.empty());

  SUBCASE("mismatch: one line naming both versions and both paths") {
    host.Content("/sys/module/onload/version", " 8.1.0.15 \nsecond line\n");
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kMismatch);
    CHECK(r.module_version == "8.1.0.15");
    CHECK(r.why ==
          "version lock: libonload.so is 8.1.2.26 (/usr/lib64/libonload.so) but the loaded "
          "onload module is 8.1.0.15 (/sys/module/onload/version)");
  }
  SUBCASE("the first library alternative that exists wins") {
    host.Remove("/usr/lib64/libonload.so")
        .Content("/opt/onload/usr/lib64/libonload.so", Library("OpenOnload 8.1.0.15\nCopyright"));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kMismatch);
    CHECK(r.library_path == "/opt/onload/usr/lib64/libonload.so");
    CHECK(r.library_version == "8.1.0.15");
  }
  SUBCASE("no module (the simulated install): unknown, with why") {
    host.Remove("/sys/module/onload/version");
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.library_version == "8.1.2.26");  // still read and reported
    CHECK(r.why == "version lock: the onload module's version is unknown "
                   "(/sys/module/onload/version does not exist: module not loaded?)");
  }
  SUBCASE("a module version file without a version: unknown") {
    host.Content("/sys/module/onload/version", "\n");
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why.find("holds no version") != std::string::npos);
  }
  SUBCASE("no library: unknown, naming every alternative") {
    host.Remove("/usr/lib64/libonload.so");
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.module_version == "8.1.2.26");
    CHECK(r.why == "version lock: the library's version is unknown (/usr/lib64/libonload.so or "
                   "/opt/onload/usr/lib64/libonload.so not found)");
  }
  SUBCASE("a library without a banner: unknown") {
    host.Content("/usr/lib64/libonload.so", Library(""));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why == "version lock: the library's version is unknown (no version banner in "
                   "/usr/lib64/libonload.so)");
  }
  SUBCASE("a library that is not a regular file: unknown, not the next alternative") {
    host.Remove("/usr/lib64/libonload.so").Dir("/usr/lib64/libonload.so");
    host.Content("/opt/onload/usr/lib64/libonload.so", Library(kBanner8));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why.find("not a regular file") != std::string::npos);
  }
  SUBCASE("reading stops at the banner") {
    std::string lib = Library(kBanner8, 1000) + std::string(4u << 20, 'x');
    host.Content("/usr/lib64/libonload.so", lib);
    host.bytes_read = 0;
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kMatch);
    CHECK(host.bytes_read < 3 * 4096 + 4096);  // the module's line and the first chunks
  }
  SUBCASE("not configured") {
    inv.version_lock = ocid::VersionLock{};
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kNotConfigured);
    CHECK(r.why.empty());
  }
}

TEST_CASE("CheckVersions on a real host root: files read inside it, with caps") {
  ocid::test::TempTree t;
  t.File("host/sys/module/onload/version", "8.1.2.26\n");
  t.File("host/usr/lib64/libonload.so.8.1.2", Library(kBanner8, 3 << 20));
  // An absolute link resolves inside the host root, not on this machine.
  t.Link("host/usr/lib64/libonload.so", "/usr/lib64/libonload.so.8.1.2");
  std::unique_ptr<ocid::HostRootView> view;
  Error err;
  REQUIRE(ocid::HostRootView::Open(t / "host", &view, &err));
  Inventory inv = Parsed();

  VersionReport r = CheckVersions(inv, *view);
  CHECK(r.state == VersionState::kMatch);
  CHECK(r.library_path == t / "host/usr/lib64/libonload.so");
  CHECK(r.module_path == t / "host/sys/module/onload/version");

  SUBCASE("a FIFO is refused without blocking") {
    std::filesystem::remove(t / "host/sys/module/onload/version");
    REQUIRE(::mkfifo((t / "host/sys/module/onload/version").c_str(), 0600) == 0);
    r = CheckVersions(inv, *view);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why.find("not a regular file") != std::string::npos);
  }
  SUBCASE("a module version file over the cap is refused") {
    t.File("host/sys/module/onload/version", std::string(5000, '8'));
    r = CheckVersions(inv, *view);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why.find("larger than 4096 bytes") != std::string::npos);
  }
  SUBCASE("a library over 64 MiB is refused (a sparse file: not read through)") {
    std::filesystem::resize_file(t / "host/usr/lib64/libonload.so.8.1.2", (64u << 20) + 1);
    r = CheckVersions(inv, *view);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why.find("larger than 67108864 bytes") != std::string::npos);
  }
  SUBCASE("a dangling link is a missing alternative") {
    std::filesystem::remove(t / "host/usr/lib64/libonload.so.8.1.2");
    t.File("host/opt/onload/usr/lib64/libonload.so", Library("Onload 8.1.0.15\nCopyright"));
    r = CheckVersions(inv, *view);
    CHECK(r.state == VersionState::kMismatch);
    CHECK(r.library_path == t / "host/opt/onload/usr/lib64/libonload.so");
  }
}

// ---- Every delivery mode consults the lock through the planner. ----

namespace {

const char* kOnloadFile = "/etc/ocid.d/onload.json";

std::string OnloadInventory(const std::string& lock) {
  return R"({"activation_flag": "OCI_ONLOAD", "cdi_kind": "amd.com/onload",
             "driver_feature": ["onload", "zf"], "version_lock": )" + lock + R"(,
             "inventory": {
               "onload": {"devices": ["onload"], "libraries": ["/usr/lib64/libonload.so"],
                          "preload": ["libonload.so"]},
               "zf": {"devices": ["sfc_char"]}}})";
}

Inventory OnloadInv(const std::string& lock = kLock) {
  Inventory inv;
  Error err;
  REQUIRE_MESSAGE(ParseInventory(OnloadInventory(lock), kOnloadFile, &inv, &err), err.Line());
  return inv;
}

FakeHost OnloadHost(const std::string& module) {
  FakeHost h;
  h.Chr("/dev/onload", 240, 0).Chr("/dev/sfc_char", 241, 0);
  h.Content("/usr/lib64/libonload.so", Library(kBanner8));
  if (!module.empty()) h.Content("/sys/module/onload/version", module + "\n");
  return h;
}

struct PlanRun {
  ocid::OciState state;
  ocid::BundleConfig config;
  ocid::InventorySet set;
  ocid::Plan plan;
  Error err;
  PlanRun(const Inventory& inv, std::vector<std::string> env) {
    state.id = "ctr1";
    state.pid = 4242;
    state.bundle = "/run/b/ctr1";
    config.root_path = "rootfs";
    config.env = std::move(env);
    set.inventories = {inv};
  }
  bool Go(const FakeHost& host) {
    ocid::PlanInputs in{&state, &config, &set, &host};
    return ocid::BuildPlan(in, &plan, &err);
  }
};

const std::string kRefusal =
    "inventory /etc/ocid.d/onload.json: version lock: libonload.so is 8.1.2.26 "
    "(/usr/lib64/libonload.so) but the loaded onload module is 8.1.0.15 "
    "(/sys/module/onload/version); refusing (set \"enforce\": false to allow)";

}  // namespace

TEST_CASE("planner: an enforced mismatch refuses the container that asked, in one line") {
  FakeHost host = OnloadHost("8.1.0.15");
  PlanRun r(OnloadInv(), {"OCI_ONLOAD=all"});
  CHECK_FALSE(r.Go(host));
  CHECK(r.err.Line() == kRefusal);
  CHECK(r.plan.mounts.empty());  // decided before any feature is planned

  SUBCASE("matching versions: planned, no warning") {
    host.Content("/sys/module/onload/version", "8.1.2.26\n");
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.Active());
    CHECK(r.plan.warnings.empty());
    CHECK_FALSE(r.plan.mounts.empty());
  }
}

TEST_CASE("planner: a container that did not ask is untouched, nothing is read") {
  FakeHost host = OnloadHost("8.1.0.15");
  for (auto env : {std::vector<std::string>{}, {"OCI_ONLOAD=none"}, {"OCI_ONLOAD="}}) {
    PlanRun r(OnloadInv(), env);
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK_FALSE(r.plan.Active());
    CHECK(r.plan.warnings.empty());
  }
  CHECK(host.reads == 0);
}

TEST_CASE("planner: unknown and allowed mismatches are warnings, and the plan goes on") {
  SUBCASE("no module version (the simulated install)") {
    FakeHost host = OnloadHost("");
    PlanRun r(OnloadInv(), {"OCI_ONLOAD=onload"});
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.Active());
    CHECK_FALSE(r.plan.mounts.empty());
    CHECK(r.plan.warnings ==
          std::vector<std::string>{
              "inventory /etc/ocid.d/onload.json: version lock: the onload module's version is "
              "unknown (/sys/module/onload/version does not exist: module not loaded?); not "
              "checked"});
    CHECK(ocid::PlanToJson(r.plan).find("\"warnings\": [") != std::string::npos);
  }
  SUBCASE("enforce false") {
    FakeHost host = OnloadHost("8.1.0.15");
    PlanRun r(OnloadInv(R"({"module_version": "/sys/module/onload/version",
                            "library": "/usr/lib64/libonload.so"})"),
              {"OCI_ONLOAD=all"});
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.Active());
    REQUIRE(r.plan.warnings.size() == 1);
    CHECK(r.plan.warnings[0].find("libonload.so is 8.1.2.26") != std::string::npos);
    CHECK(r.plan.warnings[0].find("; allowed (\"enforce\" is false)") != std::string::npos);
  }
  SUBCASE("a feature the lock does not guard is not checked") {
    FakeHost host = OnloadHost("8.1.0.15");
    PlanRun r(OnloadInv(R"({"enforce": true, "module_version": "/sys/module/onload/version",
                            "library": "/usr/lib64/libonload.so", "features": ["onload"]})"),
              {"OCI_ONLOAD=zf"});
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.Active());
    CHECK(r.plan.warnings.empty());
    CHECK(host.reads == 0);
    CHECK(ocid::PlanToJson(r.plan).find("\"warnings\"") == std::string::npos);
  }
}

TEST_CASE("BuildInventoryPlan: fails on an enforced mismatch for a guarded feature only") {
  FakeHost host = OnloadHost("8.1.0.15");
  Inventory inv = OnloadInv(R"({"enforce": true, "module_version": "/sys/module/onload/version",
                                "library": "/usr/lib64/libonload.so", "features": ["onload"]})");
  ocid::Plan plan;
  Error err;
  CHECK_FALSE(ocid::BuildInventoryPlan(inv, {"onload"}, host, &plan, &err));
  CHECK(err.Line() == kRefusal);
  CHECK_FALSE(ocid::BuildInventoryPlan(inv, {"onload", "zf"}, host, &plan, &err));
  CHECK(ocid::BuildInventoryPlan(inv, {"zf"}, host, &plan, &err));
  // A feature the inventory lacks is still that error, not a version check.
  CHECK_FALSE(ocid::BuildInventoryPlan(inv, {"rdma"}, host, &plan, &err));
  CHECK(err.Line() == "inventory /etc/ocid.d/onload.json has no feature \"rdma\"");
}

TEST_CASE("cdi generate: the guarded features, and \"all\", are left out with a warning") {
  FakeHost host = OnloadHost("8.1.0.15");
  Inventory inv = OnloadInv(R"({"enforce": true, "module_version": "/sys/module/onload/version",
                                "library": "/usr/lib64/libonload.so", "features": ["onload"]})");
  ocid::CdiSpec spec;
  Error err;
  REQUIRE_MESSAGE(ocid::BuildCdiSpec(inv, host, "/", "", &spec, &err), err.Line());
  CHECK(spec.devices == std::vector<std::string>{"zf"});
  CHECK(spec.warnings == std::vector<std::string>{"no CDI device \"onload\": " + kRefusal,
                                                  "no CDI device \"all\": not every feature "
                                                  "is available"});

  SUBCASE("a lock over every feature: no device at all, an error") {
    CHECK_FALSE(ocid::BuildCdiSpec(OnloadInv(), host, "/", "", &spec, &err));
    CHECK(err.Line() == "inventory /etc/ocid.d/onload.json: no CDI device can be generated on "
                        "this host");
  }
  SUBCASE("unknown: every device, one warning") {
    host.Remove("/sys/module/onload/version");
    REQUIRE_MESSAGE(ocid::BuildCdiSpec(OnloadInv(), host, "/", "", &spec, &err), err.Line());
    CHECK(spec.devices == std::vector<std::string>{"onload", "zf", "all"});
    REQUIRE(spec.warnings.size() == 1);
    CHECK(spec.warnings[0].find("module's version is unknown") != std::string::npos);
  }
}

TEST_CASE("cluster: guarded resources are unhealthy with the refusal as why") {
  FakeHost host = OnloadHost("8.1.0.15");
  ocid::InventorySet set;
  set.inventories = {
      OnloadInv(R"({"enforce": true, "module_version": "/sys/module/onload/version",
                    "library": "/usr/lib64/libonload.so", "features": ["onload"]})")};
  ocid::ClusterView view;
  ocid::BuildClusterView(set, host, "/", nullptr, &view);
  REQUIRE(view.resources.size() == 3);  // onload, zf, Nomad group onloadzf
  CHECK(view.resources[0].k8s_name == "amd.com/onload");
  CHECK_FALSE(view.resources[0].healthy);
  CHECK(view.resources[0].why == kRefusal);
  CHECK(view.resources[1].k8s_name == "amd.com/zf");
  CHECK(view.resources[1].healthy);
  CHECK(view.resources[2].nomad_type == "onloadzf");
  CHECK_FALSE(view.resources[2].healthy);
  CHECK(view.warnings.empty());

  SUBCASE("unknown: healthy, one warning for the view") {
    host.Remove("/sys/module/onload/version");
    ocid::BuildClusterView(set, host, "/", nullptr, &view);
    for (const auto& res : view.resources) CHECK(res.healthy);
    REQUIRE(view.warnings.size() == 1);
    CHECK(view.warnings[0].find("not checked") != std::string::npos);
  }
}
