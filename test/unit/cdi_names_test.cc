// CDI names from strings: stems, kinds, spec and preload file names, and
// the inverse names a CDI directory's reader takes them back with.
#include "cdi_names.h"

#include <doctest/doctest.h>

#include <string>

namespace ocid {
namespace {

TEST_CASE("cdi_names: an inventory's stem is its file name without the directory and .json") {
  CHECK(InventoryStem("/etc/oci-decorator/onload.json") == "onload");
  CHECK(InventoryStem("onload.json") == "onload");
  CHECK(InventoryStem("/etc/oci-decorator/a.b.json") == "a.b");
  CHECK(InventoryStem("/x/onload") == "onload");
  CHECK(InventoryStem("/x/.json") == ".json");  // nothing before ".json": kept whole
}

TEST_CASE("cdi_names: the kind is the inventory's cdi_kind, else the default vendor and stem") {
  CHECK(CdiKindOf("amd.com/onload", "/etc/oci-decorator/onload.json") == "amd.com/onload");
  CHECK(CdiKindOf("", "/etc/oci-decorator/rdma.json") == "oci-decorator.local/rdma");
}

TEST_CASE("cdi_names: a spec's file name gives back its stem") {
  for (std::string stem : {"onload", "a.b", "a%b", "x-y_z"}) {
    CAPTURE(stem);
    CHECK(CdiFileName(stem) == "oci-decorator-" + stem + ".json");
    CHECK(CdiSpecStem(CdiFileName(stem)) == stem);
    CHECK(IsOurCdiFileName(CdiFileName(stem)));
  }
  CHECK(CdiSpecStem("oci-decorator-.json") == "");
  CHECK(CdiSpecStem("oci-decorator-onload.yaml") == "");
  CHECK(CdiSpecStem("vendor-onload.json") == "");
  CHECK(CdiSpecStem("oci-decorator-onload.json.tmp") == "");
}

TEST_CASE("cdi_names: a preload file's name gives back its spec's stem, percent-encoding and all") {
  for (std::string stem : {"onload", "a.b", "a%b", "a%2Eb"})
    for (std::string dev : {"onload", "b.c", "x:y"}) {
      CAPTURE(stem);
      CAPTURE(dev);
      std::string name = CdiPreloadFileName(CdiFileName(stem), dev);
      CHECK(CdiPreloadStem(name) == stem);
      CHECK(IsOurCdiFileName(name));
    }
  CHECK(CdiPreloadFileName("oci-decorator-a.b.json", "c") == "oci-decorator-a%2Eb.c.preload");
  CHECK(CdiPreloadFileName("oci-decorator-a%b.json", "c") == "oci-decorator-a%25b.c.preload");
  // "a" with device "b.c" and "a.b" with device "c" do not share a file.
  CHECK(CdiPreloadFileName(CdiFileName("a"), "b.c") != CdiPreloadFileName(CdiFileName("a.b"), "c"));
  CHECK(CdiPreloadStem("oci-decorator-onload.json") == "");
  CHECK(CdiPreloadStem("my-spec.onload.preload") == "");  // a spec not of ours
  CHECK(CdiPreloadStem("oci-decorator-a%2Fb.x.preload") == "");
}

TEST_CASE("cdi_names: names we do not make are not ours") {
  for (std::string name : {"", "onload.json", "vendor.json", "oci-decorator-.json", "x.preload",
                           "oci-decorator-onload..preload", ".oci-decorator-onload.json.tmp.1"}) {
    CAPTURE(name);
    CHECK_FALSE(IsOurCdiFileName(name));
  }
}

}  // namespace
}  // namespace ocid
