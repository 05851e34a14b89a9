// tessel's sample kernels as PyTorch operators: torch.ops.tessel.softmax, layer_norm,
// bias_gelu_dropout, matmul_bias_gelu and mse_sum, loaded from Python with
// torch.ops.load_library(path).
//
// Each operator has a CUDA kernel, which launches a tessel Kernel on the tensors' GPU and on
// PyTorch's current stream there (so it orders with the surrounding torch work, runs on a
// torch.cuda.Stream the caller set and is captured by torch.cuda.graph), and a Meta kernel,
// which gives the output's shape and dtype without running anything (what torch.compile traces
// with). Tensors pass to the kernels as they are (torch_pointer.hpp checks dtype and device);
// the operators check shapes and contiguity here, with TORCH_CHECK, so a mistake is a Python
// exception that names the operator and the argument.
//
// The first call of a kernel variant compiles it (milliseconds, or a disk-cache hit); later
// calls only launch. Capture a CUDA graph after a warm-up call, as torch.cuda.graph asks anyway.
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/matmul_kernels.hpp"
#include "tessel/samples/reduction_kernels.hpp"
#include "mse_sum_kernel.hpp"
#include <cstdlib>

#include "check_message.hpp"
#include "torch_pointer.hpp"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

namespace {

namespace tj = tessel::jit;
namespace ts = tessel::samples;
namespace tk = tessel::torch_ext::kernels;
using tessel::torch_ext::torch_dtype_name;

// Known problem (session 21, torch 2.11.0 on H100 and H200): in torch's process the first kernel
// whose cubin tessel assembles with the toolkit's ptxas (the default since session 20) crashes the
// process; with the driver's JIT every operator passes. The cause is not found (not fork's atfork
// handlers, not tessel's calls into fmt). Until it is, these operators ask for the driver unless
// the user set TESSEL_CUBIN_TOOL (docs/embedding.md).
const bool g_driver_cubins = [] { return ::setenv("TESSEL_CUBIN_TOOL", "driver", /*overwrite=*/0) == 0; }();

// The sample kernels compute offsets in i32: every tensor must span fewer than 2^31 elements.
constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();
// Rows up to this many elements are held in one tile; wider ones take the looped kernels.
constexpr int64_t kMaxRowTile = 8192;
// The smallest row tile: one element per thread of 4 warps, so no tile is narrower than the
// program's threads.
constexpr int64_t kMinRowTile = 128;
// Looped row kernels walk a row in blocks of this many elements.
constexpr int64_t kLoopedBlock = 2048;

// ---- launching --------------------------------------------------------------------------

// Where a kernel for tensor `t` runs: t's GPU, on PyTorch's current stream there.
tj::LaunchOptions torch_launch(const at::Tensor& t) {
  const int index = t.get_device();
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(index)).stream();
  return tj::LaunchOptions{tj::Device::get(index), stream};
}

tj::CompileOptions warps(int n) {
  tj::CompileOptions o;
  o.num_warps = n;
  return o;
}

int64_t row_tile(int64_t cols) {
  int64_t p = kMinRowTile;
  while (p < cols) p *= 2;
  return p;
}

// The meta-parameters of a row tile of `block` elements (a power of two up to kMaxRowTile),
// built once: a launch then copies no strings.
const tj::Meta& block_meta(int64_t block) {
  static const std::vector<tj::Meta> metas = [] {
    std::vector<tj::Meta> v;
    for (int64_t b = 1; b <= kMaxRowTile; b *= 2) v.push_back(tj::Meta{{"BLOCK", b}});
    return v;
  }();
  return metas[std::countr_zero(static_cast<uint64_t>(block))];
}

// Warps for a row tile: 4 up to 4096 elements (the best of 4/8/16 for 4096-wide softmax and
// LayerNorm rows in bench/RESULTS.md), 8 for the widest tile.
tj::CompileOptions row_warps(int64_t block) { return warps(block >= kMaxRowTile ? 8 : 4); }

// ---- input checks -----------------------------------------------------------------------

void check_dtype(const at::Tensor& t, const char* op, const char* name, std::initializer_list<c10::ScalarType> ok) {
  std::string allowed;
  for (c10::ScalarType s : ok) {
    if (t.scalar_type() == s) return;
    allowed += (allowed.empty() ? "" : " or ") + torch_dtype_name(s);
  }
  TESSEL_TORCH_CHECK(false, "tessel::", op, ": ", name, " must be ", allowed, ", got ", torch_dtype_name(t.scalar_type()));
}

// A CUDA tensor on `like`'s GPU, contiguous, of any size.
void check_cuda_contiguous_any_size(const at::Tensor& t, const at::Tensor& like, const char* op, const char* name) {
  TESSEL_TORCH_CHECK(t.is_cuda(), "tessel::", op, ": ", name, " must be a CUDA tensor, got one on ", t.device());
  TESSEL_TORCH_CHECK(t.get_device() == like.get_device(), "tessel::", op, ": ", name, " is on ", t.device(),
              " but the other inputs are on ", like.device());
  TESSEL_TORCH_CHECK(t.is_contiguous(), "tessel::", op, ": ", name, " must be contiguous (call .contiguous()), got sizes ",
              t.sizes(), " with strides ", t.strides());
}

// A CUDA tensor on `like`'s GPU, contiguous, spanning fewer than 2^31 elements.
void check_cuda_contiguous(const at::Tensor& t, const at::Tensor& like, const char* op, const char* name) {
  check_cuda_contiguous_any_size(t, like, op, name);
  TESSEL_TORCH_CHECK(t.numel() <= kMaxI32, "tessel::", op, ": ", name, " has ", t.numel(),
              " elements; the kernels' i32 offsets allow at most 2^31 - 1");
}

// A row vector of `cols` elements (LayerNorm's weight and bias, the biases' broadcast rows).
void check_row_vector(const at::Tensor& v, int64_t cols, const char* op, const char* name) {
  TESSEL_TORCH_CHECK(v.dim() == 1 && v.size(0) == cols, "tessel::", op, ": ", name, " must have shape [", cols,
              "] (the input's last dimension), got ", v.sizes());
}

// ---- softmax ----------------------------------------------------------------------------

void softmax_signature(const at::Tensor& x) {
  check_dtype(x, "softmax", "x", {at::kFloat});
  TESSEL_TORCH_CHECK(x.dim() >= 1, "tessel::softmax: x must have at least one dimension");
}

// softmax over the last dimension.
at::Tensor softmax_cuda(const at::Tensor& x) {
  softmax_signature(x);
  check_cuda_contiguous(x, x, "softmax", "x");
  at::Tensor out = at::empty(x.sizes(), x.options());
  if (x.numel() == 0) return out;
  const int64_t cols = x.size(-1), rows = x.numel() / cols;
  const tj::LaunchOptions where = torch_launch(x);
  const tj::Grid grid{static_cast<uint32_t>(rows)};
  if (cols <= kMaxRowTile) {
    const int64_t block = row_tile(cols);
    ts::k_softmax.launch(grid, block_meta(block), row_warps(block), where, x, out, cols, cols, cols);
  } else {
    ts::k_softmax_online.launch(grid, block_meta(kLoopedBlock), warps(8), where, x, out, cols, cols, cols);
  }
  return out;
}

at::Tensor softmax_meta(const at::Tensor& x) {
  softmax_signature(x);
  return at::empty_like(x);
}

// ---- LayerNorm --------------------------------------------------------------------------

void layer_norm_signature(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  check_dtype(x, "layer_norm", "x", {at::kFloat, at::kHalf, at::kBFloat16});
  TESSEL_TORCH_CHECK(w.scalar_type() == x.scalar_type() && b.scalar_type() == x.scalar_type(),
              "tessel::layer_norm: weight and bias must have x's dtype ", torch_dtype_name(x.scalar_type()),
              ", got ", torch_dtype_name(w.scalar_type()), " and ", torch_dtype_name(b.scalar_type()));
  TESSEL_TORCH_CHECK(x.dim() >= 1, "tessel::layer_norm: x must have at least one dimension");
}

// One LayerNorm launch with the kernels of one storage type (the row in one tile, or looped).
template <class K>
void launch_layer_norm(K& one_tile, K& looped, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b,
                       const at::Tensor& y, double eps) {
  const int64_t cols = x.size(-1), rows = x.numel() / cols;
  // The kernels also write each row's mean and 1/std (the backward pass's inputs); dropped here.
  const at::Tensor mean = at::empty({rows}, x.options().dtype(at::kFloat));
  const at::Tensor rstd = at::empty({rows}, x.options().dtype(at::kFloat));
  const tj::LaunchOptions where = torch_launch(x);
  const tj::Grid grid{static_cast<uint32_t>(rows)};
  if (cols <= kMaxRowTile) {
    const int64_t block = row_tile(cols);
    one_tile.launch(grid, block_meta(block), row_warps(block), where, x, w, b, y, mean, rstd, cols, cols, eps);
  } else {
    looped.launch(grid, block_meta(kLoopedBlock), warps(8), where, x, w, b, y, mean, rstd, cols, cols, eps);
  }
}

// LayerNorm over the last dimension: y = (x - mean) / sqrt(var + eps) * weight + bias, storage in
// x's dtype, math in f32.
at::Tensor layer_norm_cuda(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps) {
  layer_norm_signature(x, w, b);
  check_cuda_contiguous(x, x, "layer_norm", "x");
  check_cuda_contiguous(w, x, "layer_norm", "weight");
  check_cuda_contiguous(b, x, "layer_norm", "bias");
  const int64_t cols = x.size(-1);
  check_row_vector(w, cols, "layer_norm", "weight");
  check_row_vector(b, cols, "layer_norm", "bias");
  at::Tensor y = at::empty(x.sizes(), x.options());
  if (x.numel() == 0) return y;
  switch (x.scalar_type()) {
    case at::kFloat: launch_layer_norm(ts::k_layernorm_f32, ts::k_layernorm_looped_f32, x, w, b, y, eps); break;
    case at::kHalf: launch_layer_norm(ts::k_layernorm_f16, ts::k_layernorm_looped_f16, x, w, b, y, eps); break;
    default: launch_layer_norm(ts::k_layernorm_bf16, ts::k_layernorm_looped_bf16, x, w, b, y, eps); break;
  }
  return y;
}

at::Tensor layer_norm_meta(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps) {
  layer_norm_signature(x, w, b);
  return at::empty_like(x);
}

// ---- bias + GELU + dropout ----------------------------------------------------------------

void bias_gelu_dropout_signature(const at::Tensor& x, const at::Tensor& bias, double p, int64_t seed) {
  check_dtype(x, "bias_gelu_dropout", "x", {at::kFloat});
  check_dtype(bias, "bias_gelu_dropout", "bias", {at::kFloat});
  TESSEL_TORCH_CHECK(x.dim() >= 1, "tessel::bias_gelu_dropout: x must have at least one dimension");
  TESSEL_TORCH_CHECK(p >= 0.0 && p <= 1.0, "tessel::bias_gelu_dropout: p must be in [0, 1], got ", p);
  // The kernel's seed is an i32; non-negative, so the Philox key's high word is 0 on every backend.
  TESSEL_TORCH_CHECK(seed >= 0 && seed <= kMaxI32, "tessel::bias_gelu_dropout: seed must be in [0, 2^31 - 1], got ", seed);
}

// out = dropout(gelu(x + bias), p), GELU with erf, bias broadcast over the last dimension. The
// mask is tessel's Philox stream: element i (row-major) is kept when rand(seed, i) > p
// (ir/philox.hpp defines rand exactly), and kept values are scaled by 1 / (1 - p).
at::Tensor bias_gelu_dropout_cuda(const at::Tensor& x, const at::Tensor& bias, double p, int64_t seed) {
  bias_gelu_dropout_signature(x, bias, p, seed);
  check_cuda_contiguous(x, x, "bias_gelu_dropout", "x");
  check_cuda_contiguous(bias, x, "bias_gelu_dropout", "bias");
  const int64_t d = x.size(-1), n = x.numel();
  check_row_vector(bias, d, "bias_gelu_dropout", "bias");
  at::Tensor out = at::empty(x.sizes(), x.options());
  if (n == 0) return out;
  const int64_t block = ts::k_bias_gelu_dropout.defaults()["BLOCK"];
  ts::k_bias_gelu_dropout.launch(tj::Grid{tj::cdiv(n, block)}, tj::Meta{}, warps(4), torch_launch(x), x, bias, out,
                                 n, d, p, seed);
  return out;
}

at::Tensor bias_gelu_dropout_meta(const at::Tensor& x, const at::Tensor& bias, double p, int64_t seed) {
  bias_gelu_dropout_signature(x, bias, p, seed);
  return at::empty_like(x);
}

// ---- matmul + bias + GELU ----------------------------------------------------------------

void matmul_bias_gelu_signature(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  check_dtype(a, "matmul_bias_gelu", "a", {at::kHalf});
  check_dtype(b, "matmul_bias_gelu", "b", {at::kHalf});
  check_dtype(bias, "matmul_bias_gelu", "bias", {at::kHalf});
  TESSEL_TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "tessel::matmul_bias_gelu: a and b must be matrices, got ", a.dim(),
              " and ", b.dim(), " dimensions");
}

// Whether a strided matrix's elements all lie within i32 offsets of its first one.
bool fits_i32_offsets(const at::Tensor& m) {
  if (m.numel() == 0) return true;
  if (m.stride(0) < 0 || m.stride(1) < 0) return false;
  return (m.size(0) - 1) * m.stride(0) + (m.size(1) - 1) * m.stride(1) <= kMaxI32;
}

// c = gelu(a @ b + bias), f16 storage, f32 accumulation and epilogue, GELU with erf. a and b may
// be strided (transposed views included): the kernel takes their strides.
at::Tensor matmul_bias_gelu_cuda(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  matmul_bias_gelu_signature(a, b, bias);
  TESSEL_TORCH_CHECK(a.is_cuda() && b.is_cuda(), "tessel::matmul_bias_gelu: a and b must be CUDA tensors, got ones on ",
              a.device(), " and ", b.device());
  TESSEL_TORCH_CHECK(b.get_device() == a.get_device(), "tessel::matmul_bias_gelu: b is on ", b.device(), " but a is on ",
              a.device());
  check_cuda_contiguous(bias, a, "matmul_bias_gelu", "bias");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  TESSEL_TORCH_CHECK(b.size(0) == K, "tessel::matmul_bias_gelu: a is ", a.sizes(), " and b is ", b.sizes(),
              ": a's columns must equal b's rows");
  check_row_vector(bias, N, "matmul_bias_gelu", "bias");
  TESSEL_TORCH_CHECK(fits_i32_offsets(a) && fits_i32_offsets(b),
              "tessel::matmul_bias_gelu: a and b must have non-negative strides and span fewer than 2^31 elements");
  at::Tensor c = at::empty({M, N}, a.options());
  if (M == 0 || N == 0) return c;
  TESSEL_TORCH_CHECK(K > 0, "tessel::matmul_bias_gelu: a and b have no inner dimension (K = 0)");
  TESSEL_TORCH_CHECK(M * N <= kMaxI32, "tessel::matmul_bias_gelu: the result has ", M * N,
              " elements; the kernel's i32 offsets allow at most 2^31 - 1");
  const tj::Meta& meta = ts::kMatmulMeta;
  const uint32_t tiles = tj::cdiv(M, meta["BLOCK_M"]) * tj::cdiv(N, meta["BLOCK_N"]);
  ts::k_matmul_bias_gelu.launch(tj::Grid{tiles}, meta, warps(4), torch_launch(a), a, b, bias, c, M, N, K, a.stride(0),
                                a.stride(1), b.stride(0), b.stride(1), N, int64_t{1});
  return c;
}

at::Tensor matmul_bias_gelu_meta(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  matmul_bias_gelu_signature(a, b, bias);
  // Symbolic sizes, so a torch.compile with dynamic shapes traces through too.
  const std::vector<c10::SymInt> shape{a.sym_size(0), b.sym_size(1)};
  return at::empty_symint(shape, a.options());
}

// ---- sum of squared differences (the data-parallel loss of two_gpu_mse.py) ------------------

void mse_sum_signature(const at::Tensor& pred, const at::Tensor& target) {
  check_dtype(pred, "mse_sum", "pred", {at::kFloat});
  check_dtype(target, "mse_sum", "target", {at::kFloat});
}

// sum((pred - target)^2) as a 1-element f32 tensor, over all elements of two contiguous tensors of
// equal numel (any shapes). Any size: tensors past 2^30 elements take one launch per 2^30-element
// chunk (mse_sum_kernel.hpp: the kernel's offsets are i32), all adding into the one output, which
// is zeroed first on the same stream. The kernel adds with atomics: the order they land in, so the
// last bits of the result, can differ between runs.
at::Tensor mse_sum_cuda(const at::Tensor& pred, const at::Tensor& target) {
  mse_sum_signature(pred, target);
  check_cuda_contiguous_any_size(pred, pred, "mse_sum", "pred");
  check_cuda_contiguous_any_size(target, pred, "mse_sum", "target");
  TESSEL_TORCH_CHECK(pred.numel() == target.numel(), "tessel::mse_sum: pred and target must have the same number of "
              "elements, got ", pred.numel(), " (sizes ", pred.sizes(), ") and ", target.numel(), " (sizes ",
              target.sizes(), ")");
  at::Tensor out = at::zeros({1}, pred.options());  // on PyTorch's current stream of pred's GPU
  const int64_t n = pred.numel();
  if (n == 0) return out;
  const tj::LaunchOptions where = torch_launch(pred);
  const int64_t max_programs = tk::kMseSumProgramsPerSm * where.device->multiprocessors();
  // Contiguous, so these are views; each chunk's narrow() starts at its first element.
  const at::Tensor p = pred.reshape({-1}), t = target.reshape({-1});
  for (const tk::MseSumLaunch& l : tk::mse_sum_launches(n, max_programs)) {
    tk::k_mse_sum.launch(tj::Grid{l.grid}, tj::Meta{}, warps(tk::kMseSumWarps), where, p.narrow(0, l.offset, l.count),
                         t.narrow(0, l.offset, l.count), out, l.count);
  }
  return out;
}

// Shape and dtype only. The numel check is the CUDA kernel's: under torch.compile with dynamic
// shapes numel() is symbolic and cannot be compared here.
at::Tensor mse_sum_meta(const at::Tensor& pred, const at::Tensor& target) {
  mse_sum_signature(pred, target);
  return at::empty({1}, pred.options());
}

}  // namespace

TORCH_LIBRARY(tessel, m) {
  m.def("softmax(Tensor x) -> Tensor");
  m.def("layer_norm(Tensor x, Tensor weight, Tensor bias, float eps=1e-05) -> Tensor");
  m.def("bias_gelu_dropout(Tensor x, Tensor bias, float p, int seed) -> Tensor");
  m.def("matmul_bias_gelu(Tensor a, Tensor b, Tensor bias) -> Tensor");
  m.def("mse_sum(Tensor pred, Tensor target) -> Tensor");
}

TORCH_LIBRARY_IMPL(tessel, CUDA, m) {
  m.impl("softmax", &softmax_cuda);
  m.impl("layer_norm", &layer_norm_cuda);
  m.impl("bias_gelu_dropout", &bias_gelu_dropout_cuda);
  m.impl("matmul_bias_gelu", &matmul_bias_gelu_cuda);
  m.impl("mse_sum", &mse_sum_cuda);
}

TORCH_LIBRARY_IMPL(tessel, Meta, m) {
  m.impl("softmax", &softmax_meta);
  m.impl("layer_norm", &layer_norm_meta);
  m.impl("bias_gelu_dropout", &bias_gelu_dropout_meta);
  m.impl("matmul_bias_gelu", &matmul_bias_gelu_meta);
  m.impl("mse_sum", &mse_sum_meta);
}
