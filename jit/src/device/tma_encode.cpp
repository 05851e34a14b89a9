// Tensor maps at launch (tma_encode.hpp).
#include "tma_encode.hpp"

#include <algorithm>
#include <array>

namespace tessel::jit {

void encode_tma_map(CUtensorMap& out, const rt::TensorMapRecipe& recipe, std::span<const RawArg> args,
                    std::string_view kernel) {
  std::array<int64_t, 64> ints{};
  const size_t n = std::min(args.size(), ints.size());
  for (size_t i = 0; i < n; ++i) ints[i] = args[i].kind == RawArg::Int ? args[i].i : 0;
  rt::encode_tensor_map(out, recipe, std::span<const int64_t>(ints.data(), n),
                        args[static_cast<size_t>(recipe.base_param)].addr, kernel);
}

}  // namespace tessel::jit
