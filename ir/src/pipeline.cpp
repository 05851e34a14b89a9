// The pass pipeline: a straight list of passes with verify and dump hooks between them.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tessel/ir/passes.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"

namespace tessel::ir {

const std::vector<Pass>& default_passes() {
  static const std::vector<Pass> passes{
      {"canonicalize", &canonicalize},
      {"cse", &cse},
      {"dce", &dce},
  };
  return passes;
}

PipelineOptions PipelineOptions::from_env() {
  PipelineOptions o;
  const char* v = std::getenv("TESSEL_DUMP_IR");
  o.dump = v != nullptr && *v != '\0' && std::string_view(v) != "0";
  return o;
}

namespace {

void verify_labelled(const Function& f, std::string_view where) {
  try {
    verify(f);
  } catch (const VerifyError& e) {
    throw VerifyError(fmt::format("{}: {}", where, e.what()));
  }
}

}  // namespace

void run_pipeline(Function& f, const std::vector<Pass>& passes, PipelineOptions opts) {
  // Checking the input first keeps a malformed input from being blamed on the first pass
  // (and keeps the passes off IR they were never meant to see).
  if (opts.verify_each) verify_labelled(f, "before the pipeline");
  for (const Pass& p : passes) {
    p.run(f);
    if (opts.dump) {
      // Dumped before verifying, so broken IR is on screen when the verifier throws.
      std::string text = fmt::format("// -----// IR after {} //----- //\n{}", p.name, print(f));
      std::fwrite(text.data(), 1, text.size(), stderr);
      std::fflush(stderr);
    }
    if (opts.verify_each) verify_labelled(f, fmt::format("after pass '{}'", p.name));
  }
}

}  // namespace tessel::ir
