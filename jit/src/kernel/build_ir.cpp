// Verify-then-optimise for freshly traced kernels.
#include "tessel/jit/build_ir.hpp"

#include "tessel/ir/passes.hpp"
#include "tessel/ir/verify.hpp"

namespace tessel::jit {

std::unique_ptr<ir::Function> finish_ir(std::unique_ptr<ir::Function> f) {
  ir::verify(*f);
  ir::run_pipeline(*f, ir::default_passes(), ir::PipelineOptions::from_env());
  return f;
}

}  // namespace tessel::jit
