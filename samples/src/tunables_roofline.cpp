// The roofline probes as tunables, and measuring the device's ceilings with them: bandwidth
// (copy), f32 FMA compute (FMA chain) and the tensor-core ceiling per dtype (dot probes,
// tunables_roofline_dot.cpp).
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <stdexcept>

#include "tessel/samples/roofline_kernels.hpp"
#include "tunable_support.hpp"
#include "tunables_roofline_dot.hpp"

namespace tessel::samples {
namespace {
// The dot probes' M = N = K when measure_roofline runs at a test size (the interpreter).
constexpr int64_t kTinyDot = 64;
}  // namespace

namespace tunable {
namespace {
using jit::Array;
using jit::Grid;

struct Buffers {
  explicit Buffers(int64_t n_) : n(n_), x(big_random(n_, 1, -2, 2)), out(n_) {}
  int64_t n;
  Array<float> x, out;
};

// The FMA probe's output: ITERS dependent f32 FMAs of each input, exactly as the GPU rounds them.
jit::tune::Expected fma_chain_expected(const std::vector<float>& x) {
  const int64_t iters = k_fma_chain.defaults()["ITERS"];
  return sampled_reference(
      x.size(),
      [&](size_t i) {
        float v = x[i];
        for (int64_t j = 0; j < iters; ++j) v = std::fma(v, 0.999f, 0.001f);
        return static_cast<double>(v);
      },
      size_t{1} << 16);
}

// A probe's host reference: out = x for the copy, the FMA chain for the other; both exact.
template <class K>
std::function<jit::tune::Expected()> probe_reference(K& k, const std::shared_ptr<Buffers>& b) {
  if (&k == &k_fma_chain) return [b] { return fma_chain_expected(b->x.download()); };
  return [b] {
    const auto x = b->x.download();
    return sampled_reference(x.size(), [&](size_t i) { return static_cast<double>(x[i]); });
  };
}

template <class K>
Tunable probe(std::string name, std::string description, K& k, std::vector<Config> space, int64_t size,
              double bytes_per_element, double flops_per_element) {
  Tunable t;
  t.name = name;
  t.kernel = name;
  t.description = std::move(description);
  t.size_names = {"n"};
  t.sizes = {SizeArgs{{size}}};
  t.configs = [space](const SizeArgs&) { return space; };
  t.default_config = [](const SizeArgs&) { return block_config(1024, 4); };
  t.key = jit::tune::KeySpec{{{"n", jit::tune::Bucket::PowerOfTwo}}};
  t.group = name;
  t.probe = true;
  t.make_problem = [t, &k, bytes_per_element, flops_per_element](const SizeArgs& s) {
    const int64_t n = s.dims[0];
    auto b = std::make_shared<Buffers>(n);
    Problem p = problem_of(t, s, k);
    p.compile = [b, &k](const Config& c) { compile_for(k, c, b->x, b->out, b->n); };
    p.launch = [b, &k](const Config& c) {
      k.launch(Grid{jit::cdiv(b->n, block_of(k, c))}, c.meta, c.opts, b->x, b->out, b->n);
    };
    const size_t samples = &k == &k_fma_chain ? size_t{1} << 16 : size_t{1} << 20;
    p.output = [b, samples] { return sample_values(b->out.download(), [](float v) { return double{v}; }, samples); };
    p.poison = [b] { b->out.poison(); };
    p.reference = probe_reference(k, b);
    p.rtol = p.atol = 0;
    p.bytes = bytes_per_element * static_cast<double>(n);
    p.flops = flops_per_element * static_cast<double>(n);
    return p;
  };
  return t;
}

}  // namespace

std::vector<Tunable> probe_tunables() {
  const double iters = static_cast<double>(k_fma_chain.defaults()["ITERS"]);
  std::vector<Tunable> out{
      probe("roofline_copy", "bandwidth probe: out = x, 512 MiB each way (far beyond any L2)", k_copy,
            block_warps({1024, 2048, 4096, 8192}, {4, 8}), int64_t{1} << 27, 8, 0),
      probe("roofline_fma", fmt::format("compute probe: {} dependent f32 FMAs per element", iters), k_fma_chain,
            block_warps({256, 512, 1024, 2048}, {4, 8}), int64_t{1} << 24, 8, 2 * iters),
  };
  for (Tunable& t : dot_probe_tunables()) out.push_back(std::move(t));
  return out;
}

}  // namespace tunable

namespace {
// One probe tuned at `size`: its problem (bytes, flops) and the best config's median time in ms,
// 0 when no config ran (`why` then says why).
struct ProbeRun {
  jit::tune::Problem problem;
  double ms = 0;
  std::string why;
};
ProbeRun run_probe(const Tunable& t, const SizeArgs& size, jit::tune::Timer& timer,
                   const jit::tune::TuneOptions& opts) {
  ProbeRun run{t.make_problem(size), 0, {}};
  jit::tune::TuneReport r = jit::tune::tune(run.problem, t.configs(size), timer, opts);
  if (r.found && !r.ranked.empty()) run.ms = r.ranked.front().timing.median_ms;
  else run.why = r.ranked.empty() ? "no configs" : r.ranked.front().reason;
  return run;
}
}  // namespace

report::Roofline measure_roofline(jit::tune::Timer& timer, const jit::tune::TuneOptions& opts, int64_t elements) {
  report::Roofline roof;
  for (const char* name : {"roofline_copy", "roofline_fma"}) {
    const Tunable* t = find_tunable(name);
    ProbeRun run = run_probe(*t, elements > 0 ? SizeArgs{{elements}} : t->sizes.front(), timer, opts);
    if (run.ms <= 0) throw std::runtime_error(fmt::format("roofline probe {}: no config ran ({})", name, run.why));
    if (run.problem.flops > 0) roof.compute_gflops = report::gflops(run.problem.flops, run.ms);
    else roof.bandwidth_gbs = report::gbs(run.problem.bytes, run.ms);
  }
  // The tensor-core ceilings: a dtype whose probe ran no config (a card without its dots) has
  // none, and its matmuls are drawn against the FMA roof.
  for (const tunable::DotProbe& d : tunable::dot_probes()) {
    const Tunable* t = find_tunable(d.name);
    const SizeArgs size = elements > 0 ? SizeArgs{{kTinyDot, kTinyDot, kTinyDot}} : t->sizes.front();
    ProbeRun run = run_probe(*t, size, timer, opts);
    if (run.ms > 0) roof.tensor.push_back({d.dtype, report::gflops(run.problem.flops, run.ms)});
  }
  return roof;
}

}  // namespace tessel::samples
