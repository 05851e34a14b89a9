// tessel_production: loads a kernel bundle with tessel::runtime alone, times it, checks every kernel.
//
//   tessel_production BUNDLE [--from-memory] [--sizes 1,4097,65536,1000003] [--seed N] [--require-gpu]
//
// Opens BUNDLE (a directory or single file written by `tessel export`), verifies its checksums,
// then on the GPU times the first launch of each kernel it knows (bundle open + first launches
// is the production start-up cost) and checks every kernel against a host reference at each
// size, with aligned inputs and (where the size is a multiple of 16) misaligned ones, so both
// the div16 and the generic variant run. Elementwise kernels take n elements; row kernels
// (softmax, layernorm_f32) n elements as rows x cols, cols <= BLOCK. Without a CUDA driver it prints SKIPPED and exits 0
// (1 with --require-gpu). Exit codes: 0 pass or skipped, 1 usage or bundle error, 2 internal
// error, 3 a check failed. --from-memory reads the single-file BUNDLE into a buffer and opens
// every bundle from those bytes (Bundle::open_borrowed), as a program that embeds its kernels
// in its own binary does; everything after the open is the same.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "host_check.hpp"
#include "tessel/ir/philox.hpp"  // header only: the rand() stream the dropout references need
#include "tessel/runtime/bundle.hpp"

namespace tessel::production {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// A device array whose address is 16-byte aligned, or deliberately 4 bytes past alignment.
struct Arr {
  rt::DeviceBuffer buf;
  CUdeviceptr ptr = 0;
  static Arr input(const std::vector<float>& h, bool misalign) {
    Arr a;
    a.buf = rt::DeviceBuffer(h.size() * 4 + 16);
    a.ptr = a.buf.ptr() + (misalign ? 4 : 0);
    if (!h.empty()) a.buf.upload(h.data(), h.size() * 4, misalign ? 4 : 0);
    return a;
  }
  static Arr output(size_t n, bool misalign) {
    Arr a;
    a.buf = rt::DeviceBuffer((n + 16) * 4 + 16);
    a.buf.fill_u32(kPoison);
    a.ptr = a.buf.ptr() + (misalign ? 4 : 0);
    return a;
  }
  // The output's first n floats and the guard zone after them, compared with `ref`.
  Check compare(std::span<const double> ref, double atol, double rtol) const {
    std::vector<float> all(buf.size() / 4);
    buf.download(all);
    const size_t skip = (ptr - buf.ptr()) / 4;
    return production::compare(std::span<const float>(all).subspan(skip), ref, atol, rtol);
  }
};

// One prepared launch: buffers filled, reference known.
struct Run {
  std::function<void()> launch;  // enqueues the kernel once (no synchronisation)
  std::function<Check()> check;  // downloads and compares
  int variant = -1;              // the variant the launch selects
};

int32_t as_i32(size_t n) { return static_cast<int32_t>(n); }
int64_t bias_width(size_t n) { return std::max<int64_t>(1, std::min<int64_t>(static_cast<int64_t>(n), 4096)); }
rt::Dim3 grid_for(const rt::BundleKernel& k, size_t n) {
  const int64_t block = k.meta("BLOCK");
  return rt::Dim3{static_cast<unsigned>((static_cast<int64_t>(n) + block - 1) / block)};
}
double gelu(double v) { return v * 0.5 * (1.0 + std::erf(v * 0.7071067811865476)); }
double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }
bool keep(int32_t seed, size_t i, float p) { return ir::philox::rand(seed, static_cast<int32_t>(i)) > p; }

constexpr float kDropP = 0.1f;

struct Tol {
  double atol, rtol;
};

// The kernel shapes of the elementwise samples; each builds a Run for one (n, seed, alignment).
using Prepare = std::function<Run(rt::BundleKernel&, size_t n, uint64_t seed, bool misalign)>;

// (x, y, out, n): out = f(x, y)
Prepare binary(std::function<double(double, double)> f, Tol tol) {
  return [f, tol](rt::BundleKernel& k, size_t n, uint64_t seed, bool mis) {
    auto hx = random_floats(n, seed), hy = random_floats(n, seed + 1);
    auto x = std::make_shared<Arr>(Arr::input(hx, mis)), y = std::make_shared<Arr>(Arr::input(hy, mis)),
         out = std::make_shared<Arr>(Arr::output(n, mis));
    Run r;
    r.variant = k.variant_for(x->ptr, y->ptr, out->ptr, as_i32(n));
    r.launch = [&k, x, y, out, n] { k.launch(nullptr, grid_for(k, n), x->ptr, y->ptr, out->ptr, as_i32(n)); };
    r.check = [=] {
      std::vector<double> ref(n);
      for (size_t i = 0; i < n; ++i) ref[i] = f(hx[i], hy[i]);
      return out->compare(ref, tol.atol, tol.rtol);
    };
    return r;
  };
}

// (x, bias, out, n, d): out = f(x, bias[i % d])
Prepare with_bias(std::function<double(double, double)> f, Tol tol) {
  return [f, tol](rt::BundleKernel& k, size_t n, uint64_t seed, bool mis) {
    const int64_t d = bias_width(n);
    auto hx = random_floats(n, seed), hb = random_floats(d, seed + 1);
    auto x = std::make_shared<Arr>(Arr::input(hx, mis)), b = std::make_shared<Arr>(Arr::input(hb, mis)),
         out = std::make_shared<Arr>(Arr::output(n, mis));
    Run r;
    r.variant = k.variant_for(x->ptr, b->ptr, out->ptr, as_i32(n), static_cast<int32_t>(d));
    r.launch = [&k, x, b, out, n, d] {
      k.launch(nullptr, grid_for(k, n), x->ptr, b->ptr, out->ptr, as_i32(n), static_cast<int32_t>(d));
    };
    r.check = [=] {
      std::vector<double> ref(n);
      for (size_t i = 0; i < n; ++i) ref[i] = f(hx[i], hb[i % d]);
      return out->compare(ref, tol.atol, tol.rtol);
    };
    return r;
  };
}

// (x, out, n): out = f(x)
Prepare unary(std::function<double(double)> f, Tol tol) {
  return [f, tol](rt::BundleKernel& k, size_t n, uint64_t seed, bool mis) {
    auto hx = random_floats(n, seed);
    auto x = std::make_shared<Arr>(Arr::input(hx, mis)), out = std::make_shared<Arr>(Arr::output(n, mis));
    Run r;
    r.variant = k.variant_for(x->ptr, out->ptr, as_i32(n));
    r.launch = [&k, x, out, n] { k.launch(nullptr, grid_for(k, n), x->ptr, out->ptr, as_i32(n)); };
    r.check = [=] {
      std::vector<double> ref(n);
      for (size_t i = 0; i < n; ++i) ref[i] = f(hx[i]);
      return out->compare(ref, tol.atol, tol.rtol);
    };
    return r;
  };
}

// (x, out, n, s): out = f(x, s) for a scalar s
Prepare with_scalar(float s, std::function<double(double, double)> f, Tol tol) {
  return [s, f, tol](rt::BundleKernel& k, size_t n, uint64_t seed, bool mis) {
    auto hx = random_floats(n, seed);
    auto x = std::make_shared<Arr>(Arr::input(hx, mis)), out = std::make_shared<Arr>(Arr::output(n, mis));
    Run r;
    r.variant = k.variant_for(x->ptr, out->ptr, as_i32(n), s);
    r.launch = [&k, x, out, n, s] { k.launch(nullptr, grid_for(k, n), x->ptr, out->ptr, as_i32(n), s); };
    r.check = [=] {
      std::vector<double> ref(n);
      for (size_t i = 0; i < n; ++i) ref[i] = f(hx[i], s);
      return out->compare(ref, tol.atol, tol.rtol);
    };
    return r;
  };
}

// (x, out, n, p, seed): dropout
Prepare dropout() {
  return [](rt::BundleKernel& k, size_t n, uint64_t seed, bool mis) {
    auto hx = random_floats(n, seed);
    const auto dseed = static_cast<int32_t>(seed * 7919 % 100003);
    auto x = std::make_shared<Arr>(Arr::input(hx, mis)), out = std::make_shared<Arr>(Arr::output(n, mis));
    Run r;
    r.variant = k.variant_for(x->ptr, out->ptr, as_i32(n), kDropP, dseed);
    r.launch = [&k, x, out, n, dseed] { k.launch(nullptr, grid_for(k, n), x->ptr, out->ptr, as_i32(n), kDropP, dseed); };
    r.check = [=] {
      std::vector<double> ref(n);
      for (size_t i = 0; i < n; ++i) ref[i] = keep(dseed, i, kDropP) ? hx[i] / (1.0 - kDropP) : 0.0;
      return out->compare(ref, 1e-6, 1e-6);
    };
    return r;
  };
}

// (x, bias, out, n, d, p, seed): dropout(gelu(x + bias[i % d]))
Prepare bias_gelu_dropout() {
  return [](rt::BundleKernel& k, size_t n, uint64_t seed, bool mis) {
    const int64_t d = bias_width(n);
    auto hx = random_floats(n, seed), hb = random_floats(d, seed + 1);
    const auto dseed = static_cast<int32_t>(seed * 7919 % 100003);
    auto x = std::make_shared<Arr>(Arr::input(hx, mis)), b = std::make_shared<Arr>(Arr::input(hb, mis)),
         out = std::make_shared<Arr>(Arr::output(n, mis));
    Run r;
    r.variant = k.variant_for(x->ptr, b->ptr, out->ptr, as_i32(n), static_cast<int32_t>(d), kDropP, dseed);
    r.launch = [&k, x, b, out, n, d, dseed] {
      k.launch(nullptr, grid_for(k, n), x->ptr, b->ptr, out->ptr, as_i32(n), static_cast<int32_t>(d), kDropP, dseed);
    };
    r.check = [=] {
      std::vector<double> ref(n);
      for (size_t i = 0; i < n; ++i)
        ref[i] = keep(dseed, i, kDropP) ? gelu(static_cast<double>(hx[i]) + hb[i % d]) / (1.0 - kDropP) : 0.0;
      return out->compare(ref, 1e-5, 1e-5);
    };
    return r;
  };
}

// Row kernels (one program per row, the row in one BLOCK-wide tile): n elements as rows x cols
// with cols <= BLOCK; a multiple of 16 keeps cols (the stride) a multiple of 16 too.
struct RowShape {
  size_t rows, cols;
};
RowShape row_shape(const rt::BundleKernel& k, size_t n) {
  const auto block = static_cast<size_t>(k.meta("BLOCK"));
  const size_t cols = std::min(n, n % 16 == 0 ? block : std::min<size_t>(block, 1000));
  return {(n + cols - 1) / cols, cols};
}

Check merge(Check a, const Check& b) {
  if (!b.ok && a.ok) a.first = b.first;
  a.ok = a.ok && b.ok;
  a.mismatches += b.mismatches;
  a.max_abs_err = std::max(a.max_abs_err, b.max_abs_err);
  return a;
}

// softmax(x, out, cols, x_stride, out_stride): out[row] = softmax(x[row])
Prepare softmax() {
  return [](rt::BundleKernel& k, size_t n, uint64_t seed, bool mis) {
    const RowShape s = row_shape(k, n);
    auto hx = random_floats(s.rows * s.cols, seed, -4.0f, 4.0f);
    auto x = std::make_shared<Arr>(Arr::input(hx, mis)), out = std::make_shared<Arr>(Arr::output(hx.size(), mis));
    const auto cols = static_cast<int32_t>(s.cols);
    Run r;
    r.variant = k.variant_for(x->ptr, out->ptr, cols, cols, cols);
    r.launch = [&k, x, out, s, cols] {
      k.launch(nullptr, rt::Dim3{static_cast<unsigned>(s.rows)}, x->ptr, out->ptr, cols, cols, cols);
    };
    r.check = [=] {
      std::vector<double> ref(hx.size());
      for (size_t row = 0; row < s.rows; ++row) {
        const float* v = &hx[row * s.cols];
        double mx = -INFINITY, sum = 0;
        for (size_t c = 0; c < s.cols; ++c) mx = std::max<double>(mx, v[c]);
        for (size_t c = 0; c < s.cols; ++c) sum += std::exp(v[c] - mx);
        for (size_t c = 0; c < s.cols; ++c) ref[row * s.cols + c] = std::exp(v[c] - mx) / sum;
      }
      return out->compare(ref, 1e-6, 2e-5);
    };
    return r;
  };
}

// layernorm_f32(x, w, b, y, mean, rstd, cols, stride, eps): y = (x - mean) * rstd * w + b per row
Prepare layernorm_f32() {
  return [](rt::BundleKernel& k, size_t n, uint64_t seed, bool mis) {
    const RowShape s = row_shape(k, n);
    constexpr float kEps = 1e-5f;
    auto hx = random_floats(s.rows * s.cols, seed, -1.0f, 5.0f);  // a nonzero mean to subtract
    auto hw = random_floats(s.cols, seed + 1, 0.5f, 1.5f), hb = random_floats(s.cols, seed + 2, -1.0f, 1.0f);
    auto x = std::make_shared<Arr>(Arr::input(hx, mis)), w = std::make_shared<Arr>(Arr::input(hw, mis)),
         b = std::make_shared<Arr>(Arr::input(hb, mis)), y = std::make_shared<Arr>(Arr::output(hx.size(), mis)),
         mean = std::make_shared<Arr>(Arr::output(s.rows, mis)), rstd = std::make_shared<Arr>(Arr::output(s.rows, mis));
    const auto cols = static_cast<int32_t>(s.cols);
    Run r;
    r.variant = k.variant_for(x->ptr, w->ptr, b->ptr, y->ptr, mean->ptr, rstd->ptr, cols, cols, kEps);
    r.launch = [&k, x, w, b, y, mean, rstd, s, cols] {
      k.launch(nullptr, rt::Dim3{static_cast<unsigned>(s.rows)}, x->ptr, w->ptr, b->ptr, y->ptr, mean->ptr, rstd->ptr,
               cols, cols, kEps);
    };
    r.check = [=] {
      std::vector<double> ry(hx.size()), rmean(s.rows), rrstd(s.rows);
      for (size_t row = 0; row < s.rows; ++row) {
        const float* v = &hx[row * s.cols];
        double m = 0, var = 0;
        for (size_t c = 0; c < s.cols; ++c) m += v[c];
        m /= static_cast<double>(s.cols);
        for (size_t c = 0; c < s.cols; ++c) var += (v[c] - m) * (v[c] - m);
        const double rs = 1.0 / std::sqrt(var / static_cast<double>(s.cols) + kEps);
        for (size_t c = 0; c < s.cols; ++c) ry[row * s.cols + c] = (v[c] - m) * rs * hw[c] + hb[c];
        rmean[row] = m;
        rrstd[row] = rs;
      }
      return merge(merge(y->compare(ry, 1e-4, 1e-4), mean->compare(rmean, 1e-4, 1e-4)),
                   rstd->compare(rrstd, 1e-4, 1e-4));
    };
    return r;
  };
}

// Every sample kernel this program has a host reference for (names as registered by tessel).
const std::map<std::string, Prepare>& known_kernels() {
  static const std::map<std::string, Prepare> m = {
      {"add", binary([](double x, double y) { return x + y; }, {1e-7, 1.2e-7})},
      {"chain5", binary([](double x, double y) { return sigmoid(std::max(0.0, (x + y) * 2.0) - 1.0); }, {1e-6, 1e-5})},
      {"scale_bias_relu", with_bias([](double x, double b) { return std::max(0.0, 2.0 * x + b); }, {1e-6, 2.4e-7})},
      {"bias_add", with_bias([](double x, double b) { return x + b; }, {1e-7, 1.2e-7})},
      {"relu", unary([](double x) { return std::max(0.0, x); }, {0, 0})},
      {"sigmoid", unary(sigmoid, {1e-6, 1e-5})},
      {"gelu", unary(gelu, {1e-5, 1e-5})},
      {"scale", with_scalar(1.5f, [](double x, double s) { return x * s; }, {1e-7, 1.2e-7})},
      {"add_scalar", with_scalar(-0.75f, [](double x, double c) { return x + c; }, {1e-7, 1.2e-7})},
      {"dropout", dropout()},
      {"bias_gelu_dropout", bias_gelu_dropout()},
      {"softmax", softmax()},
      {"layernorm_f32", layernorm_f32()},
  };
  return m;
}

struct Args {
  std::string bundle;
  std::vector<size_t> sizes{1, 4097, 65536, 1000003};
  uint64_t seed = 1;
  bool require_gpu = false;
  bool from_memory = false;
};

constexpr const char* kUsage =
    "usage: tessel_production BUNDLE [--from-memory] [--sizes 1,4097,65536,1000003] [--seed N] [--require-gpu]";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(s + " needs a value");
      return argv[++i];
    };
    if (s == "--sizes") {
      a.sizes.clear();
      std::string v = value();
      for (size_t pos = 0; pos <= v.size();) {
        size_t comma = std::min(v.find(',', pos), v.size());
        try {
          a.sizes.push_back(std::stoull(v.substr(pos, comma - pos)));
        } catch (const std::exception&) {
          throw UsageError("--sizes takes comma-separated element counts, got '" + v + "'");
        }
        if (a.sizes.back() == 0 || a.sizes.back() > (size_t{1} << 30)) throw UsageError("sizes must be in 1..2^30");
        pos = comma + 1;
      }
    } else if (s == "--seed") {
      a.seed = std::stoull(value());
    } else if (s == "--require-gpu") {
      a.require_gpu = true;
    } else if (s == "--from-memory") {
      a.from_memory = true;
    } else if (s == "-h" || s == "--help") {
      throw UsageError(kUsage);
    } else if (!s.empty() && s[0] == '-') {
      throw UsageError("unknown option " + s);
    } else if (a.bundle.empty()) {
      a.bundle = s;
    } else {
      throw UsageError("one bundle only");
    }
  }
  if (a.bundle.empty()) throw UsageError(kUsage);
  return a;
}

// Where the bundle comes from: its path, or (--from-memory) the bytes of the single file read
// into `bytes` first. Those stand for an array embedded in the program (docs/production.md shows
// how to make one): open_borrowed reads them in place, so `bytes` must outlive every Bundle
// opened from it; Bundle::open(bytes) would copy them instead.
struct BundleSource {
  std::string path;
  std::optional<std::string> bytes;

  static BundleSource of(const Args& a) {
    BundleSource src{a.bundle, std::nullopt};
    if (a.from_memory) {
      src.bytes = rt::read_file_bytes(a.bundle);
      if (!src.bytes)
        throw UsageError("--from-memory: cannot read " + a.bundle +
                         " as one file (it takes the single-file bundle, `tessel export --pack`)");
    }
    return src;
  }
  rt::Bundle open() const {
    if (!bytes) return rt::Bundle::open(path);
    return rt::Bundle::open_borrowed(std::as_bytes(std::span(*bytes)), path + " (in memory)");
  }
};

std::string loaded_image(const rt::BundleKernel& k, int variant) {
  if (variant < 0) return "-";
  auto l = k.loaded(static_cast<size_t>(variant));
  if (!l) return "(not loaded)";
  std::string s = fmt::format("{} {} ({:.2f} ms to read, check, load)", l->kind == rt::ImageKind::Cubin ? "cubin" : "PTX",
                              l->file, l->load_ms);
  if (!l->note.empty()) s += "; " + l->note;
  return s;
}

int run(const Args& a) {
  // Declared first so it is destroyed last: modules unload while their context still exists.
  std::optional<rt::Context> ctx;
  // Before every Bundle: with --from-memory, the bytes they read images from.
  const BundleSource source = BundleSource::of(a);
  // 1. The bundle, without touching the GPU.
  auto t0 = Clock::now();
  rt::Bundle bundle = source.open();
  const double open_ms = ms_since(t0);
  const rt::BundleManifest& m = bundle.manifest();
  size_t images = 0;
  for (const auto& k : m.kernels)
    for (const auto& v : k.variants) images += v.images.size();
  fmt::print("bundle:  {} ({}, {} kernels, {} images, tessel {})\n", bundle.origin(),
             source.bytes ? fmt::format("single file, {} bytes", source.bytes->size())
                          : bundle.packed() ? "single file" : "directory",
             m.kernels.size(), images, m.tessel_version);
  fmt::print("open:    {:.3f} ms (bundle.json parsed and validated, image sizes checked)\n", open_ms);
  t0 = Clock::now();
  bundle.verify();
  fmt::print("verify:  {:.3f} ms (every image's sha256)\n", ms_since(t0));

  // 2. The GPU, if there is one.
  rt::Driver& driver = rt::Driver::get();
  if (!driver.available()) {
    fmt::print("SKIPPED: no usable CUDA driver ({}); the bundle itself is intact\n", driver.unavailable_reason());
    return a.require_gpu ? 1 : 0;
  }
  t0 = Clock::now();
  ctx.emplace(0);
  const double ctx_ms = ms_since(t0);
  fmt::print("device:  {} (sm_{}), driver {}; context {:.1f} ms (driver initialisation: not counted below)\n",
             ctx->device().name(), ctx->device().sm_arch(), driver.version(), ctx_ms);

  // 3. Start-up cost: a freshly opened bundle, then the first launch of each kernel it has.
  std::vector<std::string> runnable, unknown;
  for (const auto& k : m.kernels) (known_kernels().count(k.name) ? runnable : unknown).push_back(k.name);
  for (const auto& name : unknown) fmt::print("note:    kernel '{}' has no host reference here; not run\n", name);
  fmt::print("first launch of each kernel (n = 4097; reading and checking the image, loading the module, launching):\n");
  {
    t0 = Clock::now();
    rt::Bundle timed = source.open();  // a fresh instance: nothing loaded yet
    double total = ms_since(t0);
    std::vector<Run> runs;
    for (const auto& name : runnable) {
      rt::BundleKernel& k = timed.kernel(name);
      runs.push_back(known_kernels().at(name)(k, 4097, a.seed, false));  // buffers: not timed
      const auto t1 = Clock::now();
      runs.back().launch();
      const double launch_ms = ms_since(t1);
      total += launch_ms;
      fmt::print("  {:<20} {:7.3f} ms  {}\n", name, launch_ms, loaded_image(k, runs.back().variant));
    }
    t0 = Clock::now();
    ctx->synchronize();
    total += ms_since(t0);
    fmt::print("start-up: bundle open + first launch of {} kernels + synchronize: {:.2f} ms (issue 5 target: < 20 ms "
               "for 10 kernels)\n",
               runnable.size(), total);
    for (size_t i = 0; i < runs.size(); ++i) {
      Check c = runs[i].check();
      if (!c.ok) {
        fmt::print("FAILED: {} n=4097 (first launch): {}\n", runnable[i], c.first);
        return 3;
      }
    }
  }

  // 4. Correctness: every kernel, every size, aligned and (for multiples of 16) misaligned.
  int checks = 0, failures = 0;
  fmt::print("checks against host references (outputs poisoned, 16-element guard zone):\n");
  for (const auto& name : runnable) {
    rt::BundleKernel& k = bundle.kernel(name);
    for (size_t n : a.sizes)
      for (bool mis : {false, true}) {
        if (mis && n % 16 != 0) continue;
        Run r = known_kernels().at(name)(k, n, a.seed + n, mis);
        r.launch();
        ctx->synchronize();
        Check c = r.check();
        ++checks;
        failures += c.ok ? 0 : 1;
        fmt::print("  {:<20} n={:<8} {:<10} variant {:<8} {}  max|err| {:.3g}{}\n", name, n,
                   mis ? "misaligned" : "aligned", r.variant >= 0 ? k.info().variants[r.variant].name : "-",
                   c.ok ? "PASS" : "FAIL", c.max_abs_err,
                   c.ok ? "" : fmt::format(" ({} bad; first: {})", c.mismatches, c.first));
      }
  }
  for (const auto& name : runnable) {
    const rt::BundleKernel& k = bundle.kernel(name);
    for (size_t v = 0; v < k.info().variants.size(); ++v)
      if (k.loaded(v)) fmt::print("loaded:  {}.{}: {}\n", name, k.info().variants[v].name, loaded_image(k, static_cast<int>(v)));
  }
  if (failures) {
    fmt::print("RESULT: FAILED ({} of {} checks)\n", failures, checks);
    return 3;
  }
  fmt::print("RESULT: PASS ({} checks of {} kernels)\n", checks, runnable.size());
  return 0;
}

}  // namespace
}  // namespace tessel::production

int main(int argc, char** argv) {
  using namespace tessel;
  try {
    return production::run(production::parse_args(argc, argv));
  } catch (const production::UsageError& e) {
    fmt::print(stderr, "tessel_production: {}\n", e.what());
    return 1;
  } catch (const rt::BundleError& e) {
    fmt::print(stderr, "tessel_production: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessel_production: internal error: {}\n", e.what());
    return 2;
  }
}
