// `tessel compile KERNEL --emit tir`: trace a registered kernel and print a compilation stage.
#include <fmt/format.h>

#include "commands.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/jit/emit.hpp"

namespace tessel::cli {

void add_compile(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("compile", "Compile a kernel and print one stage");
  static std::string kernel, emit = "tir", arch = "sm_90";
  static int num_warps = 4;
  static std::vector<std::string> defines;
  static bool locs = false, aligned = false;
  cmd->add_option("kernel", kernel, "Kernel name (see tessel list)")->required();
  cmd->add_option("--emit", emit, "Stage to print: tir (tile IR after passes), llir (LLVM IR), ptx")
      ->check(CLI::IsMember({"tir", "llir", "ptx"}));
  cmd->add_option("--arch", arch, "GPU architecture for llir/ptx")->check(CLI::IsMember({"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}));
  cmd->add_option("--num-warps", num_warps, "Warps per program for llir/ptx")->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  cmd->add_option("-D", defines, "Meta-parameter NAME=VALUE (repeatable)");
  cmd->add_flag("--locs", locs, "Print source locations in the tile IR");
  cmd->add_flag("--aligned", aligned,
                "Specialise as a launch whose pointers and integers are all divisible by 16 would be");
  cmd->callback([&rc] {
    const jit::KernelEntry* k = jit::Registry::global().find(kernel);
    if (!k) throw UsageError(fmt::format("unknown kernel '{}' (see tessel list)", kernel));
    jit::Meta meta = parse_defines(defines);
    for (const auto& [name, v] : meta.values())
      if (!k->defaults.has(name))
        throw UsageError(fmt::format("kernel '{}' has no meta-parameter '{}' (it has: {})", kernel, name,
                                     k->defaults.str()));
    std::vector<ir::ParamSpec> specs;
    if (aligned) specs.assign(k->params.size(), ir::ParamSpec{true, false});
    auto f = k->build_ir(meta, specs);
    jit::Stage stage = jit::parse_stage(emit);
    if (stage == jit::Stage::TileIR) fmt::print("{}", ir::print(*f, {.locs = locs}));
    else fmt::print("{}", jit::emit(*f, stage, arch, jit::CompileOptions{num_warps, 1}));
    rc = 0;
  });
}

}  // namespace tessel::cli
