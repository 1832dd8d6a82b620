#include "files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/syscall.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "host_proc.h"
#include "rootfs_path.h"
#include "unique_fd.h"

namespace ocid {

ChunkEnd ReadInChunks(int fd, char* buf, size_t size, size_t limit, FdChunkSink sink, void* ctx,
                      int* errnum) {
  size_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      *errnum = errno;
      return ChunkEnd::kError;
    }
    if (n == 0) return ChunkEnd::kEof;
    total += static_cast<size_t>(n);
    if (total > limit) return ChunkEnd::kOverLimit;
    if (!sink(ctx, std::string_view(buf, static_cast<size_t>(n)))) return ChunkEnd::kEnough;
  }
}

bool ReadAllFd(int fd, size_t limit, const std::string& what, std::string* out, Error* err) {
  out->clear();
  auto too_big = [&] {
    out->clear();
    return Fail(err, what + " is larger than " + std::to_string(limit) + " bytes");
  };
  // A regular file has no writer to drain: one larger than the limit is
  // refused without reading it through (st_size first; then reading stops
  // once past the limit, since /proc and /sys files report 0 or 4096).
  struct stat st;
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && static_cast<uint64_t>(st.st_size) > limit) return too_big();
  // A pipe is drained to EOF, but not forever: a writer that never stops
  // must not hang the hook. What comes past the limit is not kept.
  size_t total = 0;
  auto keep = [&](std::string_view chunk) {
    total += chunk.size();
    if (total <= limit) out->append(chunk);
    return true;
  };
  char buf[65536];
  int errnum = 0;
  switch (
      ReadInChunks(fd, buf, sizeof buf, regular ? limit : limit + kMaxDrainBytes, keep, &errnum)) {
    case ChunkEnd::kError: out->clear(); return Fail(err, "cannot read " + what, "", errnum);
    case ChunkEnd::kOverLimit: return too_big();
    case ChunkEnd::kEof:
    case ChunkEnd::kEnough: break;
  }
  if (total > limit) return too_big();
  return true;
}

FdInput::FdInput(int fd, size_t ceiling, Observer observer, void* ctx)
    : fd_(fd), ceiling_(ceiling), observer_(observer), ctx_(ctx) {}

FdInput::FdInput(std::string_view bytes, Observer observer, void* ctx)
    : observer_(observer), ctx_(ctx) {
  char* p = const_cast<char*>(bytes.data());
  setg(p, p, p + bytes.size());
  total_ = bytes.size();
  Observe(bytes.data(), bytes.size());
}

void FdInput::Observe(const char* data, size_t n) {
  if (nul_ == std::string_view::npos)
    if (const void* z = std::memchr(data, '\0', n))
      nul_ = total_ - n + static_cast<size_t>(static_cast<const char*>(z) - data);
  if (observer_) observer_(ctx_, std::string_view(data, n));
}

FdInput::int_type FdInput::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (fd_ < 0 || over_) return traits_type::eof();
  // One chunk a call: it stays in buf_ for the parser.
  size_t n = 0;
  auto take = [&n](std::string_view chunk) {
    n = chunk.size();
    return false;
  };
  if (ReadInChunks(fd_, buf_, sizeof buf_, kNoChunkLimit, take, &errno_) != ChunkEnd::kEnough) {
    fd_ = -1;  // EOF, or an error in errno_
    return traits_type::eof();
  }
  total_ += n;
  Observe(buf_, n);
  if (total_ > ceiling_) {
    over_ = true;
    return traits_type::eof();
  }
  setg(buf_, buf_, buf_ + n);
  return traits_type::to_int_type(*gptr());
}

void FdInput::Drain() {
  while (underflow() != traits_type::eof()) setg(egptr(), egptr(), egptr());
}

bool ReopenRegularFile(int where, const std::string& shown, UniqueFd* out, Error* err,
                       struct stat* st_out, const FileVet* vet) {
  struct stat st;
  if (::fstat(where, &st) != 0) return Fail(err, "cannot stat", shown, errno);
  if (vet && !vet->check(vet->ctx, where, st, err)) return false;
  if (S_ISLNK(st.st_mode)) return Fail(err, "refusing to read through a symbolic link", shown);
  if (!S_ISREG(st.st_mode))
    return Fail(err, std::string("not a regular file (a ") + FileTypeDescription(st.st_mode) + ")",
                shown);
  int proc = -1;
  if (!host_proc::Fd(&proc, err)) return false;
  UniqueFd fd(::openat(proc, host_proc::ThreadSelfFd(where).c_str(),
                       O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) return Fail(err, "cannot open", shown, errno);
  struct stat again;
  if (::fstat(fd.get(), &again) != 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino)
    return Fail(err, "cannot reopen (not the file examined)", shown);
  if (st_out) *st_out = again;
  *out = std::move(fd);
  return true;
}

bool OpenRegularFileAt(int dirfd, const std::string& path, LastSymlink last, UniqueFd* out,
                       Error* err, struct stat* st) {
  int nofollow = last == LastSymlink::kRefuse ? O_NOFOLLOW : 0;
  UniqueFd where(::openat(dirfd, path.c_str(), O_PATH | O_CLOEXEC | nofollow));
  if (!where.valid()) return Fail(err, "cannot open", path, errno);
  return ReopenRegularFile(where.get(), path, out, err, st);
}

bool ReadFileAt(int dirfd, const std::string& path, size_t limit, std::string* out, Error* err) {
  out->clear();
  UniqueFd fd;
  if (!OpenRegularFileAt(dirfd, path, LastSymlink::kRefuse, &fd, err)) return false;
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

bool WriteAllFd(int fd, const std::string& data, const std::string& what, Error* err) {
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
