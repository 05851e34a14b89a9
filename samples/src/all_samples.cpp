// The list of all samples and the registration of their kernels.
#include <mutex>

#include "tessel/samples/sample.hpp"

namespace tessel::samples {

std::vector<Sample> elementwise_samples();
void register_elementwise_kernels(jit::Registry& r);
std::vector<Sample> reduction_samples();
void register_reduction_kernels(jit::Registry& r);
std::vector<Sample> matmul_samples();
void register_matmul_kernels(jit::Registry& r);
std::vector<Sample> attention_samples();
void register_attention_kernels(jit::Registry& r);
std::vector<Sample> quant_samples();
std::vector<Sample> fusion_samples();
void register_fusion_kernels(jit::Registry& r);
void register_quant_kernels(jit::Registry& r);
std::vector<Sample> fp8_samples();
void register_fp8_kernels(jit::Registry& r);
std::vector<Sample> conv_samples();
void register_conv_kernels(jit::Registry& r);

const std::vector<Sample>& all_samples() {
  static const std::vector<Sample> all = [] {
    std::vector<Sample> v;
    for (auto& s : elementwise_samples()) v.push_back(std::move(s));
    for (auto& s : fusion_samples()) v.push_back(std::move(s));
    for (auto& s : reduction_samples()) v.push_back(std::move(s));
    for (auto& s : matmul_samples()) v.push_back(std::move(s));
    for (auto& s : attention_samples()) v.push_back(std::move(s));
    for (auto& s : quant_samples()) v.push_back(std::move(s));
    for (auto& s : fp8_samples()) v.push_back(std::move(s));
    for (auto& s : conv_samples()) v.push_back(std::move(s));
    return v;
  }();
  return all;
}

const Sample* find_sample(std::string_view name) {
  for (const auto& s : all_samples())
    if (s.name == name) return &s;
  return nullptr;
}

void register_sample_kernels(jit::Registry& r) {
  if (&r == &jit::Registry::global()) {
    static std::once_flag once;
    std::call_once(once, [&] {
      register_elementwise_kernels(r);
      register_reduction_kernels(r);
      register_matmul_kernels(r);
      register_attention_kernels(r);
      register_quant_kernels(r);
      register_fp8_kernels(r);
      register_conv_kernels(r);
      register_fusion_kernels(r);
    });
    return;
  }
  register_elementwise_kernels(r);
  register_reduction_kernels(r);
  register_matmul_kernels(r);
  register_attention_kernels(r);
  register_quant_kernels(r);
  register_fp8_kernels(r);
  register_conv_kernels(r);
  register_fusion_kernels(r);
}

}  // namespace tessel::samples
