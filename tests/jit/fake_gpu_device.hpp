// A Device that says it is GPU `ordinal` and does nothing else: for checks that read only a
// launch device's kind, ordinal and description (pointer-argument checks), so their GPU paths
// are tested on a machine without one. Any use of memory, streams or compilation throws.
#pragma once
#include <stdexcept>
#include <string>

#include "tessel/jit/device.hpp"

namespace tessel_test {

class FakeGpuDevice final : public tessel::jit::Device {
 public:
  explicit FakeGpuDevice(int ordinal) : ordinal_(ordinal) {}

  tessel::jit::BackendKind kind() const override { return tessel::jit::BackendKind::Cuda; }
  std::string describe() const override { return "GPU: Fake GPU " + std::to_string(ordinal_) + " (sm_90)"; }
  int ordinal() const override { return ordinal_; }
  std::string name() const override { return "Fake GPU"; }
  std::string arch() const override { return "sm_90"; }

  uint64_t alloc(size_t) override { unused(); }
  void free(uint64_t) override { unused(); }
  void upload(uint64_t, const void*, size_t) override { unused(); }
  void download(void*, uint64_t, size_t) override { unused(); }
  void fill_bytes(uint64_t, uint8_t, size_t) override { unused(); }
  void copy(uint64_t, uint64_t, size_t) override { unused(); }
  void synchronize() override { unused(); }
  tessel::jit::StreamRef create_stream(bool) override { unused(); }
  void destroy_stream(tessel::jit::StreamRef) noexcept override {}
  void synchronize(tessel::jit::StreamRef) override { unused(); }
  void register_external(const void*, size_t) override { unused(); }
  void unregister_external(const void*) override { unused(); }
  std::shared_ptr<tessel::jit::Executable> compile(std::shared_ptr<const tessel::ir::Function>,
                                                   const tessel::jit::CompileOptions&) override {
    unused();
  }

 private:
  [[noreturn]] static void unused() { throw std::logic_error("FakeGpuDevice: only kind, ordinal and names exist"); }
  int ordinal_;
};

}  // namespace tessel_test
