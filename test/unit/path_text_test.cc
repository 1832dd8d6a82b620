// Path text: the last component, the directory and trailing slashes, as
// every module reads them from a path string (what the copies this replaced
// did, case for case).
#include "path_text.h"

#include <doctest/doctest.h>

namespace ocid {
namespace {

TEST_CASE("Basename: after the last slash, all of a path without one") {
  CHECK(Basename("/usr/lib64/libonload.so") == "libonload.so");
  CHECK(Basename("/oci-decorator") == "oci-decorator");
  CHECK(Basename("oci-decorator-runtime") == "oci-decorator-runtime");
  CHECK(Basename("amd.com/onload") == "onload");
  CHECK(Basename("/etc/cdi/") == "");
  CHECK(Basename("/") == "");
  CHECK(Basename("") == "");
}

TEST_CASE("Dirname: before the last slash, the root for /x, . without one") {
  CHECK(Dirname("/etc/containerd/config.toml") == "/etc/containerd");
  CHECK(Dirname("/config.toml") == "/");
  CHECK(Dirname("/") == "/");
  CHECK(Dirname("config.toml") == ".");
  CHECK(Dirname("") == ".");
  CHECK(Dirname("conf.d/x.toml") == "conf.d");
  CHECK(Dirname("/a/b/") == "/a/b");
  // Walking up ends at the root.
  std::string p = "/opt/onload/lib";
  p = Dirname(p);
  CHECK(p == "/opt/onload");
  p = Dirname(Dirname(p));
  CHECK(p == "/");
}

TEST_CASE("WithoutTrailingSlashes: every trailing slash, but the root stays") {
  CHECK(WithoutTrailingSlashes("/run/b/") == "/run/b");
  CHECK(WithoutTrailingSlashes("/run/b///") == "/run/b");
  CHECK(WithoutTrailingSlashes("/run/b") == "/run/b");
  CHECK(WithoutTrailingSlashes("/") == "/");
  CHECK(WithoutTrailingSlashes("///") == "/");
  CHECK(WithoutTrailingSlashes("b/") == "b");
  CHECK(WithoutTrailingSlashes("") == "");
}

}  // namespace
}  // namespace ocid
