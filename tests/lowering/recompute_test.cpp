// Recompute or convert (plan/recompute.cpp): which tiles the plan recomputes in another layout.
#include <doctest/doctest.h>

#include "reduce_kernels.hpp"
#include "plan/recompute.hpp"

using namespace lowering_test;
using namespace tessel::lowering;

TEST_CASE("recompute: cheap chains rooted in scalars and aranges; loads, reductions, random numbers converted") {
  Function f("k");
  Builder b(f);
  Value* x = f.add_param("x", ptr_t(Scalar::f32), div16());
  Value* ar = b.arange(0, 64);                                          // cheap
  Value* offs = b.value(OpKind::Add, {ar, b.splat(b.program_id(0), {64})});  // cheap: scalars and an arange
  Value* ptrs = at(b, x, offs);                                         // addptr: cheap
  Value* v = b.value(OpKind::Load, {ptrs});                             // a load: converted
  Value* e = b.value(OpKind::Exp, {v});                                 // reads a load: converted
  Value* c = b.cast(ar, DType{Scalar::f32, false});                                  // cheap
  Value* s = b.value(OpKind::Mul, {c, c});                              // cheap
  Value* r = b.reduce(OpKind::ReduceSum, b.broadcast(b.expand_dims(s, 0), {4, 64}), 0);  // a reduction: converted
  Value* after = b.value(OpKind::Add, {r, s});                          // reads a reduction: converted
  std::vector<bool> rc = recomputed_values(f);
  CHECK(rc.at(ar->id));
  CHECK(rc.at(offs->id));
  CHECK(rc.at(ptrs->id));
  CHECK_FALSE(rc.at(v->id));
  CHECK_FALSE(rc.at(e->id));
  CHECK(rc.at(c->id));
  CHECK(rc.at(s->id));
  CHECK_FALSE(rc.at(r->id));
  CHECK_FALSE(rc.at(after->id));
}

TEST_CASE("recompute: a chain deeper than 12 producers is converted, its first 13 links recomputed") {
  Function f("k");
  Builder b(f);
  std::vector<Value*> chain{b.arange(0, 32)};
  for (int i = 0; i < 16; ++i) chain.push_back(b.value(OpKind::Add, {chain.back(), chain.back()}));
  std::vector<bool> rc = recomputed_values(f);
  // chain[i] reaches the arange through i producers; more than 12 back is too deep.
  for (int i = 0; i <= 12; ++i) CHECK_MESSAGE(rc.at(chain[i]->id), "link " << i);
  for (int i = 13; i <= 16; ++i) CHECK_MESSAGE(!rc.at(chain[i]->id), "link " << i);
}
