// A kernel plugin whose kernels break the compiler's invariants: the CLI tests' way to exit 2.
//
// The CLI promises exit status 2 for an internal error (a tessel bug, not the user's mistake).
// A correct tessel never produces one from the samples, so this plugin hands the compiler what a
// buggy front end would: entries made by hand (not by entry_of, which traces at registration),
// whose build_ir fails only when a command asks for the kernel.
#include <string>

#include "tessel/ir/error.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/jit/build_ir.hpp"
#include "tessel/jit/registry.hpp"

namespace {

// Tile IR that parses but breaks an op rule: `mul` of an f32 tile by an i32 tile. A DSL that let
// this through would reach finish_ir's verifier, which reports it as a tessel bug (VerifyError).
constexpr const char* kMixedMul = R"(kernel @plugin_bad_ir(%x: ptr<f32>, %out: ptr<f32>, %n: i32) {
  %0 = arange {end = 64, start = 0} : i32[64]
  %1 = splat %n : i32[64]
  %2 = cmp_lt %0, %1 : i1[64]
  %3 = splat %x : ptr<f32>[64]
  %4 = addptr %3, %0 : ptr<f32>[64]
  %5 = load %4, %2 : f32[64]
  %6 = mul %5, %1 : f32[64]
  %7 = splat %out : ptr<f32>[64]
  %8 = addptr %7, %0 : ptr<f32>[64]
  store %8, %6, %2
}
)";

tessel::jit::KernelEntry hand_made(std::string name, std::string description) {
  tessel::jit::KernelEntry e;
  e.name = std::move(name);
  e.description = std::move(description);
  e.params = {"x: ptr<f32>", "out: ptr<f32>", "n: i32"};
  return e;
}

}  // namespace

TESSEL_PLUGIN_KERNELS(registry) {
  auto bad_ir = hand_made("plugin_bad_ir", "IR that fails the verifier (exit 2)");
  bad_ir.build_ir = [](const tessel::lang::Meta&, std::vector<tessel::ir::ParamSpec>) {
    return tessel::jit::finish_ir(tessel::ir::parse(kMixedMul));
  };
  registry.add(std::move(bad_ir));

  // A compiler invariant that does not hold (TESSEL_ASSERT throws InternalError, never aborts).
  auto broken = hand_made("plugin_broken_invariant", "a failed TESSEL_ASSERT (exit 2)");
  broken.build_ir = [](const tessel::lang::Meta&,
                       std::vector<tessel::ir::ParamSpec>) -> std::unique_ptr<tessel::ir::Function> {
    const int traced_ops = 0;  // what a tracer that lost the kernel body would report
    TESSEL_ASSERT(traced_ops > 0, "the kernel traced to no ops");
    return nullptr;
  };
  registry.add(std::move(broken));

  // Plugin code that throws something that is not a std::exception (issue 23 #7: the CLI used to
  // terminate, exit 134). The CLI catches everything at its boundary: exit 2 with a message.
  auto throws_int = hand_made("plugin_throws_int", "throws an int while tracing (exit 2)");
  throws_int.build_ir = [](const tessel::lang::Meta&,
                           std::vector<tessel::ir::ParamSpec>) -> std::unique_ptr<tessel::ir::Function> {
    throw 42;
  };
  registry.add(std::move(throws_int));
}
