// check_image (internal): rejects truncated or non-binary images before the driver reads them.
#pragma once
#include <span>

namespace tessel::rt::detail {

// The driver takes a cubin/fatbin without its length and trusts the sizes inside it,
// so a truncated file would be read past its end. Throws CudaError
// (CUDA_ERROR_INVALID_IMAGE) unless `image` is an ELF or fatbin whose declared extents
// lie inside the span. `what` names the caller in the message.
void check_image(std::span<const char> image, const char* what);

}  // namespace tessel::rt::detail
