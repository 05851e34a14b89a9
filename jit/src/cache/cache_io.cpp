// File primitives for the disk cache: POSIX writes with fsync, reads, unique names, reports.
#include "cache_io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <system_error>

#include "tessel/runtime/log.hpp"

namespace tessel::jit::cache::io {

namespace {
void write_file(const fs::path& p, std::string_view bytes, bool sync) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "create " + p.string());
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      throw std::system_error(err, std::generic_category(), "write " + p.string());
    }
    done += static_cast<size_t>(n);
  }
  if (sync && ::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "fsync " + p.string());
  }
  if (::close(fd) != 0) throw std::system_error(errno, std::generic_category(), "close " + p.string());
}
}  // namespace

void write_synced(const fs::path& p, std::string_view bytes) { write_file(p, bytes, true); }
void write_new(const fs::path& p, std::string_view bytes) { write_file(p, bytes, false); }

bool replace_file(const fs::path& p, std::string_view bytes) {
  fs::path tmp = p;
  tmp += "." + unique_suffix();
  try {
    write_new(tmp, bytes);
  } catch (const std::system_error&) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return false;
  }
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

namespace {
void fail(ReadFailure* why, ReadFailure::Kind kind, int error = 0) {
  if (why) *why = ReadFailure{kind, error};
}

// What a failed openat() means: ENOENT is an absent file, ELOOP (O_NOFOLLOW on a symbolic link)
// something that is not a regular file; anything else (EACCES, EIO, ...) a file that is there
// but could not be read.
void open_failed(ReadFailure* why, int err) {
  if (err == ENOENT || err == ENOTDIR) fail(why, ReadFailure::Missing);
  else if (err == ELOOP) fail(why, ReadFailure::NotRegular);
  else fail(why, ReadFailure::Unreadable, err);
}

// Opens `name` (relative to `dirfd`) for reading only when it is a regular file. O_NONBLOCK makes
// the open of a FIFO return at once instead of waiting for a writer (a FIFO planted in the cache
// would otherwise hang every reader); the type is then checked on the descriptor itself, so it
// cannot be swapped between the check and the read. -1 for anything else.
int open_regular(int dirfd, const char* name, int flags, ReadFailure* why = nullptr) {
  int fd = ::openat(dirfd, name, flags | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    open_failed(why, errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    fail(why, ReadFailure::Unreadable, errno);
    ::close(fd);
    return -1;
  }
  int fl = ::fcntl(fd, F_GETFL);
  if (!S_ISREG(st.st_mode) || fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    fail(why, ReadFailure::NotRegular);
    ::close(fd);
    return -1;
  }
  return fd;
}

// The whole regular file `name` relative to `dirfd` (`flags`: O_NOFOLLOW or 0); nullopt for anything else or on error.
std::optional<std::string> read_regular(int dirfd, const char* name, int flags, ReadFailure* why) {
  int fd = open_regular(dirfd, name, O_RDONLY | flags, why);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    fail(why, ReadFailure::Unreadable, errno);
    ::close(fd);
    return std::nullopt;
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  for (;;) {
    if (done == out.size()) out.resize(out.size() + 4096);  // the file may have grown
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fail(why, ReadFailure::Unreadable, errno);
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}
}  // namespace

std::string ReadFailure::str(const std::string& name) const {
  // A FIFO or link where a file belongs is reported like an absent file: no regular file is there.
  if (kind != Unreadable) return name + " missing";
  return fmt::format("{} unreadable ({})", name, std::generic_category().message(error));
}

std::optional<Dir> Dir::open(const fs::path& p, ReadFailure* why) {
  int fd = ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    open_failed(why, errno);
    return std::nullopt;
  }
  return Dir(fd);
}

Dir::~Dir() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> Dir::read(const std::string& name, ReadFailure* why) const {
  return read_regular(fd_, name.c_str(), O_NOFOLLOW, why);
}

bool Dir::still_at(const fs::path& p) const {
  struct stat a {}, b {};
  if (::fstat(fd_, &a) != 0 || ::stat(p.c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

namespace {
uint64_t parse_counter(const char* buf, ssize_t n) {
  uint64_t v = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) v = v * 10 + static_cast<uint64_t>(buf[i] - '0');
  return v;
}
}  // namespace

uint64_t bump_counter(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return 0;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // a FIFO or device: not a counter
    ::close(fd);
    return 0;
  }
  char buf[32];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  uint64_t v = parse_counter(buf, n) + 1;
  std::string text = std::to_string(v) + "\n";
  bool ok = ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
            (n <= static_cast<ssize_t>(text.size()) || ::ftruncate(fd, static_cast<off_t>(text.size())) == 0);
  ::close(fd);
  return ok ? v : 0;
}

uint64_t read_counter(const fs::path& p) {
  int fd = open_regular(AT_FDCWD, p.c_str(), O_RDONLY | O_NOFOLLOW);
  if (fd < 0) return 0;
  char buf[32];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  ::close(fd);
  return parse_counter(buf, n);
}

std::optional<std::string> read(const fs::path& p, ReadFailure* why) { return read_regular(AT_FDCWD, p.c_str(), 0, why); }

void sync_dir(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string unique_suffix() {
  // random_device per call: forked children must not share a seeded generator's state.
  std::random_device rd;
  uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return fmt::format("{}.{:016x}", ::getpid(), r);
}

void report_once(const std::string& id, const std::string& message) {
  rt::log_once(rt::LogLevel::Warn, id, message);
}

}  // namespace tessel::jit::cache::io
