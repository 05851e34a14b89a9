// The environment knobs and how compile paths apply them: TESSEL_CACHE_DIR/CACHE/ALWAYS_COMPILE/DUMP_DIR,
// real kernels lowered into entries, cubins from ptxas, and the device's compile path (the GPU's
// cache path in doctest suite "gpu", common/gpu_gate.hpp).
#include <doctest/doctest.h>

#include <cstring>

#include "../common/gpu_gate.hpp"
#include "../common/log_capture.hpp"
#include "../common/ptxas_gate.hpp"
#include "cache_test_util.hpp"
#include "tessel/jit/cubin.hpp"
#include "tessel/jit/kernel.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/samples/elementwise_kernels.hpp"

using namespace cache_test;
using namespace tessel;
using namespace tessel::lang;

namespace {

const Meta kBlock{{"BLOCK", 256}};

jit::Kernel<Ptr<f32>, Ptr<f32>, Ptr<f32>, Int, const Meta&>& add() {
  static jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, kBlock};
  return k;
}

bool is_elf(const std::vector<char>& b) { return b.size() > 4 && std::memcmp(b.data(), "\x7f" "ELF", 4) == 0; }

}  // namespace

TEST_CASE("settings come from the environment") {
  EnvVar dir("TESSEL_CACHE_DIR", "/some/where"), on("TESSEL_CACHE", std::nullopt),
      always("TESSEL_ALWAYS_COMPILE", std::nullopt), dump("TESSEL_DUMP_DIR", std::nullopt);
  cache::Settings s = cache::Settings::from_env();
  CHECK(s.enabled);
  CHECK_FALSE(s.always_compile);
  CHECK(s.dir == "/some/where");
  CHECK_FALSE(s.dump_dir.has_value());
  {
    EnvVar off("TESSEL_CACHE", "0");
    CHECK_FALSE(cache::Settings::from_env().enabled);
    CHECK(cache::Settings::dir_from_env() == "/some/where");  // the CLI still finds it
  }
  {
    EnvVar a("TESSEL_ALWAYS_COMPILE", "1"), d("TESSEL_DUMP_DIR", "/dumps");
    cache::Settings t = cache::Settings::from_env();
    CHECK(t.always_compile);
    CHECK(t.dump_dir == fs::path("/dumps"));
  }
  {
    EnvVar a("TESSEL_ALWAYS_COMPILE", "0");
    CHECK_FALSE(cache::Settings::from_env().always_compile);
  }
}

TEST_CASE("the default location is $XDG_CACHE_HOME/tessel, else ~/.cache/tessel") {
  EnvVar dir("TESSEL_CACHE_DIR", std::nullopt);
  {
    EnvVar xdg("XDG_CACHE_HOME", "/xdg/cache"), home("HOME", "/home/u");
    CHECK(cache::Settings::from_env().dir == "/xdg/cache/tessel");
  }
  {
    EnvVar xdg("XDG_CACHE_HOME", std::nullopt), home("HOME", "/home/u");
    CHECK(cache::Settings::from_env().dir == "/home/u/.cache/tessel");
  }
  {
    EnvVar xdg("XDG_CACHE_HOME", std::nullopt), home("HOME", std::nullopt);
    cache::Settings s = cache::Settings::from_env();
    CHECK(s.dir.empty());
    CHECK_FALSE(s.enabled);  // nowhere to put it: no cache rather than a surprising place
  }
}

TEST_CASE("TESSEL_ALWAYS_COMPILE ignores hits but still writes; TESSEL_CACHE=0 neither reads nor writes") {
  TempDir dir;
  EnvVar d("TESSEL_CACHE_DIR", dir.path.string()), on("TESSEL_CACHE", std::nullopt),
      dump("TESSEL_DUMP_DIR", std::nullopt);
  cache::Store store(dir.path);
  cache::Entry a = random_entry(801, 3000);
  cache::Entry b = random_entry(802, 5000);
  b.meta.key = a.meta.key;
  {
    EnvVar always("TESSEL_ALWAYS_COMPILE", std::nullopt);
    cache::Settings s = cache::Settings::from_env();
    CHECK_FALSE(cache::fetch(s, a.meta.key).has_value());
    cache::publish(s, a, /*hit=*/false);
    auto got = cache::fetch(s, a.meta.key);
    REQUIRE(got.has_value());
    CHECK(got->cubin == a.cubin);
  }
  {
    EnvVar always("TESSEL_ALWAYS_COMPILE", "1");
    cache::Settings s = cache::Settings::from_env();
    CHECK_FALSE(cache::fetch(s, a.meta.key).has_value());  // present, but ignored
    CHECK(store.list().at(0).hits == 1);                    // and not counted as a hit
    cache::publish(s, b, /*hit=*/false);                   // the new compilation replaces it
  }
  auto got = store.lookup(a.meta.key);
  REQUIRE(got.has_value());
  CHECK(got->cubin == b.cubin);
  {
    EnvVar off("TESSEL_CACHE", "0");
    cache::Settings s = cache::Settings::from_env();
    CHECK_FALSE(cache::fetch(s, a.meta.key).has_value());
    cache::Entry c = random_entry(803, 10);
    cache::publish(s, c, false);
    CHECK_FALSE(fs::exists(store.entry_path(c.meta.key)));
  }
  CHECK(count_entries(dir.path) == 1);
}

TEST_CASE("a kernel lowered into an entry round-trips through the store under the GPU's key") {
  TempDir dir;
  auto f = add().build_ir({}, {{true, false}, {true, false}, {true, false}, {false, false}});
  cache::Entry e = cache::compile_entry(*f, jit::CompileOptions{4, 1}, "sm_80", /*with_cubin=*/false);
  CHECK(e.meta.key == cache::make_key(cache::key_inputs(*f, {4, 1}, "sm_80", 80, lowering::llvm_version())));
  CHECK(lowering::llvm_version().rfind("19.", 0) == 0);
  CHECK(e.meta.kernel == "add");
  CHECK(e.meta.specialisation == "x:d16 y:d16 out:d16 n:-");
  CHECK(e.meta.params.size() == 4);
  CHECK(e.meta.params[3].type == "i32");
  CHECK(e.meta.arch == "sm_80");
  CHECK(e.meta.ptx_version == 80);
  CHECK(e.meta.tessel_version == cache::tessel_version());
  CHECK(e.tir.find("kernel @add(%x: ptr<f32> {div16}") == 0);
  CHECK(e.llvm_ir.find("define") != std::string::npos);
  CHECK(e.ptx.find(".entry add") != std::string::npos);
  CHECK(e.ptx.find(".target sm_80") != std::string::npos);
  CHECK(e.cubin.empty());

  cache::Store store(dir.path);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  auto got = store.lookup(e.meta.key);
  REQUIRE(got.has_value());
  CHECK(got->ptx == e.ptx);
  CHECK(got->tir == e.tir);
  CHECK(got->llvm_ir == e.llvm_ir);
}

TEST_CASE("TESSEL_DUMP_DIR receives every stage of a compiled kernel") {
  TempDir dumps;
  EnvVar d("TESSEL_DUMP_DIR", dumps.path.string()), off("TESSEL_CACHE", "0");
  auto f = add().build_ir(Meta{{"BLOCK", 512}});
  cache::Entry e = cache::compile_entry(*f, {}, "sm_90", /*with_cubin=*/true);
  cache::publish(cache::Settings::from_env(), e, /*hit=*/false);
  fs::path out = dumps.path / ("add-" + e.meta.key);
  CHECK(read_bytes(out / "kernel.tir") == e.tir);
  CHECK(read_bytes(out / "kernel.ll") == e.llvm_ir);
  CHECK(read_bytes(out / "kernel.ptx") == e.ptx);
  CHECK(fs::exists(out / "kernel.cubin") == !e.cubin.empty());
  cache::EntryMeta m = cache::parse_meta(read_bytes(out / "meta.json"));
  CHECK(m.kernel == "add");
  CHECK(m.files.at("kernel.ptx").xxh3 == cache::file_hash(e.ptx));
  CHECK(m.files.count("kernel.cubin") == (e.cubin.empty() ? 0u : 1u));
}

TEST_CASE("ptxas turns a lowered kernel into a cubin (skipped without ptxas, unless required)") {
  if (tessel_test::ptxas_or_skip("cubins from ptxas").empty()) return;
  auto f = add().build_ir({}, {{true, false}, {true, false}, {true, false}, {false, false}});
  cache::Entry e = cache::compile_entry(*f, {}, "sm_80", /*with_cubin=*/true);
  REQUIRE(is_elf(e.cubin));
  CHECK(e.meta.cubin_arch == "sm_80");
  CHECK((e.meta.cubin_tool == "ptxas" || e.meta.cubin_tool == "driver"));
  CHECK(e.meta.registers > 0);

  jit::Cubin c = jit::ptxas_cubin(e.ptx, "sm_80");
  CHECK(c.tool == "ptxas");
  CHECK(is_elf(c.image));
  CHECK(c.registers > 0);
  CHECK(c.spill_bytes == 0);  // an elementwise kernel never spills
  jit::Cubin c90 = jit::ptxas_cubin(cache::compile_entry(*f, {}, "sm_90", false).ptx, "sm_90");
  CHECK(is_elf(c90.image));
  CHECK(c90.image != c.image);

  CHECK_THROWS_WITH_AS(jit::ptxas_cubin(".version 8.0\n.target sm_80\nthis is not ptx\n", "sm_80"),
                       doctest::Contains("ptxas -arch=sm_80 failed"), std::runtime_error);
  CHECK_THROWS_AS(jit::ptxas_cubin(e.ptx, "sm_9x"), std::invalid_argument);
  CHECK_THROWS_AS(jit::ptxas_cubin(e.ptx, "sm_80 -o /tmp/x"), std::invalid_argument);
}

namespace {
// A kernel whose wgmma ptxas serialises (advisory C7510): a call on a path that never runs.
constexpr const char* kSerialisedWgmma = R"(.version 8.0
.target sm_90a
.address_size 64

.extern .func __assertfail
(
	.param .b64 __assertfail_param_0,
	.param .b64 __assertfail_param_1,
	.param .b32 __assertfail_param_2,
	.param .b64 __assertfail_param_3,
	.param .b64 __assertfail_param_4
)
;
.visible .entry serialised(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b64 %rd<4>;
	.reg .f32 %f<5>;
	.reg .b32 %r<3>;
	mov.f32 %f1, 0f00000000;
	mov.f32 %f2, 0f00000000;
	mov.f32 %f3, 0f00000000;
	mov.f32 %f4, 0f00000000;
	mov.b64 %rd1, 0;
	mov.b64 %rd2, 0;
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 1000;
	@%p1 bra $L_fail;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	ld.param.u64 %rd3, [out];
	st.global.v4.f32 [%rd3], {%f1, %f2, %f3, %f4};
	ret;
$L_fail:
	{
	.param .b64 param0;
	st.param.b64 [param0+0], 0;
	.param .b64 param1;
	st.param.b64 [param1+0], 0;
	.param .b32 param2;
	st.param.b32 [param2+0], 1;
	.param .b64 param3;
	st.param.b64 [param3+0], 0;
	.param .b64 param4;
	st.param.b64 [param4+0], 1;
	call.uni __assertfail, (param0, param1, param2, param3, param4);
	}
	trap;
}
)";
}  // namespace

TEST_CASE("ptxas's performance advisories (serialised wgmma) are read from its log and logged as warnings") {
  const std::string log =
      "ptxas info    : (C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
      "wgmma pipeline crossing function boundary at a function call in the function 'k'\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
      "non wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline "
      "stage in the function 'k'\r\n"
      "ptxas info    : Used 34 registers, used 0 barriers\n";
  const std::vector<std::string> a = jit::ptxas_advisories(log);
  REQUIRE(a.size() == 2);
  CHECK(a[0].rfind("(C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized", 0) == 0);
  CHECK(a[1].rfind("(C7515) Potential Performance Loss", 0) == 0);
  CHECK(a[1].back() == '\'');
  CHECK(jit::ptxas_advisories("ptxas info    : Used 34 registers\n").empty());

  if (tessel_test::ptxas_or_skip("ptxas advisories").empty()) return;
  tessel_test::LogCapture capture;
  jit::Cubin c = jit::ptxas_cubin(kSerialisedWgmma, "sm_90a");
  CHECK(is_elf(c.image));
  const auto warned = capture.matching("ptxas, kernel 'serialised' for sm_90a: (C7510) Potential Performance Loss");
  REQUIRE(warned.size() == 1);
  CHECK(warned[0].first == tessel::rt::LogLevel::Warn);
  // Once per kernel and advisory: the second assembly says nothing more.
  (void)jit::ptxas_cubin(kSerialisedWgmma, "sm_90a");
  CHECK(capture.matching("Potential Performance Loss").size() == 1);
}

namespace {
// Runs a fresh add Kernel (no in-memory variants: it goes to the device and its cache) on the
// process's device, over an odd size with the output poisoned; checks every element.
void run_add_through_device() {
  const int64_t n = 1000;  // not a multiple of BLOCK
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-4, 4);
  std::vector<float> hx(n), hy(n);
  for (int64_t i = 0; i < n; ++i) hx[i] = u(rng), hy[i] = u(rng);
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, kBlock};
  jit::Array<float> x(hx), y(hy), out(n);
  out.poison();
  k(jit::Grid{jit::cdiv(n, 256)}, {}, x, y, out, static_cast<int>(n));
  jit::Device::current().synchronize();
  std::vector<float> r = out.download();
  for (int64_t i = 0; i < n; ++i) REQUIRE(r[i] == hx[i] + hy[i]);
}

// The one dump directory a single compilation left in `dumps`.
fs::path only_dump(const fs::path& dumps) {
  std::vector<fs::path> dumped;
  for (const auto& p : fs::directory_iterator(dumps)) dumped.push_back(p.path());
  REQUIRE(dumped.size() == 1);
  CHECK(dumped[0].filename().string().rfind("add-", 0) == 0);
  CHECK(read_bytes(dumped[0] / "kernel.tir").find("kernel @add(") == 0);
  CHECK(fs::exists(dumped[0] / "meta.json"));
  return dumped[0];
}
}  // namespace

TEST_CASE("the process's device dumps what it compiles: every stage (GPU) or the IR (interpreter)") {
  TempDir dir, dumps;
  EnvVar d("TESSEL_CACHE_DIR", dir.path.string()), on("TESSEL_CACHE", std::nullopt),
      always("TESSEL_ALWAYS_COMPILE", std::nullopt), dump("TESSEL_DUMP_DIR", dumps.path.string());
  run_add_through_device();
  const fs::path dumped = only_dump(dumps.path);
  if (jit::Device::current().kind() == jit::BackendKind::Interpreter) {
    CHECK(cache::parse_meta(read_bytes(dumped / "meta.json")).arch == "interpreter");
    CHECK_FALSE(fs::exists(dumped / "kernel.ptx"));
    CHECK(count_entries(dir.path) == 0);  // nothing to cache for the interpreter
  } else {
    for (const char* stage : {"kernel.ll", "kernel.ptx", "kernel.cubin"}) CHECK(fs::exists(dumped / stage));
  }
}

TEST_CASE("GPU: the device compiles through the cache: a driver-linked cubin, hits, ALWAYS_COMPILE rewrites" *
          doctest::test_suite("gpu")) {
  jit::Device& dev = jit::Device::current();
  if (dev.kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("the GPU cache path: " + dev.describe());
    return;
  }
  TempDir dir, dumps;
  EnvVar d("TESSEL_CACHE_DIR", dir.path.string()), on("TESSEL_CACHE", std::nullopt),
      always("TESSEL_ALWAYS_COMPILE", std::nullopt), dump("TESSEL_DUMP_DIR", dumps.path.string()),
      tool("TESSEL_CUBIN_TOOL", "driver");
  run_add_through_device();
  (void)only_dump(dumps.path);
  // One entry with a driver-linked cubin and the driver's resource figures.
  cache::Store store(dir.path);
  auto list = store.list();
  REQUIRE(list.size() == 1);
  REQUIRE(list[0].meta.has_value());
  CHECK(list[0].meta->cubin_tool == "driver");
  CHECK(list[0].meta->registers > 0);
  CHECK(fs::exists(list[0].path / "kernel.cubin"));
  run_add_through_device();  // a hit
  CHECK(store.list().at(0).hits == 1);
  {
    EnvVar a("TESSEL_ALWAYS_COMPILE", "1");
    run_add_through_device();  // compiled again, not a hit, entry rewritten
  }
  CHECK(store.list().at(0).hits == 0);  // the replaced entry starts counting afresh
  CHECK(store.verify(list[0].key).empty());
  run_add_through_device();
  CHECK(store.list().at(0).hits == 1);
}

TEST_CASE("GPU: the device's cubins come from ptxas when one is found, else from the driver (TESSEL_CUBIN_TOOL)" *
          doctest::test_suite("gpu")) {
  jit::Device& dev = jit::Device::current();
  if (dev.kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("the GPU's cubin tool: " + dev.describe());
    return;
  }
  const bool have_ptxas = !rt::find_ptxas().empty();
  for (const char* choice : {"", "ptxas", "driver"}) {
    CAPTURE(choice);
    if (std::string_view(choice) == "ptxas" && !have_ptxas) continue;  // nothing to choose
    TempDir dir;
    EnvVar d("TESSEL_CACHE_DIR", dir.path.string()), on("TESSEL_CACHE", std::nullopt),
        always("TESSEL_ALWAYS_COMPILE", std::nullopt), dump("TESSEL_DUMP_DIR", std::nullopt),
        tool("TESSEL_CUBIN_TOOL", *choice ? std::optional<std::string>(choice) : std::nullopt);
    run_add_through_device();  // verifies the sum on the GPU
    auto list = cache::Store(dir.path).list();
    REQUIRE(list.size() == 1);
    REQUIRE(list[0].meta.has_value());
    const char* expected = std::string_view(choice) == "driver" ? "driver" : have_ptxas ? "ptxas" : "driver";
    CHECK(list[0].meta->cubin_tool == expected);
    CHECK(list[0].meta->cubin_arch == dev.arch());
    CHECK(list[0].meta->registers > 0);
  }
}

TEST_CASE("GPU: a cache hit whose cubin another tool made than TESSEL_CUBIN_TOOL names is linked again and stored" *
          doctest::test_suite("gpu")) {
  jit::Device& dev = jit::Device::current();
  if (dev.kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("the GPU's cubin tool on a hit: " + dev.describe());
    return;
  }
  if (rt::find_ptxas().empty()) {
    tessel_test::skip_gpu_case("no ptxas: a hit cannot have been made by another tool");
    return;
  }
  TempDir dir;
  EnvVar d("TESSEL_CACHE_DIR", dir.path.string()), on("TESSEL_CACHE", std::nullopt),
      always("TESSEL_ALWAYS_COMPILE", std::nullopt), dump("TESSEL_DUMP_DIR", std::nullopt);
  auto tool_of_entry = [&] {
    auto list = cache::Store(dir.path).list();
    REQUIRE(list.size() == 1);
    REQUIRE(list[0].meta.has_value());
    return list[0].meta->cubin_tool;
  };
  for (const char* first : {"ptxas", "driver"}) {
    CAPTURE(first);
    fs::remove_all(dir.path);
    fs::create_directories(dir.path);
    const std::string second = std::string_view(first) == "ptxas" ? "driver" : "ptxas";
    {
      EnvVar t("TESSEL_CUBIN_TOOL", first);
      run_add_through_device();  // made by `first`, verified on the GPU
    }
    CHECK(tool_of_entry() == first);
    {
      EnvVar t("TESSEL_CUBIN_TOOL", std::nullopt);  // unset: any tool's entry is a plain hit
      run_add_through_device();
    }
    CHECK(tool_of_entry() == first);
    {
      EnvVar t("TESSEL_CUBIN_TOOL", second);  // named: the hit is linked again by it
      run_add_through_device();
    }
    CHECK(tool_of_entry() == second);
  }
}

TEST_CASE("TESSEL_CUBIN_TOOL: ptxas, driver, or unset (ptxas when found); anything else is an error naming it") {
  {
    EnvVar t("TESSEL_CUBIN_TOOL", "driver");
    CHECK(jit::jit_cubin_tool() == jit::CubinTool::Driver);
  }
  {
    EnvVar t("TESSEL_CUBIN_TOOL", "ptxas");
    CHECK(jit::jit_cubin_tool() == jit::CubinTool::Ptxas);
  }
  {
    EnvVar t("TESSEL_CUBIN_TOOL", std::nullopt);
    CHECK(jit::jit_cubin_tool() == (rt::find_ptxas().empty() ? jit::CubinTool::Driver : jit::CubinTool::Ptxas));
    EnvVar p("TESSEL_PTXAS", "/nonexistent/ptxas");  // names no ptxas: none is found, the driver links
    CHECK(jit::jit_cubin_tool() == jit::CubinTool::Driver);
  }
  {
    EnvVar t("TESSEL_CUBIN_TOOL", std::nullopt);
    CHECK_FALSE(jit::cubin_tool_forced());
  }
  {
    EnvVar t("TESSEL_CUBIN_TOOL", "driver");
    CHECK(jit::cubin_tool_forced());
  }
  EnvVar t("TESSEL_CUBIN_TOOL", "nvcc");
  CHECK_THROWS_WITH_AS(jit::jit_cubin_tool(), doctest::Contains("TESSEL_CUBIN_TOOL='nvcc' is not a cubin tool"),
                       std::invalid_argument);
}

TEST_CASE("dump directories are named from the kernel safely") {
  TempDir dumps;
  cache::Entry e = random_entry(901, 64);
  e.meta.kernel = "../up/and away";
  cache::dump_entry(dumps.path, e);
  fs::path out = dumps.path / ("___up_and_away-" + e.meta.key);
  CHECK(read_bytes(out / "kernel.cubin") == std::string(e.cubin.begin(), e.cubin.end()));
  CHECK(read_bytes(out / "kernel.tir") == e.tir);
  size_t n = 0;
  for (auto it = fs::directory_iterator(dumps.path); it != fs::directory_iterator(); ++it) ++n;
  CHECK(n == 1);
  CHECK_FALSE(fs::exists(dumps.path.parent_path() / "up"));
}
