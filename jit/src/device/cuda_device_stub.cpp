// The GPU backend's entry points when tessel is built without it (no LLVM lowering).
#include <memory>
#include <string>

#include "tessel/jit/device.hpp"

namespace tessel::jit {

std::unique_ptr<Device> make_cuda_device(int, std::string& why) {
  why = "this build of tessel has no GPU backend";
  return nullptr;
}
int cuda_device_count() { return 0; }

}  // namespace tessel::jit
