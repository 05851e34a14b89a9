// The ranked-config table `tessel tune` prints per kernel and size.
#pragma once
#include <string>

#include "tessel/samples/report_results.hpp"

namespace tessel::samples::report {

// One line per config, ranked (rank_rows order): rank, config, median time, spread, GB/s,
// TFLOP/s and the fraction of the roofline (a matmul's under its dtype's tensor-core ceiling,
// dot_dtype_of); failed and pruned configs last with their reason.
// The winner is marked '*', the untuned default 'd'. Ends with a newline.
std::string format_table(const SizeResult& s, const Roofline& roof);

// "bandwidth 4800 GB/s, compute 60.1 TFLOP/s, tensor cores f16 700 bf16 690 tf32 350 TFLOP/s":
// the measured ceilings in one line (no tensor part when none was measured).
std::string format_ceilings(const Roofline& roof);

// "1.23 us", "45.6 ms": a time in milliseconds with a unit that keeps 3 significant digits.
std::string format_ms(double ms);

}  // namespace tessel::samples::report
