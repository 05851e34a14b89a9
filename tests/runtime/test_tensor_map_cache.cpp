// The per-thread tensor-map cache: hits only on identical encoding inputs, nothing stored when
// the encoding throws, eviction by slot, one cache per thread.
#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tessel/runtime/tensor_map_cache.hpp"

namespace rt = tessel::rt;

namespace {

rt::TensorMapKey key_of(uint64_t base, cuuint64_t rows, cuuint64_t cols) {
  rt::TensorMapKey k;
  k.base = base;
  k.shape.dims[0] = cols;
  k.shape.dims[1] = rows;
  k.shape.strides[0] = cols * 2;
  k.shape.box[0] = 64;
  k.shape.box[1] = 128;
  k.swizzle = 128;
  return k;
}

// A fake encoder: writes a map whose first word is `tag` and counts its calls.
struct FakeEncoder {
  int calls = 0;
  uint64_t tag = 0;
  void operator()(CUtensorMap& m) {
    ++calls;
    std::memset(&m, 0, sizeof m);
    std::memcpy(&m, &tag, sizeof tag);
  }
};

uint64_t tag_of(const CUtensorMap& m) {
  uint64_t t = 0;
  std::memcpy(&t, &m, sizeof t);
  return t;
}

}  // namespace

TEST_CASE("tensor map cache: a repeated key is encoded once") {
  rt::TensorMapCache cache;
  FakeEncoder enc;
  enc.tag = 7;
  const rt::TensorMapKey k = key_of(0x10000, 4096, 4096);
  CHECK(tag_of(cache.get(k, enc)) == 7);
  enc.tag = 8;  // a second encoding would show
  for (int i = 0; i < 5; ++i) CHECK(tag_of(cache.get(k, enc)) == 7);
  CHECK(enc.calls == 1);
  CHECK(cache.hits() == 5);
  CHECK(cache.misses() == 1);
}

TEST_CASE("tensor map cache: every varying input is part of the key") {
  const rt::TensorMapKey k = key_of(0x10000, 4096, 4096);
  auto variants = std::vector<rt::TensorMapKey>(8, k);
  variants[0].base += 16;
  variants[1].shape.dims[1] = 4095;
  variants[2].shape.dims[0] = 4088;
  variants[3].shape.strides[0] += 16;
  variants[4].shape.box[1] = 64;
  variants[5].elem = 1;
  variants[6].swizzle = 64;
  variants[7].shape.rank = 5;
  for (const rt::TensorMapKey& v : variants) {
    CHECK_FALSE(v == k);
    rt::TensorMapCache cache;
    FakeEncoder enc;
    enc.tag = 1;
    cache.get(k, enc);
    enc.tag = 2;
    CHECK(tag_of(cache.get(v, enc)) == 2);
    CHECK(enc.calls == 2);
  }
}

TEST_CASE("tensor map cache: a failed encoding stores nothing and evicts nothing") {
  rt::TensorMapCache cache;
  FakeEncoder good;
  good.tag = 3;
  for (uint64_t i = 0; i < rt::TensorMapCache::kSlots; ++i) cache.get(key_of(0x20000 + 0x1000 * i, 100, 64), good);
  const rt::TensorMapKey other = key_of(0x90000, 100, 64);
  CHECK_THROWS_AS(cache.get(other, [](CUtensorMap&) { throw std::runtime_error("driver refused"); }), std::runtime_error);
  CHECK(cache.size() == rt::TensorMapCache::kSlots);
  for (uint64_t i = 0; i < rt::TensorMapCache::kSlots; ++i)  // all still there
    CHECK(tag_of(cache.get(key_of(0x20000 + 0x1000 * i, 100, 64), good)) == 3);
  CHECK(good.calls == static_cast<int>(rt::TensorMapCache::kSlots));
  FakeEncoder again;
  again.tag = 4;
  CHECK(tag_of(cache.get(other, again)) == 4);  // encoded, not a stale hit
  CHECK(again.calls == 1);
}

TEST_CASE("tensor map cache: up to kSlots maps in turn always hit; one more replaces the oldest") {
  rt::TensorMapCache cache;
  FakeEncoder enc;
  auto key = [](uint64_t i) { return key_of(0x7f0000000000 + i * 0x200000, 4096, 4096); };
  for (int round = 0; round < 3; ++round)
    for (uint64_t i = 0; i < rt::TensorMapCache::kSlots; ++i) cache.get(key(i), enc);
  CHECK(enc.calls == static_cast<int>(rt::TensorMapCache::kSlots));
  CHECK(cache.hits() == 2 * rt::TensorMapCache::kSlots);
  cache.get(key(rt::TensorMapCache::kSlots), enc);  // replaces key(0), the oldest
  CHECK(enc.calls == static_cast<int>(rt::TensorMapCache::kSlots) + 1);
  cache.get(key(1), enc);
  CHECK(enc.calls == static_cast<int>(rt::TensorMapCache::kSlots) + 1);
  cache.get(key(0), enc);
  CHECK(enc.calls == static_cast<int>(rt::TensorMapCache::kSlots) + 2);
}

TEST_CASE("tensor map cache: each thread has its own cache") {
  rt::TensorMapCache& mine = rt::thread_tensor_map_cache();
  mine.clear();
  FakeEncoder enc;
  mine.get(key_of(0x40000, 8, 8), enc);
  size_t other_misses = 99;
  std::thread([&] { other_misses = rt::thread_tensor_map_cache().misses(); }).join();
  CHECK(other_misses == 0);
  CHECK(mine.misses() == 1);
}
