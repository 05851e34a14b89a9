// What a Kernel declares to be autotuned, and the policy launch_tuned follows to pick a config.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessel/ir/types.hpp"
#include "tessel/jit/executable.hpp"
#include "tessel/jit/tune/config.hpp"
#include "tessel/jit/tune/database.hpp"
#include "tessel/jit/tune/key.hpp"
#include "tessel/jit/tune/timing.hpp"
#include "tessel/jit/tune/tuner.hpp"

namespace tessel::jit {
struct KernelEntry;
}

namespace tessel::jit::tune {

// The arguments of the launch being tuned, as Autotune::reference sees them: the contents of
// every Array argument of numbers (read back as doubles before any config ran) and the value of
// every scalar, by parameter name.
class HostArgs {
 public:
  // An Array argument's values. std::invalid_argument when `name` is not a parameter, not a
  // pointer, or was passed as a DevicePtr (whose size the launcher does not know).
  const std::vector<double>& array(std::string_view name) const;
  // An integer (Int, Long) or floating (Float, Double) argument's value; std::invalid_argument
  // when `name` is not such a parameter.
  int64_t integer(std::string_view name) const;
  double floating(std::string_view name) const;

  // For Kernel::make_problem: parameters in order.
  void add_array(std::string name, std::optional<std::vector<double>> values);  // nullopt: a DevicePtr
  void add_integer(std::string name, int64_t v);
  void add_floating(std::string name, double v);

 private:
  struct Arg {
    std::string name;
    enum Kind { Buffer, Integer, Floating } kind;
    std::optional<std::vector<double>> values;
    int64_t integer = 0;
    double floating = 0;
  };
  const Arg& find(std::string_view name, Arg::Kind kind) const;
  std::vector<Arg> args_;
};

// What a prune predicate knows of the problem being tuned (Autotune::prune): the tuning key's
// values, every integer argument and every Array argument's size, by parameter name, and the
// meta-parameters launch_tuned fixed. A choice is shared by every problem of the key, so a
// predicate that decides on key() (the bucketed value: a power of two >= the argument for
// Bucket::PowerOfTwo) decides the same for all of them; integer() and size() are the arguments
// of the launch that tuned (or, for a key tuned earlier, of the first launch in this process).
class ProblemInfo {
 public:
  const std::string& kernel() const { return kernel_; }
  const std::string& key_string() const { return key_string_; }  // the database key ("n=1024;sig=...")
  // A key parameter's bucketed value; std::invalid_argument when `name` is not in the KeySpec.
  int64_t key(std::string_view name) const;
  // An integer (Int, Long) argument's value; std::invalid_argument when `name` is not one.
  int64_t integer(std::string_view name) const;
  // The number of elements of an Array argument; std::invalid_argument when `name` is not an
  // Array argument (a DevicePtr's size is unknown).
  size_t size(std::string_view name) const;
  const Meta& fixed() const { return fixed_; }  // launch_tuned's fixed meta-parameters

  // For Kernel: the problem's description, in any order.
  void set_kernel(std::string kernel, std::string key_string);
  void add_key(std::string name, int64_t bucketed);
  void add_integer(std::string name, int64_t v);
  void add_size(std::string name, size_t elements);
  void set_fixed(Meta m) { fixed_ = std::move(m); }

 private:
  std::string kernel_, key_string_;
  std::vector<std::pair<std::string, int64_t>> keys_, integers_;
  std::vector<std::pair<std::string, size_t>> sizes_;
  Meta fixed_;
};

// Autotune::prune: a predicate on the config alone, bool(const Config&) (as before), or on the
// config and the problem, bool(const Config&, const ProblemInfo&), for a shape-dependent space
// (BLOCK >= cols, split-K only for skinny shapes). false: the config is not tried ("pruned").
class Prune {
 public:
  using Fn = std::function<bool(const Config&, const ProblemInfo&)>;
  Prune() = default;
  Prune(std::nullptr_t) {}
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, Prune> &&
             (std::is_invocable_r_v<bool, const F&, const Config&, const ProblemInfo&> ||
              std::is_invocable_r_v<bool, const F&, const Config&>))
  Prune(F f) {
    if constexpr (requires { f.target_type(); })  // a std::function: an empty one stays "no predicate"
      if (!f) return;
    if constexpr (std::is_invocable_r_v<bool, const F&, const Config&, const ProblemInfo&>)
      fn_ = std::move(f);
    else
      fn_ = [g = std::move(f)](const Config& c, const ProblemInfo&) { return static_cast<bool>(g(c)); };
  }
  explicit operator bool() const { return static_cast<bool>(fn_); }
  // true (keep) without a predicate.
  bool operator()(const Config& c, const ProblemInfo& p) const { return !fn_ || fn_(c, p); }

 private:
  Fn fn_;
};

// The output check's default tolerance for an output of scalar type `s`, for rtol and atol:
// f16 1e-2, bf16 2e-2 (a reduction in another order, or an f32 intermediate rounded once more,
// moves a 16-bit result by an ulp or two), f32 and f64 rtol 1e-5 / atol 1e-6, integers and i1
// exact (0). For several outputs Kernel::make_problem takes the loosest of theirs.
struct Tolerance {
  double rtol = 1e-5, atol = 1e-6;
};
Tolerance default_tolerance(ir::Scalar s);

// Appends the `n` elements of scalar type `s` held in `data` (the device's bytes, read back) to
// `out` as doubles: f16 and bf16 decoded from their bits, integers as their values.
void append_as_doubles(ir::Scalar s, const void* data, size_t n, std::vector<double>& out);

// The positions of an output of `n` elements the check reads (Autotune::check_elements = max):
// every one when max is 0 or n <= max, else an evenly spaced subset of about `max` with an odd
// stride (on a row-major matrix whose width is a power of two it covers every column), the last
// element included.
std::vector<size_t> check_positions(size_t n, size_t max);

// A kernel's config space and tuning key (give it to Kernel's constructor or Kernel::autotune).
struct Autotune {
  std::vector<Config> configs;  // the first is the fallback when nothing is tuned
  KeySpec key;                  // integer kernel parameters, by name
  Prune prune{};                // false: do not try this config (see Prune)
  // Parameters (Array arguments) whose buffers the kernel writes and later runs would see: saved
  // before tuning, restored before every tuning run and once after tuning.
  std::vector<std::string> restore{};
  // Reject configs whose compiled code uses local memory (spills): reported as Status::Pruned,
  // reason "spills (N bytes of local memory per thread)".
  bool prune_spills = true;
  // Seconds of timing for the whole tuning of one key, split evenly across its configs
  // (TuneOptions::budget_s); 0: `timer` per config.
  double budget_s = 0;
  // Parameters (Array arguments of arithmetic element type, or DevicePtr arguments given a size in
  // output_sizes) checked after one run of each config while tuning (Problem::output; poisoned
  // with 0xFF bytes before that run, so an output the kernel also reads must be in `restore`): a
  // config that computes something else is rejected. f16/bf16 elements are compared as numbers.
  std::vector<std::string> outputs{};
  // What the outputs must hold, computed on the host from the launch's arguments: the values of
  // every `outputs` parameter, concatenated in that order (Problem::reference; it reads an output
  // that is not in `restore` poisoned, as a run would find it). Without it the
  // configs are compared with each other and only a strict majority is accepted (tune()).
  std::function<std::vector<double>(const HostArgs&)> reference{};
  // The output check's tolerance (Problem::rtol, atol); unset: default_tolerance of the outputs'
  // element types (the loosest of them).
  std::optional<double> rtol{}, atol{};
  // The most elements of each output the check reads back and compares (check_positions: an
  // evenly spaced subset when the output is larger; 0: every element). Bounds the check's host
  // memory and time on huge outputs (a wide-row softmax of 2^28 elements would otherwise be read
  // back as 2 GiB of doubles per config); the reference still computes every value, and only the
  // same positions of it are compared.
  size_t check_elements = size_t{1} << 24;
  // How each config is timed (TuneOptions::timer): its budget_ms is the per-config budget
  // (default 200 ms) when budget_s is 0.
  TimerOptions timer{};
  // The number of elements of `outputs` parameters passed as DevicePtr (whose size the launcher
  // does not know), by name, from the problem (for example rows * cols).
  std::vector<std::pair<std::string, std::function<size_t(const ProblemInfo&)>>> output_sizes{};
};

// What launch_tuned_choice returns: the config launched and where it came from.
struct TuneChoice {
  enum class Source {
    Tuned,     // tuned by this process for this key (at this launch or an earlier one)
    Database,  // the tuning database's fastest recorded config for this device
    Fallback,  // nothing tuned: the first config the prune keeps (untimed)
  };
  Config config;
  std::optional<double> median_ms;  // its measured median time; nullopt for a Fallback
  Source source = Source::Fallback;
};
std::string_view source_name(TuneChoice::Source s);  // "tuned", "database", "fallback"

// TESSEL_AUTOTUNE unset or not "0".
bool autotune_enabled();

// What launch_tuned times with. Tests install a factory; an empty one restores the default:
// the GPU timer when the current Device is the GPU, else none.
using TimerFactory = std::function<std::unique_ptr<Timer>()>;
void set_timer_factory(TimerFactory f);
// A timer to tune with now, or nullptr when launch_tuned must not tune (TESSEL_AUTOTUNE=0, or
// the interpreter without an installed factory).
std::unique_ptr<Timer> tuning_timer();

// The database key for `kernel` at `key` on the current Device with this tessel's version.
DbKey current_db_key(std::string kernel, std::string key);

// signature_of the kernel traced with its defaults.
std::string signature_of(const KernelEntry& e);

namespace detail {
// Throws ConfigPruned ("spills (N bytes of local memory per thread)") when `e` uses local memory
// and the spec prunes spills.
void check_resources(const Autotune& at, const Executable& e);
// The TuneOptions launch_tuned tunes `at` with for the problem `info` (prune, budget, timer).
TuneOptions tune_options(const Autotune& at, const ProblemInfo& info);
// launch_tuned's choice when the kernel has none in memory for info.key_string(): the fastest Ok
// config of the Database entry for this device among the configs at.prune keeps for `info`;
// configs with no recorded result are tuned first when tuning_timer() gives a timer (their
// results recorded and saved to Database::default_path()); else the first config the prune keeps
// (at.configs.front() when it keeps none). Database I/O failures are reported once to stderr and
// otherwise ignored: a launch does not fail because of the tuning file.
TuneChoice choose_config(const Autotune& at, const ProblemInfo& info, const std::function<Problem()>& make_problem);

// Device buffers saved by value and copied back on restore() (Autotune::restore).
class SavedBuffers {
 public:
  SavedBuffers() = default;
  ~SavedBuffers();
  SavedBuffers(const SavedBuffers&) = delete;
  SavedBuffers& operator=(const SavedBuffers&) = delete;
  void save(uint64_t addr, size_t bytes);  // copies now, on the current Device
  void restore() const;
  bool empty() const { return saved_.empty(); }

 private:
  struct Saved {
    uint64_t original, copy;
    size_t bytes;
  };
  std::vector<Saved> saved_;
};
}  // namespace detail

}  // namespace tessel::jit::tune
