// Reductions, argmax, generic reduce, cumsum, reshape/trans and atomics lower to the expected
// PTX (warp shuffles, barriers only where warps meet, red/atom) and assemble without spills.
#include <doctest/doctest.h>

#include "check_ptx.hpp"
#include "reduce_kernels.hpp"
#include "tessel/ir/verify.hpp"
#include "plan/layout_assignment.hpp"

using namespace lowering_test;
using tessel::lowering::Compiled;
using tessel::lowering::Options;
using tessel::lowering::Layout;
using tessel::lowering::slice_layout;

namespace {

Compiled checked(const Function& f, int warps = 4) {
  tessel::ir::verify(f);
  Options o;
  o.num_warps = warps;
  return compile_checked(f, o);
}

bool has(const std::string& ptx, const std::string& s) { return ptx.find(s) != std::string::npos; }

}  // namespace

TEST_CASE("reduce_sum over a 1-D tile: registers, butterflies, one barrier across warps") {
  auto f = reduce_kernel(OpKind::ReduceSum, {4096}, 0, Scalar::f32);
  Compiled c = checked(*f);
  INFO(c.ptx);
  CHECK(has(c.ptx, "shfl.sync.bfly.b32"));
  CHECK(count(c.ptx, "shfl.sync.bfly.b32") == 5);  // 32 lanes
  CHECK(count(c.ptx, "bar.sync") == 1);            // 4 warps meet once
  CHECK(has(c.ptx, "st.shared.f32"));
  CHECK(has(c.ptx, "ld.shared"));
  CHECK(has(c.ptx, "ld.global.nc.v4.f32") + has(c.ptx, "ld.global.v4.f32") >= 1);
  CHECK(c.launch.shared_bytes == 16);
  // one warp: no shared memory at all
  Compiled c1 = checked(*reduce_kernel(OpKind::ReduceSum, {1024}, 0, Scalar::f32), 1);
  CHECK(count(c1.ptx, "bar.sync") == 0);
  CHECK(c1.launch.shared_bytes == 0);
}

TEST_CASE("reductions along each axis of a 2-D tile") {
  // default [64, 64] layout, 4 warps: spt [1,4], tpw [2,16], wpc [4,1]
  Compiled rows = checked(*reduce_kernel(OpKind::ReduceSum, {64, 64}, 1, Scalar::f32));
  CHECK(count(rows.ptx, "shfl.sync.bfly.b32") == 4 * 8);  // 16 lanes along a row, 8 rows per thread
  CHECK(count(rows.ptx, "bar.sync") == 0);                // a row lives in one warp
  CHECK(rows.launch.shared_bytes == 0);
  Compiled cols = checked(*reduce_kernel(OpKind::ReduceSum, {64, 64}, 0, Scalar::f32));
  INFO(cols.ptx);
  CHECK(has(cols.ptx, "shfl.sync.bfly.b32"));  // the 2 lanes along a column
  CHECK(count(cols.ptx, "bar.sync") == 1);     // 4 warps along the columns
  CHECK(cols.launch.shared_bytes == 4 * 64 * 4);
  // a single long row: every warp holds part of it
  Compiled row = checked(*reduce_kernel(OpKind::ReduceMax, {1, 4096}, 1, Scalar::f32), 8);
  CHECK(count(row.ptx, "shfl.sync.bfly.b32") == 5);
  CHECK(count(row.ptx, "bar.sync") == 1);
  CHECK(has(row.ptx, "max.NaN.f32") + has(row.ptx, "max.f32") >= 1);
}

TEST_CASE("every reduction kind and element type lowers and assembles") {
  const std::vector<std::pair<Shape, int>> all{{{512}, 0}, {{32, 64}, 0}, {{32, 64}, 1}};
  const std::vector<std::pair<Shape, int>> one{{{32, 64}, 1}};
  for (OpKind k : {OpKind::ReduceSum, OpKind::ReduceMax, OpKind::ReduceMin, OpKind::ArgMax, OpKind::ArgMin})
    for (Scalar t : {Scalar::f32, Scalar::f16, Scalar::bf16, Scalar::f64, Scalar::i32, Scalar::i64, Scalar::i8,
                     Scalar::i16, Scalar::i1}) {
      CAPTURE(static_cast<int>(k));
      CAPTURE(static_cast<int>(t));
      // every shape for one type of each width class, one shape for the rest (ptxas is slow)
      const bool full = t == Scalar::f32 || t == Scalar::i64 || t == Scalar::f16;
      for (auto [shape, axis] : full ? all : one) {
        Compiled c = checked(*reduce_kernel(k, shape, axis, t));
        // 8-byte elements of [32, 64] put all 32 lanes along dim 1: dim 0 meets across warps only
        bool lanes_along_axis = !(axis == 0 && shape.size() == 2 && (t == Scalar::i64 || t == Scalar::f64));
        CHECK(has(c.ptx, "shfl.sync.bfly.b32") == lanes_along_axis);
        CHECK(has(c.ptx, "bar.sync") == (axis == 0));
      }
    }
}

TEST_CASE("64-bit values shuffle as two halves") {
  Compiled c = checked(*reduce_kernel(OpKind::ReduceSum, {1024}, 0, Scalar::f64));
  CHECK(count(c.ptx, "shfl.sync.bfly.b32") == 10);
  CHECK(has(c.ptx, "add.f64") + has(c.ptx, "add.rn.f64") >= 1);
}

TEST_CASE("argmax carries (value, index) pairs through lanes and warps") {
  Compiled c = checked(*reduce_kernel(OpKind::ArgMax, {2048}, 0, Scalar::f32));
  INFO(c.ptx);
  CHECK(count(c.ptx, "shfl.sync.bfly.b32") == 10);  // value and index, 5 stages
  CHECK(count(c.ptx, "bar.sync") == 1);
  CHECK(c.launch.shared_bytes == 32);  // 4 values + 4 indices, each array 16-byte aligned
  CHECK(has(c.ptx, "setp.nan.f32"));  // NaN wins
}

TEST_CASE("generic reduce inlines the combine region") {
  auto prod = [](Builder& b, Value* acc, Value* e) { return b.value(OpKind::Mul, {acc, e}); };
  Compiled c = checked(*generic_reduce_kernel({1024}, 0, Scalar::f32, prod));
  CHECK(has(c.ptx, "mul.rn.f32") + has(c.ptx, "mul.f32") >= 1);
  CHECK(count(c.ptx, "shfl.sync.bfly.b32") == 5);
  // a combine with several ops and a constant, on ints, along each axis of a 2-D tile
  auto mix = [](Builder& b, Value* acc, Value* e) {
    Value* m = b.value(OpKind::Max, {acc, e});
    return b.value(OpKind::Or, {m, b.const_int(1, scalar_t(Scalar::i32))});
  };
  for (int axis : {0, 1}) checked(*generic_reduce_kernel({16, 128}, axis, Scalar::i32, mix));
  // 16-bit floats shuffle through 32-bit registers; the combine computes in f32 and rounds
  auto add = [](Builder& b, Value* acc, Value* e) { return b.value(OpKind::Add, {acc, e}); };
  Compiled h = checked(*generic_reduce_kernel({256}, 0, Scalar::bf16, add));
  CHECK(has(h.ptx, "shfl.sync.bfly.b32"));
  checked(*generic_reduce_kernel({8, 64}, 0, Scalar::f16, add));
}

TEST_CASE("softmax: reductions broadcast back with no conversion") {
  struct Case {
    Shape shape;
    int warps, barriers;
  };
  // max, then sum: one barrier each where warps share a row, buffers alternate; none where
  // each warp holds whole rows ([8, 1024]: warps are kept off the reduced dim)
  for (auto [shape, warps, barriers] : std::vector<Case>{{{4096}, 4, 2}, {{1, 4096}, 8, 2}, {{8, 1024}, 4, 0},
                                                         {{2, 2048}, 8, 2}}) {
    CAPTURE(tessel::ir::shape_str(shape));
    auto f = softmax_kernel(shape);
    Compiled c = checked(*f, warps);
    INFO(c.ptx);
    CHECK(count(c.ptx, "bar.sync") == barriers);
    CHECK(c.launch.shared_bytes <= 2 * 2 * 16 * 8);
    CHECK(has(c.ptx, "ld.global.nc.v4.f32") + has(c.ptx, "ld.global.v4.f32") >= 1);
    CHECK(has(c.ptx, "st.global.v4.f32"));
    // the row max and sum are used where the reduction left them
    tessel::lowering::LayoutAssignment a = tessel::lowering::assign_layouts(*f, warps);
    walk(f->body, [&](const Op& op) {
      if (op.kind == OpKind::ExpandDims)
        CHECK(a.of(op.operands[0]) == slice_layout(a.of(op.result()), static_cast<int>(op.int_attr("axis"))));
    });
  }
  // half storage: f32 math, 16-byte loads of 8 halves
  Compiled h = checked(*softmax_kernel({2048}, Scalar::f16));
  CHECK(has(h.ptx, "ld.global.nc.v4.b32") + has(h.ptx, "ld.global.v4.b32") + has(h.ptx, "ld.global.nc.v4.u32") +
            has(h.ptx, "ld.global.v4.u32") >= 1);
}

TEST_CASE("cumsum: in-thread runs, shfl.up across lanes, shared memory across warps") {
  Compiled c = checked(*cumsum_kernel({1024}, 0, Scalar::f32));
  INFO(c.ptx);
  CHECK(has(c.ptx, "shfl.sync.up.b32"));
  CHECK(has(c.ptx, "shfl.sync.idx.b32"));
  CHECK(count(c.ptx, "bar.sync") == 1);
  for (Scalar t : {Scalar::i32, Scalar::f16, Scalar::i64, Scalar::f64, Scalar::i1})
    for (auto [shape, axis] : std::vector<std::pair<Shape, int>>{{{256}, 0}, {{32, 64}, 0}, {{32, 64}, 1}, {{4}, 0}})
      checked(*cumsum_kernel(shape, axis, t));
  Compiled one = checked(*cumsum_kernel({64}, 0, Scalar::f32), 1);
  CHECK(count(one.ptx, "bar.sync") == 0);
}

TEST_CASE("reshape is free when registers line up; trans goes through padded shared memory") {
  Compiled free1 = checked(*reshape_kernel({4096}, {1, 4096}));
  CHECK(count(free1.ptx, "bar.sync") == 0);
  CHECK(free1.launch.shared_bytes == 0);
  Compiled free2 = checked(*reshape_kernel({4, 1024}, {4096}));
  CHECK(count(free2.ptx, "bar.sync") == 0);
  Compiled free3 = checked(*reshape_kernel({64, 32}, {32, 64}));  // both: 4 consecutive per thread, lanes in order
  CHECK(count(free3.ptx, "bar.sync") == 0);
  Compiled free4 = checked(*reshape_kernel({8, 256}, {256, 8}));
  CHECK(count(free4.ptx, "bar.sync") == 0);
  // [4096] read as f16 holds 8 consecutive elements per thread, [64, 64] stored as f32 holds 4
  Compiled moved = checked(*reshape_kernel({4096}, {64, 64}, Scalar::f16, Scalar::f32));
  CHECK(count(moved.ptx, "bar.sync") == 1);
  CHECK(moved.launch.shared_bytes == 4096 * 4);
  Compiled t = checked(*reshape_kernel({32, 64}, {}));
  INFO(t.ptx);
  CHECK(count(t.ptx, "bar.sync") == 1);
  CHECK(t.launch.shared_bytes == 64 * (32 + 1) * 4);  // one pad word per row
  checked(*reshape_kernel({16, 8}, {}, Scalar::f16, Scalar::f16));
}

TEST_CASE("atomics: red when the old value is unused, atom otherwise") {
  Compiled red = checked(*atomic_kernel(OpKind::AtomicAdd, Scalar::f32, 1024, false));
  INFO(red.ptx);
  CHECK(has(red.ptx, "red.global.add.f32"));
  CHECK_FALSE(has(red.ptx, "atom.global"));
  Compiled atom = checked(*atomic_kernel(OpKind::AtomicAdd, Scalar::f32, 1024, true));
  CHECK(has(atom.ptx, "atom.global.add.f32"));
  CHECK(count(atom.ptx, "bar.sync") == 0);  // every element has one holder
  Compiled fmax = checked(*atomic_kernel(OpKind::AtomicMax, Scalar::f32, 512, true));
  CHECK(has(fmax.ptx, "atom.global.max.s32"));
  CHECK(has(fmax.ptx, "atom.global.min.u32"));
  for (Scalar t : {Scalar::i32, Scalar::i64}) {
    checked(*atomic_kernel(OpKind::AtomicMax, t, 256, true));
    checked(*atomic_kernel(OpKind::AtomicAdd, t, 256, false));
  }
  Compiled d = checked(*atomic_kernel(OpKind::AtomicAdd, Scalar::f64, 256, true));
  CHECK(has(d.ptx, "atom.global.add.f64"));
}

TEST_CASE("atomics on replicated tiles and scalars: one update per element, old values shared") {
  // 16 elements over 128 threads: each element is held by 8 threads but updated once
  Compiled small = checked(*atomic_kernel(OpKind::AtomicAdd, Scalar::f32, 16, true));
  INFO(small.ptx);
  CHECK(count(small.ptx, "atom.global.add.f32") == 1);
  CHECK(has(small.ptx, "bar.sync"));  // copies learn the owner's old value
  Compiled unused = checked(*atomic_kernel(OpKind::AtomicAdd, Scalar::f32, 16, false));
  CHECK(count(unused.ptx, "bar.sync") == 0);
  Compiled s = checked(*atomic_kernel(OpKind::AtomicAdd, Scalar::f32, 0, true, /*scalar=*/true));
  CHECK(count(s.ptx, "atom.global.add.f32") == 1);
  Compiled s2 = checked(*atomic_kernel(OpKind::AtomicMax, Scalar::i32, 0, false, /*scalar=*/true));
  CHECK(has(s2.ptx, "red.global.max.s32"));
}

TEST_CASE("acq_rel atomics: a barrier, atom.acq_rel.gpu (also for an unused result), a barrier") {
  // Where the atom sits among the barriers: one before it (the program's earlier accesses) and
  // one after (everyone's later accesses follow the acquire).
  auto around = [](const std::string& ptx, const std::string& atom) {
    const size_t at = ptx.find(atom), before = ptx.rfind("bar.sync", at), after = ptx.find("bar.sync", at);
    return at != std::string::npos && before != std::string::npos && after != std::string::npos;
  };
  for (bool use_old : {false, true})
    for (bool scalar : {false, true}) {
      CAPTURE(use_old);
      CAPTURE(scalar);
      Compiled c = checked(*atomic_kernel(OpKind::AtomicAdd, Scalar::i32, scalar ? 0 : 1024, use_old, scalar, true));
      INFO(c.ptx);
      CHECK(count(c.ptx, "atom.acq_rel.gpu.global.add.s32") == (scalar ? 1 : 8));
      CHECK_FALSE(has(c.ptx, "red.global"));
      CHECK_FALSE(has(c.ptx, "atom.global"));
      CHECK(around(c.ptx, "atom.acq_rel.gpu"));
      // Relaxed, the same kernels have no barrier (a scalar's used old value has the exchange's).
      Compiled relaxed = checked(*atomic_kernel(OpKind::AtomicAdd, Scalar::i32, scalar ? 0 : 1024, use_old, scalar));
      CHECK(count(relaxed.ptx, "bar.sync") == (scalar && use_old ? 1 : 0));
      CHECK(count(c.ptx, "bar.sync") == 2);
    }
  Compiled fmax = checked(*atomic_kernel(OpKind::AtomicMax, Scalar::f32, 512, false, false, true));
  CHECK(has(fmax.ptx, "atom.acq_rel.gpu.global.max.s32"));
  CHECK(has(fmax.ptx, "atom.acq_rel.gpu.global.min.u32"));
}

TEST_CASE("loops carry row statistics in the slice layout; barriers only where warps meet") {
  auto f = online_rows_kernel(2, 512);  // [2, 512]: 2 warps along each row
  tessel::lowering::LayoutAssignment a = tessel::lowering::assign_layouts(*f, 4);
  const Layout row = slice_layout(a.default_for({2, 512}), 1);
  CHECK(a.default_for({2, 512}).warps_per_cta == std::vector<int>{2, 2});
  walk(f->body, [&](const Op& op) {
    if (op.kind == OpKind::For) {
      for (const Value* r : op.results) CHECK(a.of(r) == row);
      for (const Value* arg : op.body().args)
        if (!arg->type.is_scalar()) CHECK(a.of(arg) == row);
    }
  });
  Compiled c = checked(*f);
  INFO(c.ptx);
  // max and sum per trip, alternating buffers: no barrier at the loop's start or end
  CHECK(count(c.ptx, "bar.sync") == 2);
  // a warp per row: nothing to share
  Compiled c1 = checked(*online_rows_kernel(4, 256));
  CHECK(count(c1.ptx, "bar.sync") == 0);
}

TEST_CASE("a loop whose body starts and ends with the same shared buffer gets a latch barrier") {
  // One reduction per trip reuses one buffer: the next trip's writes must wait for this
  // trip's reads, so a barrier closes the body.
  Function f("loop_reduce");
  Builder b(f);
  Value* x = f.add_param("x", ptr_t(Scalar::f32), div16());
  Value* out = f.add_param("out", ptr_t(Scalar::f32), div16());
  Value* steps = f.add_param("steps", scalar_t(Scalar::i32));
  Value* offs = b.arange(0, 1024);
  Op& loop = b.for_loop(i32c(b, 0), steps, i32c(b, 1), {b.const_float(0.0, scalar_t(Scalar::f32))});
  ForOp lp{loop};
  b.set_block(&loop.body());
  Value* shift = b.value(OpKind::Mul, {lp.induction_var(), i32c(b, 1024)});
  Value* v = b.value(OpKind::Load, {at(b, x, b.value(OpKind::Add, {offs, b.splat(shift, {1024})}))});
  b.create(OpKind::Yield, {b.value(OpKind::Add, {lp.carried(0), b.reduce(OpKind::ReduceSum, v, 0)})});
  b.set_block(&f.body);
  b.create(OpKind::Store, {b.value(OpKind::AddPtr, {out, b.program_id(0)}), loop.results[0]});
  Compiled c = checked(f);
  INFO(c.ptx);
  CHECK(count(c.ptx, "bar.sync") == 2);
  CHECK(c.launch.shared_bytes == 16);
}
