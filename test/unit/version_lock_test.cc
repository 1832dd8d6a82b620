// The version lock: parsing the inventory key, finding the banner in a
// library's bytes (whole or in chunks), and CheckVersions on fake host trees
// and on a real host root (HostRootView::ReadChunks). Versions, banners and
// module files are built as Onload's build writes them
// (onload_version_fixture.h cites the upstream files and lines).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bundle_config.h"
#include "cdi.h"
#include "cluster.h"
#include "container_plan.h"
#include "fake_host.h"
#include "host_view.h"
#include "inventory.h"
#include "oci_state.h"
#include "onload_version_fixture.h"
#include "plan_json.h"
#include "planner.h"
#include "test_tree.h"
#include "version_lock.h"

using ocid::CheckVersions;
using ocid::Error;
using ocid::Inventory;
using ocid::LibraryVersionFromBytes;
using ocid::ModuleVersionFromBytes;
using ocid::ParseInventory;
using ocid::VersionReport;
using ocid::VersionState;
using ocid_test::Banner;
using ocid_test::FakeHost;
using ocid_test::GitVersion;
using ocid_test::kGitBuild;
using ocid_test::ModuleFile;
using ocid_test::RealLibrary;
using ocid_test::ReleaseVersion;

namespace {

std::string InventoryWith(const std::string& lock) {
  return R"({"activation_flag": "OCI_ONLOAD", "driver_feature": ["onload", "zf"],
             "version_lock": )" +
         lock + R"(,
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

// Bytes like a libonload.so, smaller: ELF noise, format strings, then the
// banner as one NUL-terminated string.
std::string Library(const std::string& banner, size_t noise = 200000) {
  std::string s =
      "\x7f"
      "ELF\x02\x01\x01";
  for (size_t i = 0; s.size() < noise; ++i) s.push_back(static_cast<char>((i * 131) % 251));
  s += std::string("Using Onload %s [%s]\0oo:%s\0", 28);
  s += banner;
  s += std::string("\0Built: Nov 24 2026", 19);
  for (size_t i = 0; i < 5000; ++i) s.push_back(static_cast<char>(i % 7));
  return s;
}

// A release, 9.2.0.43, without a build profile: ONLOAD_VERSION "9.2.0.43 ".
const std::string kRelease = ReleaseVersion("9.2.0.43");
const std::string kBanner = Banner(kRelease);

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
                              "inventory": {"x": {}}})",
                         "x.json", &none, &err));
  CHECK_FALSE(none.version_lock.configured());
  CHECK_FALSE(none.version_lock.Guards({"x"}));
}

TEST_CASE("version_lock: every invalid value is one line naming the file and the key") {
  struct Case {
    const char* lock;
    const char* want;
  };
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

TEST_CASE("LibraryVersionFromBytes: Onload's own banners, release and git build") {
  // A release (preprocess_source:54): "9.2.0.43 ", the trailing space is not
  // part of the version.
  CHECK(LibraryVersionFromBytes(Library(kBanner)) == "9.2.0.43");
  // A release built with a profile: the profile is part of the version.
  CHECK(LibraryVersionFromBytes(Library(Banner(ReleaseVersion("9.2.0.43", "cloud")))) ==
        "9.2.0.43 cloud");
  // A git build (onload_version_gen): hash, date, branch, the space.
  CHECK(kGitBuild == "ef17681d 2026-07-22 master ");
  CHECK(LibraryVersionFromBytes(Library(Banner(kGitBuild))) == "ef17681d 2026-07-22 master");
  CHECK(LibraryVersionFromBytes(
            Library(Banner(GitVersion("ef17681d 2026-07-22", "master", "ulhelper")))) ==
        "ef17681d 2026-07-22 master ulhelper");
  // A branch with a slash, an exact tag, a detached HEAD without a tag.
  CHECK(LibraryVersionFromBytes(Library(Banner(GitVersion("a15d5c77 2026-07-20", "feature/x")))) ==
        "a15d5c77 2026-07-20 feature/x");
  CHECK(LibraryVersionFromBytes(Library(Banner(GitVersion("1b2c3d4e 2026-05-02", "v9.1.0")))) ==
        "1b2c3d4e 2026-05-02 v9.1.0");
  CHECK(LibraryVersionFromBytes(Library(Banner(GitVersion("1b2c3d4e 2026-05-02", "")))) ==
        "1b2c3d4e 2026-05-02");
  // Every product (onload_mkdist:118-134), and an older one.
  for (const char* product : {"Onload", "CloudOnload", "EnterpriseOnload", "OpenOnload"}) {
    CAPTURE(product);
    CHECK(LibraryVersionFromBytes(Library(Banner(kRelease, product))) == "9.2.0.43");
  }
  // A release built by mkdist without --version: the date.
  CHECK(LibraryVersionFromBytes(Library(Banner(ReleaseVersion("20260722")))) == "20260722");
  // The old bare format still reads, at both edges of the buffer too.
  CHECK(LibraryVersionFromBytes(Library("Onload 8.1.2.26\nCopyright 2019-2024 AMD")) == "8.1.2.26");
  CHECK(LibraryVersionFromBytes("Onload 9.2.0.43 \nCopyright") == "9.2.0.43");
}

TEST_CASE("LibraryVersionFromBytes: a real-sized library, the banner 0.59 MB in") {
  // The layout of the real build (onload_version_fixture.h): 6,639,008 bytes,
  // the banner at 589,896 after strings that start "Onload " too.
  const std::string lib = RealLibrary(Banner(kGitBuild));
  REQUIRE(lib.size() == 6639008);
  REQUIRE(lib.find("Onload ef17681d") == 589896);
  REQUIRE(lib.find("Onload does not support") < 589896);
  CHECK(LibraryVersionFromBytes(lib) == "ef17681d 2026-07-22 master");
  CHECK(LibraryVersionFromBytes(RealLibrary(Banner(ReleaseVersion("9.2.0.43", "cloud")))) ==
        "9.2.0.43 cloud");
}

TEST_CASE("LibraryVersionFromBytes: nothing that is not a banner") {
  // A format string, no Copyright line, a control byte or a character
  // outside [0-9A-Za-z._/-] and space, a leading space, an empty version.
  CHECK(LibraryVersionFromBytes(Library("Onload %s\nCopyright x")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload 9.2.0.43 \nBuilt: today")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload 9.2.0.43\t\nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload 9.2\x01.0.43 \nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload 9.2.0.43\r\nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload 9.2.0.43+x \nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload \"9.2\" \nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload  9.2.0.43 \nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload  \nCopyright")) == "");
  CHECK(LibraryVersionFromBytes(Library("Onload \nCopyright")) == "");
  // Up to 128 characters, spaces included; trailing spaces are not counted
  // but are capped too (16).
  const std::string v128 = "ef17681d 2026-07-22 " + std::string(108, 'b');
  REQUIRE(v128.size() == 128);
  CHECK(LibraryVersionFromBytes(Library(Banner(v128 + " "))) == v128);
  CHECK(LibraryVersionFromBytes(Library(Banner(v128 + std::string(16, ' ')))) == v128);
  CHECK(LibraryVersionFromBytes(Library(Banner(v128 + std::string(17, ' ')))) == "");
  CHECK(LibraryVersionFromBytes(Library(Banner(v128 + "b "))) == "");
  // Truncated banners.
  CHECK(LibraryVersionFromBytes("Onload 9.2.0.43 \nCopyrig") == "");
  CHECK(LibraryVersionFromBytes("Onload 9.2.0.43 ") == "");
  CHECK(LibraryVersionFromBytes("Onload ") == "");
  CHECK(LibraryVersionFromBytes("") == "");
  CHECK(LibraryVersionFromBytes(Library("")) == "");
  // The first valid banner wins over invalid ones before it.
  CHECK(LibraryVersionFromBytes(Library("Onload %s\nCopyright\nOnload 9.0.0.1 \nCopyright")) ==
        "9.0.0.1");
  // Garbage of every byte value, and a huge run of near misses (linear:
  // this is 8 MiB of hits whose version runs overlap).
  std::string garbage;
  for (uint32_t i = 0; i < (1u << 20); ++i)
    garbage.push_back(static_cast<char>((i * 7919u) & 0xffu));
  CHECK(LibraryVersionFromBytes(garbage) == "");
  std::string misses;
  while (misses.size() < (8u << 20)) misses += "Onload Onload 1.2 \nCopy";
  CHECK(LibraryVersionFromBytes(misses) == "");
  CHECK(LibraryVersionFromBytes(misses + kBanner) == "9.2.0.43");
  std::string run(8u << 20, 'a');
  for (size_t i = 0; i + 7 < run.size(); i += 4096) run.replace(i, 7, "Onload ");
  CHECK(LibraryVersionFromBytes(run) == "");
}

TEST_CASE("ModuleVersionFromBytes: the sysfs line, trailing whitespace trimmed") {
  // driver.c:44 MODULE_VERSION(ONLOAD_VERSION), shown with a newline.
  CHECK(ModuleVersionFromBytes(ModuleFile(kRelease)) == "9.2.0.43");
  CHECK(ModuleFile(kRelease) == "9.2.0.43 \n");
  CHECK(ModuleVersionFromBytes(ModuleFile(ReleaseVersion("9.2.0.43", "cloud"))) ==
        "9.2.0.43 cloud");
  CHECK(ModuleVersionFromBytes(ModuleFile(kGitBuild)) == "ef17681d 2026-07-22 master");
  CHECK(ModuleVersionFromBytes("9.2.0.43") == "9.2.0.43");            // no newline
  CHECK(ModuleVersionFromBytes("9.2.0.43 \t\r\nx\n") == "9.2.0.43");  // only the first line
  CHECK(ModuleVersionFromBytes("") == "");
  CHECK(ModuleVersionFromBytes("\n9.2.0.43\n") == "");
  CHECK(ModuleVersionFromBytes(" 9.2.0.43\n") == "");
  CHECK(ModuleVersionFromBytes("9.2\x01.0.43\n") == "");
  CHECK(ModuleVersionFromBytes("9.2.0.43+x\n") == "");
  CHECK(ModuleVersionFromBytes(std::string(128, '9') + " \n") == std::string(128, '9'));
  CHECK(ModuleVersionFromBytes(std::string(129, '9') + "\n") == "");
}

namespace {

// Feeds `lib` to a BannerScanner: [0, cut) as one chunk, then `chunk` bytes
// at a time.
std::string ScanCut(const std::string& lib, size_t cut, size_t chunk) {
  ocid::BannerScanner scan;
  bool more = scan.Feed(std::string_view(lib).substr(0, cut));
  for (size_t off = cut; more && off < lib.size(); off += chunk)
    more = scan.Feed(std::string_view(lib).substr(off, chunk));
  return scan.version();
}

}  // namespace

TEST_CASE("BannerScanner: a banner cut by any chunk boundary is still found") {
  SUBCASE("the real layout, every cut around the banner") {
    const std::string lib = RealLibrary(Banner(kGitBuild));
    const size_t at = lib.find("Onload ef17681d");
    const size_t end = lib.find("\nCopyright", at) + 10;
    for (size_t cut = at - 2; cut < end + 2; ++cut) {
      for (size_t chunk : {size_t{4096}, size_t{65536}}) {
        CAPTURE(cut);
        CAPTURE(chunk);
        CHECK(ScanCut(lib, cut, chunk) == "ef17681d 2026-07-22 master");
      }
    }
  }
  SUBCASE("the longest version, in tiny chunks") {
    const std::string v128 = "ef17681d 2026-07-22 " + std::string(108, 'b');
    const std::string lib = Library(Banner(v128 + std::string(16, ' ')), 1000);
    const size_t at = lib.find("Onload ef17681d");
    const size_t end = lib.find("\nCopyright", at) + 10;
    for (size_t cut = at - 2; cut < end + 2; ++cut) {
      for (size_t chunk : {size_t{1}, size_t{3}, size_t{64}, size_t{4096}}) {
        CAPTURE(cut);
        CAPTURE(chunk);
        CHECK(ScanCut(lib, cut, chunk) == v128);
      }
    }
  }
}

TEST_CASE("CheckVersions: match, mismatch, unknown and not configured on a fake host") {
  Inventory inv = Parsed();
  FakeHost host;
  host.chunk_size = 4096;
  // A release on both sides, each as Onload writes it: the banner's
  // "9.2.0.43 \nCopyright" and the module's "9.2.0.43 \n".
  host.Content("/sys/module/onload/version", ModuleFile(kRelease))
      .Content("/usr/lib64/libonload.so", Library(kBanner));

  VersionReport r = CheckVersions(inv, host);
  CHECK(r.state == VersionState::kMatch);
  CHECK(r.module_version == "9.2.0.43");
  CHECK(r.module_path == "/sys/module/onload/version");
  CHECK(r.library_version == "9.2.0.43");
  CHECK(r.library_path == "/usr/lib64/libonload.so");
  CHECK(r.why.empty());

  SUBCASE("a git build on both sides: match") {
    host.Content("/sys/module/onload/version", ModuleFile(kGitBuild))
        .Content("/usr/lib64/libonload.so", RealLibrary(Banner(kGitBuild)));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kMatch);
    CHECK(r.module_version == "ef17681d 2026-07-22 master");
    CHECK(r.library_version == "ef17681d 2026-07-22 master");
  }
  SUBCASE("a release with a build profile on both sides: match") {
    const std::string cloud = ReleaseVersion("9.2.0.43", "cloud");
    host.Content("/sys/module/onload/version", ModuleFile(cloud))
        .Content("/usr/lib64/libonload.so", Library(Banner(cloud, "CloudOnload")));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kMatch);
    CHECK(r.library_version == "9.2.0.43 cloud");
  }
  SUBCASE("mismatch by version: one line naming both versions and both paths") {
    host.Content("/sys/module/onload/version", ModuleFile(ReleaseVersion("9.1.0.17")));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kMismatch);
    CHECK(r.module_version == "9.1.0.17");
    CHECK(r.why ==
          "version lock: libonload.so is \"9.2.0.43\" (/usr/lib64/libonload.so) but the loaded "
          "onload module is \"9.1.0.17\" (/sys/module/onload/version)");
  }
  SUBCASE("mismatch by build profile only") {
    host.Content("/sys/module/onload/version", ModuleFile(ReleaseVersion("9.2.0.43", "cloud")));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kMismatch);
    CHECK(r.why ==
          "version lock: libonload.so is \"9.2.0.43\" (/usr/lib64/libonload.so) but the loaded "
          "onload module is \"9.2.0.43 cloud\" (/sys/module/onload/version)");
  }
  SUBCASE("mismatch: a git build of another branch, the same commit") {
    host.Content("/sys/module/onload/version", ModuleFile(kGitBuild))
        .Content("/usr/lib64/libonload.so",
                 Library(Banner(GitVersion("ef17681d 2026-07-22", "v9_2"))));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kMismatch);
    CHECK(r.why.find("is \"ef17681d 2026-07-22 v9_2\"") != std::string::npos);
    CHECK(r.why.find("is \"ef17681d 2026-07-22 master\"") != std::string::npos);
  }
  SUBCASE("the first library alternative that exists wins") {
    host.Remove("/usr/lib64/libonload.so")
        .Content("/opt/onload/usr/lib64/libonload.so",
                 Library(Banner(ReleaseVersion("9.1.0.17"), "EnterpriseOnload")));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kMismatch);
    CHECK(r.library_path == "/opt/onload/usr/lib64/libonload.so");
    CHECK(r.library_version == "9.1.0.17");
  }
  SUBCASE("no module (the simulated install): unknown, with why") {
    host.Remove("/sys/module/onload/version");
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.library_version == "9.2.0.43");  // still read and reported
    CHECK(r.why ==
          "version lock: the onload module's version is unknown "
          "(/sys/module/onload/version does not exist: module not loaded?)");
  }
  SUBCASE("a module version file without a version: unknown") {
    host.Content("/sys/module/onload/version", "\n");
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why.find("holds no version") != std::string::npos);
  }
  SUBCASE("a module version with a control byte: unknown, shown escaped") {
    host.Content("/sys/module/onload/version", "9.2.0.43\x1b[2J \n");
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why ==
          "version lock: the onload module's version is unknown "
          "(/sys/module/onload/version holds no version: \"9.2.0.43\\x1b[2J \")");
  }
  SUBCASE("no library: unknown, naming every alternative") {
    host.Remove("/usr/lib64/libonload.so");
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.module_version == "9.2.0.43");
    CHECK(r.why ==
          "version lock: the library's version is unknown (/usr/lib64/libonload.so or "
          "/opt/onload/usr/lib64/libonload.so not found)");
  }
  SUBCASE("a library without a banner: unknown") {
    host.Content("/usr/lib64/libonload.so", Library(""));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why ==
          "version lock: the library's version is unknown (no version banner in "
          "/usr/lib64/libonload.so)");
  }
  SUBCASE("a library that is not a regular file: unknown, not the next alternative") {
    host.Remove("/usr/lib64/libonload.so").Dir("/usr/lib64/libonload.so");
    host.Content("/opt/onload/usr/lib64/libonload.so", Library(kBanner));
    r = CheckVersions(inv, host);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why.find("not a regular file") != std::string::npos);
  }
  SUBCASE("reading stops at the banner") {
    std::string lib = Library(kBanner, 1000) + std::string(4u << 20, 'x');
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
  t.File("host/sys/module/onload/version", ModuleFile(kGitBuild));
  t.File("host/usr/lib64/libonload.so.9.2.0", RealLibrary(Banner(kGitBuild)));
  // An absolute link resolves inside the host root, not on this machine.
  t.Link("host/usr/lib64/libonload.so", "/usr/lib64/libonload.so.9.2.0");
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
    std::filesystem::resize_file(t / "host/usr/lib64/libonload.so.9.2.0", (64u << 20) + 1);
    r = CheckVersions(inv, *view);
    CHECK(r.state == VersionState::kUnknown);
    CHECK(r.why.find("larger than 67108864 bytes") != std::string::npos);
  }
  SUBCASE("a dangling link is a missing alternative") {
    std::filesystem::remove(t / "host/usr/lib64/libonload.so.9.2.0");
    t.File("host/opt/onload/usr/lib64/libonload.so", Library(kBanner));
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
             "driver_feature": ["onload", "zf"], "version_lock": )" +
         lock + R"(,
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

// The library is release 9.2.0.43; `module` is the module's ONLOAD_VERSION
// ("" for no module).
FakeHost OnloadHost(const std::string& module) {
  FakeHost h;
  h.Chr("/dev/onload", 240, 0).Chr("/dev/sfc_char", 241, 0);
  h.Content("/usr/lib64/libonload.so", Library(kBanner));
  if (!module.empty()) h.Content("/sys/module/onload/version", ModuleFile(module));
  return h;
}

const std::string kOlder = ReleaseVersion("9.1.0.17");

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
    "inventory /etc/ocid.d/onload.json: version lock: libonload.so is \"9.2.0.43\" "
    "(/usr/lib64/libonload.so) but the loaded onload module is \"9.1.0.17\" "
    "(/sys/module/onload/version); refusing (set \"enforce\": false to allow)";

}  // namespace

TEST_CASE("planner: an enforced mismatch refuses the container that asked, in one line") {
  FakeHost host = OnloadHost(kOlder);
  PlanRun r(OnloadInv(), {"OCI_ONLOAD=all"});
  CHECK_FALSE(r.Go(host));
  CHECK(r.err.Line() == kRefusal);
  CHECK(r.plan.mounts.empty());  // decided before any feature is planned

  SUBCASE("matching versions: planned, no warning") {
    host.Content("/sys/module/onload/version", ModuleFile(kRelease));
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.Active());
    CHECK(r.plan.warnings.empty());
    CHECK_FALSE(r.plan.mounts.empty());
  }
}

TEST_CASE("planner: a container that did not ask is untouched, nothing is read") {
  FakeHost host = OnloadHost(kOlder);
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
    FakeHost host = OnloadHost(kOlder);
    PlanRun r(OnloadInv(R"({"module_version": "/sys/module/onload/version",
                            "library": "/usr/lib64/libonload.so"})"),
              {"OCI_ONLOAD=all"});
    REQUIRE_MESSAGE(r.Go(host), r.err.Line());
    CHECK(r.plan.Active());
    REQUIRE(r.plan.warnings.size() == 1);
    CHECK(r.plan.warnings[0].find("libonload.so is \"9.2.0.43\"") != std::string::npos);
    CHECK(r.plan.warnings[0].find("; allowed (\"enforce\" is false)") != std::string::npos);
  }
  SUBCASE("a feature the lock does not guard is not checked") {
    FakeHost host = OnloadHost(kOlder);
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
  FakeHost host = OnloadHost(kOlder);
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
  FakeHost host = OnloadHost(kOlder);
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
    CHECK(err.Line() ==
          "inventory /etc/ocid.d/onload.json: no CDI device can be generated on "
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
  FakeHost host = OnloadHost(kOlder);
  ocid::InventorySet set;
  set.inventories = {OnloadInv(R"({"enforce": true, "module_version": "/sys/module/onload/version",
                    "library": "/usr/lib64/libonload.so", "features": ["onload"]})")};
  ocid::ClusterView view;
  ocid::BuildClusterView(set, host, {}, "/", nullptr, &view);
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
    ocid::BuildClusterView(set, host, {}, "/", nullptr, &view);
    for (const auto& res : view.resources) CHECK(res.healthy);
    REQUIRE(view.warnings.size() == 1);
    CHECK(view.warnings[0].find("not checked") != std::string::npos);
  }
}
