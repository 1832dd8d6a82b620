// PlanToJson: the output of `oci-decorator plan`.
#include <doctest/doctest.h>

#include <sys/sysmacros.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan.h"
#include "plan_json.h"

using nlohmann::json;
using ocid::FileType;
using ocid::MountOp;
using ocid::Plan;

namespace {

using Strings = std::vector<std::string>;

MountOp Op(FileType t, const std::string& source, const std::string& target, uint64_t rdev = 0) {
  MountOp m;
  m.type = t;
  m.source = source;
  m.resolved = source;
  m.target = target;
  m.nodev = !(t == FileType::kCharDevice || t == FileType::kBlockDevice);
  m.rdev = rdev;
  m.inventory = "/etc/oci-decorator/oci-decorator.d/onload.json";
  m.feature = "onload";
  return m;
}

Plan SamplePlan() {
  Plan p;
  p.container_id = "ctr1";
  p.pid = 4242;
  p.rootfs = "/run/bundles/ctr1/rootfs";
  p.activated.push_back({"/etc/oci-decorator/oci-decorator.d/onload.json",
                         "OCI_ONLOAD",
                         {"onload", "zf"},
                         "env OCI_ONLOAD=all"});
  p.mounts.push_back(Op(FileType::kCharDevice, "/dev/onload", "/dev/onload", makedev(300, 5)));
  p.mounts.push_back(Op(FileType::kBlockDevice, "/dev/nvme0n1", "/dev/nvme0n1", makedev(259, 300)));
  // A RHEL-layout host's library, in the directory of a Debian image's libc.
  p.library_dirs = ocid::ImageLibraryDirs("/lib/x86_64-linux-gnu");
  MountOp lib = Op(FileType::kRegular, "/usr/lib64/libonload_ext.so",
                   "/lib/x86_64-linux-gnu/libonload_ext.so");
  lib.resolved = "/usr/lib64/libonload_ext.so.1.1.0";
  lib.library = true;
  p.mounts.push_back(lib);
  p.mounts.push_back(
      Op(FileType::kDirectory, "/usr/libexec/onload/profiles", "/usr/libexec/onload/profiles"));
  ocid::DeviceRule c;
  c.type = 'c';
  c.major = 300;
  c.minor = 5;
  ocid::DeviceRule b;
  b.type = 'b';
  b.major = 259;
  b.minor = 300;
  p.device_rules = {c, b};
  p.preload = {"/lib/x86_64-linux-gnu/libonload.so"};
  p.skipped = {"/dev/knem"};
  return p;
}

bool Has(const json& arr, const std::string& s) {
  return std::find(arr.begin(), arr.end(), json(s)) != arr.end();
}

}  // namespace

TEST_SUITE("plan_json") {
  TEST_CASE("full plan: parses and has the documented keys") {
    const std::string text = ocid::PlanToJson(SamplePlan());
    CHECK(text.back() == '\n');
    json j = json::parse(text, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    REQUIRE(j.is_object());
    for (const char* k : {"container", "active", "activated", "library_dirs", "mounts", "devices",
                          "cgroup_rules", "preload", "preload_file", "skipped"}) {
      CAPTURE(k);
      CHECK(j.contains(k));
    }

    CHECK(j["container"]["id"] == "ctr1");
    CHECK(j["container"]["pid"] == 4242);
    CHECK(j["container"]["rootfs"] == "/run/bundles/ctr1/rootfs");
    CHECK(j["active"] == true);

    REQUIRE(j["activated"].size() == 1);
    CHECK(j["activated"][0]["file"] == "/etc/oci-decorator/oci-decorator.d/onload.json");
    CHECK(j["activated"][0]["activation_flag"] == "OCI_ONLOAD");
    CHECK(j["activated"][0]["features"] == json({"onload", "zf"}));
    CHECK(j["activated"][0]["requested_by"] == "env OCI_ONLOAD=all");

    const json& ms = j["mounts"];
    REQUIRE(ms.size() == 4);
    for (const auto& m : ms) {
      for (const char* k : {"type", "source", "resolved", "target", "flags"}) {
        CAPTURE(k);
        CHECK(m.contains(k));
      }
      CHECK(Has(m["flags"], "bind"));
    }
    CHECK(ms[0]["type"] == "char-device");
    CHECK(ms[1]["type"] == "block-device");
    CHECK(ms[2]["type"] == "file");
    CHECK(ms[3]["type"] == "directory");
    CHECK(ms[2]["source"] == "/usr/lib64/libonload_ext.so");
    CHECK(ms[2]["resolved"] == "/usr/lib64/libonload_ext.so.1.1.0");
    CHECK(ms[2]["target"] == "/lib/x86_64-linux-gnu/libonload_ext.so");
    // Where libraries land, and why.
    CHECK(j["library_dirs"] ==
          json({{"dirs", {"/lib/x86_64-linux-gnu"}},
                {"why", "the image's libc.so.6 is in /lib/x86_64-linux-gnu"}}));

    // Device nodes must stay usable: no nodev; files and directories get it.
    for (int i : {0, 1}) {
      CAPTURE(i);
      CHECK_FALSE(Has(ms[i]["flags"], "nodev"));
      CHECK(Has(ms[i]["flags"], "ro"));
      CHECK(Has(ms[i]["flags"], "nosuid"));
    }
    for (int i : {2, 3}) {
      CAPTURE(i);
      CHECK(Has(ms[i]["flags"], "ro"));
      CHECK(Has(ms[i]["flags"], "nosuid"));
      CHECK(Has(ms[i]["flags"], "nodev"));
    }

    const json& devs = j["devices"];
    REQUIRE(devs.size() == 2);
    CHECK(devs[0]["path"] == "/dev/onload");
    CHECK(devs[0]["type"] == "c");
    CHECK(devs[0]["major"] == 300);
    CHECK(devs[0]["minor"] == 5);
    CHECK(devs[1]["path"] == "/dev/nvme0n1");
    CHECK(devs[1]["type"] == "b");
    CHECK(devs[1]["major"] == 259);
    CHECK(devs[1]["minor"] == 300);

    CHECK(j["cgroup_rules"] == json({"c 300:5 rwm", "b 259:300 rwm"}));
    CHECK(j["preload"] == json({"/lib/x86_64-linux-gnu/libonload.so"}));
    CHECK(j["preload_file"] == "/etc/ld.so.preload");
    CHECK(j["skipped"] == json({"/dev/knem"}));
  }

  TEST_CASE("large device numbers are not truncated") {
    Plan p;
    p.container_id = "c";
    p.mounts.push_back(Op(FileType::kCharDevice, "/dev/x", "/dev/x", makedev(4095, 1048575)));
    json j = json::parse(ocid::PlanToJson(p));
    REQUIRE(j["devices"].size() == 1);
    CHECK(j["devices"][0]["major"] == 4095);
    CHECK(j["devices"][0]["minor"] == 1048575);
  }

  TEST_CASE("flags follow the MountOp fields") {
    Plan p;
    MountOp m = Op(FileType::kRegular, "/a", "/a");
    m.readonly = false;
    m.nosuid = false;
    m.nodev = false;
    p.mounts.push_back(m);
    json j = json::parse(ocid::PlanToJson(p));
    const json& flags = j["mounts"][0]["flags"];
    CHECK(Has(flags, "bind"));
    CHECK_FALSE(Has(flags, "ro"));
    CHECK_FALSE(Has(flags, "nosuid"));
    CHECK_FALSE(Has(flags, "nodev"));
    CHECK(j["devices"].empty());
  }

  TEST_CASE("inactive plan: empty arrays, no preload file") {
    Plan p;
    p.container_id = "idle";
    p.pid = 1;
    p.rootfs = "/r";
    json j = json::parse(ocid::PlanToJson(p), nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(j["active"] == false);
    CHECK(j["container"]["id"] == "idle");
    for (const char* k : {"activated", "mounts", "devices", "cgroup_rules", "preload", "skipped"}) {
      CAPTURE(k);
      REQUIRE(j[k].is_array());
      CHECK(j[k].empty());
    }
    CHECK(j["preload_file"] == "");
    CHECK(j["library_dirs"]["dirs"].empty());
  }

  TEST_CASE("strings are escaped, output stays valid JSON") {
    Plan p;
    p.container_id = "a\"b\\c";
    p.rootfs = "/r/with space/\ttab";
    p.skipped = {"/dev/we\"ird"};
    json j = json::parse(ocid::PlanToJson(p), nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(j["container"]["id"] == "a\"b\\c");
    CHECK(j["container"]["rootfs"] == "/r/with space/\ttab");
    CHECK(j["skipped"][0] == "/dev/we\"ird");
  }

  // Finding 6 of issue 19: `plan` printed a bundle's root.path and an ignored
  // env value with C1 controls (U+009B, CSI) and DEL raw to the terminal.
  TEST_CASE("a bundle's controls reach the terminal as JSON escapes (C1, DEL, bidi)") {
    Plan p;
    p.container_id = "ctr";
    p.rootfs =
        "/b/root\xc2\x9b"
        "2J\x7f";
    p.ignored = {
        "env OCI_ONLOAD=\xc2\x9b"
        "31m\x7f\xe2\x80\xae\r"};
    std::string text = ocid::PlanToJson(p);
    for (std::string raw : {"\x7f", "\xc2\x9b", "\xe2\x80\xae", "\r", "\x1b"})
      CHECK_MESSAGE(text.find(raw) == std::string::npos, "raw control in the plan's output");
    CHECK(text.find("\"/b/root\\u009b2J\\u007f\"") != std::string::npos);
    CHECK(text.find("\"env OCI_ONLOAD=\\u009b31m\\u007f\\u202e\\r\"") != std::string::npos);
    json j = json::parse(text);
    CHECK(j["container"]["rootfs"] == p.rootfs);
    CHECK(j["ignored"][0] == p.ignored[0]);
  }

  // `oci-decorator plan` prints this. Host file names matched by a glob, and
  // the container id taken from the bundle directory name, are bytes, not
  // necessarily UTF-8: the printer must not throw (nlohmann's dump() does by
  // default, which would abort the command).
  TEST_CASE("non-UTF-8 bytes in paths do not throw and give valid JSON") {
    Plan p;
    p.container_id = "bundle-\xff";
    p.rootfs = "/run/\xfe/rootfs";
    MountOp m =
        Op(FileType::kRegular, "/usr/lib64/libonload.so.\xff", "/usr/lib64/libonload.so.\xff");
    p.mounts.push_back(m);
    p.skipped = {"/dev/\xc0\xaf"};
    std::string text;
    CHECK_NOTHROW(text = ocid::PlanToJson(p));
    json j = json::parse(text, nullptr, false);
    CHECK_FALSE(j.is_discarded());
  }

  TEST_CASE("create only when true, groups only when there are some") {
    const std::string plain = ocid::PlanToJson(SamplePlan());
    json j = json::parse(plain);
    for (const auto& m : j["mounts"]) CHECK_FALSE(m.contains("create"));
    CHECK_FALSE(j.contains("groups"));

    Plan p = SamplePlan();
    MountOp dir = Op(FileType::kDirectory, "/run/onload", "/run/onload");
    dir.create = true;
    p.mounts.push_back(dir);
    ocid::GroupOp g;
    g.gid = 4242;
    g.mode = 0660;
    g.mode_known = true;
    g.required = true;
    g.gid_file = "/sys/module/onload/parameters/shrub_controller_client_gid";
    g.mode_file = "/sys/module/onload/parameters/shrub_controller_client_mode";
    g.inventory = "/etc/oci-decorator/oci-decorator.d/onload.json";
    g.feature = "onload";
    p.groups.push_back(g);
    ocid::GroupOp unknown;
    unknown.gid = 7;
    unknown.required = true;
    unknown.present = true;
    p.groups.push_back(unknown);
    j = json::parse(ocid::PlanToJson(p));
    CHECK(j["mounts"].back()["create"] == true);
    CHECK(j["mounts"].back()["source"] == "/run/onload");
    REQUIRE(j["groups"].size() == 2);
    CHECK(j["groups"][0] == json::parse(R"({"gid": 4242,
      "gid_file": "/sys/module/onload/parameters/shrub_controller_client_gid", "mode": "0660",
      "required": true, "present": false,
      "inventory": "/etc/oci-decorator/oci-decorator.d/onload.json", "feature": "onload"})"));
    CHECK(j["groups"][1]["mode"].is_null());
    CHECK(j["groups"][1]["present"] == true);
  }

}  // TEST_SUITE
