// A scratch directory tree for tests that need real files: created under
// $TMPDIR (or /tmp), removed recursively at the end of the test.
#pragma once
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ocid::test {

class TempTree {
 public:
  TempTree() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/ocid-test-XXXXXX";
    char* p = ::mkdtemp(tmpl.data());
    if (p) path_ = p;
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

  void Dir(const std::string& rel) const { std::filesystem::create_directories(*this / rel); }
  void File(const std::string& rel, const std::string& content = "") const {
    Dir(std::filesystem::path(rel).parent_path().string());
    std::ofstream(*this / rel) << content;
  }
  void Link(const std::string& rel, const std::string& target) const {
    Dir(std::filesystem::path(rel).parent_path().string());
    std::filesystem::create_symlink(target, *this / rel);
  }
  bool Exists(const std::string& rel) const {
    struct stat st;
    return ::lstat((*this / rel).c_str(), &st) == 0;
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(*this / rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Every path below the tree with its type and size: a fingerprint that a
  // test compares before and after to prove nothing changed.
  std::string Fingerprint() const {
    std::string out;
    for (auto it = std::filesystem::recursive_directory_iterator(path_);
         it != std::filesystem::recursive_directory_iterator(); ++it) {
      struct stat st;
      ::lstat(it->path().c_str(), &st);
      out += it->path().string() + " " + std::to_string(st.st_mode) + " " +
             std::to_string(st.st_size) + "\n";
    }
    return out;
  }

 private:
  std::string path_;
};

// An unprivileged local user, for tests run as root.
constexpr uid_t kNobody = 65534;

// Runs `f` in a child process as uid/gid 65534 with no supplementary
// groups and umask 0 (an unprivileged local user); true when it returned
// true. Needs root.
template <typename F>
bool AsNobody(F f) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::umask(0);
    bool ok = ::setgroups(0, nullptr) == 0 && ::setresgid(kNobody, kNobody, kNobody) == 0 &&
              ::setresuid(kNobody, kNobody, kNobody) == 0 && f();
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

}  // namespace ocid::test
