// What a Kernel declares to be autotuned, and the policy launch_tuned follows to pick a config.
#pragma once
#include <functional>
#include <memory>
#include <string>
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

// A kernel's config space and tuning key (give it to Kernel's constructor or Kernel::autotune).
struct Autotune {
  std::vector<Config> configs;  // the first is the fallback when nothing is tuned
  KeySpec key;                  // integer kernel parameters, by name
  std::function<bool(const Config&)> prune;  // false: do not try this config
  // Parameters (Array arguments) whose buffers the kernel writes and later runs would see: saved
  // before tuning, restored before every tuning run and once after tuning.
  std::vector<std::string> restore;
  bool prune_spills = true;  // reject configs whose compiled code uses local memory (spills)
  double budget_s = 0;       // TuneOptions::budget_s for tuning at launch (0: TimerOptions defaults)
  // Parameters (Array arguments of arithmetic element type) compared across configs after one
  // run each while tuning (Problem::output): a config that computes something else is rejected.
  std::vector<std::string> outputs{};
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
