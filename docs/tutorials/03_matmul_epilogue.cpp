// Tutorial 03: matmul on tensor cores with a fused epilogue: C = act(A @ B + bias), act ReLU or GELU.
#include <tessel/interp/float_formats.hpp>  // f16 <-> double on the host
#include <tessel/tessel.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

#include "tutorial_check.hpp"

using namespace tessel::lang;
namespace jit = tessel::jit;

// GELU with erf, on f32 tiles: an ordinary C++ function of tiles composes like any other.
Tile gelu(const Tile& x) { return x * 0.5f * (1.0f + erf(x * 0.7071067811865476f)); }

// One program computes one BLOCK_M x BLOCK_N tile of C. A: f16[M, K], B: f16[K, N], bias: f32[N],
// C: f32[M, N], all row-major. ACT (a meta-parameter) picks the activation at trace time.
void matmul_bias_act(Ptr<f16> a, Ptr<f16> b, Ptr<f32> bias, Ptr<f32> c, Int M, Int N, Int K, const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], BK = m["BLOCK_K"];
  auto num_pid_n = (N + (BN - 1)) / BN;
  auto rm = (program_id(0) / num_pid_n) * BM + arange(0, BM);  // this tile's rows of C
  auto rn = (program_id(0) % num_pid_n) * BN + arange(0, BN);  // and columns
  auto rk = arange(0, BK);
  // Loop-carried values are Vars: the accumulator and the two pointer tiles, which step along K.
  Var acc{zeros<f32>({BM, BN})};
  Var pa{a + rm.col() * K + rk.row()};  // [BM, BK] pointers into A
  Var pb{b + rk.col() * N + rn.row()};  // [BK, BN] pointers into B
  for (auto k : range(0, K, BK)) {      // a runtime loop: traced once
    auto ta = load(pa, (rm.col() < M) & (rk.row() < K - k), 0);  // masked edges: any M, N, K
    auto tb = load(pb, (rk.col() < K - k) & (rn.row() < N), 0);
    acc = dot(ta, tb, acc);  // f16 x f16 -> f32 on tensor cores
    pa += BK;
    pb += BK * N;
  }
  // The epilogue runs on the accumulator in registers: no round trip of C through memory.
  auto v = acc.get() + load(bias + rn, rn < N, 0.0f).row();  // bias[None, :]
  auto out = m["ACT"] == 0 ? maximum(v, 0.0f) : gelu(v);      // a C++ choice: one kernel per ACT
  store(c + rm.col() * N + rn.row(), out, (rm.col() < M) & (rn.row() < N));
}

jit::Kernel matmul{"tutorial_matmul_bias_act", &matmul_bias_act, {"a", "b", "bias", "c", "M", "N", "K"},
                   Meta{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"ACT", 1}}};

double host_gelu(double x) { return x * 0.5 * (1.0 + std::erf(x * 0.7071067811865476)); }

bool check(int64_t M, int64_t N, int64_t K, int act) {
  // f16 inputs: random floats rounded to f16 (the host holds f16 as its 16 bits).
  auto to_f16 = [](const std::vector<float>& v) {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = tessel::interp::f16_from_double(v[i]);
    return h;
  };
  std::vector<uint16_t> ha = to_f16(tutorial::random_floats(M * K, 3)), hb = to_f16(tutorial::random_floats(K * N, 4));
  std::vector<float> hbias = tutorial::random_floats(N, 5);

  jit::Array<uint16_t> a(ha), b(hb);
  jit::Array<float> bias(hbias), c(M * N);
  const Meta meta{{"ACT", act}};  // over the kernel's defaults: BLOCK_M = BLOCK_N = 64, BLOCK_K = 32
  const Meta eff = matmul.effective_meta(meta);
  const jit::Grid grid{jit::cdiv(M, eff["BLOCK_M"]) * jit::cdiv(N, eff["BLOCK_N"])};
  matmul(grid, meta, a, b, bias, c, M, N, K);
  std::vector<float> got = c.download();

  std::vector<double> want(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = hbias[j];
      for (int64_t k = 0; k < K; ++k)
        s += tessel::interp::f16_to_double(ha[i * K + k]) * tessel::interp::f16_to_double(hb[k * N + j]);
      want[i * N + j] = act == 0 ? std::max(s, 0.0) : host_gelu(s);
    }
  const std::string what = std::string(act == 0 ? "matmul+bias+relu " : "matmul+bias+gelu ") + std::to_string(M) +
                           "x" + std::to_string(N) + "x" + std::to_string(K);
  // f32 accumulation of K products: the GPU adds in its own order, so allow rounding.
  return tutorial::check_close(what.c_str(), got, want, 1e-4, 1e-4);
}

bool run_checks() {
  std::printf("device: %s\n", jit::Device::current().describe().c_str());
  bool ok = true;
  for (int act : {0, 1}) {
    ok = check(133, 97, 75, act) && ok;  // no dimension a multiple of the tile
    ok = check(1, 1, 1, act) && ok;
  }
  ok = check(64, 128, 64, 1) && ok;      // exact tiles
  return ok;
}

int main() {
  return tutorial::run_tutorial(run_checks, [] { return jit::Device::current().kind() == jit::BackendKind::Cuda; });
}
