// Where libraries land: the fixed answers, and the probe of an image's
// libc.so.6 over real trees laid out as distributions lay them out, and as
// a hostile image would. Every hostile case has a marker tree outside the
// rootfs that holds a libc.so.6 of its own and must neither be chosen nor
// change; the rootfs must not change either (the probe creates nothing).
#include "library_dirs.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "kernel_features.h"
#include "legacy_kernel.h"
#include "test_tree.h"
#include "unique_fd.h"

namespace ocid {
namespace {

using Strings = std::vector<std::string>;
using test::TempTree;

struct Image {
  TempTree outside;  // the host: a libc.so.6 the image must not reach
  TempTree rootfs;
  Image() {
    outside.File("marker/usr/lib64/libc.so.6", "host libc");
    outside.File("marker/usr/lib/x86_64-linux-gnu/libc.so.6", "host libc");
  }
  // The probe's answer, "" for none; errno-like failures as "error: ...".
  std::string Probe() const {
    UniqueFd root(::open(rootfs.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(root.valid());
    std::string dir;
    Error err;
    if (!FindImageLibc(root.get(), &dir, &err)) return "error: " + err.Line();
    return dir;
  }
};

// A Debian or Ubuntu image with merged /usr (bookworm, jammy and later).
void MergedDebian(const TempTree& t) {
  t.File("usr/lib/x86_64-linux-gnu/libc.so.6", "glibc");
  t.File("usr/lib64/ld-linux-x86-64.so.2");
  t.Link("lib", "usr/lib");
  t.Link("lib64", "usr/lib64");
  t.Link("bin", "usr/bin");
}

}  // namespace

TEST_SUITE("library_dirs") {
  TEST_CASE("the fixed answers: candidates in order, the pair for every image") {
    CHECK(std::string(MultiarchTriplet()) == "x86_64-linux-gnu");
    CHECK(LibcCandidates() == Strings{"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                                      "/usr/lib64", "/lib64", "/usr/lib", "/lib"});
    LibraryDirs unseen = UnseenLibraryDirs();
    CHECK(unseen.dirs == Strings{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
    CHECK(unseen.why ==
          "one answer for every image: Debian/Ubuntu multiarch and RHEL/Fedora/SUSE lib64");
    CHECK_FALSE(unseen.no_glibc);
    CHECK(ImageLibraryDirs("/lib64").dirs == Strings{"/lib64"});
    CHECK(ImageLibraryDirs("/lib64").why == "the image's libc.so.6 is in /lib64");
    LibraryDirs none = NoGlibcLibraryDirs();
    CHECK(none.no_glibc);
    CHECK(none.dirs == unseen.dirs);
    CHECK(none.why.find("no libc.so.6 in /usr/lib/x86_64-linux-gnu, /lib/x86_64-linux-gnu") !=
          std::string::npos);
  }

  TEST_CASE("probe: distribution layouts") {
    Image i;
    SUBCASE("Debian, merged /usr: /lib is a link, the real directory wins") {
      MergedDebian(i.rootfs);
      CHECK(i.Probe() == "/usr/lib/x86_64-linux-gnu");
    }
    SUBCASE("Debian, /usr not merged: libc.so.6 a link to the versioned file") {
      i.rootfs.File("lib/x86_64-linux-gnu/libc-2.28.so", "glibc");
      i.rootfs.Link("lib/x86_64-linux-gnu/libc.so.6", "libc-2.28.so");
      i.rootfs.File("usr/lib/x86_64-linux-gnu/libstdc++.so.6");
      i.rootfs.File("lib64/ld-linux-x86-64.so.2");
      CHECK(i.Probe() == "/lib/x86_64-linux-gnu");
    }
    SUBCASE("RHEL, Fedora, SUSE: /lib64 -> usr/lib64") {
      i.rootfs.File("usr/lib64/libc.so.6", "glibc");
      i.rootfs.Dir("usr/lib");
      i.rootfs.Link("lib64", "usr/lib64");
      i.rootfs.Link("lib", "usr/lib");
      CHECK(i.Probe() == "/usr/lib64");
    }
    SUBCASE("RHEL 7, /usr not merged") {
      i.rootfs.File("lib64/libc-2.17.so", "glibc");
      i.rootfs.Link("lib64/libc.so.6", "libc-2.17.so");
      i.rootfs.Dir("usr/lib64");
      CHECK(i.Probe() == "/lib64");
    }
    SUBCASE("the test rootfs: host libraries copied to their paths") {
      i.rootfs.File("lib/x86_64-linux-gnu/libc.so.6", "glibc");
      i.rootfs.File("lib64/ld-linux-x86-64.so.2");
      CHECK(i.Probe() == "/lib/x86_64-linux-gnu");
    }
    SUBCASE("libc.so.6 an absolute link, resolved inside the image") {
      i.rootfs.File("usr/lib64/libc-2.34.so", "glibc");
      i.rootfs.Link("lib64/libc.so.6", "/usr/lib64/libc-2.34.so");
      CHECK(i.Probe() == "/lib64");  // /usr/lib64 holds the file, but no libc.so.6
    }
  }

  TEST_CASE("probe: no glibc") {
    Image i;
    SUBCASE("musl (Alpine)") {
      i.rootfs.File("lib/ld-musl-x86_64.so.1", "musl");
      i.rootfs.Link("lib/libc.musl-x86_64.so.1", "ld-musl-x86_64.so.1");
      i.rootfs.Dir("usr/lib");
      CHECK(i.Probe() == "");
    }
    SUBCASE("a static program in a scratch image") {
      i.rootfs.File("app", "static");
      CHECK(i.Probe() == "");
    }
    SUBCASE("empty") { CHECK(i.Probe() == ""); }
    const std::string before = i.rootfs.Fingerprint();
    LibraryDirs d = ProbeLibraryDirs(i.rootfs.path());
    CHECK(d.no_glibc);
    CHECK(d.probe_error.empty());
    CHECK(d.dirs == Strings{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
    CHECK(i.rootfs.Fingerprint() == before);  // nothing created
  }

  TEST_CASE("probe without openat2 (seccomp ENOSYS): the walk gives the same answers") {
    REQUIRE_FALSE(kernel::Openat2Missing());
    Image merged, rhel, hostile;
    MergedDebian(merged.rootfs);
    rhel.rootfs.File("usr/lib64/libc.so.6", "glibc");
    rhel.rootfs.Link("lib64", "usr/lib64");
    rhel.rootfs.Link("lib", "usr/lib");
    hostile.rootfs.Link("usr/lib/x86_64-linux-gnu", hostile.outside / "marker/usr/lib64");
    hostile.rootfs.Link("lib64/libc.so.6", hostile.outside / "marker/usr/lib64/libc.so.6");
    hostile.rootfs.File("lib/libc.so.6", "glibc");
    const std::string a = merged.Probe(), b = rhel.Probe(), c = hostile.Probe();
    CHECK(a == "/usr/lib/x86_64-linux-gnu");
    CHECK(b == "/usr/lib64");
    CHECK(c == "/lib");
    int rc = test::InLegacyKernelChild([&] {
      if (merged.Probe() != a) return 1;
      if (!kernel::Openat2Missing()) return 2;  // the walk was taken
      if (rhel.Probe() != b) return 3;
      if (hostile.Probe() != c) return 4;
      return 0;
    });
    CHECK(rc == 0);
  }

  TEST_CASE("ProbeLibraryDirs: by the rootfs's host path") {
    Image i;
    i.rootfs.File("lib/x86_64-linux-gnu/libc.so.6", "glibc");
    LibraryDirs seen = ProbeLibraryDirs(i.rootfs.path());
    CHECK(seen.dirs == Strings{"/lib/x86_64-linux-gnu"});
    CHECK(seen.why == "the image's libc.so.6 is in /lib/x86_64-linux-gnu");
    CHECK_FALSE(seen.no_glibc);
    CHECK(seen.probe_error.empty());

    LibraryDirs missing = ProbeLibraryDirs(i.rootfs / "no-such-rootfs");
    CHECK(missing.dirs == Strings{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
    CHECK(missing.why.find("no rootfs at " + (i.rootfs / "no-such-rootfs")) == 0);
    CHECK_FALSE(missing.no_glibc);
    CHECK(missing.probe_error.empty());

    // Anything else is not "no glibc": the pair, with what went wrong.
    i.rootfs.File("a-file", "x");
    LibraryDirs odd = ProbeLibraryDirs(i.rootfs / "a-file");
    CHECK(odd.dirs == Strings{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
    CHECK_FALSE(odd.no_glibc);
    CHECK(odd.probe_error.find("cannot open the rootfs") != std::string::npos);
    CHECK(odd.probe_error.find("a-file") != std::string::npos);
  }
}

TEST_SUITE("hostile.rootfs_libc") {
  TEST_CASE("the image only chooses among the fixed directories") {
    Image i;
    const std::string out = i.outside / "marker";
    const std::string before = i.outside.Fingerprint();
    SUBCASE("libc.so.6 a link into /proc: resolved inside the image, not there") {
      i.rootfs.Dir("proc");
      i.rootfs.Dir("usr/lib/x86_64-linux-gnu");
      i.rootfs.Link("usr/lib/x86_64-linux-gnu/libc.so.6",
                    "/proc/self/root" + out + "/usr/lib64/libc.so.6");
      i.rootfs.Link("lib64/libc.so.6", "/proc/1/root/usr/lib64/libc.so.6");
      CHECK(i.Probe() == "");
    }
    SUBCASE("libc.so.6 an absolute or ../ link to the host's file: not there inside the image") {
      i.rootfs.Dir("usr/lib/x86_64-linux-gnu");
      i.rootfs.Link("usr/lib/x86_64-linux-gnu/libc.so.6", out + "/usr/lib64/libc.so.6");
      i.rootfs.Link("usr/lib64/libc.so.6",
                    "../../../../../../../../.." + out + "/usr/lib64/libc.so.6");
      CHECK(i.Probe() == "");
    }
    SUBCASE("a candidate directory that is a link out of the image is not that directory") {
      i.rootfs.Dir("usr/lib");
      i.rootfs.Link("usr/lib/x86_64-linux-gnu", out + "/usr/lib/x86_64-linux-gnu");
      i.rootfs.Link("usr/lib64", "../../../../../../../.." + out + "/usr/lib64");
      CHECK(i.Probe() == "");
    }
    SUBCASE("a candidate directory that is a link inside the image is skipped too") {
      i.rootfs.File("opt/glibc/libc.so.6", "glibc");
      i.rootfs.Link("usr/lib64", "../opt/glibc");
      i.rootfs.File("usr/lib/libc.so.6", "glibc");
      CHECK(i.Probe() == "/usr/lib");
    }
    SUBCASE("libc.so.6 a directory, a FIFO, a dangling link, a loop: not a library") {
      i.rootfs.Dir("usr/lib/x86_64-linux-gnu/libc.so.6");
      i.rootfs.Dir("lib/x86_64-linux-gnu");
      REQUIRE(::mkfifo((i.rootfs / "lib/x86_64-linux-gnu/libc.so.6").c_str(), 0644) == 0);
      i.rootfs.Link("usr/lib64/libc.so.6", "libc-gone.so");
      i.rootfs.Link("lib64/libc.so.6", "libc.so.6");
      i.rootfs.File("lib/libc.so.6", "glibc");  // the last candidate: the only real one
      CHECK(i.Probe() == "/lib");               // and no hang on the FIFO
    }
    SUBCASE("a candidate that is a file, or under one") {
      i.rootfs.File("usr/lib64", "not a directory");
      i.rootfs.File("lib", "not a directory");
      i.rootfs.File("usr/lib/x86_64-linux-gnu/libc.so.6", "glibc");
      CHECK(i.Probe() == "/usr/lib/x86_64-linux-gnu");
    }
    CHECK(i.outside.Fingerprint() == before);
  }

  TEST_CASE("nothing is created or changed, inside or outside") {
    Image i;
    MergedDebian(i.rootfs);
    i.rootfs.Link("usr/lib64/libc.so.6", i.outside / "marker/usr/lib64/libc.so.6");
    const std::string in = i.rootfs.Fingerprint(), out = i.outside.Fingerprint();
    CHECK(i.Probe() == "/usr/lib/x86_64-linux-gnu");
    CHECK(i.rootfs.Fingerprint() == in);
    CHECK(i.outside.Fingerprint() == out);
  }
}

}  // namespace ocid
