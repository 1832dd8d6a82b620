// Thin file reading wrappers. Parsers take bytes; these get the bytes.
#pragma once
#include <sys/stat.h>

#include <cstddef>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "unique_fd.h"

namespace ocid {

// Upper bounds on what the hook reads; anything larger is refused.
// The state is read as a stream (oci_state.h): this only stops a writer
// that never ends. Runtimes write the bundle before the annotations, so a
// longer state still says where config.json is, and a container that names
// no flag in either is not failed by it (decision.h, CouldHaveAsked).
constexpr size_t kMaxStateStreamBytes = size_t{64} << 20;
constexpr size_t kMaxConfigBytes = 32 << 20;    // bundle config.json
constexpr size_t kMaxInventoryBytes = 1 << 20;  // one inventory file
constexpr size_t kMaxSmallFileBytes = 1 << 20;  // /proc files, devices.list
constexpr size_t kMaxPreloadBytes = 64 << 10;   // an image's /etc/ld.so.preload
// How much more than its limit is read from a pipe before giving up on EOF.
constexpr size_t kMaxDrainBytes = 64 << 20;

// Reads fd to EOF. Drains a pipe (a runtime writing the state must never
// see EPIPE), up to limit + kMaxDrainBytes, but keeps at most `limit` bytes
// and fails if there were more; a regular file larger than `limit` is
// refused without being read. `what` names the input in the error ("OCI
// state on stdin"), which names the limit.
bool ReadAllFd(int fd, size_t limit, const std::string& what, std::string* out, Error* err);

// How ReadInChunks stopped.
enum class ChunkEnd {
  kEof,        // read(2) said 0
  kEnough,     // the sink returned false
  kOverLimit,  // more than `limit` bytes came; that last chunk was not shown
  kError,      // read(2) failed (*errnum)
};

// The one loop that reads a file descriptor in chunks, for every reader
// that must not hold a whole input (the OCI state on stdin, config.json's
// request scan, host files, ReadAllFd): read(2) from where fd stands into
// the caller's `buf` of `size` bytes, EINTR retried, each chunk shown to
// `sink` until it returns false (enough seen), until EOF, or until more
// than `limit` bytes were read in all (kNoChunkLimit: never). No allocation
// and no std::function: the caller's buffer, a plain function pointer; it
// runs for every container the hook sees.
using FdChunkSink = bool (*)(void* ctx, std::string_view chunk);
constexpr size_t kNoChunkLimit = static_cast<size_t>(-1);
ChunkEnd ReadInChunks(int fd, char* buf, size_t size, size_t limit, FdChunkSink sink, void* ctx,
                      int* errnum);
// The same with a lambda (or any callable taking std::string_view and
// returning bool) as the sink.
template <typename Sink>
ChunkEnd ReadInChunks(int fd, char* buf, size_t size, size_t limit, Sink& sink, int* errnum) {
  auto call = [](void* ctx, std::string_view chunk) { return (*static_cast<Sink*>(ctx))(chunk); };
  return ReadInChunks(fd, buf, size, limit, +call, &sink, errnum);
}

// Every file the hook or the plugin reads (host files: inventories,
// profiles, the version-lock library and module version, engine configs,
// CDI files; a bundle's config.json; an image's /etc/ld.so.preload) is
// opened in two steps, so that nothing but a regular file is ever opened
// for reading: open(2) on a device node would run its driver's open as
// root (a watchdog arms, a tape rewinds), and on a FIFO it would wait for
// a writer. The name is resolved to an O_PATH fd, which opens nothing, by
// the caller's own rules (a symlink followed or not, inside a root or
// not); fstat says what it is; only a regular file is reopened O_RDONLY
// through the host's procfs (thread-self/fd/N, host_proc.h): exactly the
// inode examined.
//
// Reopens the O_PATH fd `where` for reading when it is a regular file (its
// fstat in *st when asked); anything else fails with one line "not a
// regular file (a FIFO): <shown>", a symlink with "refusing to read through
// a symbolic link: <shown>". This is the one opener: every reader above
// resolves its name its own way and then comes here.
//
// A caller with its own rules for the file (the image's /etc/ld.so.preload,
// hook.cc: which mount it is on, who may read it) passes `vet`: it sees the
// O_PATH fd and its fstat before the type checks and before anything is
// opened, and refuses in its own words by returning false.
struct FileVet {
  bool (*check)(void* ctx, int where, const struct stat& st, Error* err);
  void* ctx;
};
bool ReopenRegularFile(int where, const std::string& shown, UniqueFd* out, Error* err,
                       struct stat* st = nullptr, const FileVet* vet = nullptr);

// What a name's last component may be.
enum class LastSymlink { kFollow, kRefuse };

// openat(dirfd, path, O_PATH) (with O_NOFOLLOW for kRefuse), then
// ReopenRegularFile. A name that cannot be resolved fails "cannot open"
// with its errno (ENOENT for a missing one).
bool OpenRegularFileAt(int dirfd, const std::string& path, LastSymlink last, UniqueFd* out,
                       Error* err, struct stat* st = nullptr);

// Opens `path` relative to dirfd (AT_FDCWD for plain paths) with
// OpenRegularFileAt (a symlink as its last component refused) and reads it
// whole, up to `limit` bytes.
bool ReadFileAt(int dirfd, const std::string& path, size_t limit, std::string* out, Error* err);

// The names in an open directory (O_RDONLY|O_DIRECTORY), without "." and
// "..", unsorted. getdents64 directly: no DIR stream, no extra fcntl calls.
bool ListDirectory(int dirfd, const std::string& what, std::vector<std::string>* names, Error* err);

// An input stream over a file descriptor (or bytes in memory), for the
// parsers that must not hold their whole input: read in 64 KiB chunks, each
// shown to `observer` first (the request scan), up to `ceiling` bytes, after
// which it reports EOF and sets over_ceiling(). Remembers where the first NUL
// byte was (no JSON text holds one) and how much the reader has consumed.
class FdInput : public std::streambuf {
 public:
  using Observer = void (*)(void* ctx, std::string_view chunk);
  FdInput(int fd, size_t ceiling, Observer observer = nullptr, void* ctx = nullptr);
  // The same over bytes in memory (tests, fuzzers, callers holding a file).
  explicit FdInput(std::string_view bytes, Observer observer = nullptr, void* ctx = nullptr);

  // Reads and observes the rest up to EOF (or the ceiling): a runtime
  // writing the state must never see EPIPE.
  void Drain();
  size_t consumed() const { return total_ - static_cast<size_t>(egptr() - gptr()); }
  size_t nul_offset() const { return nul_; }  // npos when none
  bool over_ceiling() const { return over_; }
  size_t ceiling() const { return ceiling_; }
  int read_errno() const { return errno_; }

 protected:
  int_type underflow() override;

 private:
  void Observe(const char* data, size_t n);
  int fd_ = -1;
  size_t ceiling_ = 0;
  Observer observer_;
  void* ctx_;
  size_t total_ = 0;
  size_t nul_ = std::string_view::npos;
  bool over_ = false;
  int errno_ = 0;
  char buf_[65536];
};

// Writes all of `data` to fd.
bool WriteAllFd(int fd, const std::string& data, const std::string& what, Error* err);

}  // namespace ocid
