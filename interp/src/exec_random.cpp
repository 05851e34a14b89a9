// Counter-based random numbers: rand and randn draw ir/philox.hpp's stream exactly.
#include "elementwise.hpp"
#include "tessel/ir/philox.hpp"

namespace tessel::interp {

void exec_random(Machine& m, const ir::Op& op) {
  const ir::Value* seed = op.operand(0);
  const ir::Value* offset = op.operand(1);
  const ir::Value* r = op.result();
  if (!seed->type.dtype.is_int() || seed->type.numel() != 1 || !offset->type.dtype.is_int() ||
      offset->type.numel() != r->type.numel() || r->type.dtype != ir::f32())
    m.malformed(op, fmt::format("needs (int seed scalar, int offsets) -> f32, got ({}, {}) -> {}",
                                seed->type.str(), offset->type.str(), r->type.str()));
  // The slot is sign-extended, which is how a narrower seed widens to Philox's 64-bit key.
  const int64_t s = m.in(op, 0).i[0];
  const std::vector<int64_t>& off = m.in(op, 1).i;
  std::vector<double>& out = m.out(r).f;
  if (op.kind == ir::OpKind::Rand) {
    for (size_t k = 0; k < out.size(); ++k) out[k] = ir::philox::rand(s, static_cast<int32_t>(off[k]));
  } else {
    for (size_t k = 0; k < out.size(); ++k) out[k] = ir::philox::randn(s, static_cast<int32_t>(off[k]));
  }
}

}  // namespace tessel::interp
