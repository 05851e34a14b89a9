// SHA-256 (FIPS 180-4): the checksum of every file in a kernel bundle.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessel::rt {

// Incremental SHA-256. The runtime carries its own (small) implementation so production
// binaries need no crypto library, and a bundle can be checked with `sha256sum`.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  // The digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> finish();

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_;
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

// The digest of `bytes` as 64 lowercase hex characters (as sha256sum prints it).
std::string sha256_hex(std::string_view bytes);

}  // namespace tessel::rt
