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
  struct sigaction ign {}, old {};
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
