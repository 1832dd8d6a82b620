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

ChunkEnd ReadFile(const std::string& path, size_t size, size_t limit, Seen* seen,
                  int* errnum) {
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
  CHECK(ReadInChunks(dir.get(), buf, sizeof buf, kNoChunkLimit, none, &errnum) ==
        ChunkEnd::kError);
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
