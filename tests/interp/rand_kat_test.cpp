// Interpreter: rand and randn at the seeds and offsets that reach published Random123
// Philox4x32-10 vectors give those vectors' words, converted to floats by the tests' own
// reading of the conversion documented in ir/philox.hpp (tests/common/philox_kat.hpp, which
// does not call philox.hpp). In test_interp_gpu the same kernels also run on the GPU.
#include <array>
#include <bit>

#include "../common/philox_kat.hpp"
#include "interp_test_util.hpp"

using namespace interp_test;
using tessel_test::kat_normal;
using tessel_test::kat_uniform;
using tessel_test::kPhilox4x32_10;
using tessel_test::PhiloxKat;

namespace {

// out_u[i] = rand(seed, o[i]), out_z[i] = randn(seed, o[i]) for i < n, where o = offs (arange,
// as a GPU sees contiguous aligned offsets) or, with `gather`, o[i] = offsets[i] loaded from
// memory (nothing known about them).
void build_kat_kernel(Function& f, Scalar seed_type, bool gather, int64_t block) {
  Value* seed = f.add_param("seed", scalar_t(seed_type));
  Value* offsets = f.add_param("offsets", ptr_t(Scalar::i32));
  Value* out_u = f.add_param("out_u", ptr_t(Scalar::f32));
  Value* out_z = f.add_param("out_z", ptr_t(Scalar::f32));
  Value* n = f.add_param("n", scalar_t(Scalar::i32));
  Builder b(f);
  Value* i = block_offsets(b, block);
  Value* mask = bin(b, OpKind::CmpLt, i, b.splat(n, {block}));
  Value* o = gather ? b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(offsets, {block}), i), mask}) : i;
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out_u, {block}), i), b.value(OpKind::Rand, {seed, o}), mask});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out_z, {block}), i), b.value(OpKind::RandN, {seed, o}), mask});
}

struct Draw {
  std::vector<float> u, z;
};

// Runs the kernel for offsets[0..n) (gather) or offsets 0..n-1 (arange).
Draw draw(Scalar seed_type, int64_t seed, bool gather, const std::vector<int32_t>& offsets) {
  Function f("rand_kat");
  build_kat_kernel(f, seed_type, gather, 16);
  const int64_t n = static_cast<int64_t>(offsets.size());
  Draw d{std::vector<float>(n, poison<float>()), std::vector<float>(n, poison<float>())};
  ArgValue args[] = {ArgValue::integer(seed), ArgValue::pointer(offsets.data()), ArgValue::pointer(d.u.data()),
                     ArgValue::pointer(d.z.data()), ArgValue::integer(n)};
  MemRegion mem[] = {read_only(offsets), region(d.u), region(d.z)};
  run_kernel(f, Grid{(n + 15) / 16}, args, mem);
  return d;
}

// The published vectors rand can reach: counter (c, 0, 0, 0), any key.
std::vector<PhiloxKat> reachable() {
  std::vector<PhiloxKat> r;
  for (const auto& v : kPhilox4x32_10)
    if (tessel_test::reachable_from_rand(v)) r.push_back(v);
  return r;
}

// Checks elements whose offset is 4c..4c+3 (c: the vector's counter) against the vector.
int check_against(const PhiloxKat& v, const std::vector<int32_t>& offsets, const Draw& d) {
  int hits = 0;
  for (size_t i = 0; i < offsets.size(); ++i) {
    const uint32_t o = static_cast<uint32_t>(offsets[i]);
    if ((o >> 2) != v.ctr[0]) continue;
    const int j = static_cast<int>(o & 3);
    CAPTURE(offsets[i]);
    CHECK(std::bit_cast<uint32_t>(d.u[i]) == std::bit_cast<uint32_t>(kat_uniform(v.out[j])));
    const double z = kat_normal(v.out, j);
    CHECK(std::fabs(d.z[i] - z) <= 1e-5 * (1.0 + std::fabs(z)));
    ++hits;
  }
  return hits;
}

}  // namespace

TEST_CASE("the published vectors rand reaches: seeds 0, 1, 2^32, -2^32 and INT64_MIN") {
  auto r = reachable();
  REQUIRE(r.size() == 5);
  CHECK(tessel_test::seed_of(r[0]) == 0);
  CHECK(r[0].ctr[0] == 0);
  int64_t seeds[4];
  for (int k = 0; k < 4; ++k) {
    seeds[k] = tessel_test::seed_of(r[k + 1]);
    CHECK(r[k + 1].ctr[0] == 1);
  }
  CHECK(seeds[0] == 1);
  CHECK(seeds[1] == (int64_t{1} << 32));
  CHECK(seeds[2] == -(int64_t{1} << 32));
  CHECK(seeds[3] == std::numeric_limits<int64_t>::min());
  // the test's conversion itself, on words whose answers are plain: 0 -> 0, 2^31 - 1 and
  // 2^31 (-> magnitude 2^31 - 1, rounded to 2^31 in f32) -> the scale * 2^31 = 1 - 2^-24
  CHECK(kat_uniform(0u) == 0.0f);
  CHECK(kat_uniform(0xFFFFFFFFu) == 0.0f);
  CHECK(kat_uniform(0x7FFFFFFFu) == 1.0f - 0x1p-24f);
  CHECK(kat_uniform(0x80000000u) == 1.0f - 0x1p-24f);
  CHECK(kat_uniform(2u) == 0x1.fffffep-31f);
}

TEST_CASE("rand and randn give the Random123 words at the offsets of each reachable vector") {
  // offsets 0..12 in order (arange), and the same 13 offsets scrambled (loaded from memory)
  std::vector<int32_t> in_order(13), scrambled = {9, 5, 0, 12, 7, 2, 4, 11, 1, 6, 3, 10, 8};
  for (int32_t k = 0; k < 13; ++k) in_order[k] = k;
  for (const auto& v : reachable()) {
    const int64_t seed = tessel_test::seed_of(v);
    CAPTURE(seed);
    for (bool gather : {false, true}) {
      CAPTURE(gather);
      const auto& offs = gather ? scrambled : in_order;
      CHECK(check_against(v, offs, draw(Scalar::i64, seed, gather, offs)) == 4);
      if (seed == static_cast<int32_t>(seed))  // an i32 seed is sign-extended to the same key
        CHECK(check_against(v, offs, draw(Scalar::i32, seed, gather, offs)) == 4);
    }
  }
}

TEST_CASE("seed 0, offsets 0..3 (counter 0, key 0): the first published vector, word for word") {
  std::vector<int32_t> offs = {0, 1, 2, 3};
  Draw d = draw(Scalar::i64, 0, false, offs);
  // 6627e8d5 e169c58d bc57ac4c 9b00dbd8 (Random123 tests/kat_vectors)
  const uint32_t words[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
  for (int j = 0; j < 4; ++j) {
    CAPTURE(j);
    CHECK(d.u[j] == kat_uniform(words[j]));
    CHECK(d.u[j] >= 0.0f);
    CHECK(d.u[j] < 1.0f);
  }
  // 0x6627e8d5 = 1713891541 < 2^31: rounded to f32 1713891584, times 0x1.fffffep-32
  CHECK(d.u[0] == static_cast<float>(1713891584.0 * 0x1.fffffep-32));
}
