// Function: a kernel handle from a loaded Module, with its resource attributes.
#pragma once
#include <cuda.h>

#include <string>

namespace tessel::rt {

struct DriverApi;

// A kernel inside a Module. It does not own anything: it stays valid while its Module
// lives, and copying it only copies the handle.
class Function {
 public:
  Function(CUfunction fn, std::string name);

  CUfunction handle() const { return fn_; }
  const std::string& name() const { return name_; }
  // The resolved table, cached so launch() needs no lookup.
  const DriverApi& api() const { return *api_; }

  int num_regs() const;               // registers per thread
  int local_size_bytes() const;       // local memory per thread: spills and stack
  int max_threads_per_block() const;  // largest block this kernel can launch with
  int shared_size_bytes() const;      // static shared memory
  int const_size_bytes() const;
  int attribute(CUfunction_attribute attr) const;

  // Lets launches request up to `bytes` of dynamic shared memory (above 48 KiB needs
  // this opt-in; the device limit is Device::max_shared_per_block_optin()).
  void set_max_dynamic_shared(int bytes);

 private:
  CUfunction fn_;
  const DriverApi* api_;
  std::string name_;
};

}  // namespace tessel::rt
