// Samples: runnable seed workloads with random inputs, checked against host references.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tessel/ir/error.hpp"
#include "tessel/jit/registry.hpp"

namespace tessel::samples {

// The most elements a sample's buffer may span: kernels index with i32 offsets. Larger sizes are
// the user's input error (UserError naming this limit), not something to wrap around.
inline constexpr int64_t kMaxI32Offset = INT32_MAX;

struct RunConfig {
  int64_t n = int64_t{1} << 20;  // problem size in elements
  uint64_t seed = 1;             // inputs and dropout seed
  jit::Meta meta;                // overrides of the kernels' meta-parameters
  // Row samples (SampleShape::Rows) only; 0 = derived: cols = the sample's default width,
  // rows = max(1, n / cols), row_stride = cols (contiguous rows). row_stride >= cols pads
  // every row (the padding must stay untouched).
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;
  // Matmul samples (SampleShape::Matmul) only; 0 = derived: m = rows (else sqrt(n)),
  // n = cols (else m), k = n, batch = 3. pad > 0 adds that many unused elements to every row
  // of A, B and C (leading dimensions K + pad, N + pad, N + pad; the padding must stay untouched).
  struct MatmulSize {
    int64_t m = 0, n = 0, k = 0, batch = 0, pad = 0;
    // The matmuls without bias or batch (matmul, _bf16, _f32, _i8, persistent, paired): A and/or B
    // stored transposed (column-major: A as K rows of M + pad, B as N rows of K + pad), passed
    // with a unit row stride, the layout of torch's x.t() or of an "NT" GEMM's B.
    bool trans_a = false, trans_b = false;
  } matmul;
  // Attention samples (SampleShape::Attention) only; 0 = derived: seq_q = rows (else the
  // sample's default), seq_k = cols (else seq_q; the decode samples have one query), batch,
  // heads and kv_heads the sample's defaults. The head dim and the causal mask are the kernels'
  // meta-parameters HEAD_DIM and CAUSAL.
  struct AttentionSize {
    int64_t batch = 0, heads = 0, kv_heads = 0, seq_q = 0, seq_k = 0;
  } attention;
  // Convolution samples (SampleShape::Conv) only; 0 = derived: batch 2, h = w = 14, c = k = 64.
  // The filter size, stride and padding are the kernels' meta-parameters R, S, STRIDE and PAD.
  struct ConvSize {
    int64_t batch = 0, h = 0, w = 0, c = 0, k = 0;  // k: output channels
  } conv;
  // The split samples' slices, 0 = the sample's default: the decode samples' KV chunks (enough
  // programs for about 2 per multiprocessor), w4a16_splitk's K slices (4) and
  // conv2d_bn_relu_splitk's (3). More than the K (or KV) blocks gives one block each.
  int64_t splits = 0;
  // Launch options of the matmul and attention kernels (num_warps, num_stages: the K loop's
  // pipeline depth); the other samples use the defaults.
  jit::CompileOptions options;
};

// What a sample's size means and what it checks.
enum class SampleShape {
  Elements,  // n elements in, n elements out
  Rows,      // a rows x cols matrix (RunConfig::rows/cols/row_stride); rows x cols outputs and more
  Total,     // n elements reduced to one value
  Matmul,    // C[M, N] = A[M, K] @ B[K, N] (RunConfig::matmul, or rows/cols), batched or not
  Attention, // O = softmax(Q K^T * scale) V over [batch, heads, seq, head_dim] (RunConfig::attention)
  Conv,      // y[B, P, Q, K] = conv2d of x[B, H, W, C] (NHWC) by w[K, R, S, C] (RunConfig::conv)
};

struct RunResult {
  bool verified = false;
  int64_t checked = 0;     // elements compared
  int64_t mismatches = 0;  // elements outside the tolerance (NaN counts)
  double max_abs_err = 0;
  double atol = 0, rtol = 0;
  int launches = 0;        // kernels launched
  std::string first_mismatch;  // "out[17] = 1.5, expected 2.25"
};

struct Sample {
  std::string name;
  std::string description;
  std::vector<std::string> kernels;  // registry names of the kernels it launches
  std::function<RunResult(const RunConfig&)> run;
  SampleShape shape = SampleShape::Elements;
};

// Every sample, in a fixed order.
const std::vector<Sample>& all_samples();
const Sample* find_sample(std::string_view name);

// `tessel run` on a kernel registered with a workload: the problem at `size` (one value per
// workload size name); the config `used` is adjust(the first config the kernel's prune keeps
// there) (no adjust: that config); then the reference, the outputs poisoned, one launch, and every
// output value compared with the reference (its per-value tolerance, else the problem's
// atol + rtol*|ref|). UserError when the entry has no workload or its workload no reference, or
// the kernel prunes every config or the adjusted one.
RunResult run_workload(const jit::KernelEntry& e, const std::vector<int64_t>& size,
                       const std::function<jit::tune::Config(const jit::tune::Config&)>& adjust, jit::tune::Config& used);

// Adds every sample kernel to `r` (idempotent for the global registry).
void register_sample_kernels(jit::Registry& r = jit::Registry::global());

// The grid of an elementwise sample kernel: one program per BLOCK elements of c.n (BLOCK: the
// kernel's meta with c.meta's overrides).
template <class K>
jit::Grid grid_for(K& k, const RunConfig& c) {
  return jit::Grid{jit::cdiv(c.n, k.effective_meta(c.meta)["BLOCK"])};
}

// Compares `out` with a double-precision host reference: |out - ref| <= atol + rtol * |ref|.
RunResult compare(std::span<const float> out, std::span<const double> ref, double atol, double rtol);

// Random f32 inputs, uniform in [lo, hi), from a seeded generator (deterministic). UserError
// ("cannot allocate N bytes ...") when the host has no memory for them.
std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -2.0f, float hi = 2.0f);

}  // namespace tessel::samples
