// Device: attribute queries through cuDeviceGetAttribute.
#include "tessel/runtime/device.hpp"

#include <array>

#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

int Device::count() {
  int n = 0;
  check(cu().DeviceGetCount(&n), "cuDeviceGetCount");
  return n;
}

Device::Device(int ordinal) : ordinal_(ordinal) {
  const DriverApi& api = cu();
  check(api.DeviceGet(&handle_, ordinal), "cuDeviceGet");
  std::array<char, 256> name{};
  check(api.DeviceGetName(name.data(), static_cast<int>(name.size()) - 1, handle_),
        "cuDeviceGetName");
  name_ = name.data();
  cc_major_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  cc_minor_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  sm_count_ = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  l2_bytes_ = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  max_shared_per_block_ = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  max_shared_per_block_optin_ = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  max_threads_per_block_ = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  warp_size_ = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  check(api.DeviceTotalMem(&total_memory_, handle_), "cuDeviceTotalMem");
}

int Device::attribute(CUdevice_attribute attr) const {
  int value = 0;
  check(cu().DeviceGetAttribute(&value, attr, handle_), "cuDeviceGetAttribute");
  return value;
}

}  // namespace tessel::rt
