// The GPU-versus-interpreter comparison shared by tests/interp_gpu and tests/fuzz (see gpu_compare.hpp).
#include "gpu_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "tessel/interp/float_formats.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/passes.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/jit/executable.hpp"

namespace tessel_test::gpu_compare {

using tessel::interp::ArgValue;
using tessel::interp::Grid;
using tessel::interp::MemRegion;
using tessel::ir::DType;
using tessel::ir::Function;
using tessel::ir::Op;
using tessel::ir::OpKind;
using tessel::ir::Scalar;

namespace {

double eps_of(Scalar s) {
  switch (s) {
    case Scalar::f16: return 0x1p-10;
    case Scalar::bf16: return 0x1p-7;
    case Scalar::f64: return 0x1p-52;
    case Scalar::f8e4m3: return 0x1p-3;
    case Scalar::f8e5m2: return 0x1p-2;
    default: return 0x1p-23;
  }
}

double read_float(const std::byte* p, Scalar s) {
  switch (s) {
    case Scalar::f16: { uint16_t h; std::memcpy(&h, p, 2); return tessel::interp::f16_to_double(h); }
    case Scalar::bf16: { uint16_t h; std::memcpy(&h, p, 2); return tessel::interp::bf16_to_double(h); }
    case Scalar::f32: { float v; std::memcpy(&v, p, 4); return v; }
    case Scalar::f8e4m3: return tessel::interp::f8e4m3_to_double(static_cast<uint8_t>(*p));
    case Scalar::f8e5m2: return tessel::interp::f8e5m2_to_double(static_cast<uint8_t>(*p));
    default: { double v; std::memcpy(&v, p, 8); return v; }
  }
}

double smallest_normal(Scalar s) {
  switch (s) {
    case Scalar::f16: return 0x1p-14;
    case Scalar::bf16: case Scalar::f32: return 0x1p-126;
    case Scalar::f8e4m3: return 0x1p-6;
    case Scalar::f8e5m2: return 0x1p-14;
    default: return 0x1p-1022;
  }
}

}  // namespace

Tolerance tolerance_for(const Function& f, Scalar s) {
  const double e = eps_of(s);
  Tolerance t{4 * e, 4 * e};
  bool approx = false, reorder = false, tf32 = false, fp8_dot = false;
  tessel::ir::walk(f.body, [&](const Op& op) {
    // f64 math is computed in f64 on the GPU (f64_math.hpp, erf libdevice's: lower_math.cpp).
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
        for (const tessel::ir::Attr& a : op.attrs)
          if (a.name == "allow_tf32" && std::get<int64_t>(a.value) != 0) tf32 = true;
        fp8_dot = fp8_dot || op.operands[0]->type.dtype.is_fp8();
        break;
      default: break;
    }
  });
  if (approx) {
    const double a = s == Scalar::f64 ? 1e-13 : s == Scalar::f32 ? 0x1p-16 : 2 * e;
    t.rtol = std::max(t.rtol, a), t.atol = std::max(t.atol, a);
  }
  if (reorder) {
    // fp8 tensor cores add with fewer bits than f32 (Hopper keeps about 14 through a k32 step).
    const double a = tf32 || fp8_dot ? 0x1p-9 : s == Scalar::f64 ? 1e-12 : s == Scalar::f32 ? 0x1p-14 : 32 * e;
    t.atol = std::max(t.atol, a);
    t.rtol = std::max(t.rtol, s == Scalar::f32 && !tf32 && !fp8_dot ? 0x1p-16 : a);
  }
  // fp8 values come from casts (no arithmetic on them), which round exactly alike on both.
  if (tessel::ir::is_fp8(s) && !approx && !reorder) t = Tolerance{0, 0};
  return t;
}

std::vector<BufferView> buffer_views(const Function& f, std::span<const ArgValue> args, std::span<const MemRegion> mem) {
  std::vector<BufferView> views(mem.size());
  for (size_t r = 0; r < mem.size(); ++r) views[r].region = r;
  for (size_t i = 0; i < args.size() && i < f.body.args.size(); ++i) {
    const DType d = f.body.args[i]->type.dtype;
    if (args[i].kind != ArgValue::Pointer || !d.ptr) continue;
    int r = region_of(args[i].addr, mem);
    if (r >= 0 && !views[r].typed) views[r] = BufferView{static_cast<size_t>(r), DType{d.scalar, false}, true};
  }
  return views;
}

std::string compare(const std::vector<std::byte>& gpu, const std::vector<std::byte>& ref, const BufferView& v,
                    const Tolerance& t, const Skip& skip, size_t max_listed) {
  const size_t es = v.typed ? static_cast<size_t>(v.elem.bytes()) : 1;
  const size_t n = ref.size() / es;
  std::ostringstream out;
  size_t bad = 0;
  auto report = [&](size_t i, const std::string& g, const std::string& r) {
    if (bad++ < max_listed) out << "    element " << i << ": gpu " << g << ", interpreter " << r << "\n";
  };
  auto unspecified = [&](size_t i) { return skip && skip(v.region, i); };
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
    double max_abs = 0;
    for (size_t i = 0; i < n; ++i) {
      if (unspecified(i)) continue;
      double r = read_float(ref.data() + i * es, s);
      if (std::isfinite(r)) max_abs = std::max(max_abs, std::fabs(r));
    }
    const double slack = t.normal_slack ? smallest_normal(s) : 0.0;
    for (size_t i = 0; i < n; ++i) {
      if (unspecified(i)) continue;
      const double g = read_float(gpu.data() + i * es, s), r = read_float(ref.data() + i * es, s);
      bool ok;
      if (std::isnan(r) || std::isnan(g)) ok = std::isnan(r) && std::isnan(g);
      else if (std::isinf(r) || std::isinf(g)) ok = g == r;
      else ok = std::fabs(g - r) <= t.rtol * std::fabs(r) + t.atol * max_abs + t.abs + slack;
      if (!ok) {
        std::ostringstream gs, rs;
        gs.precision(9), rs.precision(9);
        gs << g, rs << r;
        report(i, gs.str(), rs.str());
      }
    }
    if (bad) {
      out << "    (bound: " << t.rtol << " * |interp| + " << t.atol << " * " << max_abs;
      if (t.abs != 0) out << " + " << t.abs;
      out << ")\n";
    }
  }
  if (!bad) return "";
  return "  " + std::to_string(bad) + " of " + std::to_string(n) + " elements differ:\n" + out.str();
}

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

std::vector<std::vector<std::byte>> snapshot(std::span<const MemRegion> mem) {
  std::vector<std::vector<std::byte>> out(mem.size());
  for (size_t r = 0; r < mem.size(); ++r) {
    const auto* p = static_cast<const std::byte*>(mem[r].base);
    out[r].assign(p, p + mem[r].bytes);
  }
  return out;
}

std::shared_ptr<const Function> as_jit_compiles(const Function& f) {
  std::unique_ptr<Function> copy = tessel::ir::parse(tessel::ir::print(f));
  tessel::ir::run_pipeline(*copy, tessel::ir::default_passes(), {});
  return std::shared_ptr<const Function>(std::move(copy));
}

std::vector<std::vector<std::byte>> run_compiled(tessel::jit::Device& dev, tessel::jit::Executable& exe, Grid grid,
                                                 std::span<const ArgValue> args, std::span<const MemRegion> mem,
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
  exe.launch(tessel::jit::Grid{static_cast<uint32_t>(grid.x), static_cast<uint32_t>(grid.y),
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

std::vector<std::vector<std::byte>> run_gpu(tessel::jit::Device& dev, const std::shared_ptr<const Function>& fin,
                                            const tessel::jit::CompileOptions& opts, Grid grid,
                                            std::span<const ArgValue> args, std::span<const MemRegion> mem,
                                            const std::vector<std::vector<std::byte>>& before) {
  auto exe = dev.compile(fin, opts);
  return run_compiled(dev, *exe, grid, args, mem, before);
}

}  // namespace tessel_test::gpu_compare
