// Linker: the driver's linker, turning PTX (and cubins) into one cubin image.
#pragma once
#include <cuda.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::rt {

// Wraps cuLinkCreate/AddData/Complete for the current context's device. Inputs are
// added, then complete() returns the cubin bytes (copied out, so they outlive the
// linker). Failures throw CudaError with the linker's error log in detail().
// Movable, not copyable.
class Linker {
 public:
  explicit Linker(bool verbose = false);
  ~Linker();
  Linker(Linker&& other) noexcept;
  Linker& operator=(Linker&& other) noexcept;
  Linker(const Linker&) = delete;
  Linker& operator=(const Linker&) = delete;

  // `name` appears in log messages.
  void add_ptx(std::string_view ptx, const std::string& name = "tessel.ptx");
  void add_cubin(std::span<const char> image, const std::string& name = "tessel.cubin");

  // Links everything added; call once.
  std::vector<char> complete();

  const std::string& info_log() const { return info_log_; }

 private:
  struct State;
  void add(CUjitInputType type, const char* data, size_t size, const std::string& name,
           const char* what);
  void destroy() noexcept;
  std::unique_ptr<State> state_;
  std::string info_log_;
};

}  // namespace tessel::rt
