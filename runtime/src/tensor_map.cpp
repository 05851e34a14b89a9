// Tensor maps at launch (tensor_map.hpp).
#include "tessel/runtime/tensor_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

TensorMapShape tensor_map_shape(const TensorMapRecipe& r, std::span<const int64_t> ints, uint64_t base,
                                std::string_view kernel) {
  const int64_t rows = evaluate(r.rows, ints), cols = evaluate(r.cols, ints);
  const int64_t stride = evaluate(r.row_stride, ints) * TensorMapRecipe::kElemBytes;
  auto bad = [&](std::string what) {
    throw std::invalid_argument(fmt::format("kernel '{}': its TMA copies need {} (warp_specialize on sm_90a; "
                                            "compile without warp_specialize to copy with cp.async)",
                                            kernel, what));
  };
  if (base % 16 != 0) bad(fmt::format("argument {} 16-byte aligned, got address {:#x}", r.base_param, base));
  if (stride <= 0 || stride % 16 != 0 || stride >= (int64_t{1} << 40))
    bad(fmt::format("a row stride that is a positive multiple of 16 bytes, got {} bytes", stride));
  // An empty tensor: nothing may be read, so any extent serves (all copies fill zeros anyway).
  auto extent = [](int64_t n) { return static_cast<cuuint64_t>(std::clamp<int64_t>(n, 1, int64_t{1} << 32)); };
  TensorMapShape s;
  s.dims[0] = extent(cols);
  s.dims[1] = extent(rows);
  s.strides[0] = static_cast<cuuint64_t>(stride);
  s.box[0] = static_cast<cuuint32_t>(r.box_cols);
  s.box[1] = static_cast<cuuint32_t>(r.box_rows);
  if (!r.view.empty()) {
    s.rank = static_cast<uint32_t>(1 + r.view.size());
    for (size_t d = 0; d < r.view.size(); ++d) {
      const bool last = d + 1 == r.view.size();
      const TensorMapViewDim& v = r.view[d];
      s.dims[1 + d] = last ? extent((rows + v.row_step - 1) / v.row_step) : static_cast<cuuint64_t>(v.box);
      s.strides[d] = static_cast<cuuint64_t>(v.row_step * stride);
      s.box[1 + d] = static_cast<cuuint32_t>(v.box);
    }
  }
  return s;
}

void encode_tensor_map(CUtensorMap& out, const TensorMapRecipe& r, std::span<const int64_t> ints, uint64_t base,
                       std::string_view kernel) {
  TensorMapKey key;
  key.base = base;
  key.shape = tensor_map_shape(r, ints, base, kernel);
  key.elem = static_cast<uint8_t>(r.elem);
  key.swizzle = static_cast<uint16_t>(r.swizzle_bytes);
  out = thread_tensor_map_cache().get(key, [&](CUtensorMap& map) {
    const TensorMapShape& s = key.shape;
    const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
    const CUtensorMapSwizzle swizzle = r.swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : r.swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                               : CU_TENSOR_MAP_SWIZZLE_32B;
    const CUtensorMapDataType type =
        r.elem == TensorMapRecipe::Elem::BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    CUresult res = cu().TensorMapEncodeTiled(&map, type, s.rank, reinterpret_cast<void*>(base), s.dims, s.strides,
                                             s.box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (res != CUDA_SUCCESS)
      throw CudaError(res, "cuTensorMapEncodeTiled",
                      fmt::format("kernel '{}': tensor map of argument {}, {} x {} elements, row stride {} bytes",
                                  kernel, r.base_param, s.dims[1], s.dims[0], s.strides[0]));
  });
}

}  // namespace tessel::rt
