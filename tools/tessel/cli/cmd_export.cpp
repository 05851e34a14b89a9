// `tessel export KERNEL... --out DIR`: compile kernels ahead of time into a bundle (+ typed launchers).
#include <fmt/format.h>

#include "commands.hpp"
#include "tessel/jit/targets.hpp"
#include "option_flags.hpp"
#include "names.hpp"
#include "tessel/jit/bundle_writer.hpp"

namespace tessel::cli {

void add_export(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("export", "Compile kernels ahead of time into a bundle for tessel::runtime (+ launchers)");
  cmd->footer("A bundle holds PTX per arch, cubins when ptxas is found, and bundle.json; tessel::rt::Bundle loads it\n"
              "in programs without the compiler. --header writes typed C++ launchers over it.");
  static std::vector<std::string> kernels, defines, ones;
  static std::vector<std::string> archs{"sm_80", "sm_90"};
  static std::string out, header, ns = "tessel_kernels", pack;
  static jit::CompileOptions compile;
  static bool all = false, no_cubin = false;
  cmd->add_option("kernels", kernels, "Kernel names (see tessel list)");
  cmd->add_flag("--all", all, "Export every registered kernel");
  cmd->add_option("-o,--out", out, "Bundle directory to write (replaced atomically if it holds a bundle)")->required();
  cmd->add_option("--arch", archs, "Target architectures, comma-separated (PTX for each; cubins when ptxas is found)")
      ->delimiter(',')
      ->check(CLI::IsMember(jit::known_archs()));
  cmd->add_option("-D", defines, "Meta-parameter NAME=VALUE for the kernels that have it (repeatable)");
  // Kernels with tuning configs take their own options from them; these make the "default" config
  // of the others. --warp-specialize goes into the sm_90a images of variants where it compiles
  // (with --one for a matmul's unit strides); the same tile without it elsewhere.
  add_option_flags(cmd, compile);
  cmd->add_option("--header", header, "Also write a C++ header of typed launchers (links tessel::runtime only)");
  cmd->add_option("--namespace", ns, "C++ namespace of the launchers in --header");
  cmd->add_option("--pack", pack, "Also write the bundle as one file (Bundle::open takes either form)");
  cmd->add_flag("--no-cubin", no_cubin, "Write PTX only, even when ptxas is available");
  cmd->add_option("--one", ones,
                  "Integer parameter NAME equal to 1 (a unit stride) in an extra variant 'div16_one' that assumes "
                  "the other pointers and integers divisible by 16, tried first at launch (repeatable; e.g. "
                  "--one stride_ak --one stride_bn --one stride_cn for the matmul samples: their loads vectorise "
                  "and sm_90a producer warps copy by TMA)");
  cmd->callback([&rc] {
    if (all && !kernels.empty()) throw UsageError("give kernel names or --all, not both");
    if (!all && kernels.empty()) throw UsageError("no kernels to export (name them, or use --all; see tessel list)");
    std::vector<const jit::KernelEntry*> entries;
    if (all) entries = jit::Registry::global().list();
    for (const auto& name : kernels) {
      const jit::KernelEntry* e = &kernel_for("export", name);
      entries.push_back(e);
    }
    jit::ExportOptions opts;
    opts.archs = archs;
    opts.meta = parse_defines(defines);
    check_option_flags(compile);
    opts.compile = compile;
    opts.cubins = !no_cubin;
    opts.header = header;
    opts.header_namespace = ns;
    opts.pack = pack;
    if (!ones.empty()) opts.variants.insert(opts.variants.begin(), jit::ExportVariant{"div16_one", true, ones});
    jit::ExportResult r;
    try {
      r = jit::export_bundle(entries, out, opts);
    } catch (const std::system_error& e) {
      // A path the OS refused (a missing or read-only directory, a file where a directory must be,
      // a full disk): the user's paths, exit 1.
      throw UsageError(fmt::format("export: {} (expected --out{}{} to be paths in writable directories)",
                                   os_error_text(e), header.empty() ? "" : ", --header",
                                   pack.empty() ? "" : ", --pack"));
    }
    fmt::print("exported {} kernel{} ({} variants; {} PTX, {} cubin files) to {} in {:.2f} s\n", r.kernels,
               r.kernels == 1 ? "" : "s", r.variants, r.ptx_files, r.cubin_files, r.dir.string(), r.seconds);
    if (!no_cubin && r.cubin_tool.empty())
      fmt::print("no ptxas and no matching GPU: PTX only (the driver JIT-compiles it when a kernel is first loaded)\n");
    else if (!r.cubin_tool.empty())
      fmt::print("cubins by {}\n", r.cubin_tool);
    if (!header.empty()) fmt::print("launchers: {} (namespace {})\n", header, ns);
    if (!pack.empty()) fmt::print("single file: {}\n", pack);
    rc = 0;
  });
}

}  // namespace tessel::cli
