// Tile kernels for interpreter tests: load a contiguous tile, apply a body, store the result.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "interp_test_util.hpp"
#include "tessel/ir/verify.hpp"

namespace interp_test {

// A kernel that loads x (a contiguous tile of `shape`, element type `in`), applies `body` and
// stores the result (any shape, element type `out`) contiguously: out[k] = result.flat[k].
using TileBody = std::function<Value*(Builder&, Value*)>;
inline std::unique_ptr<Function> build_tile_kernel(Scalar in, const Shape& shape, Scalar out, const TileBody& body) {
  auto f = std::make_unique<Function>("tile_op");
  Value* x = f->add_param("x", ptr_t(in));
  Value* o = f->add_param("out", ptr_t(out));
  Builder b(*f);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  // Flat offsets reshaped to the tile's shape (reshape itself is tested in reduce_test.cpp).
  Value* offs = b.arange(0, n);
  if (shape.size() != 1) offs = b.reshape(offs, shape);
  Value* v = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(x, shape), offs)});
  Value* r = body(b, v);
  if (r->type.is_scalar()) {
    b.create(OpKind::Store, {o, r});
  } else {
    int64_t m = r->type.numel();
    Value* flat = r->type.rank() == 1 ? r : b.reshape(r, {m});
    b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(o, {m}), b.arange(0, m)), flat});
  }
  return f;
}

template <class Tout, class Tin>
std::vector<Tout> run_tile(const Function& f, const std::vector<Tin>& x, size_t out_n) {
  std::vector<Tout> out(out_n, poison<Tout>());
  ArgValue args[] = {ArgValue::pointer(x.data()), ArgValue::pointer(out.data())};
  MemRegion mem[] = {read_only(x), region(out)};
  verify(f);
  run_kernel(f, Grid{}, args, mem);
  return out;
}

}  // namespace interp_test
