// The demand order before NVPTX codegen: elementwise chains run element by element behind
// their stores.
#include <doctest/doctest.h>

#include "check_ptx.hpp"
#include "kernels.hpp"

using namespace lowering_test;

TEST_CASE("an elementwise chain over a tile is emitted element by element") {
  // out = erf(x): 4096 elements over 128 threads, 32 per thread, stored 4 at a time. Lowered
  // op by op, every erf (one ex2 each) would precede every store.
  auto f = unary_chain({OpKind::Erf}, Scalar::f32, 4096);
  auto c = compile_checked(*f);
  INFO(c.ptx);
  REQUIRE(count(c.ptx, "ex2.approx") == 32);
  REQUIRE(count(c.ptx, "st.global.v4") == 8);
  size_t first_store = c.ptx.find("st.global.v4");
  size_t last_ex2 = c.ptx.rfind("ex2.approx");
  CHECK(first_store < last_ex2);
}
