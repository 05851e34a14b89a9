// A kernel plugin for the CLI tests: kernels that make a user mistake under -D MISTAKE=1 (or 2), which must be the user's error (exit 1: a CompileError at its line, or one naming the kernel), not a VerifyError or an internal error (exit 2).
#include <stdexcept>
#include <vector>

#include "tessel/jit/registry.hpp"
#include "tessel/tessel.hpp"

using namespace tessel::lang;

// Registering a kernel traces it with its defaults (MISTAKE=0: a correct kernel); the CLI tests
// compile it with -D MISTAKE=1.
namespace {
// [1024, 1] + [1, 2048]: each side fits the 2^20-element limit, their broadcast does not.
void mistake_broadcast_kernel(Ptr<f32> out, const Meta& m) {
  auto rows = arange(0, 1024);
  auto cols = arange(0, m["MISTAKE"] ? 2048 : 1024);
  store(out + rows.col() * 2048 + cols.row(), 1.0f);
}

// One range() object iterated twice.
void mistake_range_twice_kernel(Ptr<i32> out, Int n, const Meta& m) {
  Var acc(0);
  auto r = range(0, n);
  for (auto i : r) acc += i;
  if (m["MISTAKE"])
    for (auto i : r) acc += i;
  store(out, acc);
}

// break in a loop whose (declared) Var is used after it.
void mistake_break_var_kernel(Ptr<i32> out, Int n, const Meta& m) {
  Var acc(0);
  for (auto i : range(0, n)) {
    acc += i;
    if (m["MISTAKE"]) break;
  }
  store(out, acc);
}

// The kernel's own C++ throws (issue 23 #12): a std::runtime_error of its own under MISTAKE=1, a
// std::out_of_range from its own container under MISTAKE=2. The user's code, so exit 1 naming the
// kernel ("error in kernel mistake_throws: ..."), not an internal error.
void mistake_throws_kernel(Ptr<f32> out, const Meta& m) {
  if (m["MISTAKE"] == 1) throw std::runtime_error("the kernel's own check failed");
  const std::vector<float> scales{0.5f, 2.0f};
  store(out, scales.at(m["MISTAKE"] == 2 ? 7 : 0));
}

const Meta kDefaults{{"MISTAKE", 0}};
tessel::jit::Kernel k_broadcast{"mistake_broadcast", &mistake_broadcast_kernel, {"out"}, kDefaults};
tessel::jit::Kernel k_range_twice{"mistake_range_twice", &mistake_range_twice_kernel, {"out", "n"}, kDefaults};
tessel::jit::Kernel k_break_var{"mistake_break_var", &mistake_break_var_kernel, {"out", "n"}, kDefaults};
tessel::jit::Kernel k_throws{"mistake_throws", &mistake_throws_kernel, {"out"}, kDefaults};
}  // namespace

TESSEL_PLUGIN_KERNELS(registry) {
  registry.add(tessel::jit::entry_of(k_broadcast, "a broadcast past 2^20 elements under MISTAKE=1"));
  registry.add(tessel::jit::entry_of(k_range_twice, "one range() iterated twice under MISTAKE=1"));
  registry.add(tessel::jit::entry_of(k_break_var, "break with a Var used after the loop under MISTAKE=1"));
  registry.add(tessel::jit::entry_of(k_throws, "its own code throws under MISTAKE=1 (runtime_error), 2 (out_of_range)"));
}
