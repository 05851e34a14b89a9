// Layout assignment: one default per shape, slice layouts pulled back through loads.
#include <doctest/doctest.h>

#include "reduce_kernels.hpp"
#include "plan/layout_assignment.hpp"

using namespace lowering_test;
using namespace tessel::lowering;

TEST_CASE("vector add: every tile in the default layout of its shape") {
  auto f = vector_add(1024, true);
  LayoutAssignment a = assign_layouts(*f, 4);
  const Layout& d = a.default_for({1024});
  CHECK(d == default_layout({1024}, 4, 4));
  walk(f->body, [&](const Op& op) {
    for (const Value* r : op.results)
      if (!r->type.is_scalar()) CHECK(a.of(r) == d);
  });
}

TEST_CASE("the narrowest loaded element sets a shape's vector width") {
  auto f = vector_add(2048, true, true, Scalar::f16);
  LayoutAssignment a = assign_layouts(*f, 4);
  CHECK(a.default_for({2048}).size_per_thread == std::vector<int>{8});
}

TEST_CASE("2-D: loads feeding expand_dims are computed in slice layouts") {
  auto f = outer_sum(64, 32, false);
  LayoutAssignment a = assign_layouts(*f, 4);
  const Layout& d2 = a.default_for({64, 32});
  const Op* load_a = find_op(*f, OpKind::Load, 0);
  const Op* load_b = find_op(*f, OpKind::Load, 1);
  CHECK(a.of(load_a->result()) == slice_layout(d2, 1));  // a[i] varies down the rows
  CHECK(a.of(load_b->result()) == slice_layout(d2, 0));  // b[j] varies along a row
  // the request travels up through the pointer arithmetic to the aranges
  CHECK(a.of(load_a->operand(0)) == slice_layout(d2, 1));
  // [64,1] tiles before the broadcast use the parent layout itself
  CHECK(a.of(find_op(*f, OpKind::ExpandDims, 0)->result()) == d2);
}

TEST_CASE("uses that disagree leave a value in its default layout") {
  auto f = outer_sum(64, 64, /*share_arange=*/true);
  LayoutAssignment a = assign_layouts(*f, 4);
  const Op* ar = find_op(*f, OpKind::Arange, 0);
  CHECK(a.of(ar->result()) == a.default_for({64}));
  CHECK(a.of(find_op(*f, OpKind::Load, 0)->result()) == slice_layout(a.default_for({64, 64}), 1));
}

TEST_CASE("operand_layout: broadcast from a lower rank slices the leading dims") {
  Function f("k");
  Builder b(f);
  Value* v = b.arange(0, 16);
  Value* w = b.broadcast(v, {8, 16});
  Layout l = default_layout({8, 16}, 4, 4);
  auto want = operand_layout(*w->def, 0, l);
  REQUIRE(want.has_value());
  CHECK(*want == slice_layout(l, 0));
  CHECK(want->rank() == 1);
}

TEST_CASE("anchors: a reduction's result lives in the slice of its operand's layout, and so do its users") {
  auto f = reduce_kernel(OpKind::ReduceSum, {64, 64}, 1, Scalar::f32);
  LayoutAssignment a = assign_layouts(*f, 4);
  const Layout p = a.default_for({64, 64});
  int stores = 0;
  walk(f->body, [&](const Op& op) {
    if (op.kind == OpKind::ReduceSum) CHECK(a.of(op.result()) == slice_layout(p, 1));
    if (op.kind == OpKind::Store) {
      CHECK(*a.of_op(op) == slice_layout(p, 1));  // stored straight from the slice layout
      CHECK(a.of(op.operands[0]) == slice_layout(p, 1));  // the pointers are computed there
      ++stores;
    }
  });
  CHECK(stores == 1);
}

TEST_CASE("anchors: x - max(x, 1)[:, None] needs no conversion; elementwise users inherit the slice") {
  auto f = softmax_kernel({16, 256});
  LayoutAssignment a = assign_layouts(*f, 4);
  const Layout p = a.default_for({16, 256});
  CHECK(p.warps_per_cta == std::vector<int>{4, 1});  // kept off the reduced dim
  walk(f->body, [&](const Op& op) {
    if (op.kind == OpKind::ReduceMax || op.kind == OpKind::ReduceSum) {
      CHECK(a.of(op.operands[0]) == p);
      CHECK(a.of(op.result()) == slice_layout(p, 1));
    }
    if (op.kind == OpKind::Broadcast && op.operands[0]->type.shape == Shape{16, 1}) CHECK(a.of(op.operands[0]) == p);
    if (!op.results.empty() && op.result()->type.shape == Shape{16, 256}) CHECK(a.of(op.result()) == p);
  });
  // a [16] tile computed from a row max is anchored too
  Function g("anchored_user");
  Builder b(g);
  Value* x = g.add_param("x", ptr_t(Scalar::f32), div16());
  Value* out = g.add_param("out", ptr_t(Scalar::f32), div16());
  Value* v = b.value(OpKind::Load, {at(b, x, tile_offsets(b, {16, 256}))});
  Value* m = b.reduce(OpKind::ReduceMax, v, 1);
  Value* w = b.value(OpKind::Load, {at(b, x, b.arange(0, 16))});  // a [16] tile of its own
  Value* y = b.value(OpKind::Mul, {m, w});
  b.create(OpKind::Store, {at(b, out, b.arange(0, 16)), y});
  LayoutAssignment ag = assign_layouts(g, 4);
  const Layout row = slice_layout(ag.default_for({16, 256}), 1);
  CHECK(ag.of(y) == row);
  CHECK(ag.of(w) == row);  // the load is asked for in the anchored layout
  CHECK_FALSE(ag.default_for({16}) == row);
}
