// /etc/ld.so.preload parsing and merging.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "preload.h"

using ocid::HostCredentials;
using ocid::MayRead;
using ocid::MergePreload;
using ocid::ParsePreload;

namespace {
using Strings = std::vector<std::string>;
}

TEST_SUITE("preload") {
  TEST_CASE("ParsePreload: separators are white space and ':'") {
    CHECK(ParsePreload("") == Strings{});
    CHECK(ParsePreload("\n\n  \t\n") == Strings{});
    CHECK(ParsePreload("/lib/a.so") == Strings{"/lib/a.so"});
    CHECK(ParsePreload("/lib/a.so\n") == Strings{"/lib/a.so"});
    CHECK(ParsePreload("/lib/a.so /lib/b.so") == Strings{"/lib/a.so", "/lib/b.so"});
    CHECK(ParsePreload("/lib/a.so:/lib/b.so") == Strings{"/lib/a.so", "/lib/b.so"});
    CHECK(ParsePreload("  /lib/a.so\t\t/lib/b.so::/lib/c.so\r\n\n/lib/d.so\n") ==
          Strings{"/lib/a.so", "/lib/b.so", "/lib/c.so", "/lib/d.so"});
    CHECK(ParsePreload("libx.so") == Strings{"libx.so"});
  }

  TEST_CASE("MergePreload: empty image") {
    CHECK(MergePreload("", {"/usr/lib64/libonload.so"}) == "/usr/lib64/libonload.so\n");
    CHECK(MergePreload("\n", {"/a.so", "/b.so"}) == "/a.so\n/b.so\n");
    CHECK(MergePreload("", {}) == "");
  }

  TEST_CASE("MergePreload: image entries first, in order, then ours") {
    CHECK(MergePreload("/lib/z.so /lib/a.so\n", {"/usr/lib64/libonload.so"}) ==
          "/lib/z.so\n/lib/a.so\n/usr/lib64/libonload.so\n");
    CHECK(MergePreload("/lib/z.so:/lib/a.so", {}) == "/lib/z.so\n/lib/a.so\n");
  }

  TEST_CASE("MergePreload: no duplicates") {
    CHECK(MergePreload("/lib/a.so\n/usr/lib64/libonload.so\n", {"/usr/lib64/libonload.so"}) ==
          "/lib/a.so\n/usr/lib64/libonload.so\n");
    CHECK(MergePreload("", {"/x.so", "/y.so", "/x.so"}) == "/x.so\n/y.so\n");
    CHECK(MergePreload("/y.so", {"/x.so", "/y.so"}) == "/y.so\n/x.so\n");
  }

  TEST_CASE("MayRead: the class the kernel picks decides, owner before group before other") {
    HostCredentials user{1000, 1000, {27}};
    // Owner: only the owner bits count, even when others may read.
    CHECK(MayRead(user, 0400, 1000, 0));
    CHECK_FALSE(MayRead(user, 0044, 1000, 0));
    // Group, by the primary or an additional gid.
    CHECK(MayRead(user, 0040, 0, 1000));
    CHECK(MayRead(user, 0040, 0, 27));
    CHECK_FALSE(MayRead(user, 0604, 0, 27));
    // Other.
    CHECK(MayRead(user, 0004, 0, 0));
    CHECK_FALSE(MayRead(user, 0600, 0, 0));
    CHECK_FALSE(MayRead(user, 0660, 0, 0));
    CHECK_FALSE(MayRead(user, 0000, 1000, 1000));
    // Host root reads anything.
    CHECK(MayRead(HostCredentials{0, 0, {}}, 0000, 1000, 1000));
    // An unmapped uid or gid is no one's: only "other" applies.
    HostCredentials nobody{HostCredentials::kUnmapped, HostCredentials::kUnmapped, {}};
    CHECK_FALSE(MayRead(nobody, 0660, 0, 0));
    CHECK(MayRead(nobody, 0644, 0, 0));
  }

}  // TEST_SUITE
