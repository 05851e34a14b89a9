// Elementwise math on floating-point tiles, and counter-based random numbers.
#pragma once
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// Each takes a floating-point tile (f16, bf16, f32, f64) and returns one of the same type;
// an integer operand is a CompileError (cast it first). Literals are taken as f32.
Tile exp(const Operand& x);
Tile exp2(const Operand& x);
Tile log(const Operand& x);
Tile log2(const Operand& x);
Tile sqrt(const Operand& x);
Tile rsqrt(const Operand& x);
Tile sin(const Operand& x);
Tile cos(const Operand& x);
Tile tanh(const Operand& x);
Tile sigmoid(const Operand& x);  // 1 / (1 + exp(-x))
Tile erf(const Operand& x);
Tile floor(const Operand& x);
Tile ceil(const Operand& x);
// Absolute value of an integer or floating-point tile.
Tile abs(const Operand& x);

// Uniform f32 in [0, 1) and standard-normal f32 from Philox 4x32-10 keyed by `seed`
// (an integer scalar) and counted by `offsets` (an i32 tile or scalar): the same
// (seed, offset) always gives the same number on every backend. ir/philox.hpp
// defines the stream exactly (four outputs per Philox call; not Triton's stream).
Tile rand(const Operand& seed, const Operand& offsets);
Tile randn(const Operand& seed, const Operand& offsets);

}  // namespace tessel::lang
