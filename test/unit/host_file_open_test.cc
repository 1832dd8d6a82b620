// Host files are opened without ever opening anything but a regular file
// (files.h, SECURITY.md 2.11; issue 19, "recorded": profiles and the
// version-lock library were opened O_RDONLY before their type was checked,
// so a device node there had its driver's open run as root).
//
// Each reader is given a real FIFO and a real character device (mknod
// 1:3, /dev/null's numbers) where it expects a file. It must refuse them
// with the one line "not a regular file (a FIFO)" / "(a character device)"
// and the kernel must see no open of the node: inotify reports IN_OPEN for
// every open(2) that reaches the inode (a driver's open, a FIFO's), never
// for an O_PATH fd. Each read runs in a child killed after 10 s, so a
// reader that waits on a FIFO fails here rather than hanging the suite.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "atomic_file.h"
#include "env_profile.h"
#include "files.h"
#include "host_view.h"
#include "inventory.h"
#include "request_scan.h"
#include "test_tree.h"
#include "version_lock.h"

namespace {

struct Outcome {
  bool finished = false;  // the child returned within the time allowed
  bool opened = false;    // the kernel saw an open(2) of the node
  std::string line;       // what the reader said ("" when it read a file)
};

// Runs `read` in a child and reports what happened to `node`.
Outcome TryRead(const std::string& node, const std::function<std::string()>& read) {
  Outcome o;
  int in = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  REQUIRE(in >= 0);
  REQUIRE(::inotify_add_watch(in, node.c_str(), IN_OPEN) >= 0);
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::string line = read();
    (void)!::write(p[1], line.data(), line.size());
    ::_exit(0);
  }
  ::close(p[1]);
  pollfd pf{p[0], POLLIN, 0};
  char buf[8192];
  for (;;) {
    if (::poll(&pf, 1, 10000) <= 0) break;  // timed out: the child waits on the node
    ssize_t n = ::read(p[0], buf, sizeof buf);
    if (n <= 0) {
      o.finished = true;
      break;
    }
    o.line.append(buf, static_cast<size_t>(n));
  }
  if (!o.finished) ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ::close(p[0]);
  alignas(inotify_event) char ev[4096];
  ssize_t n = ::read(in, ev, sizeof ev);
  for (ssize_t off = 0; off < n;) {
    auto* e = reinterpret_cast<const inotify_event*>(ev + off);
    if (e->mask & IN_OPEN) o.opened = true;
    off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
  }
  ::close(in);
  return o;
}

// A FIFO or a character device at `path` (replacing whatever was there).
struct Node {
  std::string kind;  // as FileTypeDescription names it
  mode_t mode;
};
const Node kNodes[] = {{"FIFO", S_IFIFO | 0644}, {"character device", S_IFCHR | 0644}};

void Plant(const Node& n, const std::string& path) {
  ::unlink(path.c_str());
  // /dev/null's numbers: harmless if a reader did open it, and the open is seen.
  int rc = ::mknod(path.c_str(), n.mode, makedev(1, 3));
  std::string why = rc == 0 ? "" : "mknod " + path + ": " + std::strerror(errno);
  REQUIRE_MESSAGE(rc == 0, why);
}

void Expect(const Node& n, const std::string& node, const Outcome& o, const std::string& shown) {
  CAPTURE(n.kind);
  CAPTURE(o.line);
  CHECK_MESSAGE(o.finished, "the reader hung on the " << n.kind);
  CHECK_MESSAGE(!o.opened, "the " << n.kind << " was opened (its driver's open ran)");
  CHECK(o.line == std::string("not a regular file (a ") + n.kind + "): " + shown);
  (void)node;
}

std::string LineOf(bool ok, const ocid::Error& err) { return ok ? "" : err.Line(); }

}  // namespace

TEST_SUITE("host files") {
  TEST_CASE("a profile .opf that is a FIFO or a device: refused in one line, never opened") {
    if (::geteuid() != 0) {
      MESSAGE("skipped: mknod of a character device needs root");
      return;
    }
    ocid::test::TempTree t;
    t.File("host/usr/libexec/onload/profiles/latency.opf", "onload_set EF_POLL_USEC 100000\n");
    const std::string rel = "/usr/libexec/onload/profiles/evil.opf";
    for (const Node& n : kNodes) {
      Plant(n, t / ("host" + rel));
      Outcome o = TryRead(t / ("host" + rel), [&] {
        std::unique_ptr<ocid::HostRootView> view;
        ocid::Error err;
        if (!ocid::HostRootView::Open(t / "host", &view, &err)) return err.Line();
        std::string bytes;
        return LineOf(ocid::HostProfileReader(*view)(rel, &bytes, &err), err);
      });
      Expect(n, rel, o, t / ("host" + rel));
    }
  }

  TEST_CASE(
      "the version lock's library and module version as a FIFO or a device: unknown, never "
      "opened") {
    if (::geteuid() != 0) {
      MESSAGE("skipped: mknod of a character device needs root");
      return;
    }
    ocid::test::TempTree t;
    t.File("host/sys/module/onload/version", "9.2.0.43\n");
    t.Dir("host/usr/lib64");
    ocid::Inventory inv;
    ocid::Error perr;
    REQUIRE(ocid::ParseInventory(
        R"({"activation_flag": "OCI_ONLOAD", "driver_feature": ["onload"],
          "version_lock": {"enforce": true, "module_version": "/sys/module/onload/version",
                           "library": "/usr/lib64/libonload.so"},
          "inventory": {"onload": {"devices": ["onload"]}}})",
        "onload.json", &inv, &perr));
    auto check = [&] {
      std::unique_ptr<ocid::HostRootView> view;
      ocid::Error err;
      if (!ocid::HostRootView::Open(t / "host", &view, &err)) return err.Line();
      return ocid::CheckVersions(inv, *view).why;
    };
    for (const Node& n : kNodes) {
      CAPTURE(n.kind);
      Plant(n, t / "host/usr/lib64/libonload.so");
      Outcome o = TryRead(t / "host/usr/lib64/libonload.so", check);
      CHECK(o.finished);
      CHECK_FALSE(o.opened);
      CHECK(o.line.find(std::string("not a regular file (a ") + n.kind +
                        "): " + (t / "host/usr/lib64/libonload.so")) != std::string::npos);
    }
    t.File("host/usr/lib64/libonload.so", "no banner");
    for (const Node& n : kNodes) {
      CAPTURE(n.kind);
      Plant(n, t / "host/sys/module/onload/version");
      Outcome o = TryRead(t / "host/sys/module/onload/version", check);
      CHECK(o.finished);
      CHECK_FALSE(o.opened);
      CHECK(o.line.find(std::string("not a regular file (a ") + n.kind +
                        "): " + (t / "host/sys/module/onload/version")) != std::string::npos);
    }
  }

  TEST_CASE("every reader of a named file: a FIFO or a device is refused, never opened") {
    if (::geteuid() != 0) {
      MESSAGE("skipped: mknod of a character device needs root");
      return;
    }
    ocid::test::TempTree t;
    t.Dir("host/etc/docker");
    t.Dir("conf");
    const std::string file = t / "node";
    using Reader = std::function<std::string()>;
    const std::pair<const char*, Reader> readers[] = {
        {"ReadFileAt",
         [&] {
           std::string out;
           ocid::Error err;
           return LineOf(ocid::ReadFileAt(AT_FDCWD, file, 1 << 20, &out, &err), err);
         }},
        {"ReadFileIfExists",
         [&] {
           std::string out;
           bool exists = false;
           ocid::Error err;
           return LineOf(ocid::ReadFileIfExists(file, 1 << 20, &out, &exists, &err), err);
         }},
        {"ScanFileForFlags",
         [&] {
           ocid::FlagScanner scanner({"OCI_ONLOAD"});
           ocid::Error err;
           return LineOf(ocid::ScanFileForFlags(file, &scanner, nullptr, &err), err);
         }},
    };
    for (const auto& reader : readers) {
      const char* name = reader.first;  // CAPTURE cannot take a structured binding (clang)
      CAPTURE(name);
      for (const Node& n : kNodes) {
        Plant(n, file);
        Expect(n, file, TryRead(file, reader.second), file);
      }
    }

    // FileIsCurrent (the CDI writers' "already written?"): a node at the name
    // is not current, and is never opened to find out.
    for (const Node& n : kNodes) {
      Plant(n, file);
      Outcome o = TryRead(file, [&] {
        return std::string(ocid::FileIsCurrent(file, "", n.mode & 07777) ? "current" : "");
      });
      CAPTURE(n.kind);
      CHECK(o.finished);
      CHECK_FALSE(o.opened);
      CHECK(o.line.empty());
    }

    // HostView::Read (engine configs, CDI files, sysfs attributes): named inside the host root.
    for (const Node& n : kNodes) {
      Plant(n, t / "host/etc/docker/daemon.json");
      Outcome o = TryRead(t / "host/etc/docker/daemon.json", [&] {
        std::unique_ptr<ocid::HostRootView> files;
        ocid::Error err;
        if (!ocid::HostRootView::Open(t / "host", &files, &err)) return err.Line();
        std::string out;
        return LineOf(
            files->Read("/etc/docker/daemon.json", 1 << 20, &out, &err) == ocid::HostRead::kOk,
            err);
      });
      Expect(n, "", o, t / "host/etc/docker/daemon.json");
    }

    // Inventories: each file's own error, the others still read.
    for (const Node& n : kNodes) {
      Plant(n, t / "conf/evil.json");
      Outcome o = TryRead(t / "conf/evil.json", [&] {
        std::vector<ocid::InventoryFile> files;
        ocid::Error err;
        if (!ocid::ReadInventoryDir(t / "conf", &files, &err)) return err.Line();
        return files.size() == 1 ? files[0].read_error.Line() : std::string("wrong count");
      });
      Expect(n, "", o, t / "conf/evil.json");
    }
  }

  TEST_CASE("the opener keeps each caller's symlink rule, and reads regular files") {
    ocid::test::TempTree t;
    t.File("real", "bytes");
    t.Link("link", "real");
    std::string out;
    ocid::Error err;
    CHECK_FALSE(ocid::ReadFileAt(AT_FDCWD, t / "link", 100, &out, &err));
    CHECK(err.Line() == "refusing to read through a symbolic link: " + (t / "link"));
    REQUIRE(ocid::ReadFileAt(AT_FDCWD, t / "real", 100, &out, &err));
    CHECK(out == "bytes");
    ocid::FlagScanner scanner({"byt"});
    REQUIRE(ocid::ScanFileForFlags(t / "link", &scanner, nullptr,
                                   &err));  // followed, as runc follows it
    CHECK(scanner.mentioned());
    ocid::UniqueFd fd;
    REQUIRE(ocid::OpenRegularFileAt(AT_FDCWD, t / "link", ocid::LastSymlink::kFollow, &fd, &err));
    CHECK_FALSE(
        ocid::OpenRegularFileAt(AT_FDCWD, t / "gone", ocid::LastSymlink::kFollow, &fd, &err));
    CHECK(err.errnum == ENOENT);
    bool exists = true;
    REQUIRE(ocid::ReadFileIfExists(t / "gone", 100, &out, &exists, &err));
    CHECK_FALSE(exists);
  }

}  // TEST_SUITE
