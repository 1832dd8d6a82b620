// Engine setup: daemon.json merging, the containerd and CRI-O drop-ins, and
// the file writing under a scratch tree (dry run, backups, symlinks).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "atomic_file.h"
#include "engine_setup.h"
#include "setup_cmd.h"
#include "test_tree.h"

using ocid::DockerMerge;
using ocid::Error;
using ocid::MergeDockerRuntime;
using ocid::SetupOptions;
using ocid::test::TempTree;

namespace {

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

const char* kShim = "/usr/bin/oci-decorator-runtime";

DockerMerge Merge(const std::string& bytes) {
  DockerMerge m;
  Error err;
  REQUIRE_MESSAGE(MergeDockerRuntime(bytes, "daemon.json", "oci-decorator", kShim, &m, &err),
                  err.Line());
  return m;
}

int CountBackups(const TempTree& t, const std::string& name) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(t.path()))
    if (e.path().filename().string().rfind(name + ".bak.", 0) == 0) ++n;
  return n;
}

// RunSetup with stdout silenced (it prints what it did).
int Setup(const SetupOptions& s) {
  std::fflush(stdout);
  int saved = ::dup(1);
  std::FILE* null = std::fopen("/dev/null", "w");
  ::dup2(::fileno(null), 1);
  int rc = ocid::RunSetup(ocid::Options{}, s);
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::fclose(null);
  return rc;
}

}  // namespace

TEST_CASE("docker: merge keeps every key, every other runtime, and the order") {
  DockerMerge m = Merge(
      R"({"log-level": "warn", "runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime", "runtimeArgs": []}}, "data-root": "/srv/docker"})");
  CHECK(m.changed);
  CHECK(m.old_path.empty());
  CHECK(m.json == R"({
  "log-level": "warn",
  "runtimes": {
    "nvidia": {
      "path": "/usr/bin/nvidia-container-runtime",
      "runtimeArgs": []
    },
    "oci-decorator": {
      "path": "/usr/bin/oci-decorator-runtime"
    }
  },
  "data-root": "/srv/docker"
}
)");
  CHECK(Contains(m.runtimes, "\"oci-decorator\""));
}

TEST_CASE("docker: merge is idempotent") {
  DockerMerge once = Merge(R"({"debug": true})");
  DockerMerge twice = Merge(once.json);
  CHECK_FALSE(twice.changed);
  CHECK(twice.json == once.json);
}

TEST_CASE("docker: no file, or a blank one, starts from {}") {
  CHECK(Merge("").json ==
        "{\n  \"runtimes\": {\n    \"oci-decorator\": {\n      \"path\": "
        "\"/usr/bin/oci-decorator-runtime\"\n    }\n  }\n}\n");
  CHECK(Merge(" \n").changed);
}

TEST_CASE("docker: a changed path replaces only the path of our entry") {
  DockerMerge m =
      Merge(R"({"runtimes": {"oci-decorator": {"path": "/old", "runtimeArgs": ["--x"]}}})");
  CHECK(m.changed);
  CHECK(m.old_path == "/old");
  CHECK(Contains(m.json, "\"--x\""));
  CHECK(Contains(m.json, kShim));
}

TEST_CASE("docker: invalid input is an error naming the file") {
  for (const char* bad : {"{\"runtimes\": ", "[1, 2]", R"({"runtimes": []})",
                          R"({"runtimes": {"oci-decorator": "x"}})"}) {
    DockerMerge m;
    Error err;
    CHECK_MESSAGE(
        !MergeDockerRuntime(bad, "/etc/docker/daemon.json", "oci-decorator", kShim, &m, &err), bad);
    CHECK(Contains(err.Line(), "/etc/docker/daemon.json"));
  }
}

TEST_CASE("runtime names") {
  std::string why;
  CHECK(ocid::CheckRuntimeName("oci-decorator", &why));
  CHECK(ocid::CheckRuntimeName("ocid_2", &why));
  CHECK_FALSE(ocid::CheckRuntimeName("", &why));
  CHECK_FALSE(ocid::CheckRuntimeName("a.b", &why));
  CHECK_FALSE(ocid::CheckRuntimeName("a\"]\n[x", &why));
}

TEST_CASE("containerd: drop-in content") {
  std::string d = ocid::ContainerdDropIn("oci-decorator", kShim);
  CHECK(
      Contains(d,
               "\nversion = 2\n\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
               "  runtime_type = \"io.containerd.runc.v2\"\n\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-decorator]\n"
               "  runtime_type = \"io.containerd.runc.v2\"\n"
               "  pod_annotations = [\"oci-decorator/*\"]\n"
               "  container_annotations = [\"oci-decorator/*\"]\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-decorator.options]\n"
               "  BinaryName = \"/usr/bin/oci-decorator-runtime\"\n"));
  CHECK(d.rfind("# Written by `oci-decorator setup containerd`", 0) == 0);
  CHECK(Contains(ocid::ContainerdDropIn("x", "/a \"b\"\\c"), "BinaryName = \"/a \\\"b\\\"\\\\c\""));
}

TEST_CASE("containerd: the main config's version") {
  CHECK(ocid::ContainerdConfigVersion("version = 2\nimports = []\n") == 2);
  CHECK(ocid::ContainerdConfigVersion("# containerd 2.x\nversion = 3  # schema\n") == 3);
  // `containerd config default` of containerd 2.1 begins with these lines.
  CHECK(ocid::ContainerdConfigVersion("version = 3\nroot = '/var/lib/containerd'\n") == 3);
  CHECK(ocid::ContainerdConfigVersion("root = \"/x\"\n") == 0);
  CHECK(ocid::ContainerdConfigVersion("version = 1\n") == 0);
  // A `version` key inside a table is not the file's.
  CHECK(ocid::ContainerdConfigVersion("[plugins.x]\nversion = 3\n") == 0);
}

TEST_CASE("containerd: version 3 drop-in (containerd 2.x)") {
  // containerd 2.1's `containerd config default` names the CRI runtimes
  // [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc] with
  // runtime_type, pod_annotations, container_annotations and .options
  // BinaryName; containerd 2.1 loses version 2 runtime tables imported into
  // a version 3 main config that configures the CRI plugin (`config dump`).
  std::string d = ocid::ContainerdDropIn("oci-decorator", kShim, 3);
  CHECK(Contains(
      d,
      "\nversion = 3\n\n"
      "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.oci-decorator]\n"
      "  runtime_type = \"io.containerd.runc.v2\"\n"
      "  pod_annotations = [\"oci-decorator/*\"]\n"
      "  container_annotations = [\"oci-decorator/*\"]\n"
      "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.oci-decorator.options]\n"
      "  BinaryName = \"/usr/bin/oci-decorator-runtime\"\n"));
  CHECK(d.rfind("# Written by `oci-decorator setup containerd`", 0) == 0);
  CHECK_FALSE(Contains(d, "io.containerd.grpc.v1.cri"));
  // containerd 2.x merges imported tables key by key: runc stays as the
  // main config has it, not restated.
  CHECK_FALSE(Contains(d, "runtimes.runc"));
  CHECK(Contains(ocid::ContainerdRuntimeTables("x", kShim, 3),
                 "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.x.options]\n"));
  CHECK(ocid::ContainerdDropIn("x", kShim, 2) == ocid::ContainerdDropIn("x", kShim));
}

TEST_CASE("containerd: a main config with a CRI section") {
  CHECK(ocid::ContainerdHasCriSection(
      "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"x\"\n"));
  CHECK(ocid::ContainerdHasCriSection("[plugins.cri]\n"));
  CHECK_FALSE(ocid::ContainerdHasCriSection(
      "version = 2\n# [plugins.\"io.containerd.grpc.v1.cri\"]\nimports = [\"/x/*.toml\"]\n"));
}

TEST_CASE("containerd: imports check") {
  const std::string dropin = "/etc/containerd/conf.d/oci-decorator.toml";
  bool has = false;
  CHECK(ocid::ContainerdImportsCover("version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n",
                                     dropin, &has));
  CHECK(has);
  CHECK(
      ocid::ContainerdImportsCover("version = 2\nimports = [\n  \"/x/a.toml\",  # comment\n  "
                                   "'/etc/containerd/conf.d/oci-decorator.toml',\n]\n",
                                   dropin, &has));
  CHECK_FALSE(
      ocid::ContainerdImportsCover("version = 2\nimports = [\"/x/*.toml\"]\n", dropin, &has));
  CHECK(has);
  CHECK_FALSE(ocid::ContainerdImportsCover("version = 2\n", dropin, &has));
  CHECK_FALSE(has);
  // Only a top-level key counts, not one inside a table.
  CHECK_FALSE(ocid::ContainerdImportsCover(
      "version = 2\n[plugins.x]\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n", dropin, &has));
  CHECK_FALSE(has);
  // A glob does not cross directories.
  CHECK_FALSE(ocid::ContainerdImportsCover("imports = [\"/etc/containerd/*\"]\n", dropin, &has));
}

TEST_CASE("crio: drop-in content") {
  std::string hooks_only = ocid::CrioDropIn("oci-decorator", "");
  CHECK(Contains(hooks_only,
                 "[crio.runtime]\nhooks_dir = [\"/usr/share/containers/oci/hooks.d\", "
                 "\"/etc/containers/oci/hooks.d\"]\n"));
  CHECK_FALSE(Contains(hooks_only, "runtime_path"));
  std::string with = ocid::CrioDropIn("oci-decorator", kShim);
  CHECK(Contains(with, "[crio.runtime.runtimes.oci-decorator]\nruntime_path = \"" +
                           std::string(kShim) + "\"\nruntime_type = \"oci\"\n"));
}

TEST_CASE("setup docker: writes, backs up only on change, dry run writes nothing") {
  TempTree t;
  t.File("daemon.json", R"({"log-level": "warn"})");
  SetupOptions s;
  s.engine = "docker";
  s.config = t / "daemon.json";
  s.runtime_path = kShim;

  SUBCASE("dry run") {
    s.dry_run = true;
    CHECK(Setup(s) == 0);
    CHECK(t.Read("daemon.json") == R"({"log-level": "warn"})");
    CHECK(CountBackups(t, "daemon.json") == 0);
  }
  SUBCASE("write, then again") {
    CHECK(Setup(s) == 0);
    CHECK(Contains(t.Read("daemon.json"), "\"log-level\": \"warn\""));
    CHECK(Contains(t.Read("daemon.json"), kShim));
    CHECK(CountBackups(t, "daemon.json") == 1);
    std::string after = t.Read("daemon.json");
    CHECK(Setup(s) == 0);
    CHECK(t.Read("daemon.json") == after);
    CHECK(CountBackups(t, "daemon.json") == 1);
  }
  SUBCASE("a new file in a new directory: no backup") {
    s.config = t / "etc/docker/daemon.json";
    CHECK(Setup(s) == 0);
    CHECK(Contains(t.Read("etc/docker/daemon.json"), kShim));
    CHECK(CountBackups(t, "etc/docker/daemon.json") == 0);
    struct stat st;
    REQUIRE(::stat((t / "etc/docker").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0755);
  }
  SUBCASE("invalid JSON: error, file untouched") {
    t.File("bad.json", "{nope");
    s.config = t / "bad.json";
    CHECK(Setup(s) == 1);
    CHECK(t.Read("bad.json") == "{nope");
    CHECK(CountBackups(t, "bad.json") == 0);
  }
  SUBCASE("a symlinked config is refused, its target untouched") {
    t.Link("link.json", t / "daemon.json");
    s.config = t / "link.json";
    CHECK(Setup(s) == 1);
    CHECK(t.Read("daemon.json") == R"({"log-level": "warn"})");
  }
}

TEST_CASE("setup docker --default-runtime: only a shim that can serve every container") {
  TempTree t;
  t.File("daemon.json", R"({"log-level": "warn"})");
  t.File("runtime.json", R"({"runtime": "/nonexistent/runc"})");
  t.File("broken.json", R"({"runtime": 1})");
  SetupOptions s;
  s.engine = "docker";
  s.config = t / "daemon.json";
  s.runtime_path = kShim;
  s.docker_default = ocid::DockerDefault::kSet;
  SUBCASE("a runtime the shim cannot exec is refused, the file untouched") {
    t.File("daemon.json", std::string(R"({"runtimes": {"oci-decorator": {"path": "/x", )") +
                              R"("runtimeArgs": ["--ocid-config", ")" + (t / "runtime.json") +
                              R"("]}}})");
    std::string before = t.Read("daemon.json");
    CHECK(Setup(s) == 1);
    CHECK(t.Read("daemon.json") == before);
    CHECK(CountBackups(t, "daemon.json") == 0);
  }
  SUBCASE("settings the shim cannot read are refused") {
    t.File("daemon.json", std::string(R"({"runtimes": {"oci-decorator": {"path": "/x", )") +
                              R"("runtimeArgs": ["--ocid-config=)" + (t / "broken.json") +
                              R"("]}}})");
    CHECK(Setup(s) == 1);
    CHECK_FALSE(Contains(t.Read("daemon.json"), "default-runtime"));
  }
  SUBCASE("a runtime it can exec: set, and given back") {
    t.File("daemon.json", std::string(R"({"runtimes": {"oci-decorator": {"path": "/x", )") +
                              R"("runtimeArgs": ["--ocid-runtime=/bin/true"]}}})");
    CHECK(Setup(s) == 0);
    CHECK(Contains(t.Read("daemon.json"), R"("default-runtime": "oci-decorator")"));
    s.docker_default = ocid::DockerDefault::kUnset;
    CHECK(Setup(s) == 0);
    CHECK(Contains(t.Read("daemon.json"), R"("default-runtime": "runc")"));
  }
}

TEST_CASE("setup: the default runtime is docker's only") {
  SetupOptions s;
  s.engine = "containerd";
  s.config = "/nonexistent/x.toml";
  s.docker_default = ocid::DockerDefault::kSet;
  CHECK(Setup(s) == 2);
  s.docker_default = ocid::DockerDefault::kLeave;
  s.wrap_default = true;
  CHECK(Setup(s) == 2);
}

TEST_CASE("setup containerd and crio: drop-ins written, rewritten only when different") {
  TempTree t;
  SetupOptions s;
  s.runtime_path = kShim;
  s.containerd_main = t / "config.toml";
  s.engine = "containerd";
  s.config = t / "conf.d/oci-decorator.toml";
  s.dry_run = true;
  CHECK(Setup(s) == 0);
  CHECK_FALSE(t.Exists("conf.d"));
  s.dry_run = false;
  CHECK(Setup(s) == 0);
  CHECK(t.Read("conf.d/oci-decorator.toml") == ocid::ContainerdDropIn("oci-decorator", kShim));

  s.engine = "crio";
  s.config = t / "crio.conf.d/50-oci-decorator.conf";
  s.with_runtime = true;
  CHECK(Setup(s) == 0);
  CHECK(t.Read("crio.conf.d/50-oci-decorator.conf") == ocid::CrioDropIn("oci-decorator", kShim));
  CHECK(CountBackups(t, "crio.conf.d/50-oci-decorator.conf") == 0);
}

TEST_CASE("setup containerd: refuses a drop-in that would replace the main CRI section") {
  TempTree t;
  t.File("config.toml", "version = 2\nimports = [\"" + (t / "conf.d") +
                            "/*.toml\"]\n[plugins.\"io.containerd.grpc.v1.cri\"]\n");
  SetupOptions s;
  s.engine = "containerd";
  s.runtime_path = kShim;
  s.containerd_main = t / "config.toml";
  s.config = t / "conf.d/oci-decorator.toml";
  CHECK(Setup(s) == 1);
  CHECK_FALSE(t.Exists("conf.d"));
}

TEST_CASE("setup containerd: a version 3 main config gets a version 3 drop-in") {
  TempTree t;
  SetupOptions s;
  s.engine = "containerd";
  s.runtime_path = kShim;
  s.containerd_main = t / "config.toml";
  s.config = t / "conf.d/oci-decorator.toml";
  SUBCASE("written after `containerd config default`, with a CRI section: merged, not refused") {
    t.File("config.toml", "version = 3\nroot = '/var/lib/containerd'\nimports = ['" +
                              (t / "conf.d") +
                              "/*.toml']\n[plugins]\n  [plugins.'io.containerd.cri.v1.runtime']\n"
                              "    enable_cdi = true\n");
    CHECK(Setup(s) == 0);
    CHECK(t.Read("conf.d/oci-decorator.toml") == ocid::ContainerdDropIn("oci-decorator", kShim, 3));
  }
  SUBCASE("a version 2 main config keeps the version 2 drop-in") {
    t.File("config.toml", "version = 2\nimports = ['" + (t / "conf.d") + "/*.toml']\n");
    CHECK(Setup(s) == 0);
    CHECK(t.Read("conf.d/oci-decorator.toml") == ocid::ContainerdDropIn("oci-decorator", kShim, 2));
  }
  SUBCASE("the version changes: the drop-in is rewritten in the new schema") {
    t.File("config.toml", "version = 2\n");
    CHECK(Setup(s) == 0);
    t.File("config.toml", "version = 3\n");
    CHECK(Setup(s) == 0);
    CHECK(t.Read("conf.d/oci-decorator.toml") == ocid::ContainerdDropIn("oci-decorator", kShim, 3));
  }
}

TEST_CASE("setup: bad names and paths are usage errors") {
  SetupOptions s;
  s.engine = "docker";
  s.config = "/nonexistent/daemon.json";
  s.runtime_name = "a b";
  CHECK(Setup(s) == 2);
  s.runtime_name = "ok";
  s.runtime_path = "relative/shim";
  CHECK(Setup(s) == 2);
}

TEST_CASE(
    "atomic write: exactly the stated mode, whatever was there or the umask; no temporary left") {
  TempTree t;
  t.File("f.conf", "old");
  ::chmod((t / "f.conf").c_str(), 0640);
  Error err;
  REQUIRE_MESSAGE(ocid::WriteFileAtomic(t / "f.conf", "new", 0644, &err), err.Line());
  CHECK(t.Read("f.conf") == "new");
  struct stat st;
  REQUIRE(::stat((t / "f.conf").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(t.path())) (void)e, ++entries;
  CHECK(entries == 1);
  mode_t old_umask = ::umask(0077);
  REQUIRE(ocid::WriteFileAtomic(t / "new/dir/g.conf", "x", 0644, &err));
  ::umask(old_umask);
  REQUIRE(::stat((t / "new/dir/g.conf").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  REQUIRE(::stat((t / "new/dir").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  REQUIRE(ocid::WriteFileAtomic(t / "h.conf", "x", 0600, &err));
  REQUIRE(::stat((t / "h.conf").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
}

namespace {

using ocid::test::AsNobody;
using ocid::test::kNobody;

bool CreateFile(const std::string& path, const std::string& bytes, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  bool ok = fd >= 0 && ::write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size());
  if (fd >= 0) ::close(fd);
  return ok;
}

struct stat Stat(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st;
}

}  // namespace

TEST_CASE("atomic write: names an unprivileged user made first in a sticky world-writable dir") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to act as uid 65534");
    return;
  }
  TempTree t;
  t.Dir("cdi");
  ::chmod((t / "cdi").c_str(), 01777);
  ::chmod(t.path().c_str(), 0755);  // so that uid 65534 reaches cdi/
  const std::string spec = t / "cdi/oci-decorator-onload.json";
  const std::string preload = t / "cdi/oci-decorator-onload.onload.preload";
  REQUIRE(AsNobody(
      [&] { return CreateFile(spec, "{}", 0666) && CreateFile(preload, "/tmp/evil.so\n", 0666); }));
  Error err;
  CHECK_FALSE(ocid::WriteFileAtomic(preload, "/usr/lib64/libonload.so\n", 0644, &err));
  CHECK(err.Line() == "refusing to write " + preload + ": directory " + (t / "cdi") +
                          " is writable by others (owner 0, mode 1777)");
  CHECK_FALSE(ocid::WriteFileAtomic(spec, "{\"kind\": \"x/y\"}\n", 0644, &err));
  CHECK(err.Line().rfind("refusing to write " + spec + ": directory ", 0) == 0);
  // Nothing written: the user's files as they were, nothing else there.
  CHECK(t.Read("cdi/oci-decorator-onload.onload.preload") == "/tmp/evil.so\n");
  CHECK(t.Read("cdi/oci-decorator-onload.json") == "{}");
  CHECK(Stat(preload).st_uid == kNobody);
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(t / "cdi")) (void)e, ++entries;
  CHECK(entries == 2);

  // The same directory owned by the user (mode 0755): not root's.
  t.Dir("mine");
  ::chown((t / "mine").c_str(), kNobody, kNobody);
  CHECK_FALSE(ocid::WriteFileAtomic(t / "mine/f.json", "x", 0644, &err));
  CHECK(err.Line() == "refusing to write " + (t / "mine/f.json") + ": directory " + (t / "mine") +
                          " belongs to another user (owner 65534, mode 0755)");
  CHECK_FALSE(t.Exists("mine/f.json"));
  // A root-owned 0755 directory inside a world-writable one that is not
  // sticky: the user can rename it away and put their own in its place.
  t.Dir("open/cdi");
  ::chmod((t / "open").c_str(), 0777);
  CHECK_FALSE(ocid::WriteFileAtomic(t / "open/cdi/f.json", "x", 0644, &err));
  CHECK(err.Line() == "refusing to write " + (t / "open/cdi/f.json") + ": directory " +
                          (t / "open") +
                          " is writable by others and not sticky (owner 0, mode 0777)");
  // A sticky ancestor is fine: /tmp/cdi, made by root, in /tmp.
  REQUIRE_MESSAGE(ocid::WriteFileAtomic(t / "cdi2/f.json", "x", 0644, &err), err.Line());
  // A symlink the user planted in the sticky dir is not followed, even to
  // a directory of root's (standing in for /etc).
  t.Dir("victim");
  REQUIRE(
      AsNobody([&] { return ::symlink((t / "victim").c_str(), (t / "cdi/etc").c_str()) == 0; }));
  CHECK_FALSE(ocid::WriteFileAtomic(t / "cdi/etc/oci-decorator-x.json", "x", 0644, &err));
  CHECK_MESSAGE(Contains(err.Line(), "not following symbolic link " + (t / "cdi/etc") +
                                         ": it belongs to another user (owner 65534)"),
                err.Line());
  CHECK_FALSE(t.Exists("victim/oci-decorator-x.json"));
  // One root made in a directory only root can change is followed.
  t.Dir("real");
  t.Link("link", "real");
  REQUIRE_MESSAGE(ocid::WriteFileAtomic(t / "link/f.json", "x", 0644, &err), err.Line());
  CHECK(t.Read("real/f.json") == "x");
}

TEST_CASE("atomic write: a foreign-owned 0666 file at the name becomes root's, mode as stated") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to act as uid 65534");
    return;
  }
  TempTree t;
  t.Dir("cdi");
  ::chmod((t / "cdi").c_str(), 0777);
  ::chmod(t.path().c_str(), 0755);
  const std::string preload = t / "cdi/oci-decorator-onload.onload.preload";
  REQUIRE(AsNobody([&] { return CreateFile(preload, "/usr/lib64/libonload.so\n", 0666); }));
  ::chmod((t / "cdi").c_str(), 02755);  // root's now, and setgid
  ::chown((t / "cdi").c_str(), 0, kNobody);
  // The right bytes under the wrong owner and mode are not current.
  CHECK_FALSE(ocid::FileIsCurrent(preload, "/usr/lib64/libonload.so\n", 0644));
  Error err;
  REQUIRE_MESSAGE(ocid::WriteFileAtomic(preload, "/usr/lib64/libonload.so\n", 0644, &err),
                  err.Line());
  struct stat st = Stat(preload);
  CHECK(st.st_uid == 0);
  CHECK(st.st_gid == ::getegid());  // not the setgid directory's group
  CHECK((st.st_mode & 07777) == 0644);
  CHECK(t.Read("cdi/oci-decorator-onload.onload.preload") == "/usr/lib64/libonload.so\n");
  CHECK(ocid::FileIsCurrent(preload, "/usr/lib64/libonload.so\n", 0644));
  CHECK_FALSE(ocid::FileIsCurrent(preload, "/usr/lib64/libonload.so\n", 0600));
  CHECK_FALSE(ocid::FileIsCurrent(preload, "/other.so\n", 0644));
  ::chmod(preload.c_str(), 0666);
  CHECK_FALSE(ocid::FileIsCurrent(preload, "/usr/lib64/libonload.so\n", 0644));
  ::chmod(preload.c_str(), 0644);
  ::chown(preload.c_str(), kNobody, kNobody);
  CHECK_FALSE(ocid::FileIsCurrent(preload, "/usr/lib64/libonload.so\n", 0644));
  t.Link("cdi/link.preload", preload);
  ::chown(preload.c_str(), 0, 0);
  CHECK_FALSE(ocid::FileIsCurrent(t / "cdi/link.preload", "/usr/lib64/libonload.so\n", 0644));
}

TEST_CASE("atomic write: through a directory fd, what its path leads to now plays no part") {
  TempTree t;
  t.Dir("a");
  t.Dir("b");
  t.Link("link", "a");
  ocid::UniqueFd dfd;
  Error err;
  REQUIRE_MESSAGE(ocid::OpenWriteDir(t / "link", /*create=*/false, &dfd, &err), err.Line());
  // The path is re-pointed after the directory was opened: the fd's
  // directory is written and judged, never the path's.
  std::filesystem::remove(t / "link");
  t.Link("link", "b");
  REQUIRE_MESSAGE(ocid::WriteFileAtomicAt(dfd.get(), t / "link", "f.json", "x", 0644, &err),
                  err.Line());
  CHECK(t.Read("a/f.json") == "x");
  CHECK_FALSE(t.Exists("b/f.json"));
  CHECK(ocid::FileIsCurrentAt(dfd.get(), "f.json", "x", 0644));
  CHECK_FALSE(ocid::FileIsCurrent(t / "link/f.json", "x", 0644));
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "f.json", "y", 0644));
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "f.json", "x", 0600));
  // One component only, and never a symlink at the name.
  t.File("b/g.json", "x");
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "../b/g.json", "x", 0644));
  CHECK_FALSE(ocid::WriteFileAtomicAt(dfd.get(), t / "a", "../b/g.json", "y", 0644, &err));
  CHECK(err.Line() == "not a file name: " + (t / "a/../b/g.json"));
  CHECK(t.Read("b/g.json") == "x");
  t.Link("a/l.json", t / "a/f.json");
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "l.json", "x", 0644));
  CHECK_FALSE(ocid::WriteFileAtomicAt(dfd.get(), t / "a", "l.json", "y", 0644, &err));
  CHECK(err.Line() == "refusing to write through a symbolic link: " + (t / "a/l.json"));
  CHECK(t.Read("a/f.json") == "x");
}

TEST_CASE("atomic write: the shim's config.json keeps the engine's owner and mode") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to act as uid 65534");
    return;
  }
  // A bundle of another user's (rootless engines; `runc run --bundle` in a
  // user's directory): no directory rule, the file stays theirs.
  TempTree t;
  t.Dir("bundle");
  ::chown((t / "bundle").c_str(), kNobody, kNobody);
  t.File("bundle/config.json", "{}");
  ::chown((t / "bundle/config.json").c_str(), kNobody, kNobody);
  ::chmod((t / "bundle/config.json").c_str(), 0600);
  Error err;
  REQUIRE_MESSAGE(ocid::ReplaceBundleFile(t / "bundle/config.json", "{\"a\":1}", &err), err.Line());
  CHECK(t.Read("bundle/config.json") == "{\"a\":1}");
  struct stat st = Stat(t / "bundle/config.json");
  CHECK(st.st_uid == kNobody);
  CHECK(st.st_gid == kNobody);
  CHECK((st.st_mode & 07777) == 0600);
  t.Link("bundle/link.json", "config.json");
  CHECK_FALSE(ocid::ReplaceBundleFile(t / "bundle/link.json", "{}", &err));
  CHECK(Contains(err.Line(), "symbolic link"));
}
