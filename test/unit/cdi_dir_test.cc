// cdi_dir: the one CDI directory writer, on real files in a temporary
// directory (the writer's rule accepts /tmp, root's and sticky, and a
// directory of the effective user's under it).
#include "cdi_dir.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cdi_names.h"
#include "test_tree.h"

namespace {

using ocid::CdiDirWriter;
using ocid::CdiFileToWrite;
using Names = std::vector<std::string>;

// A spec as cdi.h renders one (IsRenderedCdiSpec).
std::string RenderedSpec(const std::string& kind) {
  nlohmann::ordered_json j;
  j["cdiVersion"] = "0.6.0";
  j["kind"] = kind;
  j["devices"] = nlohmann::ordered_json::array();
  return j.dump(2) + "\n";
}

// The files of the spec of `stem` with one preload file per device, in
// CdiFilesOf order.
std::vector<CdiFileToWrite> SpecFiles(const std::string& stem, const Names& devices) {
  std::vector<CdiFileToWrite> files;
  const std::string spec = ocid::CdiFileName(stem);
  for (const auto& d : devices)
    files.push_back({ocid::CdiPreloadFileName(spec, d), "/usr/lib64/lib" + d + ".so\n"});
  files.push_back({spec, RenderedSpec("example.com/" + stem)});
  return files;
}

CdiDirWriter Opened(const std::string& path) {
  CdiDirWriter w;
  ocid::Error err;
  REQUIRE_MESSAGE(CdiDirWriter::Open(path, /*create=*/true, &w, &err), err.Line());
  return w;
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("cdi_dir: Open makes the directory and keeps its identity") {
  ocid::test::TempTree t;
  CdiDirWriter w = Opened(t / "a/cdi");
  CHECK(w.path() == t / "a/cdi");
  CHECK(w.fd() >= 0);
  struct stat st {};
  REQUIRE(::stat((t / "a/cdi").c_str(), &st) == 0);
  CHECK(w.dev() == st.st_dev);
  CHECK(w.ino() == st.st_ino);
  CHECK(ModeOf(t / "a/cdi") == 0755);

  SUBCASE("a directory writable by others is refused") {
    t.Dir("open");
    REQUIRE(::chmod((t / "open").c_str(), 0777) == 0);
    CdiDirWriter o;
    ocid::Error err;
    CHECK_FALSE(CdiDirWriter::Open(t / "open", /*create=*/false, &o, &err));
    CHECK(err.what.find("writable by others") != std::string::npos);
  }
  SUBCASE("a missing directory is not made unless asked") {
    CdiDirWriter o;
    ocid::Error err;
    CHECK_FALSE(CdiDirWriter::Open(t / "missing", /*create=*/false, &o, &err));
    CHECK_FALSE(t.Exists("missing"));
  }
}

TEST_CASE("cdi_dir: WriteSpecFiles writes what is not current, preload files first") {
  ocid::test::TempTree t;
  CdiDirWriter w = Opened(t / "cdi");
  const auto files = SpecFiles("a", {"x", "y"});
  Names written;
  ocid::Error err;
  REQUIRE_MESSAGE(w.WriteSpecFiles(files, /*always=*/false, &written, &err), err.Line());
  CHECK(written == Names{files[0].name, files[1].name, "oci-decorator-a.json"});
  for (const auto& f : files) {
    CHECK(t.Read("cdi/" + f.name) == f.bytes);
    CHECK(ModeOf(t / ("cdi/" + f.name)) == 0644);
    CHECK(w.IsCurrent(f.name, f.bytes));
  }

  // Everything current: nothing written.
  written.clear();
  REQUIRE(w.WriteSpecFiles(files, /*always=*/false, &written, &err));
  CHECK(written.empty());

  // Other bytes, or another mode, are not current: only that file again.
  t.File("cdi/" + files[1].name, "changed\n");
  REQUIRE(::chmod((t / ("cdi/" + files[0].name)).c_str(), 0600) == 0);
  CHECK_FALSE(w.IsCurrent(files[0].name, files[0].bytes));
  REQUIRE(w.WriteSpecFiles(files, /*always=*/false, &written, &err));
  CHECK(written == Names{files[0].name, files[1].name});
  CHECK(ModeOf(t / ("cdi/" + files[0].name)) == 0644);
  CHECK(t.Read("cdi/" + files[1].name) == files[1].bytes);

  // `always` (cdi generate) writes every one, current or not.
  written.clear();
  REQUIRE(w.WriteSpecFiles(files, /*always=*/true, &written, &err));
  CHECK(written == Names{files[0].name, files[1].name, "oci-decorator-a.json"});
}

TEST_CASE("cdi_dir: a failed write names the files written before it") {
  ocid::test::TempTree t;
  CdiDirWriter w = Opened(t / "cdi");
  auto files = SpecFiles("a", {"x"});
  files.insert(files.begin() + 1, CdiFileToWrite{"not/one/name", "x"});
  Names written;
  ocid::Error err;
  CHECK_FALSE(w.WriteSpecFiles(files, /*always=*/false, &written, &err));
  CHECK(written == Names{files[0].name});
  CHECK_FALSE(err.empty());
  CHECK_FALSE(t.Exists("cdi/oci-decorator-a.json"));
}

TEST_CASE("cdi_dir: RemoveStem removes a stem's spec, then its preload files, not another's") {
  ocid::test::TempTree t;
  CdiDirWriter w = Opened(t / "cdi");
  const auto a = SpecFiles("a", {"x", "y"}), ab = SpecFiles("a.b", {"x"});
  Names written;
  ocid::Error err;
  REQUIRE(w.WriteSpecFiles(a, false, &written, &err));
  REQUIRE(w.WriteSpecFiles(ab, false, &written, &err));
  t.File("cdi/operator.json", "{}");

  SUBCASE("without keep: the spec first, then every preload file of the stem") {
    Names removed;
    w.RemoveStem("a", nullptr, &removed);
    CHECK(removed == Names{"oci-decorator-a.json", a[0].name, a[1].name});
    for (const auto& f : a) CHECK_FALSE(t.Exists("cdi/" + f.name));
    for (const auto& f : ab) CHECK(t.Exists("cdi/" + f.name));  // a.b's are not a's
    CHECK(t.Exists("cdi/operator.json"));
  }
  SUBCASE("with keep: the spec and the kept names stay; of the others only root's go") {
    const std::set<std::string> keep{a[0].name, "oci-decorator-a.json"};
    Names removed;
    w.RemoveStem("a", &keep, &removed);
    CHECK(removed == Names{a[1].name});
    CHECK(t.Exists("cdi/oci-decorator-a.json"));
    CHECK(t.Exists("cdi/" + a[0].name));
    CHECK_FALSE(t.Exists("cdi/" + a[1].name));
  }
  SUBCASE("with keep, a preload name that is a symlink is not ours to remove") {
    REQUIRE(::unlink((t / ("cdi/" + a[1].name)).c_str()) == 0);
    t.Link("cdi/" + a[1].name, "/etc/hostname");
    const std::set<std::string> keep{a[0].name};
    Names removed;
    w.RemoveStem("a", &keep, &removed);
    CHECK(removed.empty());
    CHECK(t.Exists("cdi/" + a[1].name));
  }
}

TEST_CASE("cdi_dir: Sweep removes our rendered files of other stems and nothing else") {
  ocid::test::TempTree t;
  CdiDirWriter w = Opened(t / "cdi");
  const auto keep = SpecFiles("keep", {"x"}), gone = SpecFiles("gone", {"x"});
  Names written;
  ocid::Error err;
  REQUIRE(w.WriteSpecFiles(keep, false, &written, &err));
  REQUIRE(w.WriteSpecFiles(gone, false, &written, &err));
  // An operator's spec under one of our names (not as we render one), with
  // a preload file of its stem; a file that is not ours; an orphan
  // preload file whose spec is gone.
  const std::string hand = ocid::CdiFileName("hand");
  t.File("cdi/" + hand,
         "{\"cdiVersion\": \"0.6.0\", \"kind\": \"example.com/hand\", "
         "\"devices\": []}\n");
  const std::string hand_preload = ocid::CdiPreloadFileName(hand, "x");
  t.File("cdi/" + hand_preload, "/usr/lib64/libx.so\n");
  t.File("cdi/vendor.json", "{}");
  const std::string orphan = ocid::CdiPreloadFileName(ocid::CdiFileName("orphan"), "x");
  t.File("cdi/" + orphan, "/usr/lib64/libx.so\n");

  Names removed;
  REQUIRE_MESSAGE(w.Sweep({"keep"}, &removed, &err), err.Line());
  std::set<std::string> got(removed.begin(), removed.end());
  CHECK(got == std::set<std::string>{"oci-decorator-gone.json", gone[0].name, orphan});
  CHECK(removed.front() == "oci-decorator-gone.json");  // specs first
  for (const auto& f : keep) CHECK(t.Exists("cdi/" + f.name));
  CHECK(t.Exists("cdi/" + hand));
  CHECK(t.Exists("cdi/" + hand_preload));  // its spec is still there
  CHECK(t.Exists("cdi/vendor.json"));
  CHECK_FALSE(t.Exists("cdi/" + orphan));
}
