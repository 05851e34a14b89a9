// The interpreter's test kernels run again on the GPU: each run_kernel() call of tests/interp
// runs the interpreter (whose results the test then checks against its host reference), then
// the same IR through the passes, the lowering and the driver, with the same inputs and poisoned
// outputs, and compares every written byte with the interpreter's result: integers and
// pointers exactly, floats within a bound chosen from the kernel's ops (see tolerance_for).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../common/gpu_gate.hpp"
#include "../interp/interp_test_util.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/passes.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/jit/executable.hpp"

namespace interp_test {

thread_local const char* g_interpreter_only = nullptr;
thread_local const GpuUnspecified* g_unspecified = nullptr;

struct GpuUnspecifiedAccess {
  // Whether any GpuUnspecified in scope leaves element `index` of `region` unspecified.
  static bool skipped(size_t region, size_t index) {
    for (const GpuUnspecified* u = g_unspecified; u; u = u->prev_)
      if (u->skip_(region, index)) return true;
    return false;
  }
};

namespace {

// How close a float result must be: |gpu - interp| <= rtol * |interp| + atol * max|interp| over
// the buffer (+ the smallest normal of the type, for results that flush or round near zero).
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

double eps_of(Scalar s) {
  switch (s) {
    case Scalar::f16: return 0x1p-10;
    case Scalar::bf16: return 0x1p-7;
    case Scalar::f64: return 0x1p-52;
    default: return 0x1p-23;
  }
}

// The bound for one output buffer of element type `s`, from the ops of the kernel:
//  - plain arithmetic: 4 ulp of the type (the GPU contracts a*b+c into one fma, the interpreter
//    rounds twice; f16/bf16 math runs in f32 on the GPU and in double here, each rounded once);
//  - the .approx transcendentals (exp, log, sin, cos, rsqrt, tanh, erf, sigmoid, randn):
//    2^-16 relative to the value and to the buffer's largest magnitude for f32 results, 2 ulp
//    of f16/bf16, 1e-13 for f64 (f64_math.hpp's series);
//  - sums in another order (reduce_sum, cumsum, generic reduce, dot, float atomic_add): 2^-14
//    of the buffer's largest magnitude (f32; tf32 dots 2^-9), 4 ulp of f16/bf16 times 8.
Tolerance tolerance_for(const Function& f, Scalar s) {
  const double e = eps_of(s);
  Tolerance t{4 * e, 4 * e};
  bool approx = false, reorder = false, tf32 = false;
  tessel::ir::walk(f.body, [&](const Op& op) {
    switch (op.kind) {
      case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2: case OpKind::Rsqrt:
      case OpKind::Sin: case OpKind::Cos: case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf:
      case OpKind::RandN:
        approx = true;
        break;
      case OpKind::ReduceSum: case OpKind::CumSum: case OpKind::Reduce: case OpKind::AtomicAdd:
        reorder = true;
        break;
      case OpKind::Dot:
        reorder = true;
        for (const Attr& a : op.attrs)
          if (a.name == "allow_tf32" && std::get<int64_t>(a.value) != 0) tf32 = true;
        break;
      default: break;
    }
  });
  if (approx) {
    const double a = s == Scalar::f64 ? 1e-13 : s == Scalar::f32 ? 0x1p-16 : 2 * e;
    t.rtol = std::max(t.rtol, a), t.atol = std::max(t.atol, a);
  }
  if (reorder) {
    const double a = tf32 ? 0x1p-9 : s == Scalar::f64 ? 1e-12 : s == Scalar::f32 ? 0x1p-14 : 32 * e;
    t.atol = std::max(t.atol, a);
    t.rtol = std::max(t.rtol, s == Scalar::f32 && !tf32 ? 0x1p-16 : a);
  }
  return t;
}

double read_float(const std::byte* p, Scalar s) {
  switch (s) {
    case Scalar::f16: { uint16_t h; std::memcpy(&h, p, 2); return tessel::interp::f16_to_double(h); }
    case Scalar::bf16: { uint16_t h; std::memcpy(&h, p, 2); return tessel::interp::bf16_to_double(h); }
    case Scalar::f32: { float v; std::memcpy(&v, p, 4); return v; }
    default: { double v; std::memcpy(&v, p, 8); return v; }
  }
}

double smallest_normal(Scalar s) {
  switch (s) {
    case Scalar::f16: return 0x1p-14;
    case Scalar::bf16: case Scalar::f32: return 0x1p-126;
    default: return 0x1p-1022;
  }
}

struct BufferView {
  size_t region = 0;
  DType elem{Scalar::i8, false};  // what the kernel's pointers to it point at (i8: bytes)
  bool typed = false;
};

// Compares the GPU's bytes with the interpreter's for one writable region; returns a
// description of the mismatches ("" when they agree).
std::string compare(const std::vector<std::byte>& gpu, const std::vector<std::byte>& ref, const BufferView& v,
                    const Function& f) {
  const size_t es = v.typed ? static_cast<size_t>(v.elem.bytes()) : 1;
  const size_t n = ref.size() / es;
  std::ostringstream out;
  size_t bad = 0;
  auto report = [&](size_t i, const std::string& g, const std::string& r) {
    if (bad++ < 5) out << "    element " << i << ": gpu " << g << ", interpreter " << r << "\n";
  };
  auto unspecified = [&](size_t i) { return GpuUnspecifiedAccess::skipped(v.region, i); };
  if (!v.typed || !v.elem.is_float()) {
    for (size_t i = 0; i < n; ++i)
      if (!unspecified(i) && std::memcmp(gpu.data() + i * es, ref.data() + i * es, es) != 0) {
        int64_t g = 0, r = 0;
        std::memcpy(&g, gpu.data() + i * es, std::min<size_t>(es, 8));
        std::memcpy(&r, ref.data() + i * es, std::min<size_t>(es, 8));
        report(i, std::to_string(g), std::to_string(r));
      }
  } else {
    const Scalar s = v.elem.scalar;
    const Tolerance t = tolerance_for(f, s);
    double max_abs = 0;
    for (size_t i = 0; i < n; ++i) {
      if (unspecified(i)) continue;
      double r = read_float(ref.data() + i * es, s);
      if (std::isfinite(r)) max_abs = std::max(max_abs, std::fabs(r));
    }
    for (size_t i = 0; i < n; ++i) {
      if (unspecified(i)) continue;
      const double g = read_float(gpu.data() + i * es, s), r = read_float(ref.data() + i * es, s);
      bool ok;
      if (std::isnan(r) || std::isnan(g)) ok = std::isnan(r) && std::isnan(g);
      else if (std::isinf(r) || std::isinf(g)) ok = g == r;
      else ok = std::fabs(g - r) <= t.rtol * std::fabs(r) + t.atol * max_abs + smallest_normal(s);
      if (!ok) {
        std::ostringstream gs, rs;
        gs.precision(9), rs.precision(9);
        gs << g, rs << r;
        report(i, gs.str(), rs.str());
      }
    }
    if (bad) out << "    (bound: " << t.rtol << " * |interp| + " << t.atol << " * " << max_abs << ")\n";
  }
  if (!bad) return "";
  return "  " + std::to_string(bad) + " of " + std::to_string(n) + " elements differ:\n" + out.str();
}

// The region an address points into (one past the end counts), or -1.
int region_of(uint64_t addr, std::span<const MemRegion> mem) {
  for (size_t r = 0; r < mem.size(); ++r) {
    const auto base = reinterpret_cast<uintptr_t>(mem[r].base);
    if (addr >= base && addr <= base + mem[r].bytes) return static_cast<int>(r);
  }
  return -1;
}

bool overlapping(std::span<const MemRegion> mem) {
  for (size_t a = 0; a < mem.size(); ++a)
    for (size_t b = a + 1; b < mem.size(); ++b) {
      auto a0 = reinterpret_cast<uintptr_t>(mem[a].base), b0 = reinterpret_cast<uintptr_t>(mem[b].base);
      if (a0 < b0 + mem[b].bytes && b0 < a0 + mem[a].bytes) return true;
    }
  return false;
}

// One launch of `f` on the GPU over copies of `before`; returns the regions afterwards.
std::vector<std::vector<std::byte>> run_gpu(tessel::jit::Device& dev, const std::shared_ptr<const Function>& fin,
                                            int num_warps, Grid grid, std::span<const ArgValue> args,
                                            std::span<const MemRegion> mem,
                                            const std::vector<std::vector<std::byte>>& before) {
  std::vector<uint64_t> dbuf(mem.size());
  struct Free {
    tessel::jit::Device& d;
    std::vector<uint64_t>& b;
    ~Free() {
      for (uint64_t a : b)
        if (a) d.free(a);
    }
  } guard{dev, dbuf};
  for (size_t r = 0; r < mem.size(); ++r) {
    dbuf[r] = dev.alloc(std::max<size_t>(mem[r].bytes, 16));
    if (mem[r].bytes) dev.upload(dbuf[r], before[r].data(), mem[r].bytes);
  }
  std::vector<tessel::jit::RawArg> raw;
  for (const ArgValue& a : args) {
    if (a.kind == ArgValue::Pointer) {
      int r = region_of(a.addr, mem);
      raw.push_back(tessel::jit::RawArg::pointer(
          r < 0 ? 0 : dbuf[r] + (a.addr - reinterpret_cast<uintptr_t>(mem[r].base))));
    } else if (a.kind == ArgValue::Float) {
      raw.push_back(tessel::jit::RawArg::floating(a.f));
    } else {
      raw.push_back(tessel::jit::RawArg::integer(a.i));
    }
  }
  tessel::jit::CompileOptions opts;
  opts.num_warps = num_warps;
  auto exe = dev.compile(fin, opts);
  exe->launch(tessel::jit::Grid{static_cast<uint32_t>(grid.x), static_cast<uint32_t>(grid.y),
                                static_cast<uint32_t>(grid.z)},
              raw);
  dev.synchronize();
  std::vector<std::vector<std::byte>> after(mem.size());
  for (size_t r = 0; r < mem.size(); ++r) {
    after[r].resize(mem[r].bytes);
    if (mem[r].bytes) dev.download(after[r].data(), dbuf[r], mem[r].bytes);
  }
  return after;
}

}  // namespace

InterpreterOnly::InterpreterOnly(const char* why) : prev_(g_interpreter_only) { g_interpreter_only = why; }
InterpreterOnly::~InterpreterOnly() { g_interpreter_only = prev_; }

GpuUnspecified::GpuUnspecified(const char* why, Skip skip) : prev_(g_unspecified), why_(why), skip_(std::move(skip)) {
  g_unspecified = this;
}
GpuUnspecified::~GpuUnspecified() { g_unspecified = prev_; }


void run_checked_on_gpu(const Function& f, Grid grid, std::span<const ArgValue> args,
                        std::span<const MemRegion> mem) {
  std::vector<std::vector<std::byte>> before(mem.size());
  for (size_t r = 0; r < mem.size(); ++r) {
    const auto* p = static_cast<const std::byte*>(mem[r].base);
    before[r].assign(p, p + mem[r].bytes);
  }
  tessel::interp::run(f, grid, args, mem);  // throws for the tests of interpreter errors
  if (g_interpreter_only) {
    MESSAGE("interpreter only (" << g_interpreter_only << "): " << f.name);
    return;
  }
  if (grid.x * grid.y * grid.z == 0) return;  // no program runs: nothing to compare
  tessel::jit::Device& dev = tessel::jit::Device::current();
  if (dev.kind() != tessel::jit::BackendKind::Cuda) {
    static bool said = false;
    if (!said || tessel_test::require_gpu()) tessel_test::skip_gpu_case("interpreter kernels on the GPU: " + dev.describe());
    else ++tessel_test::skipped_gpu_cases();
    said = true;
    return;
  }
  REQUIRE_MESSAGE(!overlapping(mem), "kernel " << f.name << ": overlapping memory regions are not mirrored on the GPU");
  // What each region holds, from the pointer parameters that point into it.
  std::vector<BufferView> views(mem.size());
  for (size_t r = 0; r < mem.size(); ++r) views[r].region = r;
  for (size_t i = 0; i < args.size() && i < f.body.args.size(); ++i) {
    const DType d = f.body.args[i]->type.dtype;
    if (args[i].kind != ArgValue::Pointer || !d.ptr) continue;
    int r = region_of(args[i].addr, mem);
    if (r >= 0 && !views[r].typed) views[r] = BufferView{static_cast<size_t>(r), DType{d.scalar, false}, true};
  }
  // The GPU compiles what the JIT compiles: the IR after the generic passes (a copy, parsed
  // back from the printed text, so the test's own Function is left as it is).
  std::unique_ptr<Function> copy = tessel::ir::parse(tessel::ir::print(f));
  tessel::ir::run_pipeline(*copy, tessel::ir::default_passes(), {});
  std::shared_ptr<const Function> fin(std::move(copy));
  for (int warps : {1, 4}) {
    std::vector<std::vector<std::byte>> gpu = run_gpu(dev, fin, warps, grid, args, mem, before);
    for (size_t r = 0; r < mem.size(); ++r) {
      if (!mem[r].writable) continue;
      const auto* p = static_cast<const std::byte*>(mem[r].base);
      std::vector<std::byte> ref(p, p + mem[r].bytes);
      std::string diff = compare(gpu[r], ref, views[r], f);
      if (!diff.empty())
        FAIL_CHECK("kernel '" << f.name << "' (num_warps " << warps << ", grid " << grid.x << "x" << grid.y << "x"
                              << grid.z << "): buffer " << r << " differs from the interpreter\n"
                              << diff << "  IR:\n" << tessel::ir::print(f));
    }
  }
}

}  // namespace interp_test
