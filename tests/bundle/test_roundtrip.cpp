// Export with the writer, open with tessel::rt::Bundle: signatures, variants, checksums, damage,
// single-file form, atomic replacement, generated launchers, launch-time argument checks.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <thread>

#include "../common/ptxas_gate.hpp"
#include "bundle_test_util.hpp"
#include "tessel/ir/error.hpp"
#include "tessel/jit/bundle_writer.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/error.hpp"
#include "tessel/runtime/sha256.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;
using namespace tessel::bundle_test;

namespace {

std::vector<const jit::KernelEntry*> entries(std::initializer_list<const char*> names) {
  samples::register_sample_kernels();
  std::vector<const jit::KernelEntry*> out;
  for (const char* n : names) {
    const jit::KernelEntry* e = jit::Registry::global().find(n);
    REQUIRE_MESSAGE(e != nullptr, n);
    out.push_back(e);
  }
  return out;
}

// One arch keeps the tests quick; sm_90 is what the GPU machines have.
jit::ExportOptions quick(std::vector<std::string> archs = {"sm_90"}) {
  jit::ExportOptions o;
  o.archs = std::move(archs);
  return o;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("round trip: exported kernels come back with their signatures, variants and checksums") {
  TempDir t;
  const fs::path dir = t.path / "b";
  jit::ExportResult r = jit::export_bundle(entries({"add", "bias_gelu_dropout"}), dir, quick({"sm_80", "sm_90"}));
  CHECK(r.kernels == 2);
  CHECK(r.variants == 4);
  CHECK(r.ptx_files == 8);
  CHECK(r.files.back() == "bundle.json");
  // ptxas assembles every arch; without it the driver links only for the GPU present (one arch).
  if (const std::string ptxas = tessel::rt::find_ptxas(); !ptxas.empty()) {
    CHECK(r.cubin_tool == "ptxas " + ptxas);
    CHECK(r.cubin_files == 8);
  } else {
    tessel_test::skip_ptxas_check("cubins for every arch in the bundle");
    if (r.cubin_tool == "driver") CHECK(r.cubin_files == 4);
    else CHECK(r.cubin_files == 0);
  }

  rt::Bundle b = rt::Bundle::open(dir);
  CHECK_FALSE(b.packed());
  const rt::BundleManifest& m = b.manifest();
  REQUIRE(m.kernels.size() == 2);
  CHECK(m.tessel_version == tessel::jit::cache::tessel_version());
  const rt::BundleKernelInfo& add = m.kernels[0];
  CHECK(add.name == "add");
  CHECK(add.description == "out = x + y");
  CHECK(rt::signature_string(add) == "x: ptr<f32>, y: ptr<f32>, out: ptr<f32>, n: i32");
  CHECK(rt::signature_string(m.kernels[1]) ==
        "x: ptr<f32>, bias: ptr<f32>, out: ptr<f32>, n: i32, d: i32, p: f32, seed: i32");
  CHECK(add.find_config("default")->meta_value("BLOCK") == 1024);
  CHECK(add.find_config("default")->num_warps == 4);
  REQUIRE(add.variants.size() == 2);
  CHECK(add.variants[0].name == "div16");
  CHECK(add.variants[0].div16 == 0b1111);  // x, y, out, n
  CHECK(add.variants[1].name == "generic");
  CHECK(add.variants[1].div16 == 0);
  CHECK(m.kernels[1].variants[0].div16 == 0b1011111);  // p (f32) carries no divisibility
  for (const auto& k : m.kernels)
    for (const auto& v : k.variants) {
      // Named for the variant's config (meta, warps, stages), as the profilers will show it.
      const rt::BundleConfig* c = k.find_config(v.config);
      REQUIRE(c != nullptr);
      CHECK(v.entry == fmt::format("{}_BLOCK{}_w{}_s{}", k.name, c->meta_value("BLOCK").value_or(-1), c->num_warps, c->num_stages));
      for (const auto& im : v.images) {
        CAPTURE(im.file);
        std::string bytes = read(dir / im.file);
        CHECK(bytes.size() == im.size);
        CHECK(rt::sha256_hex(bytes) == im.sha256);
        CHECK(contains(im.file, k.name + "." + v.name + "." + im.arch));
        if (im.kind == rt::ImageKind::Ptx) {
          CHECK(contains(bytes, ".target " + im.arch));
          CHECK(contains(bytes, ".entry " + v.entry + "("));
        } else {
          CHECK(bytes.substr(0, 4) == "\x7f" "ELF");
        }
      }
    }
  CHECK_NOTHROW(b.verify());
  // The aligned variant's PTX really is specialised: vector loads where the generic one has none.
  const std::string div16_ptx = read(dir / "add.div16.sm_90.ptx"), generic_ptx = read(dir / "add.generic.sm_90.ptx");
  CHECK(contains(div16_ptx, "ld.global.v4"));
  CHECK_FALSE(contains(generic_ptx, "ld.global.v4"));

  // Variant choice from fake pointers, no GPU needed.
  rt::BundleKernel& k = b.kernel("add");
  CHECK(k.meta("BLOCK") == 1024);
  CHECK(k.variant_for(CUdeviceptr{0x1000}, CUdeviceptr{0x2000}, CUdeviceptr{0x3000}, int32_t{4096}) == 0);
  CHECK(k.variant_for(CUdeviceptr{0x1000}, CUdeviceptr{0x2000}, CUdeviceptr{0x3000}, int32_t{4097}) == 1);
  CHECK(k.variant_for(CUdeviceptr{0x1004}, CUdeviceptr{0x2000}, CUdeviceptr{0x3000}, int32_t{4096}) == 1);
  CHECK_FALSE(k.loaded(0).has_value());
  CHECK_THROWS_WITH_AS(k.meta("WARPS"), doctest::Contains("has no meta-parameter 'WARPS'"), rt::BundleError);
  CHECK_THROWS_WITH_AS(b.kernel("mul"), doctest::Contains("no kernel 'mul' (it has: add, bias_gelu_dropout)"),
                       rt::BundleError);
}

TEST_CASE("exporting is deterministic, -D reaches the kernels that have it, and options are checked") {
  TempDir t;
  jit::ExportOptions o = quick();
  o.meta.set("BLOCK", 256);
  o.cubins = false;  // what tessel writes; cubin bytes are the assembler's business
  jit::export_bundle(entries({"add"}), t.path / "a", o);
  jit::export_bundle(entries({"add"}), t.path / "b", o);
  CHECK(read(t.path / "a" / "bundle.json") == read(t.path / "b" / "bundle.json"));
  CHECK(read(t.path / "a" / "add.generic.sm_90.ptx") == read(t.path / "b" / "add.generic.sm_90.ptx"));
  rt::Bundle b = rt::Bundle::open(t.path / "a");
  CHECK(b.kernel("add").meta("BLOCK") == 256);

  auto fails = [&](jit::ExportOptions opts, std::vector<const jit::KernelEntry*> ks, const fs::path& out) {
    try {
      jit::export_bundle(ks, out, opts);
    } catch (const CompileError& e) {
      return std::string(e.what());
    }
    return std::string("(no CompileError)");
  };
  jit::ExportOptions bad = quick();
  bad.meta.set("BLOK", 64);
  CHECK(contains(fails(bad, entries({"add"}), t.path / "c"), "no exported kernel has a meta-parameter 'BLOK'"));
  CHECK(contains(fails(quick({"sm_70"}), entries({"add"}), t.path / "c"), "unknown architecture 'sm_70'"));
  CHECK(contains(fails(quick(), {}, t.path / "c"), "no kernels given"));
  CHECK(contains(fails(quick(), entries({"add", "add"}), t.path / "c"), "kernel 'add' is given twice"));
  jit::ExportOptions bad_ns = quick();
  bad_ns.header = t.path / "k.hpp";
  bad_ns.header_namespace = "int";
  CHECK(contains(fails(bad_ns, entries({"add"}), t.path / "c"), "namespace 'int' is not usable as a C++ identifier"));
  CHECK_FALSE(fs::exists(t.path / "c"));  // nothing published by a failed export
  // A directory that is not a bundle is never replaced.
  fs::create_directories(t.path / "mine");
  write(t.path / "mine" / "notes.txt", "keep me");
  CHECK(contains(fails(quick(), entries({"add"}), t.path / "mine"), "refusing to replace it"));
  CHECK(read(t.path / "mine" / "notes.txt") == "keep me");
  // No temporary directories are left behind.
  for (const auto& e : fs::directory_iterator(t.path)) CHECK_FALSE(contains(e.path().filename().string(), ".tmp-"));
}

TEST_CASE("a damaged bundle is reported with the file and the problem") {
  TempDir t;
  const fs::path dir = t.path / "b";
  jit::ExportOptions o = quick();
  o.cubins = false;
  jit::export_bundle(entries({"add"}), dir, o);
  const fs::path ptx = dir / "add.generic.sm_90.ptx";
  const std::string good = read(ptx);

  SUBCASE("a flipped byte: open succeeds (sizes match), verify and loading name the file") {
    std::string bad = good;
    bad[bad.size() / 2] ^= 0x20;
    write(ptx, bad);
    rt::Bundle b = rt::Bundle::open(dir);
    std::string e = error_of([&] { b.verify(); });
    CHECK(contains(e, "file 'add.generic.sm_90.ptx' is corrupt (sha256 "));
  }
  SUBCASE("a truncated file: open fails") {
    write(ptx, good.substr(0, good.size() - 100));
    std::string e = error_of([&] { rt::Bundle::open(dir); });
    CHECK(contains(e, "file 'add.generic.sm_90.ptx' is " + std::to_string(good.size() - 100) + " bytes, bundle.json says " +
                          std::to_string(good.size()) + " (truncated or replaced)"));
  }
  SUBCASE("a missing file") {
    fs::remove(ptx);
    std::string e = error_of([&] { rt::Bundle::open(dir); });
    CHECK(contains(e, "file 'add.generic.sm_90.ptx' (kernel 'add', variant 'generic') is missing"));
  }
  SUBCASE("a damaged bundle.json") {
    std::string j = read(dir / "bundle.json");
    write(dir / "bundle.json", j.substr(0, j.size() / 2));
    CHECK(contains(error_of([&] { rt::Bundle::open(dir); }), "bundle.json is not valid JSON"));
  }
  SUBCASE("no bundle at all") {
    CHECK(contains(error_of([&] { rt::Bundle::open(t.path / "nothing"); }), "no such directory or file"));
    write(t.path / "plain.txt", "hello, not a bundle at all");
    CHECK(contains(error_of([&] { rt::Bundle::open(t.path / "plain.txt"); }),
                   "neither a bundle directory nor a single-file bundle"));
  }
}

TEST_CASE("the single-file form holds the same bundle, and a damaged one is refused") {
  TempDir t;
  const fs::path dir = t.path / "b", file = t.path / "b.tsb";
  jit::ExportOptions o = quick();
  o.pack = file;
  jit::export_bundle(entries({"add", "chain5"}), dir, o);
  rt::Bundle from_dir = rt::Bundle::open(dir), from_file = rt::Bundle::open(file);
  CHECK(from_file.packed());
  CHECK(from_file.manifest() == from_dir.manifest());
  CHECK_NOTHROW(from_file.verify());
  const std::string bytes = read(file);
  CHECK(bytes.substr(0, 8) == std::string(rt::kPackedBundleMagic, 8));

  write(t.path / "short.tsb", bytes.substr(0, bytes.size() - 1));
  CHECK(contains(error_of([&] { rt::Bundle::open(t.path / "short.tsb"); }), "runs past the end of the file (truncated?)"));
  write(t.path / "long.tsb", bytes + "x");
  CHECK(contains(error_of([&] { rt::Bundle::open(t.path / "long.tsb"); }), "1 unexpected bytes after the last file"));
  std::string flipped = bytes;
  flipped[bytes.size() - 10] ^= 1;  // inside the last image
  write(t.path / "flipped.tsb", flipped);
  rt::Bundle damaged = rt::Bundle::open(t.path / "flipped.tsb");
  CHECK(contains(error_of([&] { damaged.verify(); }), "is corrupt (sha256"));
  // Packing refuses a damaged directory.
  std::string ptx = read(dir / "chain5.generic.sm_90.ptx");
  ptx[10] ^= 1;
  write(dir / "chain5.generic.sm_90.ptx", ptx);
  CHECK(contains(error_of([&] { rt::pack_bundle(dir, t.path / "again.tsb"); }), "does not match its checksum"));
  CHECK_FALSE(fs::exists(t.path / "again.tsb"));
}

// A reader holds the directory it opened, so it never mixes two exports; it may find files gone
// when the writer deletes the replaced bundle under it (reported as missing), nothing else.
TEST_CASE("re-exporting replaces a bundle in one step: concurrent readers see the old or the new one") {
  TempDir t;
  const fs::path dir = t.path / "b";
  jit::ExportOptions o = quick();
  o.cubins = false;
  jit::export_bundle(entries({"add", "relu"}), dir, o);
  std::atomic<bool> done{false};
  std::atomic<int> opened{0}, gone{0}, failed{0};
  std::string first_failure;
  std::thread reader([&] {
    while (!done) {
      try {
        rt::Bundle b = rt::Bundle::open(dir);
        b.verify();
        opened++;
      } catch (const std::exception& e) {
        if (contains(e.what(), "is missing") || contains(e.what(), "cannot open the directory") ||
            contains(e.what(), "no such directory"))  // the two-rename fallback's window
          gone++;
        else if (failed++ == 0) first_failure = e.what();
      }
    }
  });
  for (int i = 0; i < 3; ++i)
    jit::export_bundle(entries(i % 2 ? std::initializer_list<const char*>{"add", "relu"}
                                     : std::initializer_list<const char*>{"chain5"}),
                       dir, o);
  done = true;
  reader.join();
  CHECK(opened > 0);
  CHECK_MESSAGE(failed == 0, first_failure);
  MESSAGE("concurrent opens: " << opened.load() << " complete, " << gone.load() << " found the replaced bundle deleted");
  // The last export (chain5 only) replaced everything: no file of the earlier bundle is left.
  rt::Bundle b = rt::Bundle::open(dir);
  CHECK(b.manifest().kernels.size() == 1);
  for (const auto& e : fs::directory_iterator(dir))
    CHECK((contains(e.path().filename().string(), "chain5.") || e.path().filename() == "bundle.json"));
}

TEST_CASE("the generated header declares a typed launcher per kernel over tessel::rt::Bundle") {
  TempDir t;
  jit::ExportOptions o = quick();
  o.cubins = false;
  o.header = t.path / "inc" / "kernels.hpp";
  o.header_namespace = "my_kernels";
  jit::export_bundle(entries({"add", "bias_gelu_dropout"}), t.path / "b", o);
  const std::string h = read(o.header);
  CHECK(h == jit::launcher_header(t.path / "b", "my_kernels"));
  CHECK(contains(h, "namespace my_kernels {"));
  CHECK(contains(h, "#include \"tessel/runtime/bundle.hpp\""));
  CHECK(contains(h, "inline CUresult add_kernel(CUstream stream, unsigned grid_x, unsigned grid_y, unsigned grid_z,\n"
                    "                           CUdeviceptr x, CUdeviceptr y, CUdeviceptr out, int32_t n) noexcept {"));
  CHECK(contains(h, "CUdeviceptr out, int32_t n, int32_t d, float p,"));
  CHECK(contains(h, "inline constexpr int64_t add_BLOCK = 1024;"));
  CHECK(contains(h, "\"x: ptr<f32>, y: ptr<f32>, out: ptr<f32>, n: i32\""));
  CHECK(contains(h, "inline CUresult open_bundle(const char* path) noexcept {"));
  CHECK_FALSE(contains(h, "tessel::jit"));
  CHECK_FALSE(contains(h, "tessel::lang"));
  // The launchers go through BundleKernel, which sizes the CTA from the config; the comment
  // says the same, producer warps included (bundle.json edited: add has no K loop to specialise).
  // One producer warpgroup, 4 warps for the one program: 128 + 128.
  CHECK(contains(h, "// Default config: BLOCK=1024, num_warps=4 (128 threads per program)"));
  const fs::path manifest = t.path / "b" / "bundle.json";
  std::string j = read(manifest);
  const std::string from = "\"warp_specialize\": false";
  REQUIRE(contains(j, from));
  j.replace(j.find(from), from.size(), "\"warp_specialize\": true");  // add comes first
  write(manifest, j);
  CHECK(contains(jit::launcher_header(t.path / "b", "my_kernels"),
                 "// Default config: BLOCK=1024, num_warps=4, warp_specialize (256 threads per program where the "
                 "image has the producer warps)"));
}

TEST_CASE("a kernel parameter may be named like the launcher's local variable once was (attention's k)") {
  TempDir t;
  jit::ExportOptions o = quick();
  o.cubins = false;
  o.header = t.path / "kernels.hpp";
  jit::export_bundle(entries({"attention_decode_partial"}), t.path / "b", o);
  const std::string h = read(o.header);
  CHECK(contains(h, "inline CUresult attention_decode_partial_kernel(CUstream stream, unsigned grid_x"));
  CHECK(contains(h, "CUdeviceptr k,"));
  CHECK(contains(h, "tessel::rt::BundleKernel* tessel_bundle_kernel = detail::state().kernels[0];"));
}

TEST_CASE("launch checks argument kinds against the signature before it needs a GPU") {
  TempDir t;
  jit::ExportOptions o = quick();
  o.cubins = false;
  jit::export_bundle(entries({"add"}), t.path / "b", o);
  rt::Bundle b = rt::Bundle::open(t.path / "b");
  rt::BundleKernel& k = b.kernel("add");
  const CUdeviceptr p = 0x1000;
  auto e = error_of([&] { k.launch(nullptr, rt::Dim3{1}, p, p, p, int64_t{5}); });
  CHECK(contains(e, "bundle kernel 'add': argument 3 ('n') is i64, the parameter is i32"));
  CHECK(contains(e, "called with (ptr, ptr, ptr, i64), signature is (ptr, ptr, ptr, i32)"));
  e = error_of([&] { k.launch(nullptr, rt::Dim3{1}, p, p, int32_t{5}); });
  CHECK(contains(e, "3 arguments for 4 parameters"));
  CHECK(k.try_launch(nullptr, rt::Dim3{1}, p, 1.0f, p, int32_t{5}) == CUDA_ERROR_INVALID_VALUE);
  CHECK(contains(rt::last_bundle_error(), "argument 1 ('y') is f32, the parameter is ptr"));
  // A signature mismatch between a generated launcher and the bundle.
  CHECK_THROWS_WITH_AS(b.kernel("add", "x: ptr<f32>, n: i32"),
                       doctest::Contains("takes (x: ptr<f32>, y: ptr<f32>, out: ptr<f32>, n: i32), but the launcher "
                                         "was generated for (x: ptr<f32>, n: i32)"),
                       rt::BundleError);
  if (!rt::Driver::get().available()) {
    // Right kinds, no driver: the driver's absence is the error, as a CUresult for C-style callers.
    CHECK(k.try_launch(nullptr, rt::Dim3{1}, p, p, p, int32_t{5}) != CUDA_SUCCESS);
    CHECK(contains(rt::last_bundle_error(), "CUDA driver unavailable"));
  }
}
