// TESSEL_PRINT_AUTOTUNING=1: launch_tuned says what it chose, through the log, at any level.
#include <doctest/doctest.h>

#include "../common/log_capture.hpp"
#include "tessel/jit/kernel.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tune_test_util.hpp"

using namespace tessel;
using namespace tessel::jit::tune;
using tessel::rt::LogLevel;
using tessel_test::LogCapture;
using tune_test::EnvVar;
using tune_test::TempDir;

namespace {

std::vector<Config> block_configs(std::initializer_list<int64_t> bs) {
  std::vector<Config> cs;
  for (int64_t b : bs) cs.push_back(Config{jit::Meta{{"BLOCK", b}}, {4, 1}});
  return cs;
}

// Tunes `add` for n with a timer that gives the i-th config timed `times[i]` ms.
void tune_add(const std::vector<Config>& cs, const std::vector<double>& times, int64_t n) {
  set_timer_factory([times] {
    auto t = std::make_unique<tune_test::FakeTimer>();
    t->next = [t = t.get(), times] { return times[(t->calls - 1) % times.size()]; };
    return t;
  });
  Autotune at;
  at.configs = cs;
  at.key = KeySpec{{{"n"}}};
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, at};
  std::vector<float> h(n, 1.0f);
  jit::Array<float> x(h), y(h), out(n);
  const Config& got = k.launch_tuned([n](const jit::Meta& m) { return jit::Grid{jit::cdiv(n, m["BLOCK"])}; }, x,
                                     y, out, n);
  set_timer_factory(nullptr);
  CHECK(got == cs[1]);  // the times below make the second config the fastest
}

}  // namespace

TEST_CASE("TESSEL_PRINT_AUTOTUNING=1 prints the tuner's choice whatever TESSEL_LOG hides") {
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  const auto cs = block_configs({128, 64, 256});
  LogCapture cap(LogLevel::Error);  // forced output: shown even at error
  {
    EnvVar print("TESSEL_PRINT_AUTOTUNING", "1");
    tune_add(cs, {0.3, 0.1, 0.2}, 1000);
  }
  auto said = cap.matching("autotune add");
  REQUIRE(said.size() == 1);
  CHECK(said[0].first == LogLevel::Info);
  // FakeTimer's samples are t, 1.01t, 1.02t: the median of the fastest is 0.101 ms.
  const std::string want = "autotune add n=1024;sig=f32,f32,f32: chose " + cs[1].str() + " (0.101 ms) of 3 configs in ";
  CHECK_MESSAGE(said[0].second.rfind(want, 0) == 0, said[0].second);
  CHECK(said[0].second.size() > want.size());
  CHECK(said[0].second.substr(said[0].second.size() - 2) == " s");

  // Unset (and "0"): tuning another key says nothing.
  {
    EnvVar print("TESSEL_PRINT_AUTOTUNING", std::nullopt);
    tune_add(cs, {0.3, 0.1, 0.2}, 3000);
  }
  {
    EnvVar print("TESSEL_PRINT_AUTOTUNING", "0");
    tune_add(cs, {0.3, 0.1, 0.2}, 5000);
  }
  CHECK(cap.matching("autotune add").size() == 1);
}
