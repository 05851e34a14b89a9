// The Kernel object: variant cache, specialisation, argument checks, interpreter errors.
#include <doctest/doctest.h>

#include <string>

#include "tessel/interp/interpreter.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/samples/elementwise_kernels.hpp"

using namespace tessel;
using namespace tessel::lang;

namespace {
void copy_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  store(out + offs, load(x + offs, offs < n), offs < n);
}
// out[r] = max over the row of (x - mean of the row): two cross-warp reductions through
// shared memory with a barrier each, per program.
void centred_max_kernel(Ptr<f32> x, Ptr<f32> out, Int rows, Int cols, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto c = arange(0, BLOCK);
  auto v = load(x + program_id(0) * cols + c, c < cols, 0.0f);
  auto centred = v - sum(v, 0) / cast<f32>(cols);
  store(out + program_id(0), max(where(c < cols, centred, -1e30f), 0));
}
void unmasked_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  store(out + offs, load(x + offs));  // no mask: reads past the end when n % BLOCK != 0
}
}  // namespace

TEST_CASE("spec bits follow Triton's divisibility and ==1 rules") {
  jit::RawArg args[4] = {jit::RawArg::pointer(0x1000), jit::RawArg::pointer(0x1004), jit::RawArg::integer(32),
                         jit::RawArg::integer(1)};
  uint64_t bits = jit::detail::spec_bits(args, 4);
  auto specs = jit::detail::specs_from_bits(bits, 4);
  CHECK(specs[0].div16);
  CHECK_FALSE(specs[1].div16);
  CHECK(specs[2].div16);
  CHECK_FALSE(specs[2].equal1);
  CHECK(specs[3].equal1);
  CHECK_FALSE(specs[3].div16);
}

TEST_CASE("the IR carries the specialisation of the launch") {
  jit::Kernel k{"copy", &copy_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 128}}};
  auto f = k.build_ir({}, {{true, false}, {true, false}, {false, true}});
  std::string text = ir::print(*f);
  CHECK(text.find("%x: ptr<f32> {div16}") != std::string::npos);
  CHECK(text.find("%n: i32 {equal1}") != std::string::npos);
}

TEST_CASE("variants are cached per meta, specialisation and options") {
  jit::Kernel k{"copy", &copy_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 128}}};
  jit::Executable& a = k.variant({}, {}, 0);
  CHECK(&k.variant({}, {}, 0) == &a);
  CHECK(&k.variant(Meta{{"BLOCK", 256}}, {}, 0) != &a);
  CHECK(&k.variant({}, {}, 1) != &a);
  CHECK(&k.variant({}, jit::CompileOptions{8, 1}, 0) != &a);
  CHECK(a.info().kernel_name == "copy");
}

TEST_CASE("two programs per CTA: the same results, and an odd program count is refused on every backend") {
  jit::Kernel k{"copy", &copy_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 128}}};
  const int64_t n = 4097;  // 33 programs of 128: an odd count
  std::vector<float> h(n);
  for (int64_t i = 0; i < n; ++i) h[i] = 1.5f + float(i % 89) * 0.75f;
  jit::Array<float> x(h), out(n);
  const jit::CompileOptions two{4, 1, 2};
  CHECK(k.variant({}, two, 0).info().programs_per_cta == 2);
  try {
    k.launch(jit::Grid{jit::cdiv(n, 128)}, {}, two, x, out, n);
    FAIL("expected std::invalid_argument");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("grid's x (33) must be a multiple of 2") != std::string::npos);
  }
  out.poison();
  k.launch(jit::Grid{34}, {}, two, x, out, n);  // the last program's elements are all masked off
  CHECK(out.download() == h);
}

TEST_CASE("warp_specialize is a variant of its own; the interpreter records it and runs as without it") {
  jit::Kernel k{"copy", &copy_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 128}}};
  const jit::CompileOptions ws{4, 2, 1, true};
  if (jit::Device::current().kind() != jit::BackendKind::Interpreter) {
    // On the GPU the option needs a pipelined wgmma K loop (and sm_90a), which a copy has not.
    CHECK_THROWS_WITH(k.variant({}, ws, 0), doctest::Contains("warp_specialize needs"));
    return;
  }
  const int64_t n = 1000;
  std::vector<float> h(n);
  for (int64_t i = 0; i < n; ++i) h[i] = 0.25f + float(i % 53);
  jit::Array<float> x(h), out(n);
  jit::Executable& v = k.variant({}, ws, 0);
  CHECK(&v != &k.variant({}, jit::CompileOptions{4, 2, 1, false}, 0));
  CHECK(v.info().warp_specialize);
  CHECK_FALSE(k.variant({}, jit::CompileOptions{4, 2}, 0).info().warp_specialize);
  out.poison();
  k.launch(jit::Grid{jit::cdiv(n, 128)}, {}, ws, x, out, n);
  CHECK(out.download() == h);
}

TEST_CASE("two programs per CTA keep their reductions apart (own shared memory and barriers)") {
  jit::Kernel k{"centred_max", &centred_max_kernel, {"x", "out", "rows", "cols"}, Meta{{"BLOCK", 1024}}};
  const int64_t rows = 258, cols = 1000;
  std::vector<float> h(rows * cols), want(rows);
  for (int64_t i = 0; i < rows * cols; ++i) h[i] = float((i * 7919) % 1009) * 0.01f - float(i / cols % 17);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += h[r * cols + c];
    float mean = float(s) / float(cols), best = -1e30f;
    for (int64_t c = 0; c < cols; ++c) best = std::max(best, h[r * cols + c] - mean);
    want[r] = best;
  }
  jit::Array<float> x(h), out(rows);
  for (int per_cta : {1, 2}) {
    CAPTURE(per_cta);
    out.poison();
    k.launch(jit::Grid{static_cast<uint32_t>(rows)}, {}, jit::CompileOptions{8, 1, per_cta}, x, out, rows, cols);
    std::vector<float> got = out.download();
    for (int64_t r = 0; r < rows; ++r) CHECK(got[r] == doctest::Approx(want[r]).epsilon(1e-4));
  }
}

TEST_CASE("launches produce correct results for odd sizes and odd offsets") {
  jit::Kernel k{"copy", &copy_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 256}}};
  for (int64_t n : {1, 255, 257, 4097}) {
    std::vector<float> h(n);
    for (int64_t i = 0; i < n; ++i) h[i] = 0.5f + float(i % 97) * 1.25f;
    jit::Array<float> x(h), out(n);
    out.poison();
    k(jit::Grid{jit::cdiv(n, 256)}, {}, x, out, n);
    CHECK(out.download() == h);
  }
}

TEST_CASE("an unmasked out-of-bounds access is reported, naming the op and the line") {
  if (jit::Device::current().kind() != jit::BackendKind::Interpreter) {
    MESSAGE("not applicable on the GPU: out-of-bounds reporting is an interpreter feature");
    return;
  }
  jit::Kernel k{"unmasked", &unmasked_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 256}}};
  jit::Array<float> x(1000), out(1000);
  try {
    k(jit::Grid{jit::cdiv(1000, 256)}, {}, x, out, 1000);
    FAIL("expected an InterpError");
  } catch (const interp::InterpError& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("load") != std::string::npos);
    CHECK(msg.find("test_kernel.cpp:") != std::string::npos);
  }
}

TEST_CASE("a kernel in 2-CTA clusters (a multicast load) takes grids of whole clusters") {
  jit::ExecutableInfo info;
  info.kernel_name = "pairs";
  info.cluster_ctas = 2;
  CHECK_NOTHROW(jit::check_grid(info, jit::Grid{4}));
  CHECK_THROWS_WITH_AS(jit::check_grid(info, jit::Grid{3}),
                       doctest::Contains("kernel 'pairs' runs in clusters of 2 CTAs (a multicast load): the grid's x (3) "
                                         "must be a multiple of 2"),
                       std::invalid_argument);
  info.programs_per_cta = 2;  // two programs per CTA: clusters of 4 programs
  CHECK_NOTHROW(jit::check_grid(info, jit::Grid{8}));
  CHECK_THROWS_WITH_AS(jit::check_grid(info, jit::Grid{6}), doctest::Contains("must be a multiple of 4"),
                       std::invalid_argument);
}
