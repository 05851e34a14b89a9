// Linking PTX into a cubin with the CUDA driver (cuLink*), for the disk cache and bundles. The
// driver links only for the GPU it runs on; every other target goes to ptxas (cubin.cpp).
#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

#include "tessel/jit/cubin.hpp"
#include "tessel/runtime/runtime.hpp"

namespace tessel::jit {

#ifdef TESSEL_HAS_LOWERING
std::optional<Cubin> driver_cubin(std::string_view ptx, std::string_view arch) {
  if (!rt::Driver::get().available()) return std::nullopt;
  // Device 0's primary context, current only while linking: the caller's is put back.
  std::optional<rt::Context> ctx;
  try {
    ctx.emplace(0, /*make_current=*/false);
  } catch (const rt::CudaError&) {
    return std::nullopt;  // a driver without a usable GPU
  }
  rt::ScopedContext scope(ctx->handle());
  // The driver links for the GPU it runs on, exactly; other targets (sm_90a included) go to ptxas.
  if (arch != fmt::format("sm_{}", ctx->device().sm_arch())) return std::nullopt;
  rt::Linker linker(/*verbose=*/true);
  linker.add_ptx(ptx);
  Cubin c;
  c.image = linker.complete();
  c.arch = std::string(arch);
  c.tool = "driver";
  c.log = linker.info_log();
  return c;
}
#else
// A build without the GPU backend links nothing with the driver; make_cubin falls back to ptxas.
std::optional<Cubin> driver_cubin(std::string_view, std::string_view) { return std::nullopt; }
#endif

}  // namespace tessel::jit
