// Linker: cuLinkCreate/AddData/Complete with log capture; returns a copied cubin.
#include "tessel/runtime/linker.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "image_check.hpp"
#include "jit_log.hpp"
#include "release.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

// Heap-held so moving a Linker never moves the log buffers and option values the
// CUlinkState writes into.
struct Linker::State {
  explicit State(bool verbose) : log(verbose) {}
  detail::JitLog log;
  CUlinkState link = nullptr;
  // Inputs stay alive until the state is destroyed: the driver may defer reading them.
  std::vector<std::string> inputs;
};

Linker::Linker(bool verbose) : state_(std::make_unique<State>(verbose)) {
  State& s = *state_;
  CUresult r = cu().LinkCreate(s.log.count(), s.log.options(), s.log.values(), &s.link);
  if (r != CUDA_SUCCESS) throw CudaError(r, "cuLinkCreate", s.log.error_detail("linker log"));
}

Linker::~Linker() { destroy(); }

Linker::Linker(Linker&& other) noexcept
    : state_(std::move(other.state_)), info_log_(std::move(other.info_log_)) {}

Linker& Linker::operator=(Linker&& other) noexcept {
  if (this != &other) {
    destroy();
    state_ = std::move(other.state_);
    info_log_ = std::move(other.info_log_);
  }
  return *this;
}

void Linker::destroy() noexcept {
  if (state_ && state_->link != nullptr) {  // errors noted, never thrown: destructors call this
    CUlinkState link = state_->link;
    detail::release_call("cuLinkDestroy", [&](const DriverApi& api) { return api.LinkDestroy(link); });
  }
  state_.reset();
}

void Linker::add(CUjitInputType type, const char* data, size_t size, const std::string& name,
                 const char* what) {
  if (!state_) throw std::logic_error(fmt::format("Linker::{}: the linker was already completed", what));
  State& s = *state_;
  CUresult r = cu().LinkAddData(s.link, type, const_cast<char*>(data), size, name.c_str(), 0,
                                nullptr, nullptr);
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "cuLinkAddData", fmt::format("input '{}': ", name) + s.log.error_detail("linker log"));
}

void Linker::add_ptx(std::string_view ptx, const std::string& name) {
  if (!state_) throw std::logic_error("Linker::add_ptx: the linker was already completed");
  std::string& text = state_->inputs.emplace_back(ptx);
  add(CU_JIT_INPUT_PTX, text.c_str(), text.size() + 1, name, "add_ptx");  // size counts the NUL
}

void Linker::add_cubin(std::span<const char> image, const std::string& name) {
  if (!state_) throw std::logic_error("Linker::add_cubin: the linker was already completed");
  detail::check_image(image, "Linker::add_cubin");
  std::string& bytes = state_->inputs.emplace_back(image.data(), image.size());
  add(CU_JIT_INPUT_CUBIN, bytes.data(), bytes.size(), name, "add_cubin");
}

std::vector<char> Linker::complete() {
  if (!state_) throw std::logic_error("Linker::complete: the linker was already completed");
  State& s = *state_;
  void* cubin = nullptr;
  size_t size = 0;
  CUresult r = cu().LinkComplete(s.link, &cubin, &size);
  if (r != CUDA_SUCCESS) throw CudaError(r, "cuLinkComplete", s.log.error_detail("linker log"));
  // The image belongs to the CUlinkState: copy it before destroying the state.
  std::vector<char> out(static_cast<const char*>(cubin), static_cast<const char*>(cubin) + size);
  info_log_ = s.log.info();
  destroy();
  return out;
}

}  // namespace tessel::rt
