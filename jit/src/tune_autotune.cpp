// launch_tuned's policy: in-process choice, the tuning database, tuning at launch, the fallback.
#include "tessel/jit/tune/autotune.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string_view>

#include "cache_io.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/jit/registry.hpp"

namespace tessel::jit::tune {
namespace {
std::mutex g_factory_mu;
TimerFactory g_factory;
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

DbKey current_db_key(std::string kernel, std::string key) {
  Device& d = Device::current();
  return DbKey{std::move(kernel), std::move(key), d.name(), d.arch(), cache::tessel_version()};
}

std::string signature_of(const KernelEntry& e) { return signature_of(*e.build_ir(e.defaults, {})); }

namespace detail {

void check_resources(const Autotune& at, const Executable& e) {
  const int local = e.info().local_bytes;
  if (at.prune_spills && local > 0)
    throw std::runtime_error(fmt::format("uses {} bytes of local memory per thread (register spills)", local));
}

Config choose_config(const std::string& kernel, const std::string& key, const Autotune& at,
                     const std::function<Problem()>& make_problem) {
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
  std::vector<Config> missing;
  for (const Config& c : at.configs)
    if (!db.result(k, c)) missing.push_back(c);
  if (!missing.empty()) {
    if (std::unique_ptr<Timer> timer = tuning_timer()) {
      Problem p = make_problem();
      TuneOptions opts;
      opts.prune = at.prune;
      opts.budget_s = at.budget_s;
      TuneReport r = tune(p, missing, *timer, opts);
      if (p.reset) p.reset();  // the launch that follows sees the inputs its caller left
      // A device fault during the tuning (a sticky error: every call fails from then on) made
      // every config after it fail, which says nothing about them: nothing of this tuning may
      // outlive the process. Synchronizing surfaces such a fault here, as the CudaError naming
      // it, before anything is saved.
      Device::current().synchronize();
      Database fresh;
      record(fresh, k, r);
      db.merge(fresh);
      if (!path.empty()) {
        try {
          fresh.save(path);  // merges with the file as it is now
        } catch (const std::exception& e) {
          cache::io::report_once("tune-db-save:" + path.string(), fmt::format("{} (tuned results not kept)", e.what()));
        }
      }
    }
  }
  if (std::optional<Config> best = db.best(k, at.configs)) return *best;
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
                                       kernel, key, at.configs.front().str(), why));
  return at.configs.front();
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
