// launch_tuned's policy: in-process choice, the tuning database, tuning at launch, the fallback.
#include "tessel/jit/tune/autotune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "cache/cache_io.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/jit/registry.hpp"
#include "tessel/runtime/log.hpp"

namespace tessel::jit::tune {
namespace {
std::mutex g_factory_mu;
TimerFactory g_factory;

// TESSEL_PRINT_AUTOTUNING=1 (Triton's knob): each tuning's outcome, through the log but shown
// whatever TESSEL_LOG says, since the user asked for exactly this.
// `among`: the configs the choice is made from; `tuned`: those tuned just now, in `seconds`.
void print_autotuning(const DbKey& k, const Database& db, const std::vector<Config>& among,
                      const std::vector<Config>& tuned, double seconds) {
  const char* v = std::getenv("TESSEL_PRINT_AUTOTUNING");
  if (!v || !*v || std::string_view(v) == "0" || among.empty()) return;
  const size_t timed = static_cast<size_t>(std::count_if(among.begin(), among.end(), [&](const Config& c) {
    return std::find(tuned.begin(), tuned.end(), c) != tuned.end();
  }));
  const std::string of = timed == among.size()
                             ? fmt::format("of {} configs", timed)
                             : fmt::format("of {} configs ({} timed now, the rest from the database)",
                                           among.size(), timed);
  const std::optional<Config> best = db.best(k, among);
  const std::optional<ConfigResult> r = best ? db.result(k, *best) : std::nullopt;
  if (best && r)
    rt::log_forced(fmt::format("autotune {} {}: chose {} ({:.4g} ms) {} in {:.3g} s", k.kernel, k.key, best->str(),
                               r->timing.median_ms, of, seconds));
  else
    rt::log_forced(fmt::format("autotune {} {}: no config usable {} in {:.3g} s; launching the first ({})",
                               k.kernel, k.key, of, seconds, among.front().str()));
}
}  // namespace

bool autotune_enabled() {
  const char* v = std::getenv("TESSEL_AUTOTUNE");
  return !(v && std::string_view(v) == "0");
}

void set_timer_factory(TimerFactory f) {
  std::lock_guard lock(g_factory_mu);
  g_factory = std::move(f);
}

std::unique_ptr<Timer> tuning_timer() {
  if (!autotune_enabled()) return nullptr;
  {
    std::lock_guard lock(g_factory_mu);
    if (g_factory) return g_factory();
  }
  if (Device::current().kind() == BackendKind::Cuda) return make_gpu_timer();
  return nullptr;  // the interpreter's times say nothing about the GPU: keep the first config
}

const HostArgs::Arg& HostArgs::find(std::string_view name, Arg::Kind kind) const {
  static constexpr const char* kWhat[] = {"an Array (pointer)", "an integer", "a floating-point"};
  for (const Arg& a : args_) {
    if (a.name != name) continue;
    if (a.kind != kind)
      throw std::invalid_argument(fmt::format("autotune reference: parameter '{}' is not {} parameter", name,
                                              kWhat[kind]));
    return a;
  }
  std::string known;
  for (const Arg& a : args_) known += (known.empty() ? "" : ", ") + a.name;
  throw std::invalid_argument(fmt::format("autotune reference: '{}' is not a parameter ({})", name, known));
}

const std::vector<double>& HostArgs::array(std::string_view name) const {
  const Arg& a = find(name, Arg::Buffer);
  if (!a.values)
    throw std::invalid_argument(fmt::format(
        "autotune reference: parameter '{}' was passed as a DevicePtr, not an Array of numbers: its contents are "
        "unknown",
        name));
  return *a.values;
}
int64_t HostArgs::integer(std::string_view name) const { return find(name, Arg::Integer).integer; }
double HostArgs::floating(std::string_view name) const { return find(name, Arg::Floating).floating; }

void HostArgs::add_array(std::string name, std::optional<std::vector<double>> values) {
  args_.push_back({std::move(name), Arg::Buffer, std::move(values), 0, 0});
}
void HostArgs::add_integer(std::string name, int64_t v) {
  args_.push_back({std::move(name), Arg::Integer, std::nullopt, v, 0});
}
void HostArgs::add_floating(std::string name, double v) {
  args_.push_back({std::move(name), Arg::Floating, std::nullopt, 0, v});
}

namespace {
// The value named `name` in `v`, else std::invalid_argument listing the names there are.
template <class T>
T find_named(const std::vector<std::pair<std::string, T>>& v, std::string_view name, const char* what) {
  for (const auto& [n, x] : v)
    if (n == name) return x;
  std::string known;
  for (const auto& [n, x] : v) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument(fmt::format("autotune prune: '{}' is not {} ({})", name, what,
                                          known.empty() ? std::string("there is none") : known));
}
}  // namespace

int64_t ProblemInfo::key(std::string_view name) const { return find_named(keys_, name, "a key parameter"); }
int64_t ProblemInfo::integer(std::string_view name) const {
  return find_named(integers_, name, "an integer argument");
}
size_t ProblemInfo::size(std::string_view name) const { return find_named(sizes_, name, "an Array argument"); }
void ProblemInfo::set_kernel(std::string kernel, std::string key_string) {
  kernel_ = std::move(kernel);
  key_string_ = std::move(key_string);
}
void ProblemInfo::add_key(std::string name, int64_t bucketed) { keys_.emplace_back(std::move(name), bucketed); }
void ProblemInfo::add_integer(std::string name, int64_t v) { integers_.emplace_back(std::move(name), v); }
void ProblemInfo::add_size(std::string name, size_t elements) { sizes_.emplace_back(std::move(name), elements); }

Tolerance default_tolerance(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::f16: return {1e-2, 1e-2};
    case ir::Scalar::bf16: return {2e-2, 2e-2};
    case ir::Scalar::f32:
    case ir::Scalar::f64: return {1e-5, 1e-6};
    case ir::Scalar::f8e4m3: return {0x1p-3, 0x1p-3};  // one unit in the last place of fp8
    case ir::Scalar::f8e5m2: return {0x1p-2, 0x1p-2};
    default: return {0, 0};  // integers and i1: exact
  }
}

void append_as_doubles(ir::Scalar s, const void* data, size_t n, std::vector<double>& out) {
  auto each = [&]<class T>(T, auto&& decode) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, p + i * sizeof(T), sizeof(T));
      out.push_back(decode(v));
    }
  };
  auto plain = [](auto v) { return static_cast<double>(v); };
  switch (s) {
    case ir::Scalar::i1: return each(uint8_t{}, [](uint8_t v) { return v ? 1.0 : 0.0; });
    case ir::Scalar::i8: return each(int8_t{}, plain);
    case ir::Scalar::i16: return each(int16_t{}, plain);
    case ir::Scalar::i32: return each(int32_t{}, plain);
    case ir::Scalar::i64: return each(int64_t{}, plain);
    case ir::Scalar::f16: return each(uint16_t{}, [](uint16_t v) { return interp::f16_to_double(v); });
    case ir::Scalar::bf16: return each(uint16_t{}, [](uint16_t v) { return interp::bf16_to_double(v); });
    case ir::Scalar::f32: return each(float{}, plain);
    case ir::Scalar::f64: return each(double{}, plain);
    case ir::Scalar::u8: return each(uint8_t{}, plain);
    case ir::Scalar::u16: return each(uint16_t{}, plain);
    case ir::Scalar::u32: return each(uint32_t{}, plain);
    case ir::Scalar::u64: return each(uint64_t{}, plain);
    case ir::Scalar::f8e4m3: return each(uint8_t{}, [](uint8_t v) { return interp::f8e4m3_to_double(v); });
    case ir::Scalar::f8e5m2: return each(uint8_t{}, [](uint8_t v) { return interp::f8e5m2_to_double(v); });
  }
}

std::vector<size_t> check_positions(size_t n, size_t max) {
  std::vector<size_t> out;
  if (n == 0) return out;
  size_t step = (max == 0 || n <= max) ? 1 : (n + max - 1) / max;
  if (step > 1 && step % 2 == 0) ++step;
  out.reserve(n / step + 2);
  for (size_t i = 0; i < n; i += step) out.push_back(i);
  if (out.back() != n - 1) out.push_back(n - 1);
  return out;
}

std::string_view source_name(TuneChoice::Source s) {
  switch (s) {
    case TuneChoice::Source::Tuned: return "tuned";
    case TuneChoice::Source::Database: return "database";
    case TuneChoice::Source::Fallback: return "fallback";
  }
  return "?";
}

DbKey current_db_key(std::string kernel, std::string key) {
  Device& d = Device::current();
  return DbKey{std::move(kernel), std::move(key), d.name(), d.arch(), cache::tessel_version()};
}

std::string signature_of(const KernelEntry& e) { return signature_of(*e.build_ir(e.defaults, {})); }

namespace detail {

void check_resources(const Autotune& at, const Executable& e) {
  const int local = e.info().local_bytes;
  if (at.prune_spills && local > 0)
    throw ConfigPruned(fmt::format("spills ({} bytes of local memory per thread)", local));
}

TuneOptions tune_options(const Autotune& at, const ProblemInfo& info) {
  TuneOptions opts;
  if (at.prune) opts.prune = [&at, &info](const Config& c) { return at.prune(c, info); };
  opts.budget_s = at.budget_s;
  opts.timer = at.timer;
  return opts;
}

TuneChoice choose_config(const Autotune& at, const ProblemInfo& info, const std::function<Problem()>& make_problem) {
  const std::string& kernel = info.kernel();
  const std::string& key = info.key_string();
  const DbKey k = current_db_key(kernel, key);
  const std::filesystem::path path = Database::default_path();
  Database db;
  if (!path.empty()) {
    try {
      db = Database::load(path);
    } catch (const std::exception& e) {
      cache::io::report_once("tune-db-load:" + path.string(), fmt::format("{} (ignored)", e.what()));
    }
  }
  // Only the configs the prune keeps for this problem are candidates: a result recorded for a
  // config it rejects here (tuned under other raw sizes of the same key) must not be launched.
  std::vector<Config> kept;
  for (const Config& c : at.configs)
    if (at.prune(c, info)) kept.push_back(c);
  std::vector<Config> missing, tuned_now;
  for (const Config& c : at.configs)
    if (!db.result(k, c)) missing.push_back(c);
  if (!missing.empty()) {
    if (std::unique_ptr<Timer> timer = tuning_timer()) {
      Problem p = make_problem();
      TuneReport r = tune(p, missing, *timer, tune_options(at, info));
      if (p.reset) p.reset();  // the launch that follows sees the inputs its caller left
      // A device fault during the tuning (a sticky error: every call fails from then on) made
      // every config after it fail, which says nothing about them: nothing of this tuning may
      // outlive the process. Synchronizing surfaces such a fault here, as the CudaError naming
      // it, before anything is saved.
      Device::current().synchronize();
      Database fresh;
      record(fresh, k, r);
      db.merge(fresh);
      tuned_now = missing;
      if (!path.empty()) {
        try {
          fresh.save(path);  // merges with the file as it is now
        } catch (const std::exception& e) {
          cache::io::report_once("tune-db-save:" + path.string(), fmt::format("{} (tuned results not kept)", e.what()));
        }
      }
      print_autotuning(k, db, kept.empty() ? at.configs : kept, missing, r.seconds);
    }
  }
  if (!kept.empty())
    if (std::optional<Config> best = db.best(k, kept)) {
      TuneChoice c{*best, db.result(k, *best)->timing.median_ms, TuneChoice::Source::Database};
      if (std::find(tuned_now.begin(), tuned_now.end(), *best) != tuned_now.end()) c.source = TuneChoice::Source::Tuned;
      return c;
    }
  const Config& fallback = kept.empty() ? at.configs.front() : kept.front();
  // Every config was rejected (wrong output, failures): say so once rather than fall back quietly.
  std::string why;
  for (const Config& c : at.configs)
    if (std::optional<ConfigResult> r = db.result(k, c); r && r->status == Status::WrongOutput) {
      why = fmt::format("; {}: {}", c.str(), r->reason);
      break;
    }
  if (!why.empty())
    cache::io::report_once("tune-none:" + kernel + ":" + key,
                           fmt::format("autotune {} at {}: no config passed the output check, launching the "
                                       "first ({}){}",
                                       kernel, key, fallback.str(), why));
  return TuneChoice{fallback, std::nullopt, TuneChoice::Source::Fallback};
}

SavedBuffers::~SavedBuffers() {
  for (const Saved& s : saved_) {
    try {
      Device::current().free(s.copy);
    } catch (...) {  // a destructor must not throw; the memory is lost at worst
    }
  }
}

void SavedBuffers::save(uint64_t addr, size_t bytes) {
  Device& d = Device::current();
  const uint64_t copy = d.alloc(bytes);
  saved_.push_back({addr, copy, bytes});
  d.copy(copy, addr, bytes);
}

void SavedBuffers::restore() const {
  Device& d = Device::current();
  for (const Saved& s : saved_) d.copy(s.original, s.copy, s.bytes);
}

}  // namespace detail
}  // namespace tessel::jit::tune
