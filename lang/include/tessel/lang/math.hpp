// Elementwise math on floating-point tiles, and counter-based random numbers.
#pragma once
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// How exactly a transcendental function is computed on the GPU (the interpreter computes every
// form in double and rounds once). fast: the GPU's approximate instructions (sin.approx,
// ex2.approx, ...), a few ulp for exp/log but up to ~1e-6 absolute for sin/cos (docs/dsl.md has
// the measured bounds); ieee: within 2 ulp over the whole f32 range (NVIDIA's libdevice), slower.
// The compile option precise_math makes every call ieee.
enum class Precision { fast, ieee };

// Each takes a floating-point tile (f16, bf16, f32, f64) and returns one of the same type;
// an integer operand is a CompileError (cast it first). Literals are taken as f32.
// `sin(x, Precision::ieee)` asks for the accurate form of one call.
Tile exp(const Operand& x, Precision p = Precision::fast);
Tile exp2(const Operand& x, Precision p = Precision::fast);
Tile log(const Operand& x, Precision p = Precision::fast);
Tile log2(const Operand& x, Precision p = Precision::fast);
Tile sqrt(const Operand& x);  // always correctly rounded
Tile rsqrt(const Operand& x, Precision p = Precision::fast);
Tile sin(const Operand& x, Precision p = Precision::fast);
Tile cos(const Operand& x, Precision p = Precision::fast);
Tile tanh(const Operand& x, Precision p = Precision::fast);
Tile sigmoid(const Operand& x, Precision p = Precision::fast);  // 1 / (1 + exp(-x))
Tile erf(const Operand& x, Precision p = Precision::fast);
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
