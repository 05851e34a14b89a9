// Tracing reductions, cumsum, the generic reduce, reshape/trans, col()/row() and atomics: the IR recorded.
#include <doctest/doctest.h>

#include <string>

#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"
#include "tessel/lang/lang.hpp"

using namespace tessel::lang;
namespace ir = tessel::ir;

namespace {
std::vector<std::string> g_types;  // types of the tiles a kernel probes, in order

void probe(const Tile& t) { g_types.push_back(t.type().str()); }

template <class... A>
std::unique_ptr<ir::Function> traced(void (*fn)(A...)) {
  g_types.clear();
  auto f = trace(fn, {});
  ir::verify(*f);
  return f;
}

int count_ops(const ir::Function& f, ir::OpKind k) {
  int n = 0;
  ir::walk(f.body, [&](const ir::Op& op) { n += op.kind == k; });
  return n;
}

void reductions(Ptr<f32> x, Ptr<f16> h, Ptr<i8> c, const Meta&) {
  auto offs = arange(0, 8).col() * 32 + arange(0, 32).row();  // [8,32]
  auto v = load(x + offs);
  probe(offs);
  probe(sum(v, 1));
  probe(sum(v, 0, true));
  probe(max(v, 1, true));
  probe(min(v, 0));
  probe(reduce_max(v, 0));
  probe(argmax(v, 1));
  probe(argmin(v, 0, true));
  probe(sum(load(h + offs), 1));        // f16 sums in f32
  probe(max(load(h + offs), 1));        // max keeps f16
  probe(sum(load(c + arange(0, 64)), 0));  // i8 sums in i32; rank 1 -> scalar
  probe(cumsum(v, 1));
  probe(cumsum(load(h + offs), 0));
}

void shapes(Ptr<f32> x, const Meta&) {
  auto offs = arange(0, 8).col() * 32 + arange(0, 32).row();
  auto v = load(x + offs);
  probe(trans(v));
  probe(reshape(v, {256}));
  probe(reshape(v, {4, 2, 32}));
  probe(arange(0, 16).row());
  probe(arange(0, 16).col());
  probe(v.col());  // rank 2 -> [8,32,1]
  probe(reshape(v, {8, 32}));  // same shape: no op
}

void combine(Ptr<f32> x, Ptr<f32> out, Float scale, const Meta&) {
  auto v = load(x + arange(0, 4).col() * 16 + arange(0, 16).row());
  auto r = reduce(v, 1, [&](Tile a, Tile b) { return maximum(a, b * scale); });
  probe(r);
  auto k = reduce(v, 0, [](Tile a, Tile b) { return a + b; }, true);
  probe(k);
  store(out + arange(0, 4), r);
  store(out + arange(0, 16), sum(k, 0));
}

void combine_in_loop(Ptr<f32> x, Ptr<f32> out, Int n, const Meta&) {
  Var best{full<f32>({}, -1e30f)};
  Var lim{full<f32>({}, 3.0f)};
  for (auto i : range(0, n, 16)) {
    auto v = load(x + i + arange(0, 16), i + arange(0, 16) < n, -1e30f);
    // the combine reads a Var (carried by the loop) and the loop's induction variable
    best = maximum(best, reduce(v, 0, [&](Tile a, Tile b) { return minimum(maximum(a, b), lim + cast<f32>(i)); }));
  }
  store(out, best);
}

void atomics(Ptr<f32> acc, Ptr<i32> cnt, Ptr<f32> x, Int n, const Meta&) {
  auto offs = arange(0, 64);
  auto mask = offs < n;
  auto v = load(x + offs, mask, 0.0f);
  probe(atomic_add(acc, sum(v * v, 0)));               // scalar pointer, scalar value
  probe(atomic_add(acc + offs % 4, v, mask));          // duplicates within the tile
  probe(atomic_max(cnt + offs.col() * 0 + arange(0, 2).row(), 7));  // literal broadcast to [64,2]
  probe(atomic_max(cnt + offs, cast<i32>(v), mask));
  probe(atomic_add(cnt, 1, Order::acq_rel));                // a "last to arrive" counter
  probe(atomic_max(acc + offs, v, mask, Order::acq_rel));
}
}  // namespace

TEST_CASE("reductions record reduce ops of the documented types") {
  auto f = traced(reductions);
  std::vector<std::string> want{"i32[8,32]", "f32[8]",  "f32[1,32]", "f32[8,1]", "f32[32]", "f32[32]", "i32[8]",
                                "i32[1,32]", "f32[8]",  "f16[8]",    "i32",      "f32[8,32]", "f32[8,32]"};
  CHECK(g_types == want);
  CHECK(count_ops(*f, ir::OpKind::ReduceSum) == 4);
  CHECK(count_ops(*f, ir::OpKind::ReduceMax) == 3);
  CHECK(count_ops(*f, ir::OpKind::ReduceMin) == 1);
  CHECK(count_ops(*f, ir::OpKind::ArgMax) == 1);
  CHECK(count_ops(*f, ir::OpKind::ArgMin) == 1);
  CHECK(count_ops(*f, ir::OpKind::CumSum) == 2);
  std::string text = ir::print(*f);
  CHECK(text.find("= cast %") != std::string::npos);
  CHECK(text.find("reduce_sum %") != std::string::npos);
  CHECK(text.find("{axis = 1} : f32[8]") != std::string::npos);
}

TEST_CASE("reshape, trans and the col()/row() shorthands") {
  auto f = traced(shapes);
  std::vector<std::string> want{"f32[32,8]", "f32[256]", "f32[4,2,32]", "i32[1,16]", "i32[16,1]", "f32[8,32,1]",
                                "f32[8,32]"};
  CHECK(g_types == want);
  CHECK(count_ops(*f, ir::OpKind::Trans) == 1);
  CHECK(count_ops(*f, ir::OpKind::Reshape) == 2);
}

TEST_CASE("reduce traces the combine once into a region that prints and verifies") {
  auto f = traced(combine);
  CHECK(g_types == std::vector<std::string>{"f32[4]", "f32[1,16]"});
  CHECK(count_ops(*f, ir::OpKind::Reduce) == 2);
  const ir::Op* red = nullptr;
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Reduce && !red) red = &op;
  });
  REQUIRE(red != nullptr);
  REQUIRE(red->regions.size() == 1);
  const ir::Block& body = *red->regions[0];
  CHECK(body.args.size() == 2);
  CHECK(body.args[0]->type.str() == "f32");
  CHECK(body.terminator()->kind == ir::OpKind::Yield);
  // the body holds mul (b * scale) and max, then the yield
  CHECK(body.ops.size() == 3);
  std::string text = ir::print(*f);
  CHECK(text.find("reduce %") != std::string::npos);
  CHECK(text.find("mul %") != std::string::npos);
}

TEST_CASE("a combine inside a range loop may read Vars and the induction variable") {
  auto f = traced(combine_in_loop);
  CHECK(count_ops(*f, ir::OpKind::Reduce) == 1);
  const ir::Op* loop = nullptr;
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::For) loop = &op;
  });
  REQUIRE(loop != nullptr);
  CHECK(loop->results.size() == 2);  // best and lim are both carried
}

TEST_CASE("atomics record atomic ops returning the old values") {
  auto f = traced(atomics);
  CHECK(g_types == std::vector<std::string>{"f32", "f32[64]", "i32[64,2]", "i32[64]", "i32", "f32[64]"});
  CHECK(count_ops(*f, ir::OpKind::AtomicAdd) == 3);
  CHECK(count_ops(*f, ir::OpKind::AtomicMax) == 3);
  int masked = 0;
  std::vector<int64_t> acq_rel;  // the attribute of each atomic, in order (0: none)
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::AtomicAdd && op.kind != ir::OpKind::AtomicMax) return;
    masked += op.num_operands() == 3;
    acq_rel.push_back(op.has_attr("acq_rel") ? op.int_attr("acq_rel") : 0);
  });
  CHECK(masked == 3);
  CHECK(acq_rel == std::vector<int64_t>{0, 0, 0, 0, 1, 1});
}
