// Shape builtins beyond broadcasting: reshape and 2-D transpose.
#pragma once
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// The same elements in row-major order, seen with `shape` (same element count; every dim a
// power of two).
Tile reshape(const Operand& x, const ir::Shape& shape);
// The transpose of a 2-D tile: [M, N] -> [N, M].
Tile trans(const Operand& x);

// See also expand_dims and broadcast_to (builtins.hpp) and the shorthands Tile::col() for
// x[:, None] and Tile::row() for x[None, :] (tile.hpp).

}  // namespace tessel::lang
