// Shared by the matmul golden tests: a registered sample kernel, and the parameter
// specialisation of a launch on contiguous row-major matrices with sizes and row strides
// divisible by 16 (what the samples' runner makes for aligned shapes).
#pragma once
#include <doctest/doctest.h>

#include <vector>

#include "tessel/samples/sample.hpp"

namespace golden_test {

inline const tessel::jit::KernelEntry& entry(const char* name) {
  tessel::samples::register_sample_kernels();
  const tessel::jit::KernelEntry* k = tessel::jit::Registry::global().find(name);
  REQUIRE(k != nullptr);
  return *k;
}

// The column strides (stride_ak, stride_bn, stride_cn) are 1, everything else divisible by 16;
// `trans_b`: B is column-major instead (stride_bk is 1: an "NT" matmul, K^T read from K).
inline std::vector<tessel::ir::ParamSpec> aligned(const tessel::jit::KernelEntry& k, const tessel::lang::Meta& m,
                                                  bool trans_b = false) {
  auto f = k.build_ir(m, {});
  std::vector<tessel::ir::ParamSpec> specs;
  for (const tessel::ir::Param& p : f->params) {
    const bool unit = p.name == "stride_ak" || p.name == (trans_b ? "stride_bk" : "stride_bn") || p.name == "stride_cn";
    specs.push_back(unit ? tessel::ir::ParamSpec{false, true} : tessel::ir::ParamSpec{true, false});
  }
  return specs;
}

}  // namespace golden_test
