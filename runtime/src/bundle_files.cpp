// Bundle file access (directory or packed file) and packing a directory into one file.
#include "tessel/runtime/bundle_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <utility>

#include "tessel/runtime/bundle_manifest.hpp"
#include "tessel/runtime/sha256.hpp"

namespace tessel::rt {

namespace fs = std::filesystem;

std::optional<std::string> read_file_bytes(const fs::path& p) {
  FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) return std::nullopt;
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  bool ok = !std::ferror(f);
  std::fclose(f);
  if (!ok) return std::nullopt;
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

// Reads a whole file relative to an open directory; nullopt when it cannot be read.
static std::optional<std::string> read_at(int dir_fd, const std::string& name) {
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[1 << 16];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

BundleFiles::BundleFiles(BundleFiles&& o) noexcept
    : dir_fd_(std::exchange(o.dir_fd_, -1)),
      origin_(std::move(o.origin_)),
      packed_(o.packed_),
      archive_(std::move(o.archive_)),
      index_(std::move(o.index_)) {}

BundleFiles& BundleFiles::operator=(BundleFiles&& o) noexcept {
  if (this != &o) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    dir_fd_ = std::exchange(o.dir_fd_, -1);
    origin_ = std::move(o.origin_);
    packed_ = o.packed_;
    archive_ = std::move(o.archive_);
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
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    b.dir_fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (b.dir_fd_ < 0)
      throw BundleError(CUDA_ERROR_FILE_NOT_FOUND,
                        fmt::format("bundle {}: cannot open the directory: {}", b.origin_, std::strerror(errno)));
    return b;
  }
  if (!fs::exists(path, ec))
    throw BundleError(CUDA_ERROR_FILE_NOT_FOUND, fmt::format("bundle {}: no such directory or file", b.origin_));
  auto bytes = read_file_bytes(path);
  if (!bytes) throw BundleError(CUDA_ERROR_FILE_NOT_FOUND, fmt::format("bundle {}: cannot read it", b.origin_));
  b.packed_ = true;
  b.archive_ = std::move(*bytes);
  const std::string& a = b.archive_;
  if (a.size() < 16 || std::memcmp(a.data(), kPackedBundleMagic, 8) != 0)
    throw BundleError(CUDA_ERROR_INVALID_IMAGE,
                      fmt::format("bundle {}: neither a bundle directory nor a single-file bundle", b.origin_));
  const uint64_t index_len = read_le64(a.data() + 8);
  if (index_len > a.size() - 16) bad_archive(b.origin_, "index runs past the end of the file");
  std::string_view index(a.data() + 16, index_len);
  uint64_t offset = 16 + index_len;
  while (!index.empty()) {
    size_t eol = index.find('\n'), space = index.find(' ');
    if (eol == std::string_view::npos || space == std::string_view::npos || space > eol)
      bad_archive(b.origin_, "malformed index line");
    uint64_t size = 0;
    for (char c : index.substr(0, space)) {
      if (c < '0' || c > '9' || size > (UINT64_MAX - 9) / 10) bad_archive(b.origin_, "malformed size in index");
      size = size * 10 + static_cast<uint64_t>(c - '0');
    }
    std::string name(index.substr(space + 1, eol - space - 1));
    if (size > a.size() - offset) bad_archive(b.origin_, fmt::format("'{}' runs past the end of the file (truncated?)", name));
    b.index_.push_back({std::move(name), offset, size});
    offset += size;
    index.remove_prefix(eol + 1);
  }
  if (offset != a.size()) bad_archive(b.origin_, fmt::format("{} unexpected bytes after the last file", a.size() - offset));
  return b;
}

const BundleFiles::Packed* BundleFiles::find(std::string_view name) const {
  for (const auto& e : index_)
    if (e.name == name) return &e;
  return nullptr;
}

std::string BundleFiles::read(std::string_view name) const {
  if (packed_) {
    if (const Packed* e = find(name)) return archive_.substr(e->offset, e->size);
  } else if (auto bytes = read_at(dir_fd_, std::string(name))) {
    return std::move(*bytes);
  }
  throw BundleError(CUDA_ERROR_FILE_NOT_FOUND, fmt::format("bundle {}: file '{}' is missing", origin_, name));
}

std::optional<uint64_t> BundleFiles::size(std::string_view name) const {
  if (packed_) {
    const Packed* e = find(name);
    return e ? std::optional<uint64_t>(e->size) : std::nullopt;
  }
  struct stat st;
  if (::fstatat(dir_fd_, std::string(name).c_str(), &st, 0) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<uint64_t>(st.st_size);
}

void pack_bundle(const fs::path& dir, const fs::path& out) {
  BundleFiles files = BundleFiles::open(dir);
  if (files.packed()) throw BundleError(CUDA_ERROR_INVALID_VALUE, fmt::format("bundle {}: already a single file", dir.string()));
  std::string manifest_text = files.read(kBundleManifestFile);
  BundleManifest m = manifest_from_json(manifest_text, files.origin());
  std::vector<std::pair<std::string, std::string>> contents{{kBundleManifestFile, std::move(manifest_text)}};
  for (const auto& k : m.kernels)
    for (const auto& v : k.variants)
      for (const auto& im : v.images) {
        std::string bytes = files.read(im.file);
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
    if (!f) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
    char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>(static_cast<uint64_t>(index.size()) >> (8 * i));
    bool ok = std::fwrite(kPackedBundleMagic, 1, 8, f) == 8 && std::fwrite(len, 1, 8, f) == 8 &&
              std::fwrite(index.data(), 1, index.size(), f) == index.size();
    for (const auto& [name, bytes] : contents) ok = ok && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    ok = (std::fflush(f) == 0) && ok && fsync(fileno(f)) == 0;
    ok = (std::fclose(f) == 0) && ok;
    if (!ok) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    }
  }
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error(fmt::format("cannot rename into {}: {}", out.string(), ec.message()));
  }
}

}  // namespace tessel::rt
