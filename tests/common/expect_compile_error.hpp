// Tracing a kernel that must fail: the CompileError carries `needle`, names the test's source
// file and the line the kernel recorded in `line` (its offending line sets `line = __LINE__`).
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "tessel/lang/lang.hpp"

namespace tessel_test {

template <class... A>
void expect_compile_error(void (*fn)(A...), const tessel::lang::Meta& meta, const std::string& needle, int& line,
                          const std::string& file) {
  line = 0;
  try {
    tessel::lang::trace(fn, meta);
    FAIL("expected a CompileError containing: " << needle);
  } catch (const tessel::CompileError& e) {
    INFO("message: " << std::string(e.what()));
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
    CHECK(e.line() == static_cast<uint32_t>(line));
    CHECK(std::string(e.file()).find(file) != std::string::npos);
    // what() reads "file:line: error: message"
    CHECK(std::string(e.what()).find(file + ":" + std::to_string(line) + ": error: ") != std::string::npos);
  }
}

}  // namespace tessel_test
