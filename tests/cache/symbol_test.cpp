// Entry symbols that tell a kernel's variants apart (ncu, nsys): distinct, valid PTX identifiers,
// bounded, and recorded in meta.json with the meta-parameters and options they stand for.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "cache_test_util.hpp"
#include "tessel/jit/kernel.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/samples/elementwise_kernels.hpp"

using namespace cache_test;
using namespace tessel;
using namespace tessel::lang;

namespace {

jit::Kernel<Ptr<f32>, Ptr<f32>, Ptr<f32>, Int, const Meta&>& add() {
  static jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, Meta{{"BLOCK", 256}}};
  return k;
}

// PTX identifiers: a letter or '_' first, then letters, digits, '_' (and '$', which tessel never uses).
bool is_ptx_identifier(const std::string& s) {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(s, re);
}

std::string entry_of(const std::string& ptx) {
  static const std::regex re(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)\()");
  std::smatch m;
  return std::regex_search(ptx, m, re) ? m[1].str() : std::string();
}

}  // namespace

TEST_CASE("two variants of one kernel get different, valid entry symbols carrying meta, warps and stages") {
  auto f256 = add().build_ir(Meta{{"BLOCK", 256}}, {});
  auto f1024 = add().build_ir(Meta{{"BLOCK", 1024}}, {});
  cache::Entry a = cache::compile_entry(*f256, jit::CompileOptions{4, 1}, "sm_80", false);
  cache::Entry b = cache::compile_entry(*f1024, jit::CompileOptions{8, 2}, "sm_80", false);
  CHECK(a.meta.launch.symbol == "add_BLOCK256_w4_s1");
  CHECK(b.meta.launch.symbol == "add_BLOCK1024_w8_s2");
  CHECK(a.meta.kernel == "add");  // the kernel's own name is unchanged
  CHECK(b.meta.kernel == "add");
  // What the PTX defines is what the entry records (the driver is asked for it by that name).
  CHECK(entry_of(a.ptx) == a.meta.launch.symbol);
  CHECK(entry_of(b.ptx) == b.meta.launch.symbol);
  CHECK(is_ptx_identifier(a.meta.launch.symbol));
  CHECK(a.meta.entry() == a.meta.launch.symbol);
  // Same meta, other warps: still another symbol, and another key.
  cache::Entry c = cache::compile_entry(*f256, jit::CompileOptions{8, 1}, "sm_80", false);
  CHECK(c.meta.launch.symbol == "add_BLOCK256_w8_s1");
  CHECK(c.meta.key != a.meta.key);
}

TEST_CASE("meta.json maps the symbol back to the kernel, its meta-parameters and options") {
  auto f = add().build_ir(Meta{{"BLOCK", 512}}, {});
  cache::Entry e = cache::compile_entry(*f, jit::CompileOptions{2, 3}, "sm_90", false);
  const std::string text = cache::meta_to_json(e.meta);
  const nlohmann::json j = nlohmann::json::parse(text);
  CHECK(j.at("launch").at("symbol") == "add_BLOCK512_w2_s3");
  CHECK(j.at("kernel") == "add");
  CHECK(j.at("meta") == nlohmann::json{{"BLOCK", 512}});
  CHECK(j.at("num_warps") == 2);
  CHECK(j.at("num_stages") == 3);
  cache::EntryMeta back = cache::parse_meta(text);
  CHECK(back.launch.symbol == e.meta.launch.symbol);
  CHECK(back.meta_params == std::vector<std::pair<std::string, int64_t>>{{"BLOCK", 512}});
}

TEST_CASE("the meta-parameters are keyed: the same IR traced under other meta values is another entry") {
  auto f = add().build_ir(Meta{{"BLOCK", 256}}, {});
  cache::KeyInputs in = cache::key_inputs(*f, {4, 1}, "sm_80", 80, "19");
  CHECK(in.meta == "BLOCK=256");
  const std::string key = cache::make_key(in);
  f->meta = {{"BLOCK", 256}, {"UNUSED", 1}};  // a meta-parameter the kernel never reads
  CHECK(cache::make_key(cache::key_inputs(*f, {4, 1}, "sm_80", 80, "19")) != key);
}

TEST_CASE("entry symbols: negative values, odd names and long metas stay bounded identifiers") {
  ir::Function f("my-kernel");
  f.meta = {{"NEG", -3}, {"X.Y", 7}};
  lowering::Options o;
  CHECK(lowering::entry_symbol(f, o) == "my_kernel_NEGm3_X_Y7_w4_s1");
  o.programs_per_cta = 2;
  CHECK(lowering::entry_symbol(f, o) == "my_kernel_NEGm3_X_Y7_w4_s1_p2");
  ir::Function digit("1st");
  CHECK(lowering::entry_symbol(digit, lowering::Options{}) == "k_1st_w4_s1");
  ir::Function big("matmul");
  for (int i = 0; i < 20; ++i) big.meta.emplace_back(fmt::format("PARAMETER_{:02}", i), 1000000 + i);
  const std::string s = lowering::entry_symbol(big, lowering::Options{});
  CHECK(s.size() == lowering::kMaxEntrySymbol);
  CHECK(is_ptx_identifier(s));
  CHECK(s.rfind("matmul_PARAMETER_00", 0) == 0);
  CHECK(std::regex_search(s, std::regex("_h[0-9a-f]{16}$")));
  big.meta.back().second += 1;  // differs only past the cut: the hash still tells them apart
  CHECK(lowering::entry_symbol(big, lowering::Options{}) != s);
}
