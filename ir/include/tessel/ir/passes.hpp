// The generic tile-IR passes and the straight pipeline that runs them.
#pragma once
#include <string_view>
#include <vector>

#include "tessel/ir/ir.hpp"

namespace tessel::ir {

// Constant folding and algebraic simplification (x+0, x*1, splat of a constant, ...).
// Returns true if anything changed.
bool canonicalize(Function& f);
// Common-subexpression elimination of pure ops, scoped by region.
bool cse(Function& f);
// Removes pure ops (and loops without side effects) whose results are unused.
bool dce(Function& f);

struct Pass {
  std::string_view name;
  bool (*run)(Function&);
};

// canonicalize, cse, dce.
const std::vector<Pass>& default_passes();

struct PipelineOptions {
  bool verify_each = true;
  // Print the IR after each pass to stderr. Defaults from TESSEL_DUMP_IR=1.
  bool dump = false;
  static PipelineOptions from_env();
};

// Runs the passes in order, verifying after each (VerifyError names the pass).
void run_pipeline(Function& f, const std::vector<Pass>& passes, PipelineOptions opts);

}  // namespace tessel::ir
