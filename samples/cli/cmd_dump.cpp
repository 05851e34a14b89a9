// `tessel dump KERNEL DIR`: every compilation stage of a kernel (tile IR, LLVM IR, PTX, cubin, meta).
#include <fmt/format.h>

#include "commands.hpp"
#include "tessel/jit/cache.hpp"

namespace tessel::cli {

void add_dump(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("dump", "Write every compilation stage of a kernel into DIR/<kernel>-<key>/");
  static std::string kernel, dir, arch = "sm_90";
  static std::vector<std::string> defines;
  static int num_warps = 4, num_stages = 1;
  static std::vector<std::string> ones;
  static bool aligned = false, no_cubin = false;
  cmd->add_option("kernel", kernel, "Kernel name (see tessel list)")->required();
  cmd->add_option("dir", dir, "Output directory")->required();
  cmd->add_option("-D", defines, "Meta-parameter NAME=VALUE (repeatable)");
  cmd->add_option("--arch", arch, "GPU architecture")->check(CLI::IsMember({"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}));
  cmd->add_option("--num-warps", num_warps, "Warps per program")->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  cmd->add_option("--num-stages", num_stages, "Software-pipelining depth of runtime loops")->check(CLI::Range(1, 8));
  cmd->add_flag("--aligned", aligned, "Specialise as an aligned launch (all pointers and integers divisible by 16)");
  cmd->add_option("--one", ones, "Specialise integer parameter NAME as equal to 1 (a unit stride; repeatable)");
  cmd->add_flag("--no-cubin", no_cubin, "Skip the cubin (otherwise made by the driver or ptxas when present)");
  cmd->callback([&rc] {
    auto f = trace_registered(kernel, defines, aligned, ones);
    jit::cache::Entry e = jit::cache::compile_entry(*f, jit::CompileOptions{num_warps, num_stages}, arch, !no_cubin);
    // An unwritable DIR is the user's input: exit 1, never a "wrote" line for files not written.
    if (std::string why = jit::cache::write_dump(dir, e); !why.empty()) throw UsageError(fmt::format("dump: {}", why));
    fmt::print("wrote {}/{}-* (tir, ll, ptx{}, meta.json)\n", dir, kernel, e.cubin.empty() ? "" : ", cubin");
    rc = 0;
  });
}

}  // namespace tessel::cli
