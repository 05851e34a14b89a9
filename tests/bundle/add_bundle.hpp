// The sample add kernel exported as a PTX-only bundle for sm_80, the fake GPU's architecture:
// what the fake-driver bundle tests (common/fake_driver.hpp) open and launch.
#pragma once
#include <doctest/doctest.h>

#include <vector>

#include "bundle_test_util.hpp"
#include "tessel/jit/bundle_writer.hpp"
#include "tessel/jit/registry.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::bundle_test {

// Exports into `dir` and returns it.
inline fs::path export_add_sm80(const fs::path& dir) {
  samples::register_sample_kernels();
  const jit::KernelEntry* add = jit::Registry::global().find("add");
  REQUIRE(add != nullptr);
  jit::ExportOptions o;
  o.archs = {"sm_80"};
  o.cubins = false;
  const std::vector<const jit::KernelEntry*> kernels{add};
  jit::export_bundle(kernels, dir, o);
  return dir;
}

}  // namespace tessel::bundle_test
