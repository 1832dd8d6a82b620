// The atomic file writer (src/core/atomic_file.h) on its own: it writes
// every file that root leaves behind (CDI specs and preload files, engine
// drop-ins, daemon.json, hooks.d entries, the health file), so each of its
// promises has a case here. The cases run as any user in a scratch tree
// owned by that user; the few that need a second owner or a second group
// say so and skip without root.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "atomic_file.h"
#include "test_tree.h"

using ocid::Error;
using ocid::test::AsNobody;
using ocid::test::kNobody;
using ocid::test::TempTree;

namespace {

struct stat Lstat(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st;
}

// The names in `dir` that look like the writer's temporaries.
std::vector<std::string> Temporaries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.find(".tmp.") != std::string::npos) out.push_back(name);
  }
  return out;
}

size_t Entries(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) (void)e, ++n;
  return n;
}

// Runs `f` in a child (so that rlimits and signal dispositions it sets
// stay there); true when it returned true.
template <typename F>
bool InChild(F f) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(f() ? 0 : 1);
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("atomic file: a new inode renamed over the name, never the old file written in place") {
  TempTree t;
  t.File("f.json", "old");
  // A second link to the old file, and an fd open on it: both must still
  // see the old bytes, which they would not if the name were truncated
  // and rewritten.
  REQUIRE(::link((t / "f.json").c_str(), (t / "keep").c_str()) == 0);
  int old_fd = ::open((t / "f.json").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(old_fd >= 0);
  const ino_t old_ino = Lstat(t / "f.json").st_ino;
  Error err;
  REQUIRE_MESSAGE(ocid::WriteFileAtomic(t / "f.json", "new", 0644, &err), err.Line());
  CHECK(t.Read("f.json") == "new");
  CHECK(Lstat(t / "f.json").st_ino != old_ino);
  CHECK(t.Read("keep") == "old");
  char buf[8] = {};
  CHECK(::pread(old_fd, buf, sizeof buf, 0) == 3);
  CHECK(std::string(buf) == "old");
  ::close(old_fd);
  // The old file has lost the name: only "keep" still links it.
  CHECK(Lstat(t / "keep").st_nlink == 1);
  CHECK(Temporaries(t.path()).empty());
}

TEST_CASE("atomic file: exactly the stated mode, whatever the umask or the old file's mode") {
  TempTree t;
  t.File("a.conf", "x");
  ::chmod((t / "a.conf").c_str(), 0666);
  Error err;
  mode_t old_umask = ::umask(0077);
  bool ok = ocid::WriteFileAtomic(t / "a.conf", "y", 0644, &err) &&
            ocid::WriteFileAtomic(t / "b.conf", "y", 0604, &err);
  ::umask(0);
  ok = ok && ocid::WriteFileAtomic(t / "c.conf", "y", 0600, &err);
  // Bits beyond 07777 are not the mode's: the type comes from the writer.
  ok = ok && ocid::WriteFileAtomic(t / "d.conf", "y", S_IFDIR | 0640, &err);
  ::umask(old_umask);
  REQUIRE_MESSAGE(ok, err.Line());
  CHECK((Lstat(t / "a.conf").st_mode & 07777) == 0644);
  CHECK((Lstat(t / "b.conf").st_mode & 07777) == 0604);
  CHECK((Lstat(t / "c.conf").st_mode & 07777) == 0600);
  CHECK(S_ISREG(Lstat(t / "d.conf").st_mode));
  CHECK((Lstat(t / "d.conf").st_mode & 07777) == 0640);
}

TEST_CASE("atomic file: owned by the effective user and group, not the old file's owner") {
  TempTree t;
  Error err;
  REQUIRE_MESSAGE(ocid::WriteFileAtomic(t / "mine", "x", 0644, &err), err.Line());
  CHECK(Lstat(t / "mine").st_uid == ::geteuid());
  CHECK(Lstat(t / "mine").st_gid == ::getegid());
  if (::geteuid() != 0) {
    MESSAGE("skipped the other-owner half: needs root to give a file away");
    return;
  }
  // Someone else's file at the name, in a setgid directory of their group:
  // the result is root's, with root's group.
  t.File("sg/f.json", "x");
  ::chown((t / "sg").c_str(), 0, kNobody);
  ::chmod((t / "sg").c_str(), 02755);
  ::chown((t / "sg/f.json").c_str(), kNobody, kNobody);
  REQUIRE(Lstat(t / "sg/f.json").st_uid == kNobody);
  REQUIRE_MESSAGE(ocid::WriteFileAtomic(t / "sg/f.json", "y", 0644, &err), err.Line());
  CHECK(Lstat(t / "sg/f.json").st_uid == 0);
  CHECK(Lstat(t / "sg/f.json").st_gid == ::getegid());
  // And an unprivileged writer gets its own file in its own directory.
  t.Dir("user");
  ::chown((t / "user").c_str(), kNobody, kNobody);
  ::chmod(t.path().c_str(), 0755);
  CHECK(AsNobody([&] {
    Error e;
    return ocid::WriteFileAtomic(t / "user/f.json", "z", 0640, &e);
  }));
  CHECK(Lstat(t / "user/f.json").st_uid == kNobody);
  CHECK(Lstat(t / "user/f.json").st_gid == kNobody);
  CHECK((Lstat(t / "user/f.json").st_mode & 07777) == 0640);
}

TEST_CASE("atomic file: a symlink, FIFO or directory at the name: refused, not written through") {
  TempTree t;
  t.File("target", "theirs");
  t.Link("link.json", t / "target");
  Error err;
  CHECK_FALSE(ocid::WriteFileAtomic(t / "link.json", "mine", 0644, &err));
  CHECK(err.Line() == "refusing to write through a symbolic link: " + (t / "link.json"));
  CHECK(t.Read("target") == "theirs");
  CHECK(S_ISLNK(Lstat(t / "link.json").st_mode));
  // A dangling link is refused too: it would otherwise create its target.
  t.Link("dangling.json", t / "nowhere");
  CHECK_FALSE(ocid::WriteFileAtomic(t / "dangling.json", "mine", 0644, &err));
  CHECK_FALSE(t.Exists("nowhere"));

  // A FIFO: held open for reading here, so that a writer that opened it
  // would not block but leave its bytes in the pipe.
  REQUIRE(::mkfifo((t / "fifo.json").c_str(), 0644) == 0);
  int rd = ::open((t / "fifo.json").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(rd >= 0);
  CHECK_FALSE(ocid::WriteFileAtomic(t / "fifo.json", "mine", 0644, &err));
  CHECK(err.Line() == "refusing to replace a non-regular file: " + (t / "fifo.json"));
  char buf[8];
  CHECK(::read(rd, buf, sizeof buf) <= 0);
  ::close(rd);
  CHECK(S_ISFIFO(Lstat(t / "fifo.json").st_mode));

  // A directory, empty or not.
  t.Dir("dir.json");
  t.File("full.json/inside", "kept");
  CHECK_FALSE(ocid::WriteFileAtomic(t / "dir.json", "mine", 0644, &err));
  CHECK(err.Line() == "refusing to replace a non-regular file: " + (t / "dir.json"));
  CHECK_FALSE(ocid::WriteFileAtomic(t / "full.json", "mine", 0644, &err));
  CHECK(S_ISDIR(Lstat(t / "dir.json").st_mode));
  CHECK(t.Read("full.json/inside") == "kept");
  // Nothing else appeared: no temporary was made for any of them.
  CHECK(Temporaries(t.path()).empty());
}

TEST_CASE("atomic file: a failed write leaves no temporary behind and the old file as it was") {
  TempTree t;
  t.File("f.json", "old");
  // The write of the temporary fails part way (EFBIG past RLIMIT_FSIZE,
  // SIGXFSZ ignored): the writer must say so and remove its temporary.
  CHECK(InChild([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {16, 16};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return false;
    Error err;
    return !ocid::WriteFileAtomic(t / "f.json", std::string(4096, 'x'), 0644, &err) &&
           err.errnum == EFBIG;
  }));
  CHECK(Temporaries(t.path()).empty());
  CHECK(t.Read("f.json") == "old");
  CHECK(Entries(t.path()) == 1);
  // The same through a directory fd.
  ocid::UniqueFd dfd;
  Error err;
  REQUIRE_MESSAGE(ocid::OpenWriteDir(t.path(), /*create=*/false, &dfd, &err), err.Line());
  CHECK(InChild([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {16, 16};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return false;
    Error e;
    return !ocid::WriteFileAtomicAt(dfd.get(), t.path(), "g.json", std::string(4096, 'x'), 0644,
                                    &e);
  }));
  CHECK(Entries(t.path()) == 1);
}

TEST_CASE("atomic file: missing dirs are made 0755; unsafe ones refused as WriteDirRefusal says") {
  TempTree t;
  Error err;
  mode_t old_umask = ::umask(0077);
  bool ok = ocid::WriteFileAtomic(t / "a/b/c/f.json", "x", 0644, &err);
  ::umask(old_umask);
  REQUIRE_MESSAGE(ok, err.Line());
  for (const char* d : {"a", "a/b", "a/b/c"}) {
    CAPTURE(d);
    CHECK((Lstat(t / d).st_mode & 07777) == 0755);
  }
  // The directory itself writable by others: refused, its line exact.
  t.Dir("open");
  ::chmod((t / "open").c_str(), 0777);
  const std::string why = "directory " + (t / "open") + " is writable by others (owner " +
                          std::to_string(::geteuid()) + ", mode 0777)";
  CHECK(ocid::WriteDirRefusal(t / "open") == why);
  CHECK_FALSE(ocid::WriteFileAtomic(t / "open/f.json", "x", 0644, &err));
  CHECK(err.Line() == "refusing to write " + (t / "open/f.json") + ": " + why);
  CHECK(Entries(t / "open") == 0);
  // A directory still to be made below it: judged as an ancestor, and
  // nothing is created.
  CHECK(ocid::WriteDirRefusal(t / "open/sub") ==
        "directory " + (t / "open") + " is writable by others and not sticky (owner " +
            std::to_string(::geteuid()) + ", mode 0777)");
  CHECK_FALSE(ocid::WriteFileAtomic(t / "open/sub/f.json", "x", 0644, &err));
  CHECK_FALSE(t.Exists("open/sub"));
  // A sticky world-writable ancestor (as /tmp is) is accepted.
  t.Dir("sticky/cdi");
  ::chmod((t / "sticky").c_str(), 01777);
  CHECK(ocid::WriteDirRefusal(t / "sticky/cdi").empty());
  REQUIRE_MESSAGE(ocid::WriteFileAtomic(t / "sticky/cdi/f.json", "x", 0644, &err), err.Line());
  // Not a file name.
  CHECK_FALSE(ocid::WriteFileAtomic(t / "a/..", "x", 0644, &err));
  CHECK(err.Line() == "not a file name: " + (t / "a/.."));
}

TEST_CASE("atomic file: through a directory fd, after the directory moved") {
  TempTree t;
  t.Dir("d");
  ocid::UniqueFd dfd;
  Error err;
  REQUIRE_MESSAGE(ocid::OpenWriteDir(t / "d", /*create=*/false, &dfd, &err), err.Line());
  std::filesystem::rename(t / "d", t / "moved");
  t.Dir("d");  // another directory at the old path
  REQUIRE_MESSAGE(ocid::WriteFileAtomicAt(dfd.get(), t / "d", "f.json", "x", 0640, &err),
                  err.Line());
  CHECK(t.Read("moved/f.json") == "x");
  CHECK_FALSE(t.Exists("d/f.json"));
  CHECK((Lstat(t / "moved/f.json").st_mode & 07777) == 0640);
  CHECK(Temporaries(t / "moved").empty());
  // Its errors name the path given, "/" joined without doubling.
  CHECK_FALSE(ocid::WriteFileAtomicAt(dfd.get(), t / "d", "", "x", 0644, &err));
  CHECK(err.Line() == "not a file name: " + (t / "d") + "/");
  CHECK_FALSE(ocid::WriteFileAtomicAt(dfd.get(), "/", "a/b", "x", 0644, &err));
  CHECK(err.Line() == "not a file name: /a/b");
  for (const char* bad : {"", ".", "..", "x/y"}) {
    CAPTURE(bad);
    CHECK_FALSE(ocid::WriteFileAtomicAt(dfd.get(), t / "d", bad, "x", 0644, &err));
    CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), bad, "x", 0644));
  }

  // FileIsCurrentAt: true only for these bytes, this mode, this owner, a
  // regular file at the name.
  CHECK(ocid::FileIsCurrentAt(dfd.get(), "f.json", "x", 0640));
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "f.json", "x", 0644));
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "f.json", "xy", 0640));
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "f.json", "y", 0640));
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "f.json", "", 0640));
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "missing.json", "", 0640));
  t.Link("moved/l.json", "f.json");
  CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "l.json", "x", 0640));
  CHECK(ocid::FileIsCurrent(t / "moved/f.json", "x", 0640));
  CHECK_FALSE(ocid::FileIsCurrent(t / "moved/l.json", "x", 0640));
  if (::geteuid() == 0) {
    ::chown((t / "moved/f.json").c_str(), kNobody, ::getegid());
    CHECK_FALSE(ocid::FileIsCurrentAt(dfd.get(), "f.json", "x", 0640));
    CHECK_FALSE(ocid::FileIsCurrent(t / "moved/f.json", "x", 0640));
  }
}

TEST_CASE("atomic file: every temporary name is new, in one process and across threads") {
  TempTree t;
  // The names the writer creates, seen by inotify: ".<name>.tmp.<pid>.<n>",
  // a different n each time.
  int in = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  REQUIRE(in >= 0);
  REQUIRE(::inotify_add_watch(in, t.path().c_str(), IN_CREATE) >= 0);
  Error err;
  std::vector<std::string> created;
  for (int i = 0; i < 3; ++i) {
    REQUIRE_MESSAGE(ocid::WriteFileAtomic(t / "f.json", std::to_string(i), 0644, &err), err.Line());
    // Read after each write: inotify merges an event identical to the one
    // still unread before it, which would hide a name used twice.
    alignas(inotify_event) char ev[4096];
    ssize_t n = ::read(in, ev, sizeof ev);
    for (ssize_t off = 0; off < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(ev + off);
      if (e->len) created.emplace_back(e->name);
      off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
  ::close(in);
  REQUIRE(created.size() == 3);
  const std::string prefix = ".f.json.tmp." + std::to_string(::getpid()) + ".";
  for (const std::string& name : created) {
    CAPTURE(name);
    CHECK(name.rfind(prefix, 0) == 0);
    CHECK(name.find_first_not_of("0123456789", prefix.size()) == std::string::npos);
  }
  CHECK(std::set<std::string>(created.begin(), created.end()).size() == 3);
  CHECK(t.Read("f.json") == "2");

  // Four threads writing the same name at once (the device plugin's keeper
  // and health file): every write succeeds, one of them wins whole.
  constexpr int kThreads = 4, kWrites = 100;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  std::vector<int> failures(kThreads, 0);
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < kWrites; ++k) {
        Error e;
        if (!ocid::WriteFileAtomic(t / "g.json", std::string(64, char('a' + i)), 0644, &e))
          ++failures[i];
      }
    });
  for (std::thread& th : threads) th.join();
  for (int i = 0; i < kThreads; ++i) CHECK(failures[i] == 0);
  const std::string g = t.Read("g.json");
  CHECK(g.size() == 64);
  CHECK(g.find_first_not_of(g[0]) == std::string::npos);
  CHECK(Temporaries(t.path()).empty());
}

TEST_CASE("atomic file: WriteBackup never overwrites and caps the mode at 0644") {
  TempTree t;
  t.File("daemon.json", "{}");
  ::chmod((t / "daemon.json").c_str(), 0666);
  // The plain name of every second this test can run in is taken already,
  // so each backup must find a free "-N" name and leave the planted files
  // alone, whichever second boundaries the calls cross.
  std::set<std::string> planted;
  const std::time_t now = std::time(nullptr);
  for (std::time_t s = now - 2; s <= now + 30; ++s) {
    struct tm tm;
    ::gmtime_r(&s, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    const std::string name = std::string("daemon.json.bak.") + stamp;
    t.File(name, "planted");
    planted.insert(t / name);
  }
  std::string first, second, third;
  Error err;
  REQUIRE_MESSAGE(ocid::WriteBackup(t / "daemon.json", "one", &first, &err), err.Line());
  REQUIRE_MESSAGE(ocid::WriteBackup(t / "daemon.json", "two", &second, &err), err.Line());
  REQUIRE_MESSAGE(ocid::WriteBackup(t / "daemon.json", "three", &third, &err), err.Line());
  for (const std::string* b : {&first, &second, &third}) {
    const size_t dash = b->rfind('-');
    REQUIRE(dash != std::string::npos);
    CHECK(planted.count(b->substr(0, dash)) == 1);  // "<a planted name>-N"
  }
  CHECK(first.substr(first.rfind('-')) == "-1");
  // Within one second the next free suffix is taken: -1, then -2.
  if (second.substr(0, second.rfind('-')) == first.substr(0, first.rfind('-')))
    CHECK(second.substr(second.rfind('-')) == "-2");
  CHECK(first != second);
  CHECK(second != third);
  CHECK(first != third);
  for (const std::string& p : planted) {
    std::ifstream in(p);
    std::string text;
    in >> text;
    CHECK_MESSAGE(text == "planted", p);
  }
  std::ifstream a(first), b(second), c(third);
  std::string sa, sb, sc;
  a >> sa;
  b >> sb;
  c >> sc;
  CHECK(sa == "one");
  CHECK(sb == "two");
  CHECK(sc == "three");
  CHECK((Lstat(first).st_mode & 07777) == 0644);
  // 0600 stays 0600; 0755 loses its execute and nothing else beyond 0644.
  ::chmod((t / "daemon.json").c_str(), 0600);
  REQUIRE(ocid::WriteBackup(t / "daemon.json", "x", &first, &err));
  CHECK((Lstat(first).st_mode & 07777) == 0600);
  ::chmod((t / "daemon.json").c_str(), 04755);
  REQUIRE(ocid::WriteBackup(t / "daemon.json", "x", &first, &err));
  CHECK((Lstat(first).st_mode & 07777) == 0644);
  CHECK(Lstat(first).st_uid == ::geteuid());
  // It does not make the directory.
  CHECK_FALSE(ocid::WriteBackup(t / "none/daemon.json", "x", &first, &err));
  CHECK_FALSE(t.Exists("none"));
}

TEST_CASE("atomic file: ReplaceBundleFile keeps the mode and owner it found") {
  TempTree t;
  t.File("bundle/config.json", "{}");
  ::chmod((t / "bundle/config.json").c_str(), 0604);
  const ino_t old_ino = Lstat(t / "bundle/config.json").st_ino;
  Error err;
  mode_t old_umask = ::umask(0077);
  bool ok = ocid::ReplaceBundleFile(t / "bundle/config.json", "{\"a\":1}", &err);
  ::umask(old_umask);
  REQUIRE_MESSAGE(ok, err.Line());
  struct stat st = Lstat(t / "bundle/config.json");
  CHECK(st.st_ino != old_ino);
  CHECK((st.st_mode & 07777) == 0604);
  CHECK(st.st_uid == ::geteuid());
  CHECK(t.Read("bundle/config.json") == "{\"a\":1}");
  CHECK(Temporaries(t / "bundle").empty());
  // It replaces; it does not create.
  CHECK_FALSE(ocid::ReplaceBundleFile(t / "bundle/none.json", "{}", &err));
  CHECK(err.Line() == "vanished before it could be replaced: " + (t / "bundle/none.json"));
  CHECK_FALSE(t.Exists("bundle/none.json"));
}

TEST_CASE("atomic file: ReadFileIfExists") {
  TempTree t;
  std::string out = "stale";
  bool exists = true;
  Error err;
  REQUIRE(ocid::ReadFileIfExists(t / "missing", 100, &out, &exists, &err));
  CHECK_FALSE(exists);
  CHECK(out.empty());
  t.File("f", "hello");
  REQUIRE(ocid::ReadFileIfExists(t / "f", 100, &out, &exists, &err));
  CHECK(exists);
  CHECK(out == "hello");
  t.Link("l", t / "f");
  CHECK_FALSE(ocid::ReadFileIfExists(t / "l", 100, &out, &exists, &err));
  CHECK(out.empty());
  // A dangling link is refused too, not taken for a missing file.
  t.Link("d", t / "nowhere");
  CHECK_FALSE(ocid::ReadFileIfExists(t / "d", 100, &out, &exists, &err));
  // More than the limit is an error, not a silent cut.
  CHECK_FALSE(ocid::ReadFileIfExists(t / "f", 3, &out, &exists, &err));
}
