// rand/randn on the GPU give the published Random123 Philox4x32-10 words at the seeds and
// offsets that reach them, through both ways the lowering computes Philox (one call per four
// aligned registers, one call per element); converted by the tests' own reading of philox.hpp.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "../common/gpu_gate.hpp"
#include "../common/philox_kat.hpp"
#include "tessel/jit/emit.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using namespace tessel::lang;
using tessel_test::kPhilox4x32_10;

namespace {

// u[i] = rand(seed, i), z[i] = randn(seed, i): contiguous offsets, a multiple of 4 at each
// thread's first register, so the lowering shares one Philox call among four registers.
void kat_arange_kernel(Ptr<f32> u, Ptr<f32> z, Int n, Long seed, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto i = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = i < n;
  store(u + i, rand(seed, i), mask);
  store(z + i, randn(seed, i), mask);
}
// The same with offsets loaded from memory: nothing is known about them, one call per element.
void kat_gather_kernel(Ptr<i32> offs, Ptr<f32> u, Ptr<f32> z, Int n, Long seed, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto i = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = i < n;
  auto o = load(offs + i, mask);
  store(u + i, rand(seed, o), mask);
  store(z + i, randn(seed, o), mask);
}
jit::Kernel k_kat_arange{"kat_arange", &kat_arange_kernel, {"u", "z", "n", "seed"}, Meta{{"BLOCK", 512}}};
jit::Kernel k_kat_gather{"kat_gather", &kat_gather_kernel, {"offs", "u", "z", "n", "seed"}, Meta{{"BLOCK", 512}}};

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Elements whose offset is 4c..4c+3 (c: the vector's counter) against the vector's words:
// rand bit for bit, randn within the GPU's approximate log/sin/cos.
int check_vector(const tessel_test::PhiloxKat& v, const std::vector<int32_t>& offsets, const std::vector<float>& u,
                 const std::vector<float>& z) {
  int hits = 0;
  for (size_t i = 0; i < offsets.size(); ++i) {
    const uint32_t o = static_cast<uint32_t>(offsets[i]);
    if ((o >> 2) != v.ctr[0]) continue;
    const int j = static_cast<int>(o & 3);
    CAPTURE(offsets[i]);
    CHECK(std::bit_cast<uint32_t>(u[i]) == std::bit_cast<uint32_t>(tessel_test::kat_uniform(v.out[j])));
    const double want = tessel_test::kat_normal(v.out, j);
    CHECK(std::fabs(z[i] - want) <= 2e-5 * (1.0 + std::fabs(want)));
    ++hits;
  }
  return hits;
}

}  // namespace

TEST_CASE("the Random123 known-answer kernels exercise both Philox paths of the lowering") {
  if (!jit::has_lowering()) {
    MESSAGE("no lowering in this build");
    return;
  }
  // 10 rounds, 2 mul.hi each: the arange kernel (4 registers a thread at BLOCK 512, 4 warps)
  // runs one call per thread for rand and randn together (20); the gather kernel one per element
  // (4 x 20, less the few early-round products of the constant words, which the calls share).
  const std::string a = jit::emit(*k_kat_arange.build_ir({}), jit::Stage::Ptx, "sm_90", {});
  const std::string g = jit::emit(*k_kat_gather.build_ir({}), jit::Stage::Ptx, "sm_90", {});
  const int mulhi_a = count(a, "mul.hi.u32"), mulhi_g = count(g, "mul.hi.u32");
  MESSAGE("mul.hi.u32 per thread: arange " << mulhi_a << ", gather " << mulhi_g);
  CHECK(mulhi_a == 20);
  CHECK(mulhi_g > 3 * mulhi_a);
}

TEST_CASE("rand and randn on the GPU give the Random123 Philox4x32-10 words" * doctest::test_suite("gpu")) {
  jit::Device& dev = jit::Device::current();
  if (dev.kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("Random123 known answers on the GPU: " + dev.describe());
    return;
  }
  MESSAGE("random known answers run on: " << dev.describe());
  // offsets 0..12 in order for the arange kernel; the same offsets scrambled for the gather one
  const int64_t n = 13;
  std::vector<int32_t> in_order(n), scrambled = {9, 5, 0, 12, 7, 2, 4, 11, 1, 6, 3, 10, 8};
  for (int32_t k = 0; k < n; ++k) in_order[k] = k;
  jit::Array<int32_t> offs{std::span<const int32_t>(scrambled)};
  int vectors = 0;
  for (const auto& v : kPhilox4x32_10) {
    if (!tessel_test::reachable_from_rand(v)) continue;
    ++vectors;
    const int64_t seed = tessel_test::seed_of(v);
    CAPTURE(seed);
    jit::Array<float> u(n), z(n);
    u.poison();
    z.poison();
    k_kat_arange(jit::Grid{1}, {}, u, z, n, seed);
    CHECK(check_vector(v, in_order, u.download(), z.download()) == 4);
    u.poison();
    z.poison();
    k_kat_gather(jit::Grid{1}, {}, offs, u, z, n, seed);
    CHECK(check_vector(v, scrambled, u.download(), z.download()) == 4);
  }
  CHECK(vectors == 5);  // seeds 0 (counter 0), 1, 2^32, -2^32, INT64_MIN (counter 1)
}
