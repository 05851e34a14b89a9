// Tutorial 05, step 1: compile a kernel ahead of time into a bundle (the C++ form of `tessel export`).
//
//   tutorial_05_export OUT_DIR      writes the bundle directory OUT_DIR (replaced if it is a bundle)
#include <tessel/jit/bundle_writer.hpp>
#include <tessel/tessel.hpp>

#include <cstdio>
#include <exception>

using namespace tessel::lang;
namespace jit = tessel::jit;

// out = x * scale + y (saxpy). The production program launches it by the name "saxpy".
void saxpy_kernel(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Float scale, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * scale + load(y + offs, mask), mask);
}

// BLOCK's default is the value the bundle records; the production program sizes its grid by it.
jit::Kernel saxpy{"saxpy", &saxpy_kernel, {"x", "y", "out", "scale", "n"}, Meta{{"BLOCK", 1024}}};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tutorial_05_export OUT_DIR\n");
    return 1;
  }
  try {
    const jit::KernelEntry entry = jit::entry_of(saxpy, "out = x * scale + y");
    const jit::KernelEntry* kernels[] = {&entry};
    jit::ExportOptions opts;
    opts.archs = {"sm_80", "sm_90"};  // PTX for each; a cubin too where ptxas (or a GPU) is found
    jit::ExportResult r = jit::export_bundle(kernels, argv[1], opts);
    std::printf("exported %d kernel(s), %d variant(s), %d PTX and %d cubin file(s) to %s\n", r.kernels, r.variants,
                r.ptx_files, r.cubin_files, r.dir.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tutorial_05_export: %s\n", e.what());
    return 1;
  }
  return 0;
}
