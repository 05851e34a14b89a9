// `tessel compile KERNEL --emit tir|plan|llir|ptx|cubin|sass`: trace a registered kernel and output one stage.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "commands.hpp"
#include "option_flags.hpp"
#include "names.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/jit/cubin.hpp"
#include "tessel/jit/emit.hpp"
#include "tessel/jit/sass.hpp"
#include "tessel/jit/targets.hpp"
#include "tessel/runtime/ptxas.hpp"

namespace tessel::cli {
namespace {

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UsageError(fmt::format("cannot write '{}'", path));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw UsageError(fmt::format("cannot write '{}'", path));
}

// The driver's linker when this machine has a GPU of `arch`, else ptxas.
jit::Cubin cubin_for(const std::string& ptx, const std::string& arch) {
  if (std::optional<jit::Cubin> c = jit::driver_cubin(ptx, arch)) return std::move(*c);
  if (rt::find_ptxas().empty())
    throw UsageError(fmt::format("cannot make a cubin for {}: no CUDA driver with such a GPU, and no ptxas ({})",
                                 arch, rt::ptxas_not_found_hint()));
  return jit::ptxas_cubin(ptx, arch);
}

}  // namespace

std::unique_ptr<ir::Function> trace_registered(const std::string& kernel, const std::vector<std::string>& defines,
                                               bool aligned, const std::vector<std::string>& ones) {
  const jit::KernelEntry* k = &kernel_for("compile", kernel);
  jit::Meta meta = parse_defines(defines);
  check_defines(meta, {k}, fmt::format("kernel '{}'", kernel));
  std::vector<ir::ParamSpec> specs;
  if (aligned || !ones.empty()) specs.assign(k->params.size(), ir::ParamSpec{aligned, false});
  for (const std::string& name : ones) {
    // params read "name: type"
    auto it = std::find_if(k->params.begin(), k->params.end(),
                           [&](const std::string& p) { return p.substr(0, p.find(':')) == name; });
    if (it == k->params.end())
      throw UsageError(fmt::format("kernel '{}' has no parameter '{}' (--one)", kernel, name));
    // "x: ptr<f32>" -> "ptr<f32>". Only an integer can be a unit stride (as export --one requires).
    std::string type = it->substr(it->find(':') + 1);
    type.erase(0, type.find_first_not_of(' '));
    if (type != "i32" && type != "i64")
      throw UsageError(fmt::format("--one {}: parameter '{}' of kernel '{}' is {}; --one specialises an integer "
                                   "parameter (i32 or i64) as equal to 1",
                                   name, name, kernel, type));
    specs[it - k->params.begin()] = ir::ParamSpec{false, true};
  }
  return k->build_ir(meta, specs);
}

void add_compile(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("compile", "Compile a kernel and print (or write) one stage");
  static std::string kernel, emit = "tir", arch = "sm_90", output;
  static jit::CompileOptions opts;
  static std::vector<std::string> defines;
  static std::vector<std::string> ones;
  static bool locs = false, aligned = false;
  cmd->add_option("kernel", kernel, "Kernel name (see tessel list)")->required();
  cmd->add_option("--emit", emit,
                  "Stage: tir (tile IR after passes), plan (the lowering's kernel plan: layouts, tensor-core "
                  "plans, each loop's schedule, rings, tensor maps, shared-memory slots and barriers, the launch), llir (LLVM IR), ptx, cubin (needs -o; made by the driver "
                  "when this machine has such a GPU, else by ptxas), sass (the cubin disassembled by nvdisasm or "
                  "cuobjdump -sass from the CUDA toolkit)")
      ->check(CLI::IsMember({"tir", "plan", "llir", "ptx", "cubin", "sass"}));
  cmd->add_option("--arch", arch, "GPU architecture for plan/llir/ptx/cubin")->check(CLI::IsMember(jit::known_archs()));
  add_option_flags(cmd, opts, "For plan/llir/ptx/cubin: ");
  cmd->add_option("-D", defines, "Meta-parameter NAME=VALUE (repeatable)");
  cmd->add_option("-o,--output", output, "Write the stage to FILE instead of standard output");
  cmd->add_flag("--locs", locs, "Print source locations in the tile IR");
  cmd->add_flag("--aligned", aligned,
                "Specialise as a launch whose pointers and integers are all divisible by 16 would be");
  cmd->add_option("--one", ones, "Specialise integer parameter NAME as equal to 1, as a unit-stride launch would be (repeatable)");
  cmd->callback([&rc] {
    if (emit == "cubin" && output.empty()) throw UsageError("--emit cubin needs -o FILE (a cubin is binary)");
    if (emit == "sass") (void)jit::require_disassembler();  // before compiling: the tool is what is missing
    auto f = trace_registered(kernel, defines, aligned, ones);
    check_option_flags(opts);
    std::string text;
    if (emit == "tir") {
      text = ir::print(*f, {.locs = locs});
    } else if (emit == "cubin") {
      jit::Cubin c = cubin_for(jit::emit(*f, jit::Stage::Ptx, arch, opts), arch);
      write_file(output, std::string_view(c.image.data(), c.image.size()));
      fmt::print("wrote {} ({} bytes, {} cubin by {}, registers: {})\n", output, c.image.size(), c.arch, c.tool,
                 c.registers < 0 ? std::string("unknown") : std::to_string(c.registers));
      rc = 0;
      return;
    } else if (emit == "sass") {
      text = jit::disassemble(cubin_for(jit::emit(*f, jit::Stage::Ptx, arch, opts), arch).image);
    } else {
      text = jit::emit(*f, jit::parse_stage(emit), arch, opts);
    }
    if (output.empty()) fmt::print("{}", text);
    else write_file(output, text);
    rc = 0;
  });
}

}  // namespace tessel::cli
