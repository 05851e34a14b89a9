// The results of a tuning run as plain data (what `tessel tune --json` prints and `tessel report`
// reads), with the throughput and roofline arithmetic the table and the plot share.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tessel::samples::report {

// One config's measurement at one problem size.
struct ConfigRow {
  std::string config;        // tune::Config::str(): "BLOCK=1024 num_warps=4 num_stages=1"
  std::string status = "ok"; // tune::status_name(): "ok", "pruned", "compile error", ...
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
  std::string reason;        // why a config is not "ok"
  bool ok() const { return status == "ok"; }
  double spread() const { return median_ms > 0 ? (max_ms - min_ms) / median_ms : 0; }
};

// One kernel at one problem size: the ranked configs and the work one run does.
struct SizeResult {
  std::string size;          // "n=16777216" or "rows=8192,cols=4096"
  std::string key;           // the tuning database key
  double bytes = 0;          // compulsory bytes moved per run
  double flops = 0;          // floating-point operations per run
  double seconds = 0, compile_seconds = 0;  // wall time of the tune, and of compiling
  std::string best;          // the winner's config ("" when none ran)
  std::string default_config;  // the untuned default, for comparison
  // The element type of the kernel's tensor-core dots ("f16", "bf16", "tf32", "i8"), which picks
  // its compute ceiling; "" for a kernel without dots, or when unknown (see dot_dtype_of).
  std::string dot_dtype;
  std::vector<ConfigRow> configs;  // ranked (rank_rows)
  const ConfigRow* best_row() const;  // the first ok row, or null
  const ConfigRow* find(const std::string& config) const;
};

// One tunable kernel (or unfused chain of kernels) over its sizes.
struct KernelResult {
  std::string name;          // the tunable's name ("chain5", "chain5_unfused")
  std::string group;         // kernels compared in the plot share a group ("chain5")
  bool fused = true;         // false: an unfused chain of several launches
  std::vector<SizeResult> sizes;
};

// A tensor-core compute ceiling: the best dot probe of one element type.
struct TensorCeiling {
  std::string dtype;  // "f16", "bf16", "tf32"
  double gflops = 0;  // GFLOP/s, flops / time of the probe's best config
  friend bool operator==(const TensorCeiling&, const TensorCeiling&) = default;
};

// The device's ceilings, measured on the card.
struct Roofline {
  double bandwidth_gbs = 0;   // GB/s (1e9 bytes), from a device copy
  double compute_gflops = 0;  // GFLOP/s (f32 FMA), from an FMA-chain kernel
  std::vector<TensorCeiling> tensor;  // per dot dtype, from matmul-shaped dot probes (may be empty)
  bool known() const { return bandwidth_gbs > 0 && compute_gflops > 0; }
  // The compute ceiling of a kernel whose flops are dots of `dtype`: that dtype's tensor ceiling
  // when one was measured, else the FMA ceiling (also for dtype "").
  double compute_for(std::string_view dtype) const;
  // min(compute_for(dtype), bandwidth * intensity) at `intensity` flop/byte.
  double attainable_gflops(double intensity, std::string_view dtype = {}) const;
  double ridge(std::string_view dtype = {}) const {
    return bandwidth_gbs > 0 ? compute_for(dtype) / bandwidth_gbs : 0;
  }
};

struct Results {
  std::string device;        // "GPU: NVIDIA H200 (sm_90)"
  Roofline roofline;
  std::vector<KernelResult> kernels;
};

// Throughput of one run of `ms` milliseconds moving `bytes` and doing `flops` (0 when ms <= 0).
double gbs(double bytes, double ms);
double gflops(double flops, double ms);
// The fraction of the roofline achieved: achieved GFLOP/s over the attainable GFLOP/s at the
// kernel's intensity (under the ceiling of `dot_dtype`, see Roofline::compute_for); for a kernel
// without flops, achieved GB/s over the bandwidth ceiling. 0 when the roofline is unknown.
double roofline_fraction(const Roofline& r, double bytes, double flops, double ms, std::string_view dot_dtype = {});

// s.dot_dtype when set; else inferred from the tuning key: a matmul-shaped key (params M, N and
// K) takes its first operand's dtype from the key's signature, f32 meaning tf32 unless the
// best config turns ALLOW_TF32 off ("" then: f32 FMAs); any other key gives "".
std::string dot_dtype_of(const SizeResult& s);

// `from`'s (kernel, size) entries replace the same ones in `into`, new ones are appended, the
// rest kept; device and roofline come from `from` when it has them. (A results file that
// successive `tessel tune` runs extend.)
void merge_results(Results& into, const Results& from);

// Ok rows by median time (ties: by config text), then the rest in their given order.
void rank_rows(std::vector<ConfigRow>& rows);

}  // namespace tessel::samples::report
