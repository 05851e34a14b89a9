// Tensor maps at launch (tma_encode.hpp).
#include "tma_encode.hpp"

#include <algorithm>
#include <array>

namespace tessel::jit {

rt::TensorMapRecipe recipe_of(const ir::TmaMap& map) {
  rt::TensorMapRecipe r;
  r.elem = map.elem == ir::TmaMap::Elem::BF16 ? rt::TensorMapRecipe::Elem::BF16 : rt::TensorMapRecipe::Elem::F16;
  r.base_param = map.base_param;
  auto poly = [](const ir::TmaPoly& p) {
    rt::TensorMapPoly out;
    for (const ir::TmaTerm& t : p) out.push_back({t.coeff, t.params});
    return out;
  };
  r.rows = poly(map.rows);
  r.cols = poly(map.cols);
  r.row_stride = poly(map.row_stride);
  r.box_cols = map.box_cols;
  r.box_rows = map.box_rows;
  r.swizzle_bytes = map.swizzle_bytes;
  if (map.view_warpgroups > 0)
    for (const ir::TmaViewDim& d : ir::view_dims(map)) r.view.push_back({d.row_step, d.box});
  return r;
}

void encode_tma_map(CUtensorMap& out, const rt::TensorMapRecipe& recipe, std::span<const RawArg> args,
                    std::string_view kernel) {
  std::array<int64_t, 64> ints{};
  const size_t n = std::min(args.size(), ints.size());
  for (size_t i = 0; i < n; ++i) ints[i] = args[i].kind == RawArg::Int ? args[i].i : 0;
  rt::encode_tensor_map(out, recipe, std::span<const int64_t>(ints.data(), n),
                        args[static_cast<size_t>(recipe.base_param)].addr, kernel);
}

}  // namespace tessel::jit
