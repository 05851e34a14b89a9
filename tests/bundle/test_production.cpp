// The production programs link tessel::runtime alone (checked in CMake's link properties, the
// executables' ELF dependencies and their symbols), and run from the bundle built with them;
// `tessel export` from the command line, with its exit codes. Running the programs on the GPU is
// in doctest suite "gpu" (common/gpu_gate.hpp); without a driver they are checked to say so.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/shell_command.hpp"
#include "../common/gpu_gate.hpp"
#include "bundle_test_util.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/driver.hpp"

using namespace tessel;
using namespace tessel::bundle_test;

namespace {

using Output = tessel_test::CommandOutput;
// Runs a shell command, stdout and stderr together.
inline Output run(const std::string& cmd) { return tessel_test::run_command(cmd); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t next = std::min(s.find(sep, pos), s.size());
    if (next > pos) out.push_back(s.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The DT_NEEDED entries of an ELF file, through readelf.
std::vector<std::string> needed(const std::string& exe) {
  Output o = run("readelf -d '" + exe + "'");
  REQUIRE_MESSAGE(o.status == 0, o.text);
  std::vector<std::string> libs;
  for (const auto& line : split(o.text, '\n'))
    if (contains(line, "(NEEDED)")) {
      size_t a = line.find('['), b = line.find(']');
      if (a != std::string::npos && b > a) libs.push_back(line.substr(a + 1, b - a - 1));
    }
  return libs;
}

// What a runtime-only program may load: the runtime, fmt, and the C/C++ system libraries.
bool allowed_dependency(const std::string& lib) {
  for (const char* prefix : {"libtessel_runtime.", "libfmt.", "libstdc++.", "libm.", "libgcc_s.", "libc.", "libdl.",
                             "libpthread.", "ld-linux",
                             // a -DTESSEL_SANITIZE build links the sanitizers' runtimes into everything
                             "libasan.", "libubsan.", "liblsan.", "libtsan."})
    if (lib.rfind(prefix, 0) == 0) return true;
  return false;
}

// Checks a runtime-only executable: linked libraries, dynamic dependencies, and no compiler code
// linked in statically either.
void check_runtime_only(const std::string& exe, const std::string& link_libraries) {
  CAPTURE(exe);
  CHECK(link_libraries == "tessel::runtime");
  const auto libs = needed(exe);
  for (const auto& lib : libs) {
    CAPTURE(lib);
    CHECK(allowed_dependency(lib));
  }
  // Shared builds name the runtime; static builds (no libtessel_*.so at all) have it inside.
  bool shared_runtime = false;
  for (const auto& lib : libs) shared_runtime |= lib.rfind("libtessel_runtime.", 0) == 0;
  Output syms = run("nm -C --defined-only '" + exe + "'");
  REQUIRE_MESSAGE(syms.status == 0, syms.text);
  for (const char* forbidden : {"llvm::", "tessel::jit::", "tessel::lang::", "tessel::lowering::", "tessel::interp::"}) {
    CAPTURE(forbidden);
    CHECK_FALSE(contains(syms.text, forbidden));
  }
  // tessel::ir may appear only as the header-only Philox stream (inline functions).
  for (const auto& line : split(syms.text, '\n'))
    if (contains(line, "tessel::ir::")) CHECK_MESSAGE(contains(line, "tessel::ir::philox::"), line);
  if (!shared_runtime) CHECK(contains(syms.text, "tessel::rt::Bundle::open"));
}

}  // namespace

TEST_CASE("tessel::runtime itself links no compiler library") {
  for (const auto& lib : split(TESSEL_RUNTIME_LINKS, '|')) {
    CAPTURE(lib);
    if (lib == "tessel::options") continue;  // the compile-option table: fmt only, no compiler
    CHECK_FALSE(contains(lib, "tessel"));
    CHECK_FALSE(contains(lib, "LLVM"));
  }
}

// The programs are part of every build; a test binary carried to another machine (the GPU
// host) without them says so instead of failing.
static bool built_or_skip(const char* exe) {
  if (fs::exists(exe)) return true;
  MESSAGE("not run here (not at its build path; carried elsewhere?): " << std::string(exe));
  return false;
}

// A program or bundle of the build for a GPU case: at its build path, else by file name in
// TESSEL_TEST_BIN_DIR (where the device run unpacks the programs and the sample bundles next to
// the test binaries); "" when neither has it.
static std::string locate(const char* build_path) {
  if (fs::exists(build_path)) return build_path;
  const char* dir = std::getenv("TESSEL_TEST_BIN_DIR");
  if (dir == nullptr || *dir == '\0') return "";
  const fs::path p = fs::path(dir) / fs::path(build_path).filename();
  return fs::exists(p) ? p.string() : "";
}

// Runs `exe ARGS` with the CUDA driver hidden (TESSEL_CUDA_LIBRARY names a file that does not
// exist), so the no-GPU path is checked on every machine, GPU hosts included.
static Output run_without_driver(const std::string& exe, const std::string& args) {
  return run("TESSEL_CUDA_LIBRARY=/nonexistent/libcuda.so.1 '" + exe + "' " + args);
}

TEST_CASE("tessel_production links tessel::runtime only; without a driver it checks the bundle and says so") {
  if (!built_or_skip(TESSEL_PRODUCTION_EXE)) return;
  check_runtime_only(TESSEL_PRODUCTION_EXE, TESSEL_PRODUCTION_LINKS);
  for (const char* bundle : {TESSEL_SAMPLE_BUNDLE, TESSEL_SAMPLE_PACKED_BUNDLE}) {
    if (!fs::exists(bundle)) {
      MESSAGE("no sample bundle (built without the lowering): " << bundle);
      continue;
    }
    Output o = run_without_driver(TESSEL_PRODUCTION_EXE, std::string("'") + bundle + "' --sizes 1,4097,65536");
    INFO(o.text);
    CHECK(o.status == 0);
    CHECK(contains(o.text, " kernels, "));
    CHECK(contains(o.text, "verify:"));
    CHECK(contains(o.text, "SKIPPED: no usable CUDA driver (/nonexistent/libcuda.so.1 (TESSEL_CUDA_LIBRARY) not found"));
    CHECK_FALSE(contains(o.text, "RESULT:"));
    // --require-gpu: the same absence is an error.
    Output required = run_without_driver(TESSEL_PRODUCTION_EXE, std::string("'") + bundle + "' --require-gpu");
    INFO(required.text);
    CHECK(required.status == 1);
    CHECK(contains(required.text, "SKIPPED: no usable CUDA driver"));
  }
  Output bad = run(std::string("'") + TESSEL_PRODUCTION_EXE + "' /nonexistent/bundle");
  CHECK(bad.status == 1);
  CHECK(contains(bad.text, "bundle /nonexistent/bundle: no such directory or file"));
  Output usage = run(std::string("'") + TESSEL_PRODUCTION_EXE + "'");
  CHECK(usage.status == 1);
  CHECK(contains(usage.text, "usage: tessel_production BUNDLE [--from-memory]"));
}

TEST_CASE("tessel_production --from-memory opens the single file from its bytes; a directory or damage is an error") {
  if (!built_or_skip(TESSEL_PRODUCTION_EXE)) return;
  if (!fs::exists(TESSEL_SAMPLE_PACKED_BUNDLE)) {
    MESSAGE("no sample bundle (built without the lowering): " << TESSEL_SAMPLE_PACKED_BUNDLE);
    return;
  }
  const std::string exe = std::string("'") + TESSEL_PRODUCTION_EXE + "' ";
  const std::string packed = TESSEL_SAMPLE_PACKED_BUNDLE;
  Output o = run_without_driver(TESSEL_PRODUCTION_EXE, "'" + packed + "' --from-memory");
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, "bundle:  " + packed + " (in memory) (single file, " +
                             std::to_string(fs::file_size(packed)) + " bytes, "));
  CHECK(contains(o.text, "verify:"));
  CHECK(contains(o.text, "SKIPPED: no usable CUDA driver"));
  // The directory form has no in-memory form.
  Output dir = run(exe + "'" + TESSEL_SAMPLE_BUNDLE + "' --from-memory");
  CHECK(dir.status == 1);
  CHECK(contains(dir.text, "tessel_production: --from-memory: cannot read " + std::string(TESSEL_SAMPLE_BUNDLE) +
                               " as one file (it takes the single-file bundle, `tessel export --pack`)"));
  // A truncated copy: refused at open, naming the in-memory origin.
  TempDir t;
  const std::string bytes = read(packed);
  write(t.path / "short.tsb", bytes.substr(0, bytes.size() - 1));
  const std::string short_path = (t.path / "short.tsb").string();
  Output trunc = run(exe + "'" + short_path + "' --from-memory");
  CHECK(trunc.status == 1);
  CHECK(contains(trunc.text, "tessel_production: bundle " + short_path +
                                 " (in memory): damaged single-file bundle: '"));
  CHECK(contains(trunc.text, "runs past the end of the file (truncated?)"));
}

TEST_CASE("GPU: tessel_production checks every kernel of the sample bundle: directory, single file, from memory" *
          doctest::test_suite("gpu")) {
  if (!rt::Driver::get().available()) {
    tessel_test::skip_gpu_case("no CUDA driver: tessel_production on the GPU — " +
                               rt::Driver::get().unavailable_reason());
    return;
  }
  const std::string exe = locate(TESSEL_PRODUCTION_EXE);
  if (exe.empty()) {
    tessel_test::skip_gpu_case(std::string("tessel_production not at ") + TESSEL_PRODUCTION_EXE +
                               " nor in TESSEL_TEST_BIN_DIR");
    return;
  }
  for (const char* build_path : {TESSEL_SAMPLE_BUNDLE, TESSEL_SAMPLE_PACKED_BUNDLE}) {
    const std::string bundle = locate(build_path);
    if (bundle.empty()) {
      tessel_test::skip_gpu_case(std::string("no sample bundle at ") + build_path + " nor in TESSEL_TEST_BIN_DIR");
      continue;
    }
    Output o = run("'" + exe + "' '" + bundle + "' --sizes 1,4097,65536 --require-gpu");
    INFO(o.text);
    CHECK(o.status == 0);
    CHECK(contains(o.text, "device: "));
    CHECK(contains(o.text, "RESULT: PASS ("));
  }
  // The single file again, its images loaded from the bytes read into memory.
  const std::string packed = locate(TESSEL_SAMPLE_PACKED_BUNDLE);
  if (packed.empty()) return;  // reported above
  Output o = run("'" + exe + "' '" + packed + "' --from-memory --sizes 1,4097,65536 --require-gpu");
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, " (in memory) (single file, "));
  CHECK(contains(o.text, "RESULT: PASS ("));
}

#ifdef TESSEL_LAUNCHER_EXAMPLE_EXE
TEST_CASE("the generated launchers compile into a program linked with tessel::runtime alone; no driver: an error") {
  if (!built_or_skip(TESSEL_LAUNCHER_EXAMPLE_EXE)) return;
  check_runtime_only(TESSEL_LAUNCHER_EXAMPLE_EXE, TESSEL_LAUNCHER_EXAMPLE_LINKS);
  const std::string header = read(TESSEL_SAMPLE_HEADER);
  CHECK(contains(header, "inline CUresult add_kernel(CUstream stream,"));
  CHECK(contains(header, "inline CUresult layernorm_f32_kernel(CUstream stream,"));
  Output o = run_without_driver(TESSEL_LAUNCHER_EXAMPLE_EXE, "");
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, "without a driver add_kernel returns CUDA_ERROR_"));
  CHECK(contains(o.text, "SKIPPED: no usable CUDA driver (/nonexistent/libcuda.so.1 (TESSEL_CUDA_LIBRARY)"));
  Output bad = run(std::string("'") + TESSEL_LAUNCHER_EXAMPLE_EXE + "' /nonexistent");
  CHECK(bad.status == 1);
  CHECK(contains(bad.text, "no such directory or file"));
  // The single file, opened from its bytes through the generated open_bundle(data, size).
  if (fs::exists(TESSEL_SAMPLE_PACKED_BUNDLE)) {
    const std::string packed = TESSEL_SAMPLE_PACKED_BUNDLE;
    Output mem = run_without_driver(TESSEL_LAUNCHER_EXAMPLE_EXE, "'" + packed + "'");
    INFO(mem.text);
    CHECK(mem.status == 0);
    CHECK(contains(mem.text, "bundle: " + packed + " (opened from its bytes in memory)"));
    CHECK(contains(mem.text, "SKIPPED: no usable CUDA driver"));
    TempDir t;
    const std::string all = read(packed);
    write(t.path / "short.tsb", all.substr(0, all.size() - 1));
    Output trunc = run(std::string("'") + TESSEL_LAUNCHER_EXAMPLE_EXE + "' '" + (t.path / "short.tsb").string() + "'");
    CHECK(trunc.status == 1);
    CHECK(contains(trunc.text, "tessel_launcher_example: bundle <memory>: damaged single-file bundle: '"));
  }
}

TEST_CASE("GPU: the generated launchers run the sample bundle's add and softmax" * doctest::test_suite("gpu")) {
  if (!rt::Driver::get().available()) {
    tessel_test::skip_gpu_case("no CUDA driver: the launcher example on the GPU — " +
                               rt::Driver::get().unavailable_reason());
    return;
  }
  const std::string exe = locate(TESSEL_LAUNCHER_EXAMPLE_EXE), bundle = locate(TESSEL_SAMPLE_BUNDLE);
  if (exe.empty() || bundle.empty()) {
    tessel_test::skip_gpu_case(std::string("tessel_launcher_example or its bundle not at their build paths (") +
                               TESSEL_LAUNCHER_EXAMPLE_EXE + ") nor in TESSEL_TEST_BIN_DIR");
    return;
  }
  Output o = run("'" + exe + "' '" + bundle + "'");
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, "device: "));
  CHECK(contains(o.text, "RESULT: PASS"));
}
#endif

#ifdef TESSEL_EMBEDDED_EXAMPLE_EXE
TEST_CASE("tessel_embedded_example carries the sample bundle inside itself and links tessel::runtime alone") {
  if (!built_or_skip(TESSEL_EMBEDDED_EXAMPLE_EXE)) return;
  check_runtime_only(TESSEL_EMBEDDED_EXAMPLE_EXE, TESSEL_EMBEDDED_EXAMPLE_LINKS);
  // Copied away from the build tree, it still has its kernels: no bundle file is read.
  TempDir t;
  const fs::path copy = t.path / "tessel_embedded_example";
  fs::copy_file(TESSEL_EMBEDDED_EXAMPLE_EXE, copy);
  Output o = run_without_driver(copy.string(), "");
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, "bundle: tessel_embedded_example:bundle.tsb (" +
                             std::to_string(fs::file_size(TESSEL_SAMPLE_PACKED_BUNDLE)) +
                             " bytes inside this executable, "));
  CHECK(contains(o.text, " kernels), verified"));
  CHECK(contains(o.text, "SKIPPED: no usable CUDA driver (/nonexistent/libcuda.so.1 (TESSEL_CUDA_LIBRARY)"));
}

TEST_CASE("GPU: tessel_embedded_example runs add and relu from the bundle inside it" * doctest::test_suite("gpu")) {
  if (!rt::Driver::get().available()) {
    tessel_test::skip_gpu_case("no CUDA driver: the embedded example on the GPU — " +
                               rt::Driver::get().unavailable_reason());
    return;
  }
  const std::string exe = locate(TESSEL_EMBEDDED_EXAMPLE_EXE);
  if (exe.empty()) {
    tessel_test::skip_gpu_case(std::string("tessel_embedded_example not at ") + TESSEL_EMBEDDED_EXAMPLE_EXE +
                               " nor in TESSEL_TEST_BIN_DIR");
    return;
  }
  Output o = run("'" + exe + "'");
  INFO(o.text);
  CHECK(o.status == 0);
  CHECK(contains(o.text, "device: "));
  CHECK(contains(o.text, "RESULT: PASS"));
}
#endif

TEST_CASE("tessel export: a bundle, launchers and a single file; one-line errors with exit code 1") {
  if (!built_or_skip(TESSEL_CLI_EXE)) return;
  TempDir t;
  const std::string cli = std::string("'") + TESSEL_CLI_EXE + "' export ";
  const std::string out = (t.path / "b").string(), header = (t.path / "k.hpp").string();
  Output ok = run(cli + "add softmax --arch sm_90 --no-cubin -D BLOCK=512 --out '" + out + "' --header '" + header +
                  "' --namespace prod --pack '" + out + ".tsb'");
  INFO(ok.text);
  CHECK(ok.status == 0);
  CHECK(contains(ok.text, "exported 2 kernels (4 variants; 4 PTX, 0 cubin files) to " + out));
  CHECK(contains(ok.text, "launchers: " + header + " (namespace prod)"));
  CHECK(contains(read(header), "inline constexpr int64_t softmax_BLOCK = 512;"));
  CHECK(contains(read(t.path / "b" / "bundle.json"), "\"BLOCK\": 512"));
  CHECK(fs::exists(out + ".tsb"));
  CHECK(fs::exists(t.path / "b" / "softmax.div16.sm_90.ptx"));

  struct Bad {
    const char* args;
    const char* message;
  };
  for (Bad b : {Bad{"nope --out X", "unknown kernel 'nope' (see tessel list)"},
                Bad{"--out X", "no kernels to export"},
                Bad{"add --all --out X", "give kernel names or --all, not both"},
                Bad{"add -D BLOK=4 --out X", "no exported kernel has a meta-parameter 'BLOK'"},
                Bad{"add -D BLOCK=1000 --out X", "must be a power of two"},
                Bad{"add --arch sm_70 --out X", "sm_70 not in"},
                Bad{"add --namespace 9lives --header H --out X", "namespace '9lives' is not usable"},
                Bad{"add --tma --out X", "--tma needs --warp-specialize"},
                Bad{"add --one stride_ak --out X", "assumes 'stride_ak' equal to 1, but no exported kernel has"}}) {
    CAPTURE(b.args);
    std::string args = b.args;
    for (size_t at; (at = args.find(" X")) != std::string::npos;) args.replace(at, 2, " '" + (t.path / "x").string() + "'");
    for (size_t at; (at = args.find(" H")) != std::string::npos;) args.replace(at, 2, " '" + (t.path / "h.hpp").string() + "'");
    Output o = run(cli + args);
    INFO(o.text);
    CHECK(o.status == 1);
    CHECK(contains(o.text, b.message));
    CHECK_FALSE(fs::exists(t.path / "x"));
  }
  // A matmul tile with TMA producers: kept in the unit-stride variant's sm_90a image, which
  // lists its tensor maps; the same tile without producers for sm_90 and the other variants.
  const std::string mm = (t.path / "mm").string();
  Output tma = run(cli + "matmul --arch sm_90,sm_90a --no-cubin -D BLOCK_M=128 -D BLOCK_N=256 -D BLOCK_K=64 "
                         "--num-warps 8 --num-stages 4 --warp-specialize --tma --one stride_ak --one stride_bn "
                         "--one stride_cn --out '" + mm + "'");
  INFO(tma.text);
  CHECK(tma.status == 0);
  CHECK(contains(tma.text, "exported 1 kernel (3 variants; 6 PTX, 0 cubin files)"));
  const rt::BundleManifest mf = rt::Bundle::open(mm).manifest();
  int producers = 0;
  for (const auto& v : mf.kernels[0].variants)
    for (const auto& im : v.images) {
      const bool want = v.name == "div16_one" && im.arch == "sm_90a";
      CHECK(im.launch.producer_warps == want);
      CHECK(im.launch.tensor_maps.size() == (want ? 3u : 0u));
      producers += im.launch.producer_warps;
    }
  CHECK(producers == 1);
  fs::create_directories(t.path / "mine");
  write(t.path / "mine" / "data.bin", "precious");
  Output refused = run(cli + "add --out '" + (t.path / "mine").string() + "'");
  CHECK(refused.status == 1);
  CHECK(contains(refused.text, "refusing to replace it"));
  CHECK(read(t.path / "mine" / "data.bin") == "precious");
}
