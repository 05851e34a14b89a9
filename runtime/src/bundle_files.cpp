// Bundle file access (directory or packed file) and packing a directory into one file.
#include "tessel/runtime/bundle_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>
#include <utility>

#include "tessel/runtime/bundle_manifest.hpp"
#include "tessel/runtime/sha256.hpp"

namespace tessel::rt {

namespace fs = std::filesystem;

namespace {

// What a path is when it is not a regular file, for messages.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// A file descriptor, closed at scope exit.
struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Why a file could not be read: absent (missing), or another reason for the message.
struct OpenFailure {
  bool missing = false;
  std::string why;  // e.g. "is a FIFO, not a regular file"
};

// Opens `path` (relative to dir_fd, or AT_FDCWD) for reading when it is a regular file, and says
// its size. O_NONBLOCK: opening a FIFO must not wait for a writer (a regular file ignores the
// flag). The type is checked on the descriptor opened, so nothing can swap the file in between.
std::optional<OpenFailure> open_regular(int dir_fd, const char* path, Fd& out, uint64_t& size) {
  out.fd = ::openat(dir_fd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (out.fd < 0) {
    const int err = errno;
    return OpenFailure{err == ENOENT, fmt::format("cannot be opened: {}", std::strerror(err))};
  }
  struct stat st;
  if (::fstat(out.fd, &st) != 0) return OpenFailure{false, fmt::format("cannot be examined: {}", std::strerror(errno))};
  if (!S_ISREG(st.st_mode)) return OpenFailure{false, fmt::format("is {}, not a regular file", file_kind(st.st_mode))};
  size = static_cast<uint64_t>(st.st_size);
  return std::nullopt;
}

// Reads exactly `bytes` bytes; false when the file ends sooner (it changed) or a read fails.
bool read_exact(int fd, char* dst, uint64_t bytes) {
  while (bytes > 0) {
    const ssize_t n = ::read(fd, dst, static_cast<size_t>(std::min<uint64_t>(bytes, uint64_t{1} << 30)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    dst += n;
    bytes -= static_cast<uint64_t>(n);
  }
  return true;
}

std::string mib(uint64_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

}  // namespace

std::optional<std::string> read_file_bytes(const fs::path& p, uint64_t max_bytes) {
  Fd f;
  uint64_t size = 0;
  if (open_regular(AT_FDCWD, p.c_str(), f, size) || size > max_bytes) return std::nullopt;
  std::string out(size, '\0');
  if (!read_exact(f.fd, out.data(), size)) return std::nullopt;
  return out;
}

namespace {

[[noreturn]] void bad_archive(const std::string& origin, const std::string& what) {
  throw BundleError(CUDA_ERROR_INVALID_IMAGE, fmt::format("bundle {}: damaged single-file bundle: {}", origin, what));
}

uint64_t read_le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

BundleFiles::BundleFiles(BundleFiles&& o) noexcept
    : dir_fd_(std::exchange(o.dir_fd_, -1)),
      origin_(std::move(o.origin_)),
      packed_(o.packed_),
      owned_(std::move(o.owned_)),
      archive_(std::exchange(o.archive_, {})),
      index_(std::move(o.index_)) {}

BundleFiles& BundleFiles::operator=(BundleFiles&& o) noexcept {
  if (this != &o) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    dir_fd_ = std::exchange(o.dir_fd_, -1);
    origin_ = std::move(o.origin_);
    packed_ = o.packed_;
    owned_ = std::move(o.owned_);
    archive_ = std::exchange(o.archive_, {});
    index_ = std::move(o.index_);
  }
  return *this;
}

BundleFiles::~BundleFiles() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

BundleFiles BundleFiles::open(const fs::path& path) {
  BundleFiles b;
  b.origin_ = path.string();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw BundleError(CUDA_ERROR_FILE_NOT_FOUND, err == ENOENT || err == ENOTDIR
                                                     ? fmt::format("bundle {}: no such directory or file", b.origin_)
                                                     : fmt::format("bundle {}: cannot read it: {}", b.origin_,
                                                                   std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    b.dir_fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (b.dir_fd_ < 0)
      throw BundleError(CUDA_ERROR_FILE_NOT_FOUND,
                        fmt::format("bundle {}: cannot open the directory: {}", b.origin_, std::strerror(errno)));
    return b;
  }
  // The single-file form. Its type, size and header are checked before the rest is read, so a
  // FIFO, a device (/dev/zero) or a huge file is refused at once instead of read without end.
  Fd f;
  uint64_t file_size = 0;
  if (auto fail = open_regular(AT_FDCWD, path.c_str(), f, file_size))
    throw BundleError(fail->missing ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_ERROR_INVALID_IMAGE,
                      fmt::format("bundle {}: {} (a bundle is a directory or a single regular file)", b.origin_,
                                  fail->why));
  char head[16];
  if (file_size < sizeof head || !read_exact(f.fd, head, sizeof head) ||
      std::memcmp(head, kPackedBundleMagic, sizeof kPackedBundleMagic) != 0)
    throw BundleError(CUDA_ERROR_INVALID_IMAGE,
                      fmt::format("bundle {}: neither a bundle directory nor a single-file bundle", b.origin_));
  if (file_size > kMaxBundleFileBytes)
    throw BundleError(CUDA_ERROR_INVALID_IMAGE, fmt::format("bundle {}: {} bytes, more than a bundle may hold ({})",
                                                            b.origin_, file_size, mib(kMaxBundleFileBytes)));
  const uint64_t index_len = read_le64(head + 8);
  if (index_len > file_size - 16) bad_archive(b.origin_, "index runs past the end of the file");
  b.packed_ = true;
  b.owned_ = std::make_unique_for_overwrite<char[]>(file_size);
  std::memcpy(b.owned_.get(), head, sizeof head);
  if (!read_exact(f.fd, b.owned_.get() + sizeof head, file_size - sizeof head))
    throw BundleError(CUDA_ERROR_FILE_NOT_FOUND, fmt::format("bundle {}: cannot read it (shorter than its {} bytes: "
                                                             "changed while being read?)",
                                                             b.origin_, file_size));
  b.archive_ = std::string_view(b.owned_.get(), file_size);
  b.index_archive();
  return b;
}

BundleFiles BundleFiles::from_bytes(std::span<const std::byte> bytes, std::string origin, Copy copy) {
  BundleFiles b;
  b.origin_ = std::move(origin);
  // The same header checks as a file's, on the span: a directory has no in-memory form, so
  // anything without the packed magic is refused here.
  const uint64_t size = bytes.size();
  if (size < 16 || std::memcmp(bytes.data(), kPackedBundleMagic, sizeof kPackedBundleMagic) != 0)
    throw BundleError(CUDA_ERROR_INVALID_IMAGE,
                      fmt::format("bundle {}: not a single-file bundle ({} bytes that do not start with its header; "
                                  "only the packed form, `tessel export --pack`, opens from memory)",
                                  b.origin_, size));
  if (size > kMaxBundleFileBytes)
    throw BundleError(CUDA_ERROR_INVALID_IMAGE, fmt::format("bundle {}: {} bytes, more than a bundle may hold ({})",
                                                            b.origin_, size, mib(kMaxBundleFileBytes)));
  b.packed_ = true;
  const char* data = reinterpret_cast<const char*>(bytes.data());
  if (copy == Copy::Yes) {
    b.owned_ = std::make_unique_for_overwrite<char[]>(size);
    std::memcpy(b.owned_.get(), data, size);
    data = b.owned_.get();
  }
  b.archive_ = std::string_view(data, size);
  b.index_archive();
  return b;
}

// The index after the 16-byte header: every file's extent is checked against the archive's
// length before it is recorded, so no later read leaves the archive however the bytes are damaged.
void BundleFiles::index_archive() {
  const std::string_view a = archive_;
  const uint64_t index_len = read_le64(a.data() + 8);
  if (index_len > a.size() - 16) bad_archive(origin_, "index runs past the end of the file");
  std::string_view index(a.data() + 16, index_len);
  uint64_t offset = 16 + index_len;
  while (!index.empty()) {
    size_t eol = index.find('\n'), space = index.find(' ');
    if (eol == std::string_view::npos || space == std::string_view::npos || space > eol)
      bad_archive(origin_, "malformed index line");
    uint64_t size = 0;
    for (char c : index.substr(0, space)) {
      if (c < '0' || c > '9' || size > (UINT64_MAX - 9) / 10) bad_archive(origin_, "malformed size in index");
      size = size * 10 + static_cast<uint64_t>(c - '0');
    }
    std::string name(index.substr(space + 1, eol - space - 1));
    if (size > a.size() - offset) bad_archive(origin_, fmt::format("'{}' runs past the end of the file (truncated?)", name));
    index_.push_back({std::move(name), offset, size});
    offset += size;
    index.remove_prefix(eol + 1);
  }
  if (offset != a.size()) bad_archive(origin_, fmt::format("{} unexpected bytes after the last file", a.size() - offset));
}

const BundleFiles::Packed* BundleFiles::find(std::string_view name) const {
  for (const auto& e : index_)
    if (e.name == name) return &e;
  return nullptr;
}

std::string BundleFiles::read(std::string_view name, uint64_t max_bytes) const {
  if (packed_) {
    const Packed* e = find(name);
    if (e == nullptr)
      throw BundleError(CUDA_ERROR_FILE_NOT_FOUND, fmt::format("bundle {}: file '{}' is missing", origin_, name));
    if (e->size > max_bytes) too_large(name, e->size, max_bytes);
    return std::string(archive_.substr(e->offset, e->size));
  }
  Fd f;
  uint64_t size = 0;
  if (auto fail = open_regular(dir_fd_, std::string(name).c_str(), f, size))
    throw BundleError(fail->missing ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_ERROR_INVALID_IMAGE,
                      fail->missing ? fmt::format("bundle {}: file '{}' is missing", origin_, name)
                                    : fmt::format("bundle {}: file '{}' {}", origin_, name, fail->why));
  if (size > max_bytes) too_large(name, size, max_bytes);
  std::string out(size, '\0');
  if (!read_exact(f.fd, out.data(), size))
    throw BundleError(CUDA_ERROR_FILE_NOT_FOUND,
                      fmt::format("bundle {}: file '{}' cannot be read (shorter than its {} bytes: changed while "
                                  "being read?)",
                                  origin_, name, size));
  return out;
}

void BundleFiles::too_large(std::string_view name, uint64_t size, uint64_t max_bytes) const {
  throw BundleError(CUDA_ERROR_INVALID_IMAGE,
                    fmt::format("bundle {}: file '{}' is {} bytes, more than the {} it may have (replaced or damaged?)",
                                origin_, name, size, max_bytes));
}

std::optional<uint64_t> BundleFiles::size(std::string_view name) const {
  if (packed_) {
    const Packed* e = find(name);
    return e ? std::optional<uint64_t>(e->size) : std::nullopt;
  }
  struct stat st;
  if (::fstatat(dir_fd_, std::string(name).c_str(), &st, 0) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode))
    throw BundleError(CUDA_ERROR_INVALID_IMAGE, fmt::format("bundle {}: file '{}' is {}, not a regular file", origin_,
                                                            name, file_kind(st.st_mode)));
  return static_cast<uint64_t>(st.st_size);
}

void pack_bundle(const fs::path& dir, const fs::path& out) {
  BundleFiles files = BundleFiles::open(dir);
  if (files.packed()) throw BundleError(CUDA_ERROR_INVALID_VALUE, fmt::format("bundle {}: already a single file", dir.string()));
  std::string manifest_text = files.read(kBundleManifestFile, kMaxBundleManifestBytes);
  BundleManifest m = manifest_from_json(manifest_text, files.origin());
  std::vector<std::pair<std::string, std::string>> contents{{kBundleManifestFile, std::move(manifest_text)}};
  for (const auto& k : m.kernels)
    for (const auto& v : k.variants)
      for (const auto& im : v.images) {
        std::string bytes = files.read(im.file, im.size);
        if (bytes.size() != im.size || sha256_hex(bytes) != im.sha256)
          throw BundleError(CUDA_ERROR_INVALID_IMAGE,
                            fmt::format("bundle {}: file '{}' does not match its checksum", files.origin(), im.file));
        contents.emplace_back(im.file, std::move(bytes));
      }
  std::string index;
  for (const auto& [name, bytes] : contents) index += fmt::format("{} {}\n", bytes.size(), name);
  fs::path tmp = out;
  tmp += fmt::format(".tmp.{}", static_cast<long>(getpid()));
  {
    FILE* f = std::fopen(tmp.c_str(), "wb");
    // I/O failures are std::system_error with the errno: the caller's environment (a missing or
    // read-only directory, a full disk), which the CLI reports as the user's, not as a tessel bug.
    if (!f) throw std::system_error(errno, std::generic_category(), fmt::format("cannot write {}", out.string()));
    char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>(static_cast<uint64_t>(index.size()) >> (8 * i));
    bool ok = std::fwrite(kPackedBundleMagic, 1, 8, f) == 8 && std::fwrite(len, 1, 8, f) == 8 &&
              std::fwrite(index.data(), 1, index.size(), f) == index.size();
    for (const auto& [name, bytes] : contents) ok = ok && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    ok = (std::fflush(f) == 0) && ok && fsync(fileno(f)) == 0;
    ok = (std::fclose(f) == 0) && ok;
    if (!ok) {
      const int err = errno != 0 ? errno : EIO;
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::system_error(err, std::generic_category(), fmt::format("cannot write {}", out.string()));
    }
  }
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec) {
    std::error_code ignored;  // keeps `ec`, the rename's reason, for the message
    fs::remove(tmp, ignored);
    throw std::system_error(ec, fmt::format("cannot rename into {}", out.string()));
  }
}

}  // namespace tessel::rt
