// The file helpers' one chunk loop and one opener (files.h), on real files.
#include "files.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "test_tree.h"

namespace ocid {
namespace {

using test::TempTree;

// The chunks ReadInChunks shows, with a sink that takes `want` of them.
struct Seen {
  std::vector<std::string> chunks;
  size_t want = static_cast<size_t>(-1);
  bool operator()(std::string_view c) {
    chunks.emplace_back(c);
    return chunks.size() < want;
  }
};

ChunkEnd ReadFile(const std::string& path, size_t size, size_t limit, Seen* seen, int* errnum) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  std::string buf(size, '\0');
  return ReadInChunks(fd.get(), buf.data(), size, limit, *seen, errnum);
}

TEST_CASE("ReadInChunks: a limit exactly at a chunk boundary") {
  TempTree t;
  t.File("eight", "abcdefgh");
  int errnum = 0;
  Seen all;
  CHECK(ReadFile(t / "eight", 4, 8, &all, &errnum) == ChunkEnd::kEof);  // 8 bytes: not more
  CHECK(all.chunks == std::vector<std::string>{"abcd", "efgh"});
  Seen over;
  CHECK(ReadFile(t / "eight", 4, 7, &over, &errnum) == ChunkEnd::kOverLimit);
  CHECK(over.chunks == std::vector<std::string>{"abcd"});  // the chunk past it is not shown
  Seen first;
  CHECK(ReadFile(t / "eight", 4, 4, &first, &errnum) == ChunkEnd::kOverLimit);
  CHECK(first.chunks == std::vector<std::string>{"abcd"});
  Seen unlimited;
  CHECK(ReadFile(t / "eight", 3, kNoChunkLimit, &unlimited, &errnum) == ChunkEnd::kEof);
  CHECK(unlimited.chunks == std::vector<std::string>{"abc", "def", "gh"});
  CHECK(errnum == 0);
}

TEST_CASE("ReadInChunks: a sink that has seen enough stops the reading") {
  TempTree t;
  t.File("eight", "abcdefgh");
  UniqueFd fd(::open((t / "eight").c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  char buf[3];
  Seen one;
  one.want = 1;
  int errnum = 0;
  CHECK(ReadInChunks(fd.get(), buf, sizeof buf, kNoChunkLimit, one, &errnum) == ChunkEnd::kEnough);
  CHECK(one.chunks == std::vector<std::string>{"abc"});
  CHECK(::lseek(fd.get(), 0, SEEK_CUR) == 3);  // nothing read past what was shown
  // The same descriptor goes on from where it stands.
  Seen rest;
  CHECK(ReadInChunks(fd.get(), buf, sizeof buf, kNoChunkLimit, rest, &errnum) == ChunkEnd::kEof);
  CHECK(rest.chunks == std::vector<std::string>{"def", "gh"});
}

TEST_CASE("ReadInChunks: an empty file, and a read that fails") {
  TempTree t;
  t.File("empty", "");
  int errnum = 0;
  Seen none;
  CHECK(ReadFile(t / "empty", 4, 0, &none, &errnum) == ChunkEnd::kEof);
  CHECK(none.chunks.empty());
  UniqueFd dir(::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  char buf[4];
  CHECK(ReadInChunks(dir.get(), buf, sizeof buf, kNoChunkLimit, none, &errnum) == ChunkEnd::kError);
  CHECK(errnum == EISDIR);
  CHECK(none.chunks.empty());
}

TEST_CASE("ReopenRegularFile: a caller's vet sees the file first and words its refusal") {
  TempTree t;
  t.File("file", "bytes");
  t.Dir("dir");
  struct Calls {
    int n = 0;
    mode_t mode = 0;
  } calls;
  auto refuse = [](void* ctx, int, const struct stat& st, Error* err) {
    auto* c = static_cast<Calls*>(ctx);
    ++c->n;
    c->mode = st.st_mode;
    return Fail(err, "refusing: not for us", "shown");
  };
  auto allow = [](void* ctx, int, const struct stat&, Error*) {
    ++static_cast<Calls*>(ctx)->n;
    return true;
  };
  UniqueFd where(::open((t / "file").c_str(), O_PATH | O_CLOEXEC));
  REQUIRE(where.valid());
  UniqueFd fd;
  Error err;
  const FileVet no{refuse, &calls};
  CHECK_FALSE(ReopenRegularFile(where.get(), "shown", &fd, &err, nullptr, &no));
  CHECK(err.Line() == "refusing: not for us: shown");
  CHECK(calls.n == 1);
  CHECK(S_ISREG(calls.mode));
  CHECK_FALSE(fd.valid());

  const FileVet yes{allow, &calls};
  struct stat st;
  REQUIRE(ReopenRegularFile(where.get(), "shown", &fd, &err, &st, &yes));
  CHECK(calls.n == 2);
  CHECK(st.st_size == 5);
  std::string out;
  REQUIRE(ReadAllFd(fd.get(), 100, "shown", &out, &err));
  CHECK(out == "bytes");

  // A vet that lets a directory through does not make it readable: the
  // opener's own checks still stand.
  UniqueFd dir(::open((t / "dir").c_str(), O_PATH | O_CLOEXEC));
  CHECK_FALSE(ReopenRegularFile(dir.get(), "d", &fd, &err, nullptr, &yes));
  CHECK(err.Line() == "not a regular file (a directory): d");
}

}  // namespace
}  // namespace ocid

// ReadAllFd and ReadFileAt (files.h): reads capped before they are kept,
// on pipes that send too much or never end and on files over the cap:
// files' share of hostile.read in the hostile-input set (hostile_input.h).
#include <doctest/doctest.h>

#include "test_tree.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "error.h"
#include "files.h"
#include "hostile_input.h"

using ocid::Error;
using ocid::test::TempTree;
using ocid::test::hostile::CheckOneLine;
using ocid::test::hostile::Contains;

// ===========================================================================
TEST_SUITE("hostile.read") {
  TEST_CASE("ReadAllFd: 50 MB on a pipe: drained, refused naming the cap, not kept") {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    std::atomic<size_t> written{0};
    std::thread writer([&] {
      std::string chunk(1 << 20, ' ');
      for (int i = 0; i < 50; ++i) {
        size_t done = 0;
        while (done < chunk.size()) {
          ssize_t n = ::write(p[1], chunk.data() + done, chunk.size() - done);
          if (n <= 0) break;
          done += static_cast<size_t>(n);
        }
        written += done;
      }
      ::close(p[1]);
    });
    std::string out;
    Error err;
    CHECK_FALSE(ocid::ReadAllFd(p[0], 1 << 20, "OCI state on stdin", &out, &err));
    writer.join();
    ::close(p[0]);
    CHECK(written == size_t{50} << 20);  // the writer never saw EPIPE
    CHECK(out.empty());
    CheckOneLine(err);
    CHECK(err.Line() == "OCI state on stdin is larger than 1048576 bytes");
  }

  TEST_CASE("ReadAllFd: a pipe that never ends: given up on after the drain budget") {
    struct sigaction ign {
    }, old{};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old);
    int p[2];
    REQUIRE(::pipe(p) == 0);
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      std::string chunk(1 << 16, 'x');
      while (!stop && ::write(p[1], chunk.data(), chunk.size()) > 0) {
      }
      ::close(p[1]);
    });
    std::string out;
    Error err;
    auto read = std::async(std::launch::async, [&] {
      return ocid::ReadAllFd(p[0], 1 << 20, "OCI state on stdin", &out, &err);
    });
    bool ended = read.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
    stop = true;  // the writer stops (and the reader sees EOF, if it was still reading)
    CHECK_MESSAGE(ended, "ReadAllFd reads an endless pipe forever");
    CHECK_FALSE(read.get());
    ::close(p[0]);  // a writer still blocked gets EPIPE
    writer.join();
    ::sigaction(SIGPIPE, &old, nullptr);
    CHECK(Contains(err.Line(), "larger than 1048576 bytes"));
  }

  TEST_CASE("a regular file over the cap is refused without being read") {
    TempTree t;
    std::string big(3 << 20, 'x');
    t.File("big", big);
    int fd = ::open((t / "big").c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    std::string out;
    Error err;
    CHECK_FALSE(ocid::ReadAllFd(fd, 1 << 20, "x", &out, &err));
    CHECK(::lseek(fd, 0, SEEK_CUR) == 0);
    ::close(fd);
    CHECK(err.Line() == "x is larger than 1048576 bytes");
    // Exactly at the cap is fine.
    t.File("exact", std::string(1 << 20, 'y'));
    CHECK(ocid::ReadFileAt(AT_FDCWD, t / "exact", 1 << 20, &out, &err));
    CHECK(out.size() == size_t{1} << 20);
    CHECK_FALSE(ocid::ReadFileAt(AT_FDCWD, t / "big", 1 << 20, &out, &err));
    CHECK(out.empty());
  }

}  // TEST_SUITE
