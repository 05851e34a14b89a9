// Ahead-of-time export: registered kernels compiled into a bundle the runtime loads without a compiler.
#pragma once
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/jit/options.hpp"
#include "tessel/jit/registry.hpp"

namespace tessel::jit {

// One specialisation compiled for every exported kernel.
struct ExportVariant {
  std::string name;      // part of the file names: "<kernel>.<name>.<arch>.cubin"
  bool aligned = false;  // assumes every pointer and integer argument is divisible by 16
  // ... except these integer parameters, assumed equal to 1 (unit strides: what makes a
  // matmul's rows contiguous, so its loads vectorise and its producers may copy by TMA).
  // Names a kernel lacks are ignored for it; a kernel with none of them skips the variant.
  std::vector<std::string> ones;
};

struct ExportOptions {
  // Each arch gets PTX, and (when `cubins`) a cubin made by ptxas when it is found, else by the
  // driver for the arch of the GPU present, if any.
  std::vector<std::string> archs{"sm_80", "sm_90"};
  // -D overrides, applied to each kernel that has the meta-parameter; a name no exported kernel
  // has is an error.
  Meta meta;
  CompileOptions compile;
  // Tried most specialised first at launch; a kernel with no pointer or integer parameter gets
  // only the unaligned one.
  std::vector<ExportVariant> variants{{"div16", true, {}}, {"generic", false, {}}};
  bool cubins = true;
  std::filesystem::path header;                     // also write the typed launchers here (empty: no)
  std::string header_namespace = "tessel_kernels";  // the launchers' C++ namespace
  std::filesystem::path pack;                       // also write the single-file bundle here (empty: no)
  // Tunable kernels (KernelEntry::configs not empty) get every config compiled (opts.meta fills
  // in only what a config leaves unset; `compile` is not used for them), the first as the
  // default, and a tuned table from this tuning database (empty: tune::Database::default_path())
  // with one rule per tuned key: the key's bucket ranges -> its fastest Ok config.
  std::filesystem::path tune_db;
  // Whose results: a device name as the database records it ("NVIDIA H200"). Empty: the one
  // device the database has results of the kernel for (CompileError when there are several).
  std::string tune_device;
};

struct ExportResult {
  std::filesystem::path dir;
  std::vector<std::string> files;  // written into dir, bundle.json last
  int kernels = 0, variants = 0, ptx_files = 0, cubin_files = 0;
  int configs = 0, tuned_rules = 0;  // configs of all kernels; tuned-table rules written
  std::string cubin_tool;          // "ptxas <path>" or "driver"; empty when PTX only
  double seconds = 0;              // compiling and writing
};

// Compiles `kernels` (traced with their defaults and opts.meta) for every variant and arch and
// writes the bundle directory `out`: bundle.json (see runtime/include/tessel/runtime/
// bundle_manifest.hpp and docs/production.md "Production: bundles and AOT export") and one .ptx, and a .cubin
// when one can be made, per (kernel, variant, arch). The directory is written under a
// temporary name next to `out` and renamed into place, so readers see the old bundle or the new
// one, never a mix; an existing bundle at `out` is replaced, an existing non-empty directory
// that is not a bundle is refused. Then the header and the packed file, if asked for.
//
// User mistakes (no kernels, an unknown arch, a meta-parameter no kernel has, identifiers the
// header cannot use, parameter types bundles cannot pass, a refused `out`) throw CompileError;
// compiler and ptxas failures throw std::runtime_error/InternalError. Needs the lowering
// (throws std::runtime_error saying so without it).
ExportResult export_bundle(std::span<const KernelEntry* const> kernels, const std::filesystem::path& out,
                           const ExportOptions& opts = {});

// The C++ header of typed launchers for the bundle at `bundle` (directory or packed file):
// per kernel `CUresult <kernel>_kernel(CUstream stream, unsigned grid_x, unsigned grid_y,
// unsigned grid_z, <one typed argument per parameter>)` plus open_bundle(path), close_bundle()
// and last_error(), all inline in namespace `ns`, over tessel::rt::Bundle — a program that
// includes it links tessel::runtime only. CompileError when a kernel, parameter or namespace
// name is not a usable C++ identifier.
std::string launcher_header(const std::filesystem::path& bundle, std::string_view ns = "tessel_kernels");

}  // namespace tessel::jit
