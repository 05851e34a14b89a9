// Device: one GPU's identity and the attributes the compiler and autotuner need.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <string>

namespace tessel::rt {

// A GPU ordinal with its attributes read once from the driver. It owns no driver
// resource (a CUdevice is a plain ordinal handle), so it is an ordinary copyable value.
class Device {
 public:
  // Number of visible GPUs; throws CudaError without a driver.
  static int count();

  // Queries every attribute below; throws CudaError (CUDA_ERROR_INVALID_DEVICE for a
  // bad ordinal) or the driver-unavailable error.
  explicit Device(int ordinal = 0);

  int ordinal() const { return ordinal_; }
  CUdevice handle() const { return handle_; }
  const std::string& name() const { return name_; }
  int cc_major() const { return cc_major_; }
  int cc_minor() const { return cc_minor_; }
  int sm_arch() const { return cc_major_ * 10 + cc_minor_; }  // e.g. 90 for sm_90
  int sm_count() const { return sm_count_; }
  int l2_bytes() const { return l2_bytes_; }
  int max_shared_per_block() const { return max_shared_per_block_; }
  // Largest dynamic shared memory a kernel may opt into via set_max_dynamic_shared.
  int max_shared_per_block_optin() const { return max_shared_per_block_optin_; }
  int max_threads_per_block() const { return max_threads_per_block_; }
  int warp_size() const { return warp_size_; }
  size_t total_memory() const { return total_memory_; }

  // Any other attribute, read now.
  int attribute(CUdevice_attribute attr) const;

 private:
  int ordinal_ = 0;
  CUdevice handle_ = 0;
  std::string name_;
  int cc_major_ = 0, cc_minor_ = 0;
  int sm_count_ = 0;
  int l2_bytes_ = 0;
  int max_shared_per_block_ = 0;
  int max_shared_per_block_optin_ = 0;
  int max_threads_per_block_ = 0;
  int warp_size_ = 0;
  size_t total_memory_ = 0;
};

}  // namespace tessel::rt
