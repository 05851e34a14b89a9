// The CPU interpreter as a Device: host memory, kernels run by tessel::interp.
#pragma once
#include <map>
#include <mutex>
#include <string>

#include "tessel/jit/device.hpp"

namespace tessel::jit {

class InterpreterDevice final : public Device {
 public:
  explicit InterpreterDevice(std::string why) : why_(std::move(why)) {}
  ~InterpreterDevice() override;

  BackendKind kind() const override { return BackendKind::Interpreter; }
  std::string describe() const override;
  uint64_t alloc(size_t bytes) override;
  void free(uint64_t addr) override;
  void upload(uint64_t dst, const void* src, size_t bytes) override;
  void download(void* dst, uint64_t src, size_t bytes) override;
  void fill_bytes(uint64_t dst, uint8_t byte, size_t bytes) override;
  void copy(uint64_t dst, uint64_t src, size_t bytes) override;
  void synchronize() override {}
  // Launches run synchronously: streams are the null stream and have nothing to wait for.
  StreamRef create_stream(bool) override { return {}; }
  void destroy_stream(StreamRef) noexcept override {}
  void synchronize(StreamRef) override {}
  std::string name() const override { return "CPU interpreter"; }
  std::string arch() const override { return "interpreter"; }
  // Host memory the caller owns becomes usable by kernels and by upload/download/fill/copy
  // until unregistered; the device never frees it.
  void register_external(const void* p, size_t bytes) override;
  void unregister_external(const void* p) override;
  std::shared_ptr<Executable> compile(std::shared_ptr<const ir::Function> f, const CompileOptions& opts) override;

  // The live allocations and registered regions, which are all the memory an interpreted kernel
  // may touch (allocations first, each list by address).
  std::vector<std::pair<uint64_t, size_t>> regions() const;

 private:
  void check_range(uint64_t addr, size_t bytes, const char* what) const;
  std::string why_;
  mutable std::mutex mu_;
  std::map<uint64_t, size_t> blocks_;    // keyed by address value; ordered, deterministic
  std::map<uint64_t, size_t> external_;  // registered caller memory: never freed here
};

}  // namespace tessel::jit
