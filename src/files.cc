#include "files.h"

#include <fcntl.h>
#include <unistd.h>

#include <sys/syscall.h>

#include <cerrno>
#include <cstring>

#include "unique_fd.h"

namespace ocid {

bool ReadAllFd(int fd, size_t limit, const std::string& what, std::string* out,
               Error* err) {
  out->clear();
  bool too_big = false;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(err, "cannot read " + what, "", errno);
    }
    if (n == 0) break;
    if (too_big) continue;  // keep draining to EOF
    if (out->size() + static_cast<size_t>(n) > limit) {
      too_big = true;
      out->clear();
      continue;
    }
    out->append(buf, static_cast<size_t>(n));
  }
  if (too_big)
    return Fail(err, what + " is larger than " + std::to_string(limit) +
                         " bytes");
  return true;
}

bool ReadFileAt(int dirfd, const std::string& path, size_t limit,
                std::string* out, Error* err) {
  UniqueFd fd(::openat(dirfd, path.c_str(),
                       O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
  if (!fd.valid()) return Fail(err, "cannot open", path, errno);
  return ReadAllFd(fd.get(), limit, path, out, err);
}

bool ListDirectory(int dirfd, const std::string& what, std::vector<std::string>* names,
                   Error* err) {
  names->clear();
  alignas(8) char buf[16384];
  for (;;) {
    long n = ::syscall(SYS_getdents64, dirfd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(err, "cannot list directory", what, errno);
    }
    if (n == 0) return true;
    for (long off = 0; off < n;) {
      // struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name[].
      const char* rec = buf + off;
      unsigned short reclen;
      std::memcpy(&reclen, rec + 16, sizeof reclen);
      const char* name = rec + 19;
      if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) names->emplace_back(name);
      off += reclen;
    }
  }
}

bool WriteAllFd(int fd, const std::string& data, const std::string& what,
                Error* err) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(err, "cannot write", what, errno);
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace ocid
