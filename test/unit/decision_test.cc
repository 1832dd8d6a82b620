// LoadIfAsked, PlanFor, CouldHaveAsked and RunHook (decision.h, hook.h) on a
// real temporary tree, fed hostile input: the hostile.decision suite and
// the hook's share of hostile.read in the hostile-input set
// (hostile_input.h).
//
// What "asked" means (decision.h): an activation flag occurs literally (or
// \u00XX-escaped) in the state or config.json bytes. A config.json that is
// garbage but mentions no flag did not ask; one that mentions a flag asked
// and fails with the parse error.
#include <doctest/doctest.h>

#include "test_tree.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "decision.h"
#include "error.h"
#include "files.h"
#include "hook_cmd.h"
#include "hostile_input.h"
#include "oci_state.h"

using ocid::Error;
using ocid::OciState;
using ocid::test::TempTree;
using ocid::test::hostile::CheckOneLine;
using ocid::test::hostile::Contains;
using ocid::test::hostile::kGoodInventory;

namespace {

const std::string kBrokenInventory =
    R"({"activation_flag": "OCI_BROKEN", "driver_feature": ["f"], "inventory": {"f": )";

struct Fixture {
  TempTree t;
  ocid::Options opts;
  std::string bundle;

  Fixture() {
    ::chmod(t.path().c_str(), 0755);
    t.Dir("conf");
    t.Dir("bundle/rootfs");
    t.File("host/usr/bin/good-tool", "tool");
    ::chmod((t / "conf").c_str(), 0755);
    opts.config_dir = t / "conf";
    opts.host_root = t / "host";
    opts.state_dir = t / "state";
    bundle = t / "bundle";
  }
  void Inventory(const std::string& name, const std::string& content) const {
    t.File("conf/" + name, content);
    ::chmod((t / ("conf/" + name)).c_str(), 0644);
  }
  void Config(const std::string& content) const { t.File("bundle/config.json", content); }
  // A config.json with these env entries (JSON strings, comma separated).
  void ConfigEnv(const std::string& env) const {
    Config(R"({"root": {"path": "rootfs"}, "process": {"env": ["PATH=/bin")" +
           (env.empty() ? "" : ", " + env) + "]}}");
  }
  std::string State(const std::string& extra = "") const {
    return R"({"id": "c", "bundle": ")" + bundle + "\"" + extra + "}";
  }
};

struct Loaded {
  bool ok = false, asked = false, dir_unreadable = false;
  Error err;
  ocid::Container c;
};

Loaded Load(const Fixture& f, const std::string& state) {
  Loaded l;
  Error perr;
  REQUIRE_MESSAGE(ocid::ParseOciState(state, &l.c.state, &perr), perr.Line());
  l.ok = ocid::LoadIfAsked(f.opts, state, &l.c, &l.asked, &l.dir_unreadable, &l.err);
  return l;
}

// PlanFor on a loaded container that asked.
bool Plan(const Fixture& f, const Loaded& l, ocid::Plan* plan, Error* err) {
  std::unique_ptr<ocid::HostRootView> host;
  return ocid::PlanFor(f.opts, l.c, false, &host, plan, err);
}

// RunHook in-process with `state` on its stdin (unconfined: an activated
// container is refused before anything is applied).
int Hook(const Fixture& f, const std::string& state, const std::string& stage = "prestart") {
  TempTree in;
  in.File("state", state);
  int fd = ::open((in / "state").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  int rc = ocid::RunHook(f.opts, stage, fd, /*confined=*/false);
  ::close(fd);
  return rc;
}

}  // namespace

TEST_SUITE("hostile.decision") {
  TEST_CASE("garbage config.json: did not ask unless a flag occurs in it") {
    Fixture f;
    f.Inventory("a-good.json", kGoodInventory);
    f.Config("\xff\xfe garbage {{{ [[[ \x01\x02");
    Loaded l = Load(f, f.State());
    CHECK_MESSAGE(l.ok, l.err.Line());
    CHECK_FALSE(l.asked);
    CHECK(Hook(f, f.State()) == 0);

    f.Config("\xff\xfe garbage OCI_GOOD=all {{{");
    l = Load(f, f.State());
    CHECK(l.asked);
    REQUIRE_FALSE(l.ok);
    CheckOneLine(l.err);
    CHECK(Contains(l.err.Line(), "not valid JSON"));
    CHECK(Contains(l.err.Line(), f.bundle + "/config.json"));
    CHECK(Hook(f, f.State()) == 1);
    // Even "OCI_GOOD=none" in garbage is a mention: the hook cannot tell.
    f.Config("{\"process\": {\"env\": [\"OCI_GOOD=none\"]");
    CHECK(Hook(f, f.State()) == 1);
    // A flag in the state (an annotation) with a garbage config.json.
    f.Config("garbage");
    CHECK(Hook(f, f.State(R"(, "annotations": {"oci-decorator/OCI_GOOD": "all"})")) == 1);
  }

  TEST_CASE("a flag mentioned outside process.env asks nothing: no cap, no strict parse") {
    Fixture f;
    f.Inventory("a-good.json", kGoodInventory);
    // Over the 32 MiB cap, the flag in process.args and invalid UTF-8 in
    // another variable's value (runc runs it: Go replaces the byte).
    std::string pad(33u << 20, 'p');
    std::string body =
        R"({"root": {"path": "rootfs"}, "process": {"args": ["sh", "-c", "OCI_GOOD=all x"],
      "env": ["LANG=caf)"
        "\xff"
        R"(", "PAD=)" +
        pad + "\"]";
    f.Config(body + "}}");
    Loaded l = Load(f, f.State());
    CHECK_MESSAGE(l.ok, l.err.Line());
    CHECK_FALSE(l.asked);
    CHECK(Hook(f, f.State()) == 0);
    // The flag as an env entry of the same document: the caps apply.
    f.Config(body.substr(0, body.size() - 1) + R"(, "OCI_GOOD=all"]}})");
    l = Load(f, f.State());
    CHECK(l.asked);
    CHECK_FALSE(l.ok);
    CHECK_MESSAGE(Contains(l.err.Line(), "larger than 33554432 bytes"), l.err.Line());
    CHECK(Hook(f, f.State()) == 1);
    // Small, with the invalid byte: the strict parse refuses only an asker.
    f.Config(R"({"root": {"path": "rootfs"}, "process": {"args": ["OCI_GOOD"], "env": ["LANG=caf)"
             "\xff"
             R"("]}})");
    l = Load(f, f.State());
    CHECK_MESSAGE(l.ok, l.err.Line());
    CHECK_FALSE(l.asked);
    f.Config(R"({"root": {"path": "rootfs"}, "process": {"env": ["LANG=caf)"
             "\xff"
             R"(", "OCI_GOOD=all"]}})");
    l = Load(f, f.State());
    CHECK(l.asked);
    CHECK_FALSE(l.ok);
    // The state: an annotation value naming the flag is no request either.
    f.ConfigEnv(R"("TERM=xterm")");
    CHECK(Hook(f, f.State(R"(, "annotations": {"note": "oci-decorator/OCI_GOOD"})")) == 0);
    CHECK_FALSE(ocid::CouldHaveAsked(
        f.opts, f.State(R"(, "pid": "x", "annotations": {"note": "OCI_GOOD"})")));
    CHECK(ocid::CouldHaveAsked(
        f.opts, f.State(R"(, "pid": "x", "annotations": {"oci-decorator/OCI_GOOD": "all"})")));
  }

  TEST_CASE(
      "config.json missing, a FIFO, a directory, a symlink, 50 MB: no hang; errors only once "
      "asked") {
    Fixture f;
    f.Inventory("a-good.json", kGoodInventory);
    const std::string cfg = f.bundle + "/config.json";
    // The request in the state: the caps on config.json apply.
    const std::string asking = f.State(R"(, "annotations": {"oci-decorator/OCI_GOOD": "all"})");
    auto load = [&](const std::string& state) {
      auto run = std::async(std::launch::async, [&] { return Load(f, state); });
      if (run.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
        int w = ::open(cfg.c_str(), O_WRONLY | O_NONBLOCK);  // release a stuck reader
        if (w >= 0) ::close(w);
        FAIL("LoadIfAsked hangs");
      }
      return run.get();
    };
    // Without a flag in the state, whatever config.json is cannot have asked.
    auto not_asked = [&]() {
      Loaded l = load(f.State());
      CHECK_MESSAGE(l.ok, l.err.Line());
      CHECK_FALSE(l.asked);
      CHECK(Hook(f, f.State()) == 0);
    };
    auto load_error = [&]() {
      Loaded l = load(asking);
      CHECK_FALSE(l.ok);
      CHECK_FALSE(l.dir_unreadable);
      CheckOneLine(l.err);
      CHECK_MESSAGE(Contains(l.err.Line(), cfg), l.err.Line());
      CHECK(Hook(f, asking) == 1);
      return l.err.Line();
    };
    not_asked();
    CHECK(Contains(load_error(), "No such file"));
    REQUIRE(::mkfifo(cfg.c_str(), 0644) == 0);
    not_asked();
    CHECK(Contains(load_error(), "not a regular file"));
    ::unlink(cfg.c_str());
    f.t.Dir("bundle/config.json");
    not_asked();
    CHECK(Contains(load_error(), "not a regular file"));
    ::rmdir(cfg.c_str());
    // A symlink is followed for the scan, as the runtime followed it.
    f.t.File("bundle/real.json", R"({"root": {"path": "rootfs"}})");
    f.t.Link("bundle/config.json", "real.json");
    not_asked();
    CHECK(Contains(load_error(), "symbolic link"));
    f.t.File("bundle/real.json",
             R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]}})");
    Loaded l = load(f.State());
    CHECK(l.asked);
    CHECK_FALSE(l.ok);
    CHECK(Contains(l.err.Line(), "symbolic link"));
    ::unlink(cfg.c_str());
    int fd = ::open(cfg.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, 50 << 20) == 0);
    ::close(fd);
    auto t0 = std::chrono::steady_clock::now();
    not_asked();
    CHECK(
        Contains(load_error(), "larger than " + std::to_string(ocid::kMaxConfigBytes) + " bytes"));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
    // A valid config.json over the cap that names no flag: not asked. The
    // same naming the flag at its very end (read in chunks, found across
    // any chunk boundary) asked, and the cap applies.
    std::string big = R"({"root": {"path": "rootfs"}, "process": {"env": [)";
    while (big.size() < (33u << 20)) big += "\"A_RATHER_LONG_VARIABLE=with some value\", ";
    f.Config(big + "\"LAST=1\"]}}");
    not_asked();
    f.Config(big + "\"OCI_GOOD=all\"]}}");
    l = load(f.State());
    CHECK(l.asked);
    CHECK(Contains(l.err.Line(), "larger than"));
    // The state's bundle is a file, or missing.
    ::unlink(cfg.c_str());
    f.t.File("bundle-file", "x");
    l = Load(f, R"({"id": "c", "bundle": ")" + (f.t / "bundle-file") + "\"}");
    CHECK(l.ok);
    CHECK_FALSE(l.asked);
    l = Load(f, R"({"id": "c", "bundle": ")" + (f.t / "bundle-file") +
                    R"(", "annotations": {"oci-decorator/OCI_GOOD": "all"}})");
    CHECK_FALSE(l.ok);
    CHECK(Contains(l.err.Line(), "Not a directory"));
    l = Load(f, R"({"id": "c", "bundle": ")" + (f.t / "no-such-bundle") +
                    R"(", "annotations": {"oci-decorator/OCI_GOOD": "all"}})");
    CHECK_FALSE(l.ok);
    CHECK(Contains(l.err.Line(), "no-such-bundle/config.json"));
    // None of this matters with no inventory installed.
    Fixture empty;
    Loaded e = Load(empty, R"({"id": "c", "bundle": "/nonexistent/ocid"})");
    CHECK(e.ok);
    CHECK_FALSE(e.asked);
  }

  TEST_CASE("a broken inventory fails only the containers that ask for it") {
    Fixture f;
    f.Inventory("a-good.json", kGoodInventory);
    f.Inventory("b-broken.json", kBrokenInventory);
    f.Inventory("c-garbage.json", "\xff\xfe\x01 not json at all");

    // Asks for the good one only.
    f.ConfigEnv(R"("OCI_GOOD=all")");
    Loaded l = Load(f, f.State());
    REQUIRE_MESSAGE(l.ok, l.err.Line());
    REQUIRE(l.asked);
    CHECK(l.c.inventories.broken.size() == 2);
    ocid::Plan plan;
    Error err;
    REQUIRE_MESSAGE(Plan(f, l, &plan, &err), err.Line());
    REQUIRE(plan.activated.size() == 1);
    CHECK(Contains(plan.activated[0].file, "a-good.json"));

    // Switches the broken one off, by env and by annotation: not a request.
    for (const std::string& how : {std::string(R"("OCI_BROKEN=none", "OCI_GOOD=0")"),
                                   std::string(R"("OCI_BROKEN=", "OCI_BROKEN")")}) {
      f.ConfigEnv(how);
      l = Load(f, f.State());
      REQUIRE(l.ok);
      CHECK(l.asked);
      CHECK_MESSAGE(Plan(f, l, &plan, &err), err.Line());
      CHECK_FALSE(plan.Active());
      CHECK(Hook(f, f.State()) == 0);
    }

    // Asks for the broken one: fails, naming it.
    f.ConfigEnv(R"("OCI_BROKEN=all")");
    l = Load(f, f.State());
    REQUIRE(l.ok);
    CHECK_FALSE(Plan(f, l, &plan, &err));
    CheckOneLine(err);
    CHECK_MESSAGE(Contains(err.Line(), f.t / "conf/b-broken.json"), err.Line());
    CHECK(Hook(f, f.State()) == 1);
    l = Load(f, f.State(R"(, "annotations": {"oci-decorator/OCI_BROKEN": "f"})"));
    f.ConfigEnv("");
    l = Load(f, f.State(R"(, "annotations": {"oci-decorator/OCI_BROKEN": "f"})"));
    REQUIRE(l.ok);
    CHECK(l.asked);
    CHECK_FALSE(Plan(f, l, &plan, &err));

    // Asks for nothing: never even parsed.
    f.ConfigEnv(R"("OTHER=1")");
    l = Load(f, f.State());
    CHECK(l.ok);
    CHECK_FALSE(l.asked);
    CHECK(Hook(f, f.State()) == 0);
  }

  TEST_CASE("every inventory broken: a container that does not ask starts") {
    Fixture f;
    f.Inventory("a.json", kBrokenInventory);
    f.Inventory("b.json", "");
    f.Inventory("c.json", "\xff");
    f.Inventory("d.json", R"({"activation_flag": 7})");
    f.Inventory("e.json", std::string(600000, '['));
    f.ConfigEnv(R"("PATH=/usr/bin", "HOME=/root")");
    Loaded l = Load(f, f.State());
    CHECK(l.ok);
    CHECK_FALSE(l.asked);
    CHECK(Hook(f, f.State()) == 0);
    // With an annotation the broken one would see, it fails.
    CHECK(Hook(f, f.State(R"(, "annotations": {"oci-decorator/OCI_BROKEN": "all"})")) == 1);
  }

  TEST_CASE("a flag spelled with \\u00XX escapes is still a request") {
    Fixture f;
    f.Inventory("a-good.json", kGoodInventory);
    f.ConfigEnv(R"("OCI\u005fGOOD=all")");
    Loaded l = Load(f, f.State());
    REQUIRE(l.ok);
    CHECK(l.asked);
    ocid::Plan plan;
    Error err;
    REQUIRE_MESSAGE(Plan(f, l, &plan, &err), err.Line());
    CHECK(plan.Active());
    // Escapes of characters no flag holds (what Go's encoder writes) keep the
    // fast path.
    f.ConfigEnv(R"("URL=http://x/?a=1\u0026b=\u003c\u003e", "OTHER=1")");
    l = Load(f, f.State());
    CHECK(l.ok);
    CHECK_FALSE(l.asked);
  }

  TEST_CASE("hostile request values: one bounded printable line") {
    Fixture f;
    f.Inventory("a-good.json", kGoodInventory);
    f.ConfigEnv(R"("OCI_GOOD=)" + std::string(10 << 20, 'z') + R"(")");
    Loaded l = Load(f, f.State());
    REQUIRE(l.ok);
    ocid::Plan plan;
    Error err;
    CHECK_FALSE(Plan(f, l, &plan, &err));
    CheckOneLine(err);
    CHECK(Contains(err.Line(), "unknown feature"));
    CHECK_MESSAGE(Contains(err.Line(), "a-good.json"), err.Line());  // the tail survives
    f.ConfigEnv(R"("OCI_GOOD=all\u0000\n\u001b[2J")");
    l = Load(f, f.State());
    REQUIRE(l.ok);
    CHECK_FALSE(Plan(f, l, &plan, &err));
    CheckOneLine(err);
    CHECK_MESSAGE(Contains(err.Line(), "\\x00\\x0a\\x1b[2J"), err.Line());
  }

  TEST_CASE("an unusable state fails only a container that may have asked") {
    Fixture f;
    f.ConfigEnv(R"("OTHER=1")");
    const std::vector<std::string> unusable = {
        "",
        "null",
        "{",
        "[]",
        "\xff",
        R"({"id": "c"})",
        R"({"bundle": "/b"})",
        f.State(R"(, "pid": "12")"),
        f.State(R"(, "pid": -1)"),
        f.State(R"(, "annotations": [])"),
        f.State(R"(, "status": 3)"),
        f.State(R"(, "root": "a\u0000b")"),
        R"({"id": "c", "bundle": ")" + f.bundle + R"(\u0000x"})"};
    // No inventory installed: nobody can have asked.
    for (const auto& s : unusable) {
      CAPTURE(s);
      CHECK_FALSE(ocid::CouldHaveAsked(f.opts, s));
      CHECK(Hook(f, s) == 0);
      CHECK(Hook(f, s, "poststop") == 0);
    }
    // Only unsalvageable inventories (no flag can be read): the same.
    f.Inventory("a.json", "\xff garbage");
    for (const auto& s : unusable) CHECK(Hook(f, s) == 0);
    // A readable flag: the state's bundle decides when there is one.
    f.Inventory("b-good.json", kGoodInventory);
    CHECK_FALSE(ocid::CouldHaveAsked(f.opts, f.State(R"(, "pid": "12")")));
    CHECK(Hook(f, f.State(R"(, "pid": "12")")) == 0);
    CHECK(Hook(f, f.State(R"(, "annotations": [])")) == 0);
    f.ConfigEnv(R"("OCI_GOOD=all")");
    CHECK(ocid::CouldHaveAsked(f.opts, f.State(R"(, "pid": "12")")));
    CHECK(Hook(f, f.State(R"(, "pid": "12")")) == 1);
    f.ConfigEnv(R"("OTHER=1")");
    // The flag in the (bad) state itself.
    CHECK(Hook(f, f.State(R"(, "pid": "12", "annotations": {"oci-decorator/OCI_GOOD": "all"})")) ==
          1);
    // No usable bundle, or config.json unreadable: cannot tell, so it fails.
    for (const std::string& s : {std::string(""), std::string("{"), std::string(R"({"id": "c"})"),
                                 std::string(R"({"id": "c", "bundle": "relative"})"),
                                 std::string(R"({"bundle": ")" + (f.t / "nowhere") + "\"}")}) {
      CAPTURE(s);
      CHECK(ocid::CouldHaveAsked(f.opts, s));
      CHECK(Hook(f, s) == 1);
    }
    // A usable state of a container that did not ask, no pid: fine.
    CHECK(Hook(f, f.State()) == 0);
    // One that asked, with no pid: refused (unconfined here, so for that first).
    f.ConfigEnv(R"("OCI_GOOD=all")");
    CHECK(Hook(f, f.State()) == 1);
  }

}  // TEST_SUITE

// ===========================================================================
TEST_SUITE("hostile.read") {
  TEST_CASE("policy sees what runc applies: case variants and duplicates refuse only askers") {
    Fixture f;
    f.Inventory("a-good.json", R"({"version": "1", "activation_flag": "OCI_GOOD",
      "driver_feature": ["f"], "activation_policy": {"refuse_privileged": true},
      "inventory": {"f": {"binaries": ["/usr/bin/good-tool"]}}})");
    auto plan_error = [&](const std::string& config) {
      f.Config(config);
      Loaded l = Load(f, f.State());
      REQUIRE_MESSAGE(l.ok, l.err.Line());
      ocid::Plan plan;
      Error err;
      if (!l.asked) return std::string("not asked");
      if (Plan(f, l, &plan, &err)) return std::string(plan.Active() ? "planned" : "not active");
      CheckOneLine(err);
      return err.Line();
    };
    // runc grants CAP_SYS_ADMIN through "Process"; exact keys would miss it.
    std::string e = plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]},
      "Process": {"capabilities": {"bounding": ["CAP_SYS_ADMIN"]}}})");
    CHECK_MESSAGE(Contains(e, "config.json is ambiguous"), e);
    CHECK_MESSAGE(Contains(e, "\"Process\" matches \"process\""), e);
    CHECK_MESSAGE(Contains(e, "OCI_GOOD"), e);
    // An allow-all device rule under "Linux".
    e = plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]},
      "Linux": {"resources": {"devices": [{"allow": true, "access": "rwm"}]}}})");
    CHECK_MESSAGE(Contains(e, "\"Linux\" matches"), e);
    // The request only in a variant, or only in an earlier duplicate.
    e = plan_error(R"({"root": {"path": "rootfs"}, "proce\u017fs": {"env": ["OCI_GOOD=all"]}})");
    CHECK_MESSAGE(Contains(e, "config.json is ambiguous"), e);
    e = plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["PATH=/bin"]},
      "process": {"env": ["OCI_GOOD=all"]}})");
    CHECK_MESSAGE(Contains(e, "is given twice"), e);
    // A request runc's reading drops (an earlier duplicate) asks for nothing:
    // nothing is activated for it under any runtime (request_reader.h).
    CHECK(plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]},
      "process": {"env": ["PATH=/bin"]}})") == "not asked");
    // The flag named, but no reading asks: left alone.
    CHECK(plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=none"],
      "args": ["OCI_GOOD=all"]}, "Process": {"capabilities": {"bounding": ["CAP_SYS_ADMIN"]}}})") ==
          "not active");
    // Without ambiguity the policy works as before.
    e = plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"],
      "capabilities": {"bounding": ["CAP_SYS_ADMIN"]}}})");
    CHECK_MESSAGE(Contains(e, "CAP_SYS_ADMIN"), e);
    CHECK(plan_error(R"({"root": {"path": "rootfs"}, "process": {"env": ["OCI_GOOD=all"]}})") ==
          "planned");
  }

  // A state on a pipe, written by a thread as a runtime would.
  int HookOnPipe(const Fixture& f, const std::string& state) {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    std::atomic<size_t> written{0};
    std::thread writer([&] {
      size_t done = 0;
      while (done < state.size()) {
        ssize_t n = ::write(p[1], state.data() + done, state.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      written = done;
      ::close(p[1]);
    });
    int rc = ocid::RunHook(f.opts, "prestart", p[0], /*confined=*/false);
    writer.join();
    ::close(p[0]);
    CHECK(written == state.size());  // read to EOF: the writer never saw EPIPE
    return rc;
  }

  TEST_CASE("a state of any size: read as a stream; caps apply only once asked") {
    Fixture f;
    f.Inventory("a-good.json", kGoodInventory);
    f.ConfigEnv(R"("TERM=xterm")");
    // A 20 MB annotation, and 300000 small ones: no flag, not asked.
    std::string big(20 << 20, 'x');
    CHECK(HookOnPipe(f, f.State(R"(, "annotations": {"big": ")" + big + "\"}")) == 0);
    std::string many = R"(, "annotations": {)";
    for (int i = 0; i < 300000; ++i) many += "\"k" + std::to_string(i) + "\": \"v\", ";
    many += R"("last": "v"})";
    CHECK(HookOnPipe(f, f.State(many)) == 0);
    // Parsed, only the first MiB of annotations is kept, and the requests.
    OciState st;
    Error err;
    REQUIRE(ParseOciState(
        f.State(many.substr(0, many.size() - 1) + R"(, "oci-decorator/OCI_GOOD": "all"})"), &st,
        &err));
    CHECK(st.annotations_pruned);
    CHECK(st.annotations.size() < 100000);
    CHECK(st.annotations.at("oci-decorator/OCI_GOOD") == "all");
    CHECK(st.annotations.count("k0") == 1);
    // That container asks: refused, naming the cap.
    Loaded l =
        Load(f, f.State(many.substr(0, many.size() - 1) + R"(, "oci-decorator/OCI_GOOD": "all"})"));
    REQUIRE_MESSAGE(l.ok, l.err.Line());
    REQUIRE(l.asked);
    ocid::Plan plan;
    CHECK_FALSE(Plan(f, l, &plan, &err));
    CHECK_MESSAGE(Contains(err.Line(), "annotations over 1048576 bytes"), err.Line());
    // The same state small enough: planned.
    l = Load(f, f.State(R"(, "annotations": {"oci-decorator/OCI_GOOD": "all"})"));
    CHECK_MESSAGE(Plan(f, l, &plan, &err), err.Line());
    // A flag in the state's bytes beyond the first chunks is still seen.
    CHECK(HookOnPipe(f, f.State(R"(, "annotations": {"big": ")" + big +
                                R"(", "oci-decorator/OCI_GOOD": "all"})")) == 1);
  }

  TEST_CASE("the hook on a pipe that never ends: gives up, never hangs") {
    Fixture f;
    f.Inventory("a-good.json", kGoodInventory);
    f.ConfigEnv(R"("TERM=xterm")");
    struct sigaction ign {
    }, old{};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old);
    int p[2];
    REQUIRE(::pipe(p) == 0);
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      std::string head = f.State().substr(0, f.State().size() - 1) + R"(, "annotations": {"x": ")";
      std::string chunk(1 << 16, 'x');
      bool ok = ::write(p[1], head.data(), head.size()) > 0;
      while (ok && !stop && ::write(p[1], chunk.data(), chunk.size()) > 0) {
      }
      ::close(p[1]);
    });
    auto run = std::async(std::launch::async, [&] {
      return ocid::RunHook(f.opts, "prestart", p[0], /*confined=*/false);
    });
    bool ended = run.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
    stop = true;
    REQUIRE_MESSAGE(ended, "the hook reads an endless stdin forever");
    // No flag anywhere and the bundle known: the container cannot have asked.
    CHECK(run.get() == 0);
    ::close(p[0]);
    writer.join();
    ::sigaction(SIGPIPE, &old, nullptr);
  }

}  // TEST_SUITE

// Issue 28: the hook, the shim and `plan` plan for the image they are given.
TEST_SUITE("decision") {
  TEST_CASE("PlanFor: libraries land in the directory of the bundle rootfs's libc.so.6") {
    Fixture f;
    f.t.File("host/usr/lib64/libgood.so", "lib");
    f.Inventory("good.json", R"({"version": "1", "activation_flag": "OCI_GOOD",
        "driver_feature": ["f"],
        "inventory": {"f": {"binaries": ["/usr/bin/good-tool"],
                            "libraries": ["/usr/lib64/libgood.so"], "preload": ["libgood.so"]}}})");
    f.ConfigEnv(R"("OCI_GOOD=all")");
    auto plan = [&](ocid::Plan* p) {
      Loaded l = Load(f, f.State());
      REQUIRE_MESSAGE(l.ok, l.err.Line());
      REQUIRE(l.asked);
      Error err;
      REQUIRE_MESSAGE(Plan(f, l, p, &err), err.Line());
    };
    auto targets = [](const ocid::Plan& p) {
      std::vector<std::string> t;
      for (const auto& m : p.mounts) t.push_back(m.target);
      return t;
    };
    ocid::Plan p;
    SUBCASE("a Debian image, /usr not merged") {
      f.t.File("bundle/rootfs/lib/x86_64-linux-gnu/libc.so.6", "glibc");
      plan(&p);
      CHECK(targets(p) ==
            std::vector<std::string>{"/lib/x86_64-linux-gnu/libgood.so", "/usr/bin/good-tool"});
      CHECK(p.preload == std::vector<std::string>{"/lib/x86_64-linux-gnu/libgood.so"});
      CHECK(p.library_dirs.why == "the image's libc.so.6 is in /lib/x86_64-linux-gnu");
      CHECK(p.warnings.empty());
    }
    SUBCASE("a RHEL image") {
      f.t.File("bundle/rootfs/usr/lib64/libc.so.6", "glibc");
      f.t.Link("bundle/rootfs/lib64", "usr/lib64");
      plan(&p);
      CHECK(targets(p) == std::vector<std::string>{"/usr/bin/good-tool", "/usr/lib64/libgood.so"});
      CHECK(p.warnings.empty());
    }
    SUBCASE("a musl image: both directories, and the warning") {
      f.t.File("bundle/rootfs/lib/ld-musl-x86_64.so.1", "musl");
      plan(&p);
      CHECK(targets(p) == std::vector<std::string>{"/usr/bin/good-tool",
                                                   "/usr/lib/x86_64-linux-gnu/libgood.so",
                                                   "/usr/lib64/libgood.so"});
      REQUIRE(p.warnings.size() == 1);
      CHECK(Contains(p.warnings[0], "good.json: the image has no glibc"));
    }
    SUBCASE("no rootfs to look at (plan on a bare bundle): both directories, no warning") {
      f.t.File("bundle/config.json",
               R"({"root": {"path": "no-rootfs"}, "process": {"env": ["OCI_GOOD=all"]}})");
      plan(&p);
      CHECK(p.library_dirs.dirs ==
            std::vector<std::string>{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"});
      CHECK(Contains(p.library_dirs.why, "no rootfs at " + f.bundle + "/no-rootfs"));
      CHECK(p.warnings.empty());
    }
  }
}  // TEST_SUITE
