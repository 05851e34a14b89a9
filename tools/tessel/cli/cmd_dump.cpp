// `tessel dump KERNEL -o DIR`: every compilation stage of a kernel (tile IR, LLVM IR, PTX, cubin, meta).
#include <fmt/format.h>

#include "commands.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/jit/targets.hpp"

namespace tessel::cli {

void add_dump(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("dump", "Write every compilation stage of a kernel into DIR/<kernel>-<key>/");
  static std::string kernel, dir, dir_positional, arch = "sm_90";
  static std::vector<std::string> defines;
  static int num_warps = 4, num_stages = 1;
  static std::vector<std::string> ones;
  static bool aligned = false, no_cubin = false;
  cmd->add_option("kernel", kernel, "Kernel name (see tessel list)")->required();
  // -o like every command that writes; the positional DIR of earlier versions still works.
  cmd->add_option("-o,--output", dir, "Output directory (the entry goes into DIR/<kernel>-<key>/)");
  cmd->add_option("dir", dir_positional, "Output directory (the older form of -o DIR)");
  cmd->add_option("-D", defines, "Meta-parameter NAME=VALUE (repeatable)");
  cmd->add_option("--arch", arch, "GPU architecture")->check(CLI::IsMember(jit::known_archs()));
  cmd->add_option("--num-warps", num_warps, "Warps per program")->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  cmd->add_option("--num-stages", num_stages, "Software-pipelining depth of runtime loops")->check(CLI::Range(1, 8));
  cmd->add_flag("--aligned", aligned, "Specialise as an aligned launch (all pointers and integers divisible by 16)");
  cmd->add_option("--one", ones, "Specialise integer parameter NAME as equal to 1 (a unit stride; repeatable)");
  cmd->add_flag("--no-cubin", no_cubin, "Skip the cubin (otherwise made by the driver or ptxas when present)");
  cmd->callback([&rc] {
    if (!dir.empty() && !dir_positional.empty() && dir != dir_positional)
      throw UsageError(fmt::format("dump: two output directories given ('{}' by -o, '{}' after the kernel)", dir,
                                   dir_positional));
    if (dir.empty()) dir = dir_positional;
    if (dir.empty()) throw UsageError("dump: no output directory (give -o DIR)");
    auto f = trace_registered(kernel, defines, aligned, ones);
    jit::cache::Entry e = jit::cache::compile_entry(*f, jit::CompileOptions{num_warps, num_stages}, arch, !no_cubin);
    // An unwritable DIR is the user's input: exit 1, never a "wrote" line for files not written.
    if (std::string why = jit::cache::write_dump(dir, e); !why.empty()) throw UsageError(fmt::format("dump: {}", why));
    fmt::print("wrote {}/{}-* (tir, plan, ll, ptx{}, meta.json)\n", dir, kernel, e.cubin.empty() ? "" : ", cubin");
    rc = 0;
  });
}

}  // namespace tessel::cli
