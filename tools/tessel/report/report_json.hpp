// Tuning results to and from JSON (`tessel tune --json`, read back by `tessel report`).
#pragma once
#include <string>
#include <string_view>

#include "tessel/samples/report_results.hpp"

namespace tessel::samples::report {

// Deterministic JSON (fields in a fixed order); each config row also carries its derived
// GB/s, GFLOP/s and roofline fraction for readers that do not recompute them.
std::string results_to_json(const Results& r, int indent = 2);
// The inverse (derived fields are ignored). std::runtime_error on malformed text or a missing field.
Results results_from_json(std::string_view text);

}  // namespace tessel::samples::report
