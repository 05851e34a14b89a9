// check_image: bounds checks of ELF (cubin) and fatbin headers.
#include "image_check.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "tessel/runtime/error.hpp"

namespace tessel::rt::detail {

namespace {

template <class T>
T read_le(std::span<const char> image, size_t offset) {
  T v{};
  std::memcpy(&v, image.data() + offset, sizeof(T));  // x86-64 and aarch64 hosts are little-endian
  return v;
}

[[noreturn]] void bad(const char* what, const std::string& why) {
  throw CudaError(CUDA_ERROR_INVALID_IMAGE, what, why);
}

void check_elf(std::span<const char> image, const char* what) {
  constexpr size_t kElf64HeaderBytes = 64;
  if (image.size() < kElf64HeaderBytes)
    bad(what, fmt::format("truncated ELF: {} bytes, the header alone is 64", image.size()));
  if (image[4] != 2) bad(what, "not a 64-bit ELF image");
  auto table_end = [&](size_t off_at, size_t entsize_at, size_t num_at) {
    uint64_t off = read_le<uint64_t>(image, off_at);
    uint64_t n = read_le<uint16_t>(image, num_at);
    uint64_t entsize = read_le<uint16_t>(image, entsize_at);
    return n == 0 ? 0 : off + n * entsize;  // 16-bit counts cannot overflow 64 bits here
  };
  uint64_t sections_end = table_end(0x28, 0x3A, 0x3C);
  uint64_t segments_end = table_end(0x20, 0x36, 0x38);
  uint64_t end = sections_end > segments_end ? sections_end : segments_end;
  if (end > image.size())
    bad(what, fmt::format("truncated ELF: headers end at byte {} of a {}-byte image", end,
                          image.size()));
}

void check_fatbin(std::span<const char> image, const char* what) {
  constexpr size_t kHeaderBytes = 16;  // magic u32, version u16, header size u16, body size u64
  if (image.size() < kHeaderBytes) bad(what, "truncated fatbin header");
  uint64_t header = read_le<uint16_t>(image, 6);
  uint64_t body = read_le<uint64_t>(image, 8);
  if (header + body > image.size() || body > image.size())
    bad(what, fmt::format("truncated fatbin: declares {} bytes, image has {}", header + body,
                          image.size()));
}

}  // namespace

void check_image(std::span<const char> image, const char* what) {
  constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
  if (image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0) return check_elf(image, what);
  if (image.size() >= 4 && read_le<uint32_t>(image, 0) == kFatbinMagic) return check_fatbin(image, what);
  bad(what, image.empty() ? std::string("empty image")
                          : std::string("neither a cubin (ELF) nor a fatbin; load PTX with Module::load_ptx"));
}

}  // namespace tessel::rt::detail
