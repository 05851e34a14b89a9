// Tensor maps at launch (tma_encode.hpp).
#include "tma_encode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "tessel/runtime/runtime.hpp"

namespace tessel::jit {

void encode_tma_map(CUtensorMap& out, const ir::TmaMap& map, std::span<const RawArg> args,
                    std::string_view kernel) {
  std::array<int64_t, 64> ints{};
  const size_t n = std::min(args.size(), ints.size());
  for (size_t i = 0; i < n; ++i) ints[i] = args[i].kind == RawArg::Int ? args[i].i : 0;
  const std::span<const int64_t> iv(ints.data(), n);
  const int64_t rows = ir::evaluate(map.rows, iv), cols = ir::evaluate(map.cols, iv);
  const int64_t stride = ir::evaluate(map.row_stride, iv) * map.elem_bytes();
  const uint64_t base = args[static_cast<size_t>(map.base_param)].addr;
  auto bad = [&](std::string what) {
    throw std::invalid_argument(fmt::format("kernel '{}': its TMA copies need {} (warp_specialize on sm_90a; "
                                            "compile without warp_specialize to copy with cp.async)",
                                            kernel, what));
  };
  if (base % 16 != 0) bad(fmt::format("argument {} 16-byte aligned, got address {:#x}", map.base_param, base));
  if (stride <= 0 || stride % 16 != 0 || stride >= (int64_t{1} << 40))
    bad(fmt::format("a row stride that is a positive multiple of 16 bytes, got {} bytes", stride));
  // An empty tensor: nothing may be read, so any extent serves (all copies fill zeros anyway).
  auto extent = [](int64_t n) { return static_cast<cuuint64_t>(std::clamp<int64_t>(n, 1, int64_t{1} << 32)); };
  cuuint64_t dims[5] = {extent(cols), extent(rows)};
  cuuint64_t strides[4] = {static_cast<cuuint64_t>(stride)};
  cuuint32_t box[5] = {static_cast<cuuint32_t>(map.box_cols), static_cast<cuuint32_t>(map.box_rows)};
  const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  cuuint32_t rank = 2;
  if (map.view_warpgroups > 0) {
    // The row-permuted view (tma_map.hpp): inner dimensions exactly one box long, the last
    // long enough for every tile the kernel copies this way (those wholly inside the rows).
    const std::vector<ir::TmaViewDim> view = ir::view_dims(map);
    rank = static_cast<cuuint32_t>(1 + view.size());
    for (size_t d = 0; d < view.size(); ++d) {
      const bool last = d + 1 == view.size();
      dims[1 + d] = last ? extent((rows + view[d].row_step - 1) / view[d].row_step) : view[d].box;
      strides[d] = static_cast<cuuint64_t>(view[d].row_step * stride);
      box[1 + d] = static_cast<cuuint32_t>(view[d].box);
    }
  }
  const CUtensorMapSwizzle swizzle = map.swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : map.swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                               : CU_TENSOR_MAP_SWIZZLE_32B;
  const CUtensorMapDataType type = map.elem == ir::TmaMap::Elem::BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                                            : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  CUresult r = rt::cu().TensorMapEncodeTiled(&out, type, rank, reinterpret_cast<void*>(base), dims, strides, box,
                                             elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw rt::CudaError(r, "cuTensorMapEncodeTiled",
                        fmt::format("kernel '{}': tensor map of argument {}, {} x {} elements, row stride {} bytes",
                                    kernel, map.base_param, rows, cols, stride));
}

}  // namespace tessel::jit
