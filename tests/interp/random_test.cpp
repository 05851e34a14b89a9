// Interpreter: rand and randn follow ir/philox.hpp exactly and have the right distributions.
#include "interp_test_util.hpp"
#include "tessel/ir/philox.hpp"

using namespace interp_test;

namespace {

// out[i] = rand(seed, i) (or randn) for i < n.
void build_random_kernel(Function& f, OpKind k, Scalar seed_type, int64_t block) {
  Value* seed = f.add_param("seed", scalar_t(seed_type));
  Value* out = f.add_param("out", ptr_t(Scalar::f32));
  Value* n = f.add_param("n", scalar_t(Scalar::i32));
  Builder b(f);
  Value* offs = block_offsets(b, block);
  Value* r = b.value(k, {seed, offs});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, {block}), offs), r,
                           bin(b, OpKind::CmpLt, offs, b.splat(n, {block}))});
}

std::vector<float> draw(OpKind k, Scalar seed_type, int64_t seed, int64_t n) {
  Function f("rng");
  build_random_kernel(f, k, seed_type, 512);
  std::vector<float> out(n, std::nanf(""));
  ArgValue args[] = {ArgValue::integer(seed), ArgValue::pointer(out.data()), ArgValue::integer(n)};
  MemRegion mem[] = {region(out)};
  run_kernel(f, Grid{(n + 511) / 512}, args, mem);
  return out;
}

}  // namespace

TEST_CASE("rand equals philox.hpp, lies in [0, 1) and has mean 1/2") {
  const int64_t n = 100003, seed = 0x1234'5678'9ABCLL;
  auto u = draw(OpKind::Rand, Scalar::i64, seed, n);
  int64_t mismatch = 0, outside = 0;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    mismatch += u[i] != ir::philox::rand(seed, static_cast<int32_t>(i));
    outside += !(u[i] >= 0.0f && u[i] < 1.0f);
    sum += u[i];
  }
  CHECK(mismatch == 0);
  CHECK(outside == 0);
  CHECK(sum / n == doctest::Approx(0.5).epsilon(0.01));
  // the stream itself, computed independently for offset 0 with the raw Philox rounds
  auto r0 = ir::philox::philox4x32(0, 0, 0, 0, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  int32_t s = static_cast<int32_t>(r0[0]);
  if (s < 0) s = -s - 1;
  // Triton's scale constant: the f32 just below 2^-31 (0x2FFFFFFF), so 1.0 is never reached
  CHECK(u[0] == static_cast<float>(s) * 4.6566127342e-10f);
  // different seeds give different streams
  auto v = draw(OpKind::Rand, Scalar::i64, seed + 1, 64);
  int same = 0;
  for (int i = 0; i < 64; ++i) same += v[i] == u[i];
  CHECK(same < 4);
}

TEST_CASE("an i32 seed is sign-extended into the 64-bit Philox key") {
  auto u = draw(OpKind::Rand, Scalar::i32, -5, 1000);
  for (int i = 0; i < 1000; i += 37) CHECK(u[i] == ir::philox::rand(-5, i));
}

TEST_CASE("randn equals philox.hpp and has mean 0 and variance 1") {
  const int64_t n = 100003, seed = 77;
  auto g = draw(OpKind::RandN, Scalar::i64, seed, n);
  int64_t mismatch = 0;
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    mismatch += g[i] != ir::philox::randn(seed, static_cast<int32_t>(i));
    sum += g[i];
    sq += static_cast<double>(g[i]) * g[i];
  }
  double mean = sum / n, var = sq / n - mean * mean;
  CHECK(mismatch == 0);
  CHECK(std::fabs(mean) < 0.02);
  CHECK(var == doctest::Approx(1.0).epsilon(0.03));
}
