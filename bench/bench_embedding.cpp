// tessel inside a caller's CUDA program (issue 22): what a launch costs on a stream the caller
// made, and what a CUDA graph captured from tessel launches costs to replay, each against raw
// cuLaunchKernel of the same machine code on the same stream.
//   1. Host cost per launch: a tiny `add` (one program of 1024 elements) launched with
//      k(grid, meta, stream, args...) on the caller's CUstream, against cuLaunchKernel of the
//      same function. Target: tessel at most 1.1x raw.
//   2. Graph replay: 10 dependent launches (add, scale, add, ... each into its own buffer) captured
//      with cuStreamBeginCapture on the caller's stream, once through tessel (LaunchOptions) and
//      once as raw cuLaunchKernel calls; each graph must hold exactly 10 kernel nodes (nothing
//      else captured), and the replayed results must match a host reference. Target: a
//      replayed tessel kernel at most 1.2x a replayed raw one.
// "The same function": after tessel's first launch of a variant, its IR is lowered again through
// the cache API (cache::compile_entry, same target, same key); the disk cache entry under that
// key (what tessel loaded) gives the image when the cache is on, else the PTX is linked by the
// driver as tessel links it. Either way it is loaded with rt::Module into the primary context.
// The caller's side is played as a CUDA runtime program would: the device's primary context is
// current on the thread and the stream is the caller's own (cuStreamCreate, non-blocking).
// Writes JSON (argv[1], default $OUT/bench_embedding.json, else ./bench_embedding.json) and a
// table on stdout. Without a GPU it says so, writes {"skipped": true, ...} and exits 0, unless
// TESSEL_REQUIRE_GPU=1 (as bench/gpu_run.sh sets), which makes that a failure. Exits 1 when a
// result is wrong or a graph holds other than 10 kernel nodes; a missed timing target is reported,
// not an error (timings are noisy; the figures go to bench/RESULTS.md).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/jit/cache.hpp"
#include "tessel/runtime/runtime.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kLaunchTarget = 1.1;  // tessel / raw host time per launch call
constexpr double kGraphTarget = 1.2;   // tessel / raw time per replayed kernel
constexpr int kGraphKernels = 10;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else out += c;
  }
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path);
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Why kernels would not run on a GPU here ("" when they do).
std::string no_gpu_reason() {
  std::string why = jit::Device::gpu_unavailable_reason();
  if (why.empty() && env_flag("TESSEL_INTERPRET")) why = "TESSEL_INTERPRET=1 asks for the CPU interpreter";
  return why;
}

// The target tessel compiles for on `dev` ("sm_90a" on Hopper), from its description ("...,
// code for sm_90a"); the device's own architecture if the description lacks it.
std::string code_target(const jit::Device& dev) {
  const std::string d = dev.describe();
  const size_t at = d.rfind("code for ");
  return at == std::string::npos ? dev.arch() : d.substr(at + 9);
}

// A variant of a tessel kernel loaded by hand: the same PTX/cubin tessel launches.
struct RawKernel {
  rt::Module module;
  rt::Function fn;
  unsigned threads = 0, shared = 0;
  std::string source;  // "cache" (the entry tessel loaded) or "relinked" (our PTX, the driver's linker)

  void launch(unsigned grid, CUstream stream, void** params) const {
    rt::launch(fn, rt::Dim3{grid}, rt::Dim3{threads}, shared, stream, params);
  }
};

// How the variant's parameters are passed ("p8 p8 p8 i4": pointers, then a 4-byte integer),
// so a change in tessel's calling convention fails here instead of launching garbage.
std::string param_layout(const ir::Function& f) {
  std::string s;
  for (const ir::Value* p : f.body.args) {
    const ir::DType d = p->type.dtype;
    s += fmt::format("{}{}{}", s.empty() ? "" : " ", d.ptr ? 'p' : d.is_float() ? 'f' : 'i', d.bytes());
  }
  return s;
}

// The variant `k` launches for these arguments (meta, default CompileOptions, the arguments'
// specialisation bits), loaded into the current context. Call after tessel launched it once.
template <class K>
RawKernel load_variant(const K& k, const jit::Meta& meta, const std::vector<jit::RawArg>& args, const jit::Device& dev,
                       std::string_view layout) {
  const jit::CompileOptions opts{};
  const uint64_t bits = jit::detail::spec_bits(args.data(), args.size());
  const auto ir = k.build_ir(meta, jit::detail::specs_from_bits(bits, args.size()));
  if (param_layout(*ir) != layout)
    throw std::runtime_error(fmt::format("kernel '{}': parameters passed as '{}', the benchmark packs '{}'", k.name(),
                                         param_layout(*ir), layout));
  jit::cache::Entry e = jit::cache::compile_entry(*ir, opts, code_target(dev), /*with_cubin=*/false);
  std::string source = "relinked";
  if (std::optional<jit::cache::Entry> hit = jit::cache::fetch(jit::cache::Settings::from_env(), e.meta.key)) {
    if (hit->ptx != e.ptx)
      throw std::runtime_error(fmt::format("kernel '{}': the cache entry {} holds other PTX than this lowering",
                                           k.name(), e.meta.key));
    e = std::move(*hit);
    source = "cache";
  }
  // As tessel loads an entry: its cubin when made for this GPU, else the driver links the PTX.
  if (e.cubin.empty() || e.meta.cubin_arch != dev.arch()) {
    rt::Linker linker;
    linker.add_ptx(e.ptx, e.meta.kernel + ".ptx");
    e.cubin = linker.complete();
  }
  rt::Module m = rt::Module::load_cubin(e.cubin);
  rt::Function fn = m.get_function(e.meta.launch.symbol);  // the entry is named for the variant
  return RawKernel{std::move(m), fn, static_cast<unsigned>(e.meta.launch.threads),
                   static_cast<unsigned>(e.meta.launch.shared_bytes), std::move(source)};
}

// cuLaunchKernel's arguments for one launch: values, and pointers to them (kept together, so
// the object is filled in place and never copied).
struct Params {
  std::array<uint64_t, 4> value{};
  std::array<void*, 4> ptr{};
  Params() {
    for (size_t i = 0; i < value.size(); ++i) ptr[i] = &value[i];
  }
  Params(const Params&) = delete;
  Params& operator=(const Params&) = delete;
  void** data() { return ptr.data(); }
  // add(x, y, out, n): "p8 p8 p8 i4".
  void add(const jit::Array<float>& x, const jit::Array<float>& y, const jit::Array<float>& out, int32_t n) {
    value[0] = x.address(), value[1] = y.address(), value[2] = out.address();
    std::memcpy(&value[3], &n, 4);
  }
  // scale(x, out, n, s): "p8 p8 i4 f4".
  void scale(const jit::Array<float>& x, const jit::Array<float>& out, int32_t n, float s) {
    value[0] = x.address(), value[1] = out.address();
    std::memcpy(&value[2], &n, 4);
    std::memcpy(&value[3], &s, 4);
  }
};

// Worst |got - want| / max(1, |want|); 1 for a non-finite value (a poisoned output left unwritten).
double worst_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got[i], w = want[i];
    worst = std::max(worst, std::isfinite(g) ? std::fabs(g - w) / std::max(1.0, std::fabs(w)) : 1.0);
  }
  return worst;
}

// ---- part 1: host time per launch call ----------------------------------------------------------

// Host microseconds per call of `launch`, the median over `rounds` measurements. A measurement is
// kLaunches calls in batches of kBatch: each batch is timed from its first call to the return of
// its last, then (outside the timing) the stream is synchronised. A batch stays far below the
// depth of the driver's launch queue, so no call ever waits for the GPU to free a slot: the
// figure is the host's own cost of a launch, whether or not the GPU keeps up with the tiny
// kernel. `order` runs the ways of one round in turn, so drift hits them alike.
constexpr int kLaunches = 20000, kBatch = 250, kRounds = 7;

double host_us_per_launch(const std::function<void()>& launch, CUstream stream) {
  double us = 0;
  for (int b = 0; b < kLaunches / kBatch; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kBatch; ++i) launch();
    us += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    rt::check(rt::cu().StreamSynchronize(stream), "cuStreamSynchronize");
  }
  return us / kLaunches;
}

// ---- part 2: CUDA graphs ------------------------------------------------------------------------

// A captured and instantiated graph, destroyed with the object.
class Graph {
 public:
  // Captures what `enqueue` launches on `stream` (global mode: any call that is not allowed
  // during a capture, from any thread, fails it) and instantiates it.
  Graph(CUstream stream, const std::function<void()>& enqueue) {
    rt::check(rt::cu().StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
    try {
      enqueue();
    } catch (...) {
      CUgraph broken = nullptr;  // end the capture so the stream is usable again, then report
      if (rt::cu().StreamEndCapture(stream, &broken) == CUDA_SUCCESS && broken) rt::cu().GraphDestroy(broken);
      throw;
    }
    rt::check(rt::cu().StreamEndCapture(stream, &graph_), "cuStreamEndCapture");
    if (const CUresult r = rt::cu().GraphInstantiateWithFlags(&exec_, graph_, 0); r != CUDA_SUCCESS) {
      rt::cu().GraphDestroy(graph_);  // the destructor does not run for a constructor that throws
      rt::throw_cuda_error(r, "cuGraphInstantiateWithFlags");
    }
  }
  ~Graph() {
    if (exec_) rt::cu().GraphExecDestroy(exec_);
    if (graph_) rt::cu().GraphDestroy(graph_);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // The graph's nodes, and how many of them are kernel launches.
  size_t nodes() const {
    size_t n = 0;
    rt::check(rt::cu().GraphGetNodes(graph_, nullptr, &n), "cuGraphGetNodes");
    return n;
  }
  size_t kernel_nodes() const {
    size_t n = nodes();
    std::vector<CUgraphNode> v(n);
    rt::check(rt::cu().GraphGetNodes(graph_, v.data(), &n), "cuGraphGetNodes");
    size_t kernels = 0;
    for (size_t i = 0; i < n; ++i) {
      CUgraphNodeType t{};
      rt::check(rt::cu().GraphNodeGetType(v[i], &t), "cuGraphNodeGetType");
      kernels += t == CU_GRAPH_NODE_TYPE_KERNEL;
    }
    return kernels;
  }
  void launch(CUstream stream) const { rt::check(rt::cu().GraphLaunch(exec_, stream), "cuGraphLaunch"); }

 private:
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

// One timing of a graph. gpu_us: event time per replayed kernel over kReplays replays queued back
// to back (the figure compared: what a replay costs the stream, gaps between kernels included).
// call_us: host time per cuGraphLaunch call, from batches of kCallBatch replays each timed up to
// its last call's return and then synchronised, so no call waits for queue space (as in part 1).
struct ReplayTime {
  double gpu_us, call_us;
};
constexpr int kReplays = 200, kReplayRounds = 9, kCallBatch = 25;

ReplayTime time_replays(const Graph& g, CUstream stream) {
  rt::Event start, stop;
  start.record(stream);
  for (int i = 0; i < kReplays; ++i) g.launch(stream);
  stop.record(stream);
  stop.synchronize();
  double call_us = 0;
  for (int b = 0; b < kReplays / kCallBatch; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kCallBatch; ++i) g.launch(stream);
    call_us += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    rt::check(rt::cu().StreamSynchronize(stream), "cuStreamSynchronize");
  }
  return {rt::Event::elapsed_ms(start, stop) * 1e3 / (kReplays * kGraphKernels), call_us / kReplays};
}

// The chain both graphs compute: b[0] = x + y, b[1] = b[0] * 0.5, b[2] = b[1] + y, ... each
// launch into its own buffer, so a replay recomputes the same values from x and y.
struct Chain {
  std::vector<jit::Array<float>> b;
  Chain(size_t n, jit::Device& dev) {
    for (int i = 0; i < kGraphKernels; ++i) b.emplace_back(n, dev);
  }
  const jit::Array<float>& in(int i, const jit::Array<float>& x) const { return i == 0 ? x : b[i - 1]; }
};

std::vector<std::vector<float>> chain_reference(const std::vector<float>& x, const std::vector<float>& y) {
  std::vector<std::vector<float>> out;
  std::vector<float> cur = x;
  for (int i = 0; i < kGraphKernels; ++i) {
    for (size_t j = 0; j < cur.size(); ++j) cur[j] = i % 2 == 0 ? cur[j] + y[j] : cur[j] * 0.5f;
    out.push_back(cur);
  }
  return out;
}

double chain_error(const Chain& c, const std::vector<std::vector<float>>& ref) {
  double worst = 0;
  for (int i = 0; i < kGraphKernels; ++i) worst = std::max(worst, worst_error(c.b[i].download(), ref[i]));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const char* out_dir = std::getenv("OUT");
  const std::string json_path = argc > 1                ? std::string(argv[1])
                                : out_dir && *out_dir ? std::string(out_dir) + "/bench_embedding.json"
                                                      : "bench_embedding.json";
  if (const std::string why = no_gpu_reason(); !why.empty()) {
    if (env_flag("TESSEL_REQUIRE_GPU")) {
      fmt::print(stderr, "bench_embedding: TESSEL_REQUIRE_GPU=1, but there is no usable GPU: {}\n", why);
      return 1;
    }
    fmt::print("bench_embedding: skipped, it needs a GPU (no usable GPU: {})\n", why);
    write_file(json_path, fmt::format("{{\n  \"skipped\": true,\n  \"reason\": \"{}\"\n}}\n", json_escape(why)));
    return 0;
  }
  try {
    jit::Device& dev = jit::Device::current();
    fmt::print("device: {}\n", dev.describe());
    // The caller: the primary context current on its thread (as the CUDA runtime leaves it), its
    // own non-blocking stream.
    rt::Context ctx(dev.ordinal(), /*make_current=*/true);
    rt::Stream stream(CU_STREAM_NON_BLOCKING);
    const CUstream s = stream.handle();
    const jit::Meta meta = samples::kDefaultBlock;
    bool failed = false;

    // ---- 1. host cost of a launch on the caller's stream ----
    const int32_t small = 1024;  // one program
    const jit::Grid one{jit::cdiv(small, meta["BLOCK"])};
    const std::vector<float> hx = samples::random_floats(small, 1), hy = samples::random_floats(small, 2);
    jit::Array<float> sx(hx, dev), sy(hy, dev), out_t(small, dev), out_r(small, dev);
    out_t.poison();
    out_r.poison();
    dev.synchronize();  // the poison (legacy stream) lands before the caller's non-blocking stream writes
    samples::k_add(one, meta, s, sx, sy, out_t, small);  // compiles and loads the variant
    const RawKernel raw_add = load_variant(samples::k_add, meta,
                                           {jit::RawArg::pointer(sx.address()), jit::RawArg::pointer(sy.address()),
                                            jit::RawArg::pointer(out_r.address()), jit::RawArg::integer(small)},
                                           dev, "p8 p8 p8 i4");
    Params add_args;
    add_args.add(sx, sy, out_r, small);
    const std::function<void()> ways[2] = {
        [&] { samples::k_add(one, meta, s, sx, sy, out_t, small); },
        [&] { raw_add.launch(one.x, s, add_args.data()); },
    };
    for (const auto& w : ways)
      for (int i = 0; i < 1000; ++i) w();  // warm: caches, the driver's queue, clocks
    stream.synchronize();
    std::vector<double> rounds[2];
    for (int r = 0; r < kRounds; ++r)
      for (int k = 0; k < 2; ++k) {
        const int w = (r + k) % 2;  // alternate which way goes first
        rounds[w].push_back(host_us_per_launch(ways[w], s));
      }
    const double tessel_us = median(rounds[0]), raw_us = median(rounds[1]);
    std::vector<float> want(small);
    for (int32_t i = 0; i < small; ++i) want[i] = hx[i] + hy[i];
    const double launch_err = std::max(worst_error(out_t.download(), want), worst_error(out_r.download(), want));
    failed |= launch_err > 1e-6;

    // ---- 2. CUDA graphs captured on the caller's stream ----
    const int32_t n = 4096;
    const jit::Grid grid{jit::cdiv(n, meta["BLOCK"])};
    const std::vector<float> gx = samples::random_floats(n, 3), gy = samples::random_floats(n, 4);
    jit::Array<float> x(gx, dev), y(gy, dev);
    Chain ct(n, dev), cr(n, dev);  // tessel's outputs, raw's
    const jit::LaunchOptions on{dev, jit::StreamRef{s}};
    const float half = 0.5f;
    auto tessel_chain = [&] {
      for (int i = 0; i < kGraphKernels; ++i) {
        if (i % 2 == 0) samples::k_add(grid, meta, on, ct.in(i, x), y, ct.b[i], n);
        else samples::k_scale(grid, meta, on, ct.in(i, x), ct.b[i], n, half);
      }
    };
    tessel_chain();  // warms both variants: the capture below compiles nothing
    stream.synchronize();
    const RawKernel raw_scale =
        load_variant(samples::k_scale, meta,
                     {jit::RawArg::pointer(ct.b[0].address()), jit::RawArg::pointer(ct.b[1].address()),
                      jit::RawArg::integer(n), jit::RawArg::floating(half)},
                     dev, "p8 p8 i4 f4");
    // The chain's add is loaded for its own arguments: their specialisation bits pick the variant.
    const RawKernel raw_add2 = load_variant(samples::k_add, meta,
                                            {jit::RawArg::pointer(x.address()), jit::RawArg::pointer(y.address()),
                                             jit::RawArg::pointer(cr.b[0].address()), jit::RawArg::integer(n)},
                                            dev, "p8 p8 p8 i4");
    std::array<Params, kGraphKernels> raw_args;
    for (int i = 0; i < kGraphKernels; ++i) {
      if (i % 2 == 0) raw_args[i].add(cr.in(i, x), y, cr.b[i], n);
      else raw_args[i].scale(cr.in(i, x), cr.b[i], n, half);
    }
    auto raw_chain = [&] {
      for (int i = 0; i < kGraphKernels; ++i) (i % 2 == 0 ? raw_add2 : raw_scale).launch(grid.x, s, raw_args[i].data());
    };
    raw_chain();
    stream.synchronize();
    Graph gt(s, tessel_chain), gr(s, raw_chain);
    const size_t nodes_t = gt.nodes(), nodes_r = gr.nodes();
    const size_t kernels_t = gt.kernel_nodes(), kernels_r = gr.kernel_nodes();
    const bool nodes_ok = nodes_t == kGraphKernels && nodes_r == kGraphKernels && kernels_t == kGraphKernels &&
                          kernels_r == kGraphKernels;
    failed |= !nodes_ok;
    // One replay each onto poisoned outputs: the graphs alone computed what is checked.
    for (Chain* c : {&ct, &cr})
      for (auto& b : c->b) b.poison();
    dev.synchronize();
    gt.launch(s);
    gr.launch(s);
    stream.synchronize();
    const auto ref = chain_reference(gx, gy);
    const double graph_err_t = chain_error(ct, ref), graph_err_r = chain_error(cr, ref);
    failed |= graph_err_t > 1e-6 || graph_err_r > 1e-6;
    for (int i = 0; i < 20; ++i) gt.launch(s), gr.launch(s);  // warm
    stream.synchronize();
    std::vector<double> gpu[2], call[2];
    const Graph* graphs[2] = {&gt, &gr};
    for (int r = 0; r < kReplayRounds; ++r)
      for (int k = 0; k < 2; ++k) {
        const int w = (r + k) % 2;
        const ReplayTime t = time_replays(*graphs[w], s);
        gpu[w].push_back(t.gpu_us);
        call[w].push_back(t.call_us);
      }
    const double kernel_t = median(gpu[0]), kernel_r = median(gpu[1]);
    const double call_t = median(call[0]), call_r = median(call[1]);
    const double after_err = chain_error(ct, ref);  // still right after every timed replay
    failed |= after_err > 1e-6;

    const double launch_ratio = tessel_us / raw_us, graph_ratio = kernel_t / kernel_r;
    fmt::print("\n{:<44} {:>10} {:>10} {:>7} {:>7}\n", "caller's stream (us)", "tessel", "raw", "ratio", "target");
    fmt::print("{:<44} {:>10.3f} {:>10.3f} {:>6.2f}x {:>6.1f}x{}\n", "launch call, host (add, 1 program)", tessel_us,
               raw_us, launch_ratio, kLaunchTarget, launch_ratio <= kLaunchTarget ? "" : "  MISSED");
    fmt::print("{:<44} {:>10.3f} {:>10.3f} {:>6.2f}x {:>6.1f}x{}\n", "graph replay, GPU per kernel (10 kernels)",
               kernel_t, kernel_r, graph_ratio, kGraphTarget, graph_ratio <= kGraphTarget ? "" : "  MISSED");
    fmt::print("{:<44} {:>10.3f} {:>10.3f} {:>6.2f}x\n", "graph launch call, host", call_t, call_r, call_t / call_r);
    fmt::print("graph nodes: tessel {} ({} kernels), raw {} ({} kernels), expected {}{}\n", nodes_t, kernels_t, nodes_r,
               kernels_r, kGraphKernels, nodes_ok ? "" : "  WRONG");
    fmt::print("max rel error: launches {:.1e}, tessel graph {:.1e} (after timing {:.1e}), raw graph {:.1e}\n",
               launch_err, graph_err_t, after_err, graph_err_r);
    fmt::print("raw functions from: add {}, scale {}\n", raw_add.source, raw_scale.source);
    if (failed) fmt::print("FAILED: a wrong result or an unexpected graph (see above)\n");

    std::string json = fmt::format("{{\n  \"skipped\": false,\n  \"device\": \"{}\",\n", json_escape(dev.describe()));
    json += fmt::format(
        "  \"launch\": {{\"kernel\": \"add\", \"programs\": {}, \"launches\": {}, \"batch\": {}, \"rounds\": {}, "
        "\"tessel_us\": {:.4f}, \"raw_us\": {:.4f}, \"ratio\": {:.4f}, \"target\": {}, \"meets_target\": {}, "
        "\"raw_source\": \"{}\", \"max_rel_err\": {:.3e}}},\n",
        one.x, kLaunches, kBatch, kRounds, tessel_us, raw_us, launch_ratio, kLaunchTarget,
        launch_ratio <= kLaunchTarget, raw_add.source, launch_err);
    json += fmt::format(
        "  \"graph\": {{\"kernels\": {}, \"programs_per_kernel\": {}, \"replays\": {}, \"rounds\": {}, "
        "\"tessel_us_per_kernel\": {:.4f}, \"raw_us_per_kernel\": {:.4f}, \"ratio\": {:.4f}, \"target\": {}, "
        "\"meets_target\": {}, \"tessel_launch_call_us\": {:.4f}, \"raw_launch_call_us\": {:.4f}, "
        "\"tessel_nodes\": {}, \"raw_nodes\": {}, \"tessel_kernel_nodes\": {}, \"raw_kernel_nodes\": {}, "
        "\"raw_source\": \"{}\", \"max_rel_err\": {:.3e}}},\n",
        kGraphKernels, grid.x, kReplays, kReplayRounds, kernel_t, kernel_r, graph_ratio, kGraphTarget,
        graph_ratio <= kGraphTarget, call_t, call_r, nodes_t, nodes_r, kernels_t, kernels_r, raw_scale.source,
        std::max({graph_err_t, graph_err_r, after_err}));
    json += fmt::format("  \"correct\": {}\n}}\n", !failed);
    write_file(json_path, json);
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_embedding failed: {}\n", e.what());
    return 1;
  }
}
