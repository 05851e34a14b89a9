// What a Kernel declares to be autotuned, and the policy launch_tuned follows to pick a config.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// A kernel's config space and tuning key (give it to Kernel's constructor or Kernel::autotune).
struct Autotune {
  std::vector<Config> configs;  // the first is the fallback when nothing is tuned
  KeySpec key;                  // integer kernel parameters, by name
  std::function<bool(const Config&)> prune{};  // false: do not try this config
  // Parameters (Array arguments) whose buffers the kernel writes and later runs would see: saved
  // before tuning, restored before every tuning run and once after tuning.
  std::vector<std::string> restore{};
  bool prune_spills = true;  // reject configs whose compiled code uses local memory (spills)
  double budget_s = 0;       // TuneOptions::budget_s for tuning at launch (0: TimerOptions defaults)
  // Parameters (Array arguments of arithmetic element type) checked after one run of each config
  // while tuning (Problem::output; poisoned with 0xFF bytes before that run, so an output the
  // kernel also reads must be in `restore`): a config that computes something else is rejected.
  std::vector<std::string> outputs{};
  // What the outputs must hold, computed on the host from the launch's arguments: the values of
  // every `outputs` parameter, concatenated in that order (Problem::reference; it reads an output
  // that is not in `restore` poisoned, as a run would find it). Without it the
  // configs are compared with each other and only a strict majority is accepted (tune()).
  std::function<std::vector<double>(const HostArgs&)> reference{};
  double rtol = 1e-5, atol = 1e-6;  // the output check's tolerance (Problem::rtol, atol)
};

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
// Throws std::runtime_error when `e` uses local memory and the spec prunes spills.
void check_resources(const Autotune& at, const Executable& e);
// launch_tuned's choice when the kernel has none in memory for `key`: the fastest Ok config of
// the Database entry for this device among at.configs; configs with no recorded result are
// tuned first when tuning_timer() gives a timer (their results recorded and saved to
// Database::default_path()); else at.configs.front(). Database I/O failures are reported once
// to stderr and otherwise ignored: a launch does not fail because of the tuning file.
Config choose_config(const std::string& kernel, const std::string& key, const Autotune& at,
                     const std::function<Problem()>& make_problem);

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
