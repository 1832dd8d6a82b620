// The userspace resolver (OpenInRootWalk, used on kernels without openat2)
// against openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS itself, on trees
// the fuzzer builds: both must reach the same file or fail with the same
// errno, and what they reach must lie inside the root.
//
// Input: lines. Each builds one entry of a fresh tree, or names a path to
// resolve once the tree is built:
//   d<name>              directory
//   f<name>              empty file
//   l<name>\t<target>    symlink (target is any text: absolute, "..", loops)
//   <c><path>            resolve <path>; the byte <c> picks the open flags
// In targets and paths, "@O" stands for the absolute path of a directory
// outside the root (holding a marker file), "@R" for the root's own absolute
// path and "@U" for twenty "../", so escapes are one token away.
//
// "Inside the root" is checked soundly: before resolving, every inode of the
// tree is collected (no symlink followed); a result must be one of them. The
// tree has no mount, procfs or hard link, so nothing else is reachable
// legitimately: the outside directory, its marker, or anything else on the
// host would be an escape.
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "rootfs_path.h"
#include "syscalls.h"
#include "unique_fd.h"

namespace {

constexpr size_t kMaxEntries = 64;
constexpr size_t kMaxResolves = 32;
constexpr size_t kMaxPath = 2 * PATH_MAX;  // past PATH_MAX: ENAMETOOLONG is compared too

// All without side effects on any file type (no FIFO or device is created,
// and O_NONBLOCK anyway).
const int kFlags[] = {O_PATH,
                      O_PATH | O_NOFOLLOW,
                      O_PATH | O_DIRECTORY,
                      O_RDONLY | O_DIRECTORY,
                      O_RDONLY | O_NONBLOCK,
                      O_PATH | O_NOFOLLOW | O_DIRECTORY};

struct Dirs {
  std::string base;     // private temp dir
  std::string outside;  // base/outside: must never be reached
  std::string root;     // base/root: rebuilt for every input
};

int RemoveOne(const char* path, const struct stat*, int type, struct FTW*) {
  return type == FTW_DP ? ::rmdir(path) : ::unlink(path);
}

void RemoveTree(const std::string& dir) {
  // FTW_PHYS: symlinks are removed, never followed.
  ::nftw(dir.c_str(), RemoveOne, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

const Dirs& Setup() {
  static Dirs d = [] {
    Dirs x;
    // A tmpfs when there is one: every input creates and removes a tree,
    // which on a journaling filesystem costs 20 times more.
    const char* t = std::getenv("TMPDIR");
    std::string dir = t && *t ? t : "/tmp";
    if (!(t && *t) && ::access("/dev/shm", W_OK) == 0) dir = "/dev/shm";
    std::string tmpl = dir + "/ocid-rootfs-fuzz-XXXXXX";
    FUZZ_CHECK(::mkdtemp(tmpl.data()) != nullptr);
    x.base = tmpl;
    x.outside = x.base + "/outside";
    x.root = x.base + "/root";
    FUZZ_CHECK(::mkdir(x.outside.c_str(), 0755) == 0);
    FUZZ_CHECK(::mkdir((x.outside + "/marker").c_str(), 0755) == 0);
    int fd = ::open((x.outside + "/marker/file").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    FUZZ_CHECK(fd >= 0);
    ::close(fd);
    return x;
  }();
  static bool cleanup = [] {
    std::atexit([] { RemoveTree(d.base); });
    return true;
  }();
  (void)cleanup;
  return d;
}

std::string Expand(const std::string& s, const Dirs& d) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '@' && i + 1 < s.size()) {
      char c = s[i + 1];
      if (c == 'O') {
        out += d.outside;
        ++i;
        continue;
      }
      if (c == 'R') {
        out += d.root;
        ++i;
        continue;
      }
      if (c == 'U') {
        for (int k = 0; k < 20; ++k) out += "../";
        ++i;
        continue;
      }
    }
    out += s[i] == '\0' ? 'x' : s[i];
  }
  return out.size() > kMaxPath ? out.substr(0, kMaxPath) : out;
}

// Creates one entry below root_fd without ever following a symlink: every
// parent is opened O_NOFOLLOW | O_DIRECTORY (a symlink there fails) and
// created when missing. An entry that cannot be made is skipped.
void Create(int root_fd, const std::string& name, char type, const std::string& target) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string c = name.substr(start, end - start);
    if (!c.empty() && c != "." && c != ".." && c.size() <= NAME_MAX) parts.push_back(c);
    start = end + 1;
  }
  if (parts.empty() || parts.size() > 8) return;
  ocid::UniqueFd cur(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const char* c = parts[i].c_str();
    int fd = ::openat(cur.get(), c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && ::mkdirat(cur.get(), c, 0755) == 0)
      fd = ::openat(cur.get(), c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    cur.reset(fd);
  }
  const char* leaf = parts.back().c_str();
  if (type == 'd') {
    ::mkdirat(cur.get(), leaf, 0755);
  } else if (type == 'f') {
    int fd = ::openat(cur.get(), leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
  } else if (!target.empty() && target.size() < PATH_MAX) {
    ::symlinkat(target.c_str(), cur.get(), leaf);
  }
}

std::set<std::pair<uint64_t, uint64_t>>* g_inodes;

int CollectOne(const char*, const struct stat* st, int, struct FTW*) {
  g_inodes->insert({st->st_dev, st->st_ino});
  return 0;
}

struct Outcome {
  int err = 0;
  uint64_t dev = 0, ino = 0;
};

Outcome Of(int fd, int err) {
  Outcome o;
  if (fd < 0) {
    o.err = err;
    return o;
  }
  struct stat st;
  FUZZ_CHECK(::fstat(fd, &st) == 0);
  o.dev = st.st_dev;
  o.ino = st.st_ino;
  ::close(fd);
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Dirs& d = Setup();
  RemoveTree(d.root);
  FUZZ_CHECK(::mkdir(d.root.c_str(), 0755) == 0);
  ocid::UniqueFd root(::open(d.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  FUZZ_CHECK(root.valid());

  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<int, std::string>> resolves;
  size_t entries = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    char kind = line[0];
    std::string rest = line.substr(1);
    if ((kind == 'd' || kind == 'f' || kind == 'l') && entries < kMaxEntries) {
      ++entries;
      std::string target;
      size_t tab = rest.find('\t');
      if (kind == 'l' && tab != std::string::npos) {
        target = Expand(rest.substr(tab + 1), d);
        rest = rest.substr(0, tab);
      }
      Create(root.get(), Expand(rest, d), kind, target);
    } else if (resolves.size() < kMaxResolves) {
      int flags = kFlags[static_cast<unsigned char>(kind) % (sizeof kFlags / sizeof kFlags[0])];
      resolves.emplace_back(flags, Expand(rest, d));
    }
  }

  std::set<std::pair<uint64_t, uint64_t>> inodes;
  g_inodes = &inodes;
  FUZZ_CHECK(::nftw(d.root.c_str(), CollectOne, 16, FTW_PHYS | FTW_MOUNT) == 0);

  for (const auto& [flags, path] : resolves) {
    ocid::UniqueFd fd;
    ocid::Error err;
    Outcome walk = ocid::OpenInRootWalk(root.get(), path, flags, &fd, &err) ? Of(fd.release(), 0)
                                                                            : Of(-1, err.errnum);
    if (walk.err == 0)
      FUZZ_CHECK(inodes.count({walk.dev, walk.ino}) == 1);
    else
      FUZZ_CHECK(walk.err > 0);

    open_how how{};
    how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    // EAGAIN: a rename or mount anywhere on the system during a lookup
    // with ".." (openat2 cannot rule out an escape then); retried, as
    // OpenInRoot does. A long lookup (40 links full of "..") on a busy host
    // can keep failing: no answer to compare with then.
    int kfd;
    int tries = 0;
    do kfd = ocid::sys::openat2(root.get(), path.c_str(), &how);
    while (kfd < 0 && errno == EAGAIN && ++tries < 100);
    if (kfd < 0 && errno == EAGAIN) continue;
    if (kfd < 0 && errno == ENOSYS) continue;  // old kernel: the inside check only
    Outcome kernel = Of(kfd, errno);
    if (walk.err != kernel.err || walk.dev != kernel.dev || walk.ino != kernel.ino) {
      std::fprintf(stderr,
                   "disagree on \"%s\" flags %#x: walk err %d ino %llu, openat2 err %d ino %llu\n",
                   path.c_str(), flags, walk.err, static_cast<unsigned long long>(walk.ino),
                   kernel.err, static_cast<unsigned long long>(kernel.ino));
      std::abort();
    }
  }
  return 0;
}
