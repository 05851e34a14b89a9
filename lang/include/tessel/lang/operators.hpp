// Arithmetic, comparison, bitwise and logical operators on tiles (with broadcasting).
#pragma once
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// Arithmetic: operands are promoted (promote.hpp) and broadcast. `/` on integers truncates
// toward zero and `%` takes the sign of the dividend (C++ semantics); on floats `%` is fmod.
// Pointer tiles accept `ptr + int`, `int + ptr` and `ptr - int` (offsets in elements).
Tile operator+(const Operand& a, const Operand& b);
Tile operator-(const Operand& a, const Operand& b);
Tile operator*(const Operand& a, const Operand& b);
Tile operator/(const Operand& a, const Operand& b);
Tile operator%(const Operand& a, const Operand& b);
// Bitwise (integer and i1 tiles only). `>>` is arithmetic (sign-filling).
Tile operator&(const Operand& a, const Operand& b);
Tile operator|(const Operand& a, const Operand& b);
Tile operator^(const Operand& a, const Operand& b);
Tile operator<<(const Operand& a, const Operand& b);
Tile operator>>(const Operand& a, const Operand& b);
// Comparisons give i1 tiles.
Tile operator<(const Operand& a, const Operand& b);
Tile operator<=(const Operand& a, const Operand& b);
Tile operator>(const Operand& a, const Operand& b);
Tile operator>=(const Operand& a, const Operand& b);
Tile operator==(const Operand& a, const Operand& b);
Tile operator!=(const Operand& a, const Operand& b);
// Logical: operands become i1 (x != 0); both sides are always evaluated.
Tile operator&&(const Operand& a, const Operand& b);
Tile operator||(const Operand& a, const Operand& b);
Tile operator!(const Operand& a);
// Unary.
Tile operator-(const Operand& a);
Tile operator~(const Operand& a);

}  // namespace tessel::lang
