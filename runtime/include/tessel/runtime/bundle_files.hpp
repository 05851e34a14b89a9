// Where a bundle's files come from: a directory, or one packed file holding them all.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::rt {

// The packed (single-file) form starts with these 8 bytes, then the index length as a
// little-endian uint64, then the index: one line "<size> <name>\n" per file, then the files'
// bytes back to back in index order. bundle.json is one of the files.
inline constexpr char kPackedBundleMagic[8] = {'T', 'S', 'L', 'B', 'N', 'D', 'L', '\x01'};

// The most any bundle file is read into memory: a single-file bundle, or one file of a
// directory (image files are held to the size bundle.json declares, bundle.json to the next).
// Far above any real bundle; it turns a wrong path (a disk image, /dev/zero) into an error.
inline constexpr uint64_t kMaxBundleFileBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMaxBundleManifestBytes = uint64_t{64} << 20;

// Read-only access to the files of a bundle. A directory is read file by file on demand,
// always from the directory opened (through its file descriptor), so a bundle that `tessel
// export` replaces later — by renaming a new directory into place — is never mixed with the new
// one; its files do disappear once the writer deletes the old directory, so a process that must
// survive re-exports loads everything at start-up (BundleKernel::load_all) or uses the packed
// form. A packed bundle is read into memory once at open. A packed bundle already in memory
// (from_bytes: embedded in the program, received, mapped) is indexed where it lies, copied first
// or borrowed. Errors are BundleError naming the bundle: CUDA_ERROR_FILE_NOT_FOUND for a missing
// path or file, CUDA_ERROR_INVALID_IMAGE for packed bytes whose header, index or length is wrong,
// or a path (or a file of a directory) that is not a regular file — a FIFO, a device — or is
// longer than the limits above; those are refused before they are read, so no path makes open()
// or read() block or exhaust memory, and no bytes make them read outside the span.
class BundleFiles {
 public:
  static BundleFiles open(const std::filesystem::path& path);
  // The packed form in `bytes`; `origin` names it in messages. Copy::No keeps a view of the
  // caller's bytes, which must then stay valid and unchanged while this object (or one moved
  // from it) lives.
  enum class Copy { Yes, No };
  static BundleFiles from_bytes(std::span<const std::byte> bytes, std::string origin, Copy copy);
  BundleFiles(BundleFiles&& other) noexcept;
  BundleFiles& operator=(BundleFiles&& other) noexcept;
  BundleFiles(const BundleFiles&) = delete;
  BundleFiles& operator=(const BundleFiles&) = delete;
  ~BundleFiles();

  const std::string& origin() const { return origin_; }  // the path (or the caller's name), for messages
  bool packed() const { return packed_; }
  // The whole file; a BundleError naming it when it is longer than max_bytes (checked before it
  // is read), missing, or not a regular file.
  std::string read(std::string_view name, uint64_t max_bytes = kMaxBundleFileBytes) const;
  // The file's size, or nullopt when it is absent; a BundleError when it is there but is not a
  // regular file.
  std::optional<uint64_t> size(std::string_view name) const;

 private:
  struct Packed {
    std::string name;
    uint64_t offset;
    uint64_t size;
  };
  BundleFiles() = default;
  void index_archive();  // fills index_ from archive_, checking every offset against its length
  const Packed* find(std::string_view name) const;
  [[noreturn]] void too_large(std::string_view name, uint64_t size, uint64_t max_bytes) const;
  int dir_fd_ = -1;  // the directory form
  std::string origin_;
  bool packed_ = false;
  // The packed form's bytes: owned_ (read from a file or copied), or the caller's (borrowed).
  // A unique_ptr, not a std::string, so moving this object never moves the bytes archive_ views.
  std::unique_ptr<char[]> owned_;
  std::string_view archive_;
  std::vector<Packed> index_;
};

// Packs the bundle directory `dir` (bundle.json and every image it lists, after checking them
// against their checksums) into the single file `out`, written to a temporary name and renamed
// into place. Throws BundleError when the directory is not an intact bundle, std::system_error
// (with the errno) on I/O failure.
void pack_bundle(const std::filesystem::path& dir, const std::filesystem::path& out);

// Reads a whole regular file of at most max_bytes; std::nullopt when it cannot be opened or read,
// is not a regular file (a FIFO is never waited on) or is longer.
std::optional<std::string> read_file_bytes(const std::filesystem::path& p, uint64_t max_bytes = kMaxBundleFileBytes);

}  // namespace tessel::rt
