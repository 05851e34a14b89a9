// `tessel run` on a kernel registered with a jit::Workload: one run of one config on the
// workload's random inputs, checked value by value against the workload's host reference.
#include <fmt/format.h>

#include <cmath>

#include "tessel/jit/device.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {

RunResult run_workload(const jit::KernelEntry& e, const std::vector<int64_t>& size,
                       const std::function<jit::tune::Config(const jit::tune::Config&)>& adjust, jit::tune::Config& used) {
  if (!e.workload) throw UserError(fmt::format("kernel '{}' has no workload: `tessel run` cannot make its inputs", e.name));
  jit::tune::Problem p = e.workload->make_problem(size);
  if (!p.reference || !p.output)
    throw UserError(fmt::format("kernel '{}': its workload gives no host reference (Autotune::outputs and reference), "
                                "so `tessel run` cannot check it",
                                e.name));
  // The first config the kernel's prune keeps at this size (what launch_tuned falls back to).
  const jit::tune::Config* first = nullptr;
  for (const jit::tune::Config& c : e.configs)
    if (!p.keep || p.keep(c)) {
      first = &c;
      break;
    }
  if (!first) throw UserError(fmt::format("kernel '{}': its prune rejects every config at this size", e.name));
  used = adjust ? adjust(*first) : *first;
  const jit::tune::Config& c = used;
  if (p.keep && !p.keep(c))
    throw UserError(fmt::format("kernel '{}': the config {} is pruned by the kernel at this size", e.name, c.str()));
  // The reference first, as the tuner does: it reads the inputs before any run changed them.
  const jit::tune::Expected want = p.reference();
  if (p.poison) p.poison();
  if (p.reset) p.reset();
  p.launch(c);
  jit::Device::current().synchronize();
  const std::vector<double> got = p.output();
  if (got.size() != want.values.size())
    throw UserError(fmt::format("kernel '{}': the reference gives {} values for {} output values", e.name,
                                want.values.size(), got.size()));
  RunResult r;
  r.launches = 1;
  r.rtol = p.rtol;
  r.atol = p.atol;
  r.checked = static_cast<int64_t>(got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double w = want.values[i], err = std::fabs(got[i] - w);
    if (!std::isnan(err)) r.max_abs_err = std::max(r.max_abs_err, err);
    // The tuner's rule (equal infinities and two NaNs match), so run and tune agree.
    if (!jit::tune::value_matches(got[i], w, jit::tune::tolerance_at(want.tolerance, i, w, p.rtol, p.atol)) &&
        r.mismatches++ == 0)
      r.first_mismatch = fmt::format("output[{}] = {}, expected {}", i, got[i], w);
  }
  r.verified = r.mismatches == 0 && r.checked > 0;
  if (r.checked == 0) r.first_mismatch = "the workload's output is empty";
  return r;
}

}  // namespace tessel::samples
