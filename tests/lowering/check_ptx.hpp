// Compiles a kernel for sm_90 and sm_80 and assembles both with ptxas (when present).
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "ptxas.hpp"
#include "tessel/lowering/compile.hpp"

namespace lowering_test {

// `ptx` with every `from` (an entry symbol, also inside its parameters' names) made `to`: compares
// the code of two variants whose entries are named differently (lowering::entry_symbol).
inline std::string renamed(std::string ptx, const std::string& from, const std::string& to) {
  for (size_t at = ptx.find(from); at != std::string::npos; at = ptx.find(from, at + to.size()))
    ptx.replace(at, from.size(), to);
  return ptx;
}

inline int count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

inline void assemble(const std::string& ptx, const std::string& arch) {
  PtxasReport r = run_ptxas(ptx, arch);
  if (!r.ran) return;  // reported by run_ptxas: skipped, or failed under TESSEL_TEST_REQUIRE_PTXAS=1
  INFO("ptxas -arch=" << arch << ":\n" << r.log << "\nPTX:\n" << ptx);
  REQUIRE(r.ok);
  CHECK(r.stack_frame == 0);
  CHECK(r.spill_stores == 0);
  CHECK(r.spill_loads == 0);
  // ptxas serialises every wgmma of a function it cannot follow across a call (advisory C7510)
  // or for other reasons it names the same way: a silent 10-70% loss (loop_frame.cpp).
  CHECK(r.log.find("wgmma.mma_async instructions are serialized") == std::string::npos);
}

// Returns the sm_90 compilation; both targets must assemble without spills or stack.
inline tessel::lowering::Compiled compile_checked(const tessel::ir::Function& f,
                                                  tessel::lowering::Options o = {}) {
  using tessel::lowering::Target;
  o.target = Target::parse("sm_80");
  tessel::lowering::Compiled c80 = tessel::lowering::compile(f, o);
  CHECK(c80.ptx.find(".target sm_80") != std::string::npos);
  assemble(c80.ptx, "sm_80");
  o.target = Target::parse("sm_90");
  tessel::lowering::Compiled c = tessel::lowering::compile(f, o);
  CHECK(c.ptx.find(".target sm_90") != std::string::npos);
  assemble(c.ptx, "sm_90");
  return c;
}

}  // namespace lowering_test
