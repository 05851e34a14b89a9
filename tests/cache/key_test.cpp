// Cache keys: stable for the same inputs, sensitive to each input, blind to everything else.
#include <doctest/doctest.h>

#include <set>

#include "cache_test_util.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/jit/kernel.hpp"
#include "tessel/samples/elementwise_kernels.hpp"

using namespace tessel;
using namespace tessel::lang;
namespace cache = tessel::jit::cache;

namespace {

// Two kernels with the same body on different lines: their IR differs only in locations.
void scaled_copy_a(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  store(out + offs, load(x + offs, offs < n) * 3.0f, offs < n);
}


void scaled_copy_b(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  store(out + offs, load(x + offs, offs < n) * 3.0f, offs < n);
}

// The same computation with the mask built before the offsets' product: traced in another
// order, it prints differently, and only the printed IR decides the key.
void scaled_copy_reordered(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto lanes = arange(0, BLOCK);
  auto offs = program_id(0) * BLOCK + lanes;
  auto v = load(x + offs, offs < n);
  store(out + offs, v * 3.0f, offs < n);
}

std::string key_of(const ir::Function& f, jit::CompileOptions o = {}, std::string arch = "sm_90", int ptx = 80) {
  return cache::make_key(cache::key_inputs(f, o, arch, ptx, "19.1.7"));
}

const Meta kBlock{{"BLOCK", 256}};

}  // namespace

TEST_CASE("a key is 32 lowercase hex characters and is_key recognises exactly that") {
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, kBlock};
  std::string key = key_of(*k.build_ir({}));
  CHECK(key.size() == 32);
  CHECK(cache::is_key(key));
  CHECK_FALSE(cache::is_key(key.substr(1)));
  CHECK_FALSE(cache::is_key(key + "0"));
  std::string upper = key;
  upper[0] = 'A';
  CHECK_FALSE(cache::is_key(upper));
  CHECK_FALSE(cache::is_key("../../../../etc/passwd0123456789"));
}

TEST_CASE("the key of fixed inputs never changes (keys are shared between processes and hosts)") {
  cache::KeyInputs in;
  in.ir_text = "kernel @k(%x: ptr<f32>) {\n}\n";
  in.num_warps = 8;
  in.num_stages = 3;
  in.arch = "sm_80";
  in.ptx_version = 78;
  in.tessel_version = "1.2.3";
  in.tessel_build = "0123456789abcdef";
  in.llvm_version = "19.1.7";
  // (Every key changed on purpose when the build id entered them, and again at key format v2,
  // when the meta-parameters did: they name the PTX entry, lowering::entry_symbol; and at v3,
  // when meta.json began to store the launch record, which older entries lack.)
  CHECK(cache::make_key(in) == "3f3fb63cf7fbc10b1f14c9746ba7b8d2");
  // Options added later enter the key only when set: entries cached without them keep their keys.
  in.programs_per_cta = 1;
  in.warp_specialize = false;
  CHECK(cache::make_key(in) == "3f3fb63cf7fbc10b1f14c9746ba7b8d2");
  in.warp_specialize = true;
  CHECK(cache::make_key(in) != "3f3fb63cf7fbc10b1f14c9746ba7b8d2");
  in.warp_specialize = false;
  in.meta = "BLOCK=128";
  CHECK(cache::make_key(in) != "3f3fb63cf7fbc10b1f14c9746ba7b8d2");
}

TEST_CASE("two separately traced copies of a kernel get the same key") {
  jit::Kernel a{"add", &samples::add_kernel, {"x", "y", "out", "n"}, kBlock};
  jit::Kernel b{"add", &samples::add_kernel, {"x", "y", "out", "n"}, kBlock};
  auto fa = a.build_ir({});
  auto fb = b.build_ir({});
  CHECK(key_of(*fa) == key_of(*fb));
  CHECK(key_of(*fa) == key_of(*a.build_ir({})));
}

TEST_CASE("source locations do not change the key; the printed IR does") {
  jit::Kernel a{"scaled_copy", &scaled_copy_a, {"x", "out", "n"}, kBlock};
  jit::Kernel b{"scaled_copy", &scaled_copy_b, {"x", "out", "n"}, kBlock};
  auto fa = a.build_ir({});
  auto fb = b.build_ir({});
  REQUIRE(ir::print(*fa, {.locs = true}) != ir::print(*fb, {.locs = true}));  // the lines differ
  REQUIRE(ir::print(*fa) == ir::print(*fb));
  CHECK(key_of(*fa) == key_of(*fb));

  jit::Kernel r{"scaled_copy", &scaled_copy_reordered, {"x", "out", "n"}, kBlock};
  auto fr = r.build_ir({});
  CHECK((ir::print(*fr) == ir::print(*fa)) == (key_of(*fr) == key_of(*fa)));
}

TEST_CASE("changing the IR, the specialisation, an option, the target or a version changes the key") {
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, kBlock};
  auto base = k.build_ir({});
  const cache::KeyInputs in = cache::key_inputs(*base, {}, "sm_90", 80, "19.1.7");
  std::vector<std::pair<std::string, std::string>> keys;
  keys.emplace_back("base", cache::make_key(in));

  keys.emplace_back("BLOCK=512", key_of(*k.build_ir(Meta{{"BLOCK", 512}})));
  keys.emplace_back("renamed kernel", [&] {
    jit::Kernel other{"add2", &samples::add_kernel, {"x", "y", "out", "n"}, kBlock};
    return key_of(*other.build_ir({}));
  }());
  keys.emplace_back("x div16", key_of(*k.build_ir({}, {{true, false}, {}, {}, {}})));
  keys.emplace_back("n equal1", key_of(*k.build_ir({}, {{}, {}, {}, {false, true}})));
  keys.emplace_back("n div16", key_of(*k.build_ir({}, {{}, {}, {}, {true, false}})));
  keys.emplace_back("num_warps 8", key_of(*base, jit::CompileOptions{8, 1}));
  keys.emplace_back("num_stages 2", key_of(*base, jit::CompileOptions{4, 2}));
  keys.emplace_back("2 programs per CTA", key_of(*base, jit::CompileOptions{4, 1, 2}));
  keys.emplace_back("warp_specialize", key_of(*base, jit::CompileOptions{4, 1, 1, true}));
  keys.emplace_back("2 programs per CTA, warp_specialize", key_of(*base, jit::CompileOptions{4, 1, 2, true}));
  keys.emplace_back("warp_specialize, tma", key_of(*base, jit::CompileOptions{4, 1, 1, true, true}));
  keys.emplace_back("precise_math", key_of(*base, jit::CompileOptions{4, 1, 1, false, false, true}));
  keys.emplace_back("sm_80", key_of(*base, {}, "sm_80"));
  keys.emplace_back("sm_90a", key_of(*base, {}, "sm_90a"));
  keys.emplace_back("ptx 8.3", key_of(*base, {}, "sm_90", 83));
  cache::KeyInputs v = in;
  v.tessel_version = "9.9.9";
  keys.emplace_back("tessel version", cache::make_key(v));
  v = in;
  v.tessel_build = "fedcba9876543210";  // the same version rebuilt from changed sources
  keys.emplace_back("tessel build", cache::make_key(v));
  v = in;
  v.llvm_version = "20.1.0";
  keys.emplace_back("llvm version", cache::make_key(v));
  v = in;
  v.ir_text += " ";
  keys.emplace_back("one more byte of IR", cache::make_key(v));

  std::set<std::string> distinct;
  for (const auto& [what, key] : keys) {
    INFO(what);
    CHECK(cache::is_key(key));
    CHECK(distinct.insert(key).second);
  }
  // Options at their defaults, spelled out, are the base key.
  CHECK(key_of(*base, jit::CompileOptions{4, 1, 1, false}) == keys.front().second);
}

TEST_CASE("fields cannot run into each other: moving bytes between inputs changes the key") {
  cache::KeyInputs a;
  a.ir_text = "kernel";
  a.arch = "sm_90";
  a.tessel_version = "0.1";
  a.llvm_version = "19";
  cache::KeyInputs b = a;
  b.ir_text = "kernel\narch=5:sm_90";  // looks like the next field's encoding
  b.arch = "";
  CHECK(cache::make_key(a) != cache::make_key(b));
  cache::KeyInputs c = a;
  c.tessel_version = "0.11";
  c.llvm_version = "9";
  CHECK(cache::make_key(a) != cache::make_key(c));
}

TEST_CASE("keys of many random IR texts are all distinct") {
  std::mt19937_64 rng(42);
  std::set<std::string> texts, keys;
  cache::KeyInputs in;
  in.arch = "sm_90";
  for (int i = 0; i < 2000; ++i) {
    in.ir_text = cache_test::random_text(rng, 1 + rng() % 64);
    texts.insert(in.ir_text);
    keys.insert(cache::make_key(in));
  }
  CHECK(keys.size() == texts.size());
}

TEST_CASE("every key carries this build's id: a rebuilt compiler never shares keys with an older one") {
  const std::string id = cache::tessel_build_id();
  CHECK(id.size() == 16);
  CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, kBlock};
  auto f = k.build_ir({});
  cache::KeyInputs in = cache::key_inputs(*f, {}, "sm_90", 80, "19.1.7");
  CHECK(in.tessel_build == id);
  CHECK(in.tessel_version == cache::tessel_version());
  // Only the build differs: the same version, IR, options and target give another key.
  cache::KeyInputs older = in;
  older.tessel_build = id == "0000000000000000" ? "1111111111111111" : "0000000000000000";
  CHECK(cache::make_key(older) != cache::make_key(in));
  // And the build is not optional: leaving it out is yet another key, never this build's.
  older.tessel_build.clear();
  CHECK(cache::make_key(older) != cache::make_key(in));
  // The entry records the build that wrote it, and meta.json keeps it.
  cache::EntryMeta m = cache::describe(*f, in, cache::make_key(in));
  CHECK(m.tessel_build == id);
  const std::string json = cache::meta_to_json(m);
  CHECK(json.find("\"tessel_build\": \"" + id + "\"") != std::string::npos);
  CHECK(cache::parse_meta(json).tessel_build == id);
}
