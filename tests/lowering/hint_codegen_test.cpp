// multiple_of / max_contiguous: the axis analysis takes the promise, and loads become vectors.
#include <doctest/doctest.h>

#include "check_ptx.hpp"
#include "kernels.hpp"
#include "plan/axis_analysis.hpp"

using namespace lowering_test;
using tessel::lowering::AxisAnalysis;
using tessel::lowering::AxisInfo;

namespace {
using V = std::vector<int64_t>;

// out[offs] = x[idx[offs]] (f32) for offs < n (n % 16 == 0 when n_div16); with `hinted` the
// gathered offsets are max_contiguous(multiple_of(idx, 4), 4).
std::unique_ptr<Function> gather(bool hinted, bool masked, int64_t block = 512) {
  auto f = std::make_unique<Function>("gather");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(Scalar::f32), div16());
  Value* idx = f->add_param("idx", ptr_t(Scalar::i32), div16());
  Value* out = f->add_param("out", ptr_t(Scalar::f32), div16());
  Value* n = f->add_param("n", scalar_t(Scalar::i32), div16());
  Value* offs = block_offsets(b, block);
  std::vector<Value*> mask;
  if (masked) mask.push_back(b.value(OpKind::CmpLt, {offs, b.splat(n, {block})}));
  Value* i = b.value(OpKind::Load, {at(b, idx, offs)});
  if (hinted) i = b.hint(b.hint(i, {4}), {}, {4});
  std::vector<Value*> ld{at(b, x, i)};
  ld.insert(ld.end(), mask.begin(), mask.end());
  Value* v = b.value(OpKind::Load, ld);
  std::vector<Value*> st{at(b, out, offs), v};
  st.insert(st.end(), mask.begin(), mask.end());
  b.create(OpKind::Store, st);
  return f;
}

}  // namespace

TEST_CASE("hint: a runtime stride and a block start get the promised divisibility") {
  for (bool hinted : {false, true}) {
    CAPTURE(hinted);
    Function f("k");
    Builder b(f);
    Value* x = f.add_param("x", ptr_t(Scalar::f32), div16());
    Value* stride = f.add_param("stride", scalar_t(Scalar::i32));
    Value* blk = f.add_param("blk", scalar_t(Scalar::i32));
    Value* s = hinted ? b.hint(stride, {8}) : stride;
    Value* strided = b.value(OpKind::Mul, {b.arange(0, 64), b.splat(s, {64})});
    Value* start = b.value(OpKind::Mul, {b.program_id(0), blk});
    Value* hstart = hinted ? b.hint(start, {16}) : start;
    Value* offs = b.value(OpKind::Add, {b.splat(hstart, {128}), b.arange(0, 128)});
    Value* p = at(b, x, offs);
    AxisAnalysis a(f);
    CHECK(a.at(s).divisibility == V{hinted ? 8 : 1});
    CHECK(a.at(strided).divisibility == V{hinted ? 8 : 1});
    CHECK(a.at(hstart).divisibility == V{hinted ? 16 : 1});
    CHECK(a.at(offs).contiguity == V{128});
    CHECK(a.at(offs).divisibility == V{hinted ? 16 : 1});
    CHECK(a.at(p).contiguity == V{128});
    CHECK(a.at(p).divisibility == V{hinted ? 16 : 4});  // bytes: gcd(16, 16 * 4) vs gcd(16, 1 * 4)
  }
}

TEST_CASE("hint: offsets loaded from memory get contiguity and divisibility only from hints") {
  auto f = gather(true, true);
  AxisAnalysis a(*f);
  const Op* inner = find_op(*f, OpKind::Hint, 0);
  const Op* outer = find_op(*f, OpKind::Hint, 1);
  const AxisInfo& loaded = a.at(inner->operands[0]);
  CHECK(loaded.contiguity == V{1});
  CHECK(loaded.divisibility == V{1});
  CHECK(a.at(inner->result()).contiguity == V{1});
  CHECK(a.at(inner->result()).divisibility == V{4});
  CHECK(a.at(outer->result()).contiguity == V{4});
  CHECK(a.at(outer->result()).divisibility == V{4});
  CHECK(a.at(outer->result()).constancy == V{1});
  const AxisInfo& ptr = a.at(find_op(*f, OpKind::AddPtr, 1)->result());
  CHECK(ptr.contiguity == V{4});
  CHECK(ptr.divisibility == V{16});  // 4 elements of 4 bytes: 16-byte aligned runs of 4
}

TEST_CASE("hint: a hint never lowers what is known, and contiguity stays within the dim") {
  Function f("k");
  Builder b(f);
  Value* offs = b.value(OpKind::Mul, {b.arange(0, 64), b.splat(b.const_int(32, scalar_t(Scalar::i32)), {64})});
  Value* weak = b.hint(offs, {2});
  Value* r = b.broadcast(b.expand_dims(b.arange(4, 12), 0), {4, 8});  // dim 1: runs of 8 from 4
  Value* two_d = b.hint(r, {1, 8}, {1, 8});
  AxisAnalysis a(f);
  CHECK(a.at(weak).divisibility == V{32});
  CHECK(a.at(two_d).contiguity == V{1, 8});
  CHECK(a.at(two_d).divisibility == V{1, 8});
  CHECK(a.at(two_d).constancy == V{4, 1});
}

TEST_CASE("hint: a gather through hinted offsets issues 16-byte vector loads; unhinted it stays scalar") {
  SUBCASE("masked (n % 16 == 0): predicated ld.global.v4.b32") {
    auto h = gather(true, true);
    auto ch = compile_checked(*h);
    INFO(ch.ptx);
    // 512 f32 / 128 threads = 4 per thread: one v4 for idx, one for x, one v4 store
    CHECK(count(ch.ptx, "ld.global.v4.b32") == 1);
    CHECK(count(ch.ptx, "st.global.v4.b32") == 1);
    CHECK(ch.ptx.find("ld.global.b32") == std::string::npos);

    auto p = gather(false, true);
    auto cp = compile_checked(*p);
    INFO(cp.ptx);
    CHECK(count(cp.ptx, "ld.global.v4.b32") == 0);
    CHECK(count(cp.ptx, "ld.global.b32") == 4);  // x gathered element by element
  }
  SUBCASE("unmasked: plain LLVM vectors, ld.global.v4.f32") {
    auto h = gather(true, false);
    auto ch = compile_checked(*h);
    INFO(ch.ptx);
    CHECK(count(ch.ptx, "ld.global.v4.f32") == 1);
    auto p = gather(false, false);
    auto cp = compile_checked(*p);
    INFO(cp.ptx);
    CHECK(count(cp.ptx, "ld.global.v4.f32") == 0);
    CHECK(count(cp.ptx, "ld.global.f32") == 4);
  }
}
