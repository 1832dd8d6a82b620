// EditSpec: golden edits of config.json, no root, no files.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <string>

#include "plan.h"
#include "spec_editor.h"

using ocid::EditSpec;
using ocid::Error;
using ocid::FileType;
using ocid::MountOp;
using ocid::Plan;

namespace {

MountOp File(const std::string& target, const std::string& resolved = "") {
  MountOp m;
  m.type = FileType::kRegular;
  m.source = target;
  m.resolved = resolved.empty() ? target : resolved;
  m.target = target;
  return m;
}

MountOp Dir(const std::string& target) {
  MountOp m = File(target);
  m.type = FileType::kDirectory;
  return m;
}

MountOp Chr(const std::string& target, unsigned maj, unsigned min, uint32_t perm = 0666) {
  MountOp m = File(target);
  m.type = FileType::kCharDevice;
  m.rdev = makedev(maj, min);
  m.mode = S_IFCHR | perm;
  m.nodev = false;
  return m;
}

ocid::DeviceRule Rule(unsigned maj, unsigned min) {
  ocid::DeviceRule r;
  r.type = 'c';
  r.major = maj;
  r.minor = min;
  return r;
}

// The Onload-like plan: a library reached through a version link, a
// directory, a device, one preload.
Plan OnloadPlan() {
  Plan p;
  p.activated.push_back({"onload.json", "OCI_ONLOAD", {"onload"}, "env OCI_ONLOAD=all"});
  p.mounts = {File("/usr/lib64/libonload.so"),
              File("/usr/lib64/libonload_ext.so.1", "/usr/lib64/libonload_ext.so.1.2.0"),
              Dir("/usr/libexec/onload/profiles"), Chr("/dev/onload", 240, 0, 0660)};
  p.device_rules = {Rule(240, 0)};
  p.preload = {"/usr/lib64/libonload.so"};
  return p;
}

std::string Edit(const Plan& p, const std::string& root, std::string json, bool* ok = nullptr,
                 Error* err_out = nullptr) {
  Error err;
  bool r = EditSpec(p, root, &json, &err);
  if (ok) *ok = r;
  if (err_out) *err_out = err;
  if (!ok) REQUIRE_MESSAGE(r, err.Line());
  return json;
}

const char* kMinimal =
    R"({"ociVersion":"1.0.2","process":{"args":["sh"],"env":["PATH=/bin","OCI_ONLOAD=all"]},)"
    R"("root":{"path":"rootfs"},"mounts":[{"destination":"/proc","type":"proc","source":"proc"}],)"
    R"("linux":{"resources":{"devices":[{"allow":false,"access":"rwm"}]},"namespaces":[{"type":"mount"}]}})";

}  // namespace

TEST_CASE("EditSpec: files, directories, devices, rules and preload (golden)") {
  std::string out = Edit(OnloadPlan(), "/srv/host", kMinimal);
  CHECK(
      out ==
      R"({"ociVersion":"1.0.2","process":{"args":["sh"],"env":["PATH=/bin","OCI_ONLOAD=all",)"
      R"("LD_PRELOAD=/usr/lib64/libonload.so"]},"root":{"path":"rootfs"},"mounts":[)"
      R"({"destination":"/proc","type":"proc","source":"proc"},)"
      R"({"destination":"/usr/lib64/libonload.so","type":"bind","source":"/srv/host/usr/lib64/libonload.so","options":["bind","ro","nosuid","nodev"]},)"
      R"({"destination":"/usr/lib64/libonload_ext.so.1","type":"bind","source":"/srv/host/usr/lib64/libonload_ext.so.1.2.0","options":["bind","ro","nosuid","nodev"]},)"
      R"({"destination":"/usr/libexec/onload/profiles","type":"bind","source":"/srv/host/usr/libexec/onload/profiles","options":["bind","ro","nosuid","nodev"]}],)"
      R"("linux":{"resources":{"devices":[{"allow":false,"access":"rwm"},)"
      R"({"allow":true,"type":"c","major":240,"minor":0,"access":"rwm"}]},)"
      R"("namespaces":[{"type":"mount"}],)"
      R"("devices":[{"path":"/dev/onload","type":"c","major":240,"minor":0,"fileMode":432,"uid":0,"gid":0}]}})");
}

TEST_CASE("EditSpec: host root / gives the plain host paths; resolved paths are used") {
  std::string out = Edit(OnloadPlan(), "/", kMinimal);
  CHECK(out.find(R"("source":"/usr/lib64/libonload_ext.so.1.2.0")") != std::string::npos);
  CHECK(out.find(R"("destination":"/usr/lib64/libonload_ext.so.1")") != std::string::npos);
  CHECK(out.find("//usr") == std::string::npos);
}

TEST_CASE("EditSpec: block devices and what is created when absent") {
  Plan p;
  MountOp b = Chr("/dev/sdz", 8, 240, 0640);
  b.type = FileType::kBlockDevice;
  p.mounts = {b};
  ocid::DeviceRule r = Rule(8, 240);
  r.type = 'b';
  p.device_rules = {r};
  std::string out = Edit(p, "/", R"({"process":{"args":["sh"]},"root":{"path":"r"}})");
  CHECK(
      out ==
      R"({"process":{"args":["sh"]},"root":{"path":"r"},"linux":{"devices":[)"
      R"({"path":"/dev/sdz","type":"b","major":8,"minor":240,"fileMode":416,"uid":0,"gid":0}],)"
      R"("resources":{"devices":[{"allow":true,"type":"b","major":8,"minor":240,"access":"rwm"}]}}})");
}

TEST_CASE("EditSpec: LD_PRELOAD is appended to the container's own, each path once") {
  Plan p = OnloadPlan();
  p.preload.push_back("/usr/lib64/libother.so");
  SUBCASE("existing value") {
    std::string out =
        Edit(p, "/", R"({"process":{"env":["LD_PRELOAD=/a.so:/b.so","X=1"]},"root":{"path":"r"}})");
    CHECK(
        out.find(
            R"("env":["LD_PRELOAD=/a.so:/b.so /usr/lib64/libonload.so /usr/lib64/libother.so","X=1"])") !=
        std::string::npos);
  }
  SUBCASE("one of ours already there") {
    std::string out =
        Edit(p, "/",
             R"({"process":{"env":["LD_PRELOAD=/usr/lib64/libonload.so"]},"root":{"path":"r"}})");
    CHECK(out.find(R"("env":["LD_PRELOAD=/usr/lib64/libonload.so /usr/lib64/libother.so"])") !=
          std::string::npos);
  }
  SUBCASE("the last of two LD_PRELOADs is the one edited") {
    std::string out = Edit(
        p, "/",
        R"({"process":{"env":["LD_PRELOAD=/first.so","LD_PRELOAD=/last.so"]},"root":{"path":"r"}})");
    CHECK(
        out.find(
            R"("env":["LD_PRELOAD=/first.so","LD_PRELOAD=/last.so /usr/lib64/libonload.so /usr/lib64/libother.so"])") !=
        std::string::npos);
  }
  SUBCASE("empty value, and no env at all") {
    std::string out = Edit(p, "/", R"({"process":{"env":["LD_PRELOAD="]},"root":{"path":"r"}})");
    CHECK(out.find(R"("env":["LD_PRELOAD=/usr/lib64/libonload.so /usr/lib64/libother.so"])") !=
          std::string::npos);
    out = Edit(p, "/", R"({"process":{"args":["sh"]},"root":{"path":"r"}})");
    CHECK(
        out.find(
            R"("process":{"args":["sh"],"env":["LD_PRELOAD=/usr/lib64/libonload.so /usr/lib64/libother.so"]})") !=
        std::string::npos);
  }
  SUBCASE("no process object") {
    bool ok = true;
    Error err;
    Edit(p, "/", R"({"root":{"path":"r"}})", &ok, &err);
    CHECK_FALSE(ok);
    CHECK(err.Line().find("process") != std::string::npos);
  }
}

TEST_CASE("EditSpec: idempotent") {
  std::string once = Edit(OnloadPlan(), "/srv/host", kMinimal);
  std::string twice = Edit(OnloadPlan(), "/srv/host", once);
  CHECK(twice == once);
}

TEST_CASE("EditSpec: a rule already in force is not added; one denied later is") {
  Plan p = OnloadPlan();
  std::string allowed =
      R"({"process":{},"root":{"path":"r"},"linux":{"resources":{"devices":[{"allow":false,"access":"rwm"},)"
      R"({"allow":true,"type":"c","major":240,"minor":0,"access":"rwm"}]}}})";
  std::string out = Edit(p, "/", allowed);
  CHECK(
      out.find(
          R"([{"allow":false,"access":"rwm"},{"allow":true,"type":"c","major":240,"minor":0,"access":"rwm"}])") !=
      std::string::npos);
  std::string denied_after =
      R"({"process":{},"root":{"path":"r"},"linux":{"resources":{"devices":[)"
      R"({"allow":true,"type":"c","major":240,"minor":0,"access":"rwm"},{"allow":false,"access":"rwm"}]}}})";
  out = Edit(p, "/", denied_after);
  CHECK(
      out.find(
          R"({"allow":false,"access":"rwm"},{"allow":true,"type":"c","major":240,"minor":0,"access":"rwm"}])") !=
      std::string::npos);
}

TEST_CASE("EditSpec: a path the container already mounts differently is an error naming it") {
  std::string in =
      R"({"process":{},"root":{"path":"r"},"mounts":[{"destination":"/usr/libexec/onload/profiles/","type":"bind","source":"/home/u/profiles"}]})";
  std::string json = in;
  Error err;
  CHECK_FALSE(EditSpec(OnloadPlan(), "/", &json, &err));
  CHECK(err.path == "/usr/libexec/onload/profiles");
  CHECK(err.Line().find("/home/u/profiles") != std::string::npos);
  CHECK(json == in);  // unchanged on failure

  std::string same =
      R"({"process":{},"root":{"path":"r"},"mounts":[{"destination":"/usr/libexec/onload/profiles","type":"bind","source":"/usr/libexec/onload/profiles","options":["rbind"]}]})";
  std::string out = Edit(OnloadPlan(), "/", same);
  CHECK(out.find(R"("options":["rbind"]})") != std::string::npos);  // kept as it was
  size_t first = out.find(R"("destination":"/usr/libexec/onload/profiles")");
  CHECK(out.find(R"("destination":"/usr/libexec/onload/profiles")", first + 1) ==
        std::string::npos);
}

TEST_CASE("EditSpec: a different device node at the same path is an error; the same one is kept") {
  std::string json =
      R"({"process":{},"root":{"path":"r"},"linux":{"devices":[{"path":"/dev/onload","type":"c","major":1,"minor":3}]}})";
  Error err;
  CHECK_FALSE(EditSpec(OnloadPlan(), "/", &json, &err));
  CHECK(err.path == "/dev/onload");
  std::string same =
      R"({"process":{},"root":{"path":"r"},"linux":{"devices":[{"path":"/dev/onload","type":"c","major":240,"minor":0}]}})";
  std::string out = Edit(OnloadPlan(), "/", same);
  CHECK(out.find(R"("devices":[{"path":"/dev/onload","type":"c","major":240,"minor":0}])") !=
        std::string::npos);
}

TEST_CASE("EditSpec: key order and unrelated content are kept") {
  std::string in =
      R"({"zeta":1,"ociVersion":"1.0.2","alpha":{"z":[1,2.5,-3,"x",null,true],"a":{}},)"
      R"("process":{"user":{"uid":0,"gid":0},"env":["A=1"],"cwd":"/"},"root":{"path":"r"},)"
      R"("hooks":{"prestart":[]},"annotations":{"k":"v \u00e9 \"q\""},"linux":{"uidMappings":[]}})";
  std::string out = Edit(OnloadPlan(), "/", in);
  CHECK(
      out.rfind(
          R"({"zeta":1,"ociVersion":"1.0.2","alpha":{"z":[1,2.5,-3,"x",null,true],"a":{}},)"
          R"("process":{"user":{"uid":0,"gid":0},"env":["A=1","LD_PRELOAD=/usr/lib64/libonload.so"],"cwd":"/"},)"
          R"("root":{"path":"r"},"hooks":{"prestart":[]},"annotations":{"k":"v é \"q\""},)"
          R"("linux":{"uidMappings":[],"devices":[)",
          0) == 0);
  CHECK(out.find(R"("mounts":[{"destination":"/usr/lib64/libonload.so")") != std::string::npos);
}

TEST_CASE("EditSpec: indented files stay indented (tabs like `runc spec`, else spaces)") {
  std::string tabs = "{\n\t\"process\": {},\n\t\"root\": {\"path\": \"r\"}\n}\n";
  std::string out = Edit(OnloadPlan(), "/", tabs);
  CHECK(out.rfind("{\n\t\"process\": {\n\t\t\"env\": [", 0) == 0);
  CHECK(out.back() == '\n');
  std::string spaces = "{\n  \"process\": {},\n  \"root\": {\"path\": \"r\"}\n}";
  out = Edit(OnloadPlan(), "/", spaces);
  CHECK(out.rfind("{\n  \"process\": {\n    \"env\": [", 0) == 0);
  out = Edit(OnloadPlan(), "/", "{\"process\":{},\"root\":{\"path\":\"r\"}}\n");
  CHECK(out.find('\n') == std::string::npos);
}

TEST_CASE("EditSpec: malformed input is refused, unchanged") {
  for (std::string bad :
       {std::string("{"), std::string("[]"), std::string(R"({"process":{},"mounts":{}})"),
        std::string(R"({"process":{},"linux":[]})"), std::string(R"({"process":{"env":"A=1"}})"),
        std::string(R"({"process":{"env":[1]}})")}) {
    CAPTURE(bad);
    std::string json = bad;
    Error err;
    CHECK_FALSE(EditSpec(OnloadPlan(), "/", &json, &err));
    CHECK_FALSE(err.empty());
    CHECK(json == bad);
  }
}

TEST_CASE("EditSpec: a plan without mounts or preload adds nothing") {
  Plan p;
  std::string out = Edit(p, "/", kMinimal);
  CHECK(out == kMinimal);
}

TEST_CASE("EditSpec: a host path that is not UTF-8 is an error, not a throw") {
  Plan p;
  p.mounts = {File("/usr/lib64/lib\xff.so")};
  std::string json = kMinimal;
  Error err;
  CHECK_FALSE(EditSpec(p, "/", &json, &err));
  CHECK(json == kMinimal);
}

TEST_CASE("EditSpec: the profile's variables are added; the container's own win") {
  Plan p = OnloadPlan();
  p.env = {{"EF_POLL_USEC", "100000"}, {"EF_TCP_FASTSTART_INIT", "0"}, {"EF_SPIN", "1"}};
  std::string json =
      R"({"process":{"env":["LD_PRELOAD=/mine.so","EF_POLL_USEC=7","EF_SPIN"]},"root":{"path":"r"}})";
  Error err;
  ocid::SpecEditNotes notes;
  REQUIRE_MESSAGE(EditSpec(p, "/", &json, &err, &notes), err.Line());
  CHECK(json.find(R"("env":["LD_PRELOAD=/mine.so /usr/lib64/libonload.so","EF_POLL_USEC=7",)"
                  R"("EF_SPIN","EF_TCP_FASTSTART_INIT=0"])") != std::string::npos);
  CHECK(notes.kept_env == std::vector<std::string>{"EF_POLL_USEC", "EF_SPIN"});
  // Editing again adds nothing.
  std::string again = json;
  REQUIRE(EditSpec(p, "/", &again, &err, &notes));
  CHECK(again == json);
}

namespace {

// A required group (the client mode gives others nothing), as the planner
// reads it from the inventory's gid_file.
ocid::GroupOp Group(uint32_t gid, bool required = true, bool present = false) {
  ocid::GroupOp g;
  g.gid = gid;
  g.mode = 0660;
  g.mode_known = true;
  g.required = required;
  g.present = present;
  g.gid_file = "/sys/module/onload/parameters/shrub_controller_client_gid";
  g.inventory = "onload.json";
  g.feature = "onload";
  return g;
}

Plan GroupPlan(std::vector<ocid::GroupOp> groups) {
  Plan p;
  p.activated.push_back({"onload.json", "OCI_ONLOAD", {"onload"}, "env OCI_ONLOAD=all"});
  p.groups = std::move(groups);
  return p;
}

std::string WithUser(const std::string& user, const std::string& linux = "") {
  return R"({"process":{"user":)" + user + R"(,"env":["OCI_ONLOAD=all"]},"root":{"path":"r"})" +
         (linux.empty() ? "" : R"(,"linux":)" + linux) + "}";
}

ocid::SpecEditNotes EditNotes(const Plan& p, std::string* json) {
  Error err;
  ocid::SpecEditNotes notes;
  REQUIRE_MESSAGE(EditSpec(p, "/", json, &err, &notes), err.Line());
  return notes;
}

}  // namespace

TEST_CASE("EditSpec: a required group the process lacks goes into additionalGids, once") {
  std::string json = WithUser(R"({"uid":1000,"gid":1000})");
  ocid::SpecEditNotes notes = EditNotes(GroupPlan({Group(4242)}), &json);
  CHECK(json == WithUser(R"({"uid":1000,"gid":1000,"additionalGids":[4242]})"));
  CHECK(notes.added_gids == std::vector<uint32_t>{4242});
  CHECK(notes.warnings.empty());
  // Idempotent: a second edit adds nothing, and says so.
  std::string again = json;
  notes = EditNotes(GroupPlan({Group(4242)}), &again);
  CHECK(again == json);
  CHECK(notes.added_gids.empty());
}

TEST_CASE("EditSpec: the container's own additionalGids keep their order; ours go last") {
  std::string json = WithUser(R"({"uid":1000,"gid":1000,"additionalGids":[20,10]})");
  EditNotes(GroupPlan({Group(4242), Group(5000)}), &json);
  CHECK(json == WithUser(R"({"uid":1000,"gid":1000,"additionalGids":[20,10,4242,5000]})"));
  // Listed already (the plan may not know it: another reading), or the
  // primary gid: nothing added, no array created.
  json = WithUser(R"({"uid":1000,"gid":1000,"additionalGids":[4242,10]})");
  std::string before = json;
  EditNotes(GroupPlan({Group(4242)}), &json);
  CHECK(json == before);
  json = WithUser(R"({"uid":1000,"gid":4242})");
  before = json;
  CHECK(EditNotes(GroupPlan({Group(4242)}), &json).added_gids.empty());
  CHECK(json == before);
}

TEST_CASE("EditSpec: groups not required, or present already, are not added") {
  std::string json = WithUser(R"({"uid":1000,"gid":1000})");
  std::string before = json;
  EditNotes(GroupPlan({Group(4242, /*required=*/false), Group(5000, true, /*present=*/true)}),
            &json);
  CHECK(json == before);
}

TEST_CASE("EditSpec: no process.user: one is made holding the group") {
  std::string json = R"({"process":{"env":["OCI_ONLOAD=all"]},"root":{"path":"r"}})";
  EditNotes(GroupPlan({Group(4242)}), &json);
  CHECK(
      json ==
      R"({"process":{"env":["OCI_ONLOAD=all"],"user":{"additionalGids":[4242]}},"root":{"path":"r"}})");
}

TEST_CASE("EditSpec: with a user namespace the container's gid is found through gidMappings") {
  const std::string linux =
      R"({"namespaces":[{"type":"user"}],"gidMappings":[{"containerID":0,"hostID":100000,"size":65536},)"
      R"({"containerID":70000,"hostID":4000,"size":1000}]})";
  std::string json = WithUser(R"({"uid":0,"gid":0})", linux);
  ocid::SpecEditNotes notes = EditNotes(GroupPlan({Group(4242)}), &json);
  CHECK(json == WithUser(R"({"uid":0,"gid":0,"additionalGids":[70242]})", linux));
  CHECK(notes.added_gids == std::vector<uint32_t>{70242});
  std::string again = json;
  EditNotes(GroupPlan({Group(4242)}), &again);
  CHECK(again == json);
}

TEST_CASE("EditSpec: a group the user namespace does not map: not added, one warning") {
  const std::string mapped =
      R"({"namespaces":[{"type":"user"}],"gidMappings":[{"containerID":0,"hostID":100000,"size":65536}]})";
  const std::string joined = R"({"namespaces":[{"type":"user","path":"/proc/42/ns/user"}]})";
  for (const std::string& linux : {mapped, joined}) {
    CAPTURE(linux);
    std::string json = WithUser(R"({"uid":0,"gid":0})", linux);
    std::string before = json;
    ocid::SpecEditNotes notes = EditNotes(GroupPlan({Group(4242)}), &json);
    CHECK(json == before);
    CHECK(notes.added_gids.empty());
    REQUIRE(notes.warnings.size() == 1);
    const std::string& w = notes.warnings[0];
    CHECK(w.find("group 4242 ") != std::string::npos);
    CHECK(w.find("shrub_controller_client_gid") != std::string::npos);
    CHECK(w.find("does not map it") != std::string::npos);
    CHECK(w.find("EF_SHRUB_CONTROLLER") != std::string::npos);
    CHECK(w.find("EACCES") != std::string::npos);
  }
  // One mapped, one not: the mapped one is added.
  std::string json = WithUser(R"({"uid":0,"gid":0})", mapped);
  ocid::SpecEditNotes notes = EditNotes(GroupPlan({Group(4242), Group(100007)}), &json);
  CHECK(json == WithUser(R"({"uid":0,"gid":0,"additionalGids":[7]})", mapped));
  CHECK(notes.warnings.size() == 1);
  // Without a user namespace the host gid is the container's.
  json = WithUser(R"({"uid":0,"gid":0})", R"({"namespaces":[{"type":"mount"}]})");
  EditNotes(GroupPlan({Group(4242)}), &json);
  CHECK(json.find(R"("additionalGids":[4242])") != std::string::npos);
}

TEST_CASE("EditSpec: malformed gidMappings or additionalGids are errors, config.json unchanged") {
  for (const std::string& json0 :
       {WithUser(R"({"gid":0})", R"({"namespaces":[{"type":"user"}],"gidMappings":{}})"),
        WithUser(R"({"gid":0})", R"({"namespaces":[{"type":"user"}],"gidMappings":[{"size":1}]})"),
        WithUser(R"({"gid":0,"additionalGids":7})")}) {
    CAPTURE(json0);
    std::string json = json0;
    Error err;
    CHECK_FALSE(EditSpec(GroupPlan({Group(4242)}), "/", &json, &err));
    CHECK(json == json0);
    CHECK(err.path == "config.json");
  }
}

TEST_CASE("EditSpec: a directory created on the host is bound like any other directory") {
  Plan p;
  p.activated.push_back({"onload.json", "OCI_ONLOAD", {"onload"}, "env OCI_ONLOAD=all"});
  MountOp m = Dir("/run/onload");
  m.create = true;
  m.resolved = "/run/onload";
  p.mounts = {m};
  std::string json = R"({"process":{"env":["OCI_ONLOAD=all"]},"root":{"path":"r"}})";
  Error err;
  REQUIRE_MESSAGE(EditSpec(p, "/srv/host", &json, &err), err.Line());
  CHECK(json == R"({"process":{"env":["OCI_ONLOAD=all"]},"root":{"path":"r"},"mounts":[)"
                R"({"destination":"/run/onload","type":"bind","source":"/srv/host/run/onload",)"
                R"("options":["bind","ro","nosuid","nodev"]}]})");
}
