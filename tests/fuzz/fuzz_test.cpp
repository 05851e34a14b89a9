// Differential fuzzer: random, well-typed tile programs (program_gen.hpp), run on the CPU
// (interpreter, passes, lowering, ptxas for sm_80 / sm_90 / sm_90a) and on the GPU against the
// interpreter (doctest suite "gpu").
//
// Seeds: TESSEL_FUZZ_START (default 1) and TESSEL_FUZZ_SEEDS (default 300 on the CPU, 300 on
// the GPU); TESSEL_FUZZ_VERBOSE=1 prints every program (its IR and launch). A failing seed
// prints its reproduction and the command that re-runs just that seed (the first
// TESSEL_FUZZ_REPORTS of them, default 10; the rest by number). TESSEL_FUZZ_DUMP_PTX=DIR writes
// each program's PTX there (CPU case).
//
// What the GPU must match (error_model.hpp has the model, per op): integer, i1 and pointer
// results byte for byte; float results exactly (the same value; NaN matches NaN, +0 matches
// -0) wherever every op on the way is correctly rounded on both sides (add, sub, mul, div,
// sqrt, fma in f32/f64, min/max, casts, loads, select, floor/ceil, rem, max/min reductions),
// else within an absolute bound the model carries op by op: the approximate transcendentals'
// documented errors (exp, exp2, log, log2, rsqrt, sin, cos, tanh, sigmoid, erf), sums in
// another order (reduce_sum, cumsum, reduce with add), f16/bf16 fma, each propagated through
// the following ops by their Lipschitz constants over the values' ranges (so cancellation and
// chains of transcendentals widen the bound as they should), capped by the range's width.
// Ops whose results jump (comparisons, float->int casts, floor/ceil, argmax/argmin, rem) only
// ever see exact values, so inexact float differences never become integer differences.
//
// Left out on purpose, each reported (see the notes where the generator avoids it): float rem
// by divisors other than +-1, 2, 4, 8 or the dividend (the GPU's a - trunc(a/b)*b rounds where
// fmod does not); more than 32 kernel parameters (the GPU launcher packs at most 32);
// m(m'(X, Y), fma(X, Y, Z)) for float min/max m, m' (LLVM 19.1's InstSimplify crashes on it).
// Integer division by zero (unspecified) is never generated: divisors are y | 1.
//
// Speed: the CPU case takes ~12 s for 300 programs on 2 idle cores (ptxas is most of it); the
// GPU case ran 10,000 programs in ~60 s on an H100 (15 compile threads, one compile each).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string_view>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include "../common/gpu_gate.hpp"
#include "../common/ptxas_gate.hpp"
#include "fuzz_run.hpp"

namespace {

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::strtoull(v, nullptr, 10);
}

bool verbose() {
  const char* v = std::getenv("TESSEL_FUZZ_VERBOSE");
  return v && *v && std::string_view(v) != "0";
}

// The seeds the worker threads are running, so that a crash (which ends the process) still
// says which programs were in flight: a signal handler writes them, then lets doctest report.
constexpr int kMaxWorkers = 64;
std::atomic<uint64_t> g_in_flight[kMaxWorkers];  // seed + 1; 0: idle

class CrashNote {
 public:
  CrashNote() {
    for (int sig : kSignals) {
      struct sigaction sa {};
      sa.sa_handler = &CrashNote::on_signal;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, &previous_[index(sig)]);
    }
  }
  ~CrashNote() {
    for (int sig : kSignals) sigaction(sig, &previous_[index(sig)], nullptr);
    for (auto& s : g_in_flight) s = 0;
  }
  CrashNote(const CrashNote&) = delete;
  CrashNote& operator=(const CrashNote&) = delete;

 private:
  static constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  static int index(int sig) {
    for (int i = 0; i < 5; ++i)
      if (kSignals[i] == sig) return i;
    return 0;
  }
  static void on_signal(int sig) {  // async-signal-safe: write(2) of digits only
    char buf[1024];
    size_t k = 0;
    auto put = [&](const char* t) {
      while (*t && k < sizeof buf) buf[k++] = *t++;
    };
    put("\nfuzz: crashed while running seeds:");
    for (auto& s : g_in_flight) {
      uint64_t v = s.load();
      if (v == 0) continue;
      char digits[24];
      int n = 0;
      for (--v; v || n == 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
      put(" ");
      while (n > 0 && k < sizeof buf) buf[k++] = digits[--n];
    }
    put(" (re-run one with TESSEL_FUZZ_START=<seed> TESSEL_FUZZ_SEEDS=1)\n");
    (void)!::write(2, buf, k);
    sigaction(sig, &previous_[index(sig)], nullptr);
    ::raise(sig);
  }
  static inline struct sigaction previous_[5];
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Failing seeds reported in full (TESSEL_FUZZ_REPORTS, default 10); the rest are listed by number.
size_t reports_shown() { return static_cast<size_t>(env_u64("TESSEL_FUZZ_REPORTS", 10)); }

}  // namespace

TEST_CASE("fuzz: random programs run on the interpreter, keep their meaning through the passes, and lower and "
          "assemble for sm_80, sm_90 and sm_90a") {
  const uint64_t start = env_u64("TESSEL_FUZZ_START", 1), count = env_u64("TESSEL_FUZZ_SEEDS", 300);
  const std::vector<std::string> archs = {"sm_80", "sm_90", "sm_90a"};
  const std::string ptxas = tessel_test::ptxas_or_skip("fuzz: assembling the programs' PTX for sm_80, sm_90, sm_90a");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<fuzz::CpuResult> results(count);
  std::atomic<uint64_t> next{0};
  std::mutex mu;
  fuzz::Coverage coverage;
  std::atomic<int> worker_ids{0};
  CrashNote crash_note;
  auto worker = [&] {
    fuzz::Coverage mine;
    const int id = worker_ids++ % kMaxWorkers;
    for (uint64_t i; (i = next++) < count;) {
      g_in_flight[id] = start + i + 1;
      results[i] = fuzz::check_on_cpu(start + i, archs, ptxas, &mine);
    }
    g_in_flight[id] = 0;
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [k, v] : mine.ops) coverage.ops[k] += v;
    coverage.programs += mine.programs, coverage.exact_outputs += mine.exact_outputs;
    coverage.bounded_outputs += mine.bounded_outputs;
  };
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();

  size_t failed = 0;
  std::string failed_seeds;
  double gen = 0, interp = 0, passes = 0, lower = 0, asm_s = 0;
  for (const fuzz::CpuResult& r : results) {
    gen += r.s_generate, interp += r.s_interp, passes += r.s_passes, lower += r.s_lower, asm_s += r.s_ptxas;
    if (r.failure.empty()) continue;
    if (failed++ < reports_shown()) FAIL_CHECK(r.failure);
    failed_seeds += " " + std::to_string(r.seed);
  }
  if (failed > reports_shown()) FAIL_CHECK("fuzz: all failing seeds:" << failed_seeds);
  std::printf("fuzz (cpu): %llu programs from seed %llu, %zu failed, %.1f s on %u threads (CPU seconds: generate %.1f, "
              "interpreter %.1f, passes %.1f, lowering %.1f, ptxas %.1f%s)\n",
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(start), failed, seconds_since(t0),
              threads, gen, interp, passes, lower, asm_s, ptxas.empty() ? ", ptxas SKIPPED" : "");
  if (verbose() || count >= 100) std::printf("%s\n", coverage.str().c_str());
  // The generator must really produce varied programs: every op family shows up.
  if (count >= 100)
    for (const char* op : {"load", "store", "for", "reduce_sum", "cumsum", "atomic_add", "select", "cast", "exp", "trans"})
      CHECK_MESSAGE(coverage.ops[op] > 0, "no program used '" << op << "'");
}

TEST_CASE("fuzz: random programs on the GPU match the interpreter" * doctest::test_suite("gpu")) {
  tessel::jit::Device& dev = tessel::jit::Device::current();
  if (dev.kind() != tessel::jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("fuzz on the GPU: " + dev.describe());
    return;
  }
  // Every program is new: the disk cache would only cost time.
  ::setenv("TESSEL_CACHE", "0", 1);
  const uint64_t start = env_u64("TESSEL_FUZZ_START", 1), count = env_u64("TESSEL_FUZZ_SEEDS", 300);
  const auto t0 = std::chrono::steady_clock::now();
  // Workers generate, interpret and compile ahead (in seed order, a bounded window); this
  // thread launches and compares one program at a time.
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 2u, 16u) - 1;
  const uint64_t window = 4 * threads;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::unique_ptr<fuzz::GpuCase>> ready(count);  // by index; filled by workers
  uint64_t next = 0, consumed = 0;
  std::atomic<int> worker_ids{1};  // 0: this thread
  CrashNote crash_note;
  auto worker = [&] {
    const int id = worker_ids++ % kMaxWorkers;
    for (;;) {
      uint64_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return next >= count || next < consumed + window; });
        if (next >= count) return;
        i = next++;
      }
      g_in_flight[id] = start + i + 1;
      auto c = std::make_unique<fuzz::GpuCase>(fuzz::prepare_gpu_case(start + i, dev));
      g_in_flight[id] = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        ready[i] = std::move(c);
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  size_t failed = 0;
  std::string failed_seeds;
  for (uint64_t i = 0; i < count; ++i) {
    std::unique_ptr<fuzz::GpuCase> c;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return ready[i] != nullptr; });
      c = std::move(ready[i]);
    }
    g_in_flight[0] = c->seed + 1;
    const std::string report = fuzz::run_gpu_case(*c, dev);
    g_in_flight[0] = 0;
    c.reset();
    {
      std::lock_guard<std::mutex> lock(mu);
      consumed = i + 1;
    }
    cv.notify_all();
    if (report.empty()) continue;
    if (failed++ < reports_shown()) FAIL_CHECK(report);
    failed_seeds += " " + std::to_string(start + i);
  }
  for (auto& t : pool) t.join();
  if (failed > reports_shown()) FAIL_CHECK("fuzz: all failing seeds:" << failed_seeds);
  const double s = seconds_since(t0);
  std::printf("fuzz (gpu): %llu programs from seed %llu on %s: %zu mismatched or failed, %.1f s (%.1f programs/s, %u "
              "compile threads)\n",
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(start), dev.describe().c_str(),
              failed, s, static_cast<double>(count) / s, threads);
}
