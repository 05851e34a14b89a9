// Precise math (lang::Precision::ieee per call, CompileOptions::precise_math for a whole
// kernel): the IR attribute, its round trip, the PTX without .approx instructions, the cache key,
// the missing-libdevice error and, on a GPU, the measured error of both forms.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../common/gpu_gate.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/jit/emit.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using namespace tessel::lang;

namespace {

// OP: 0 sin, 1 cos, 2 exp, 3 log; IEEE: 1 for Precision::ieee.
Tile math_of(const Tile& x, int op, Precision p) {
  switch (op) {
    case 0: return sin(x, p);
    case 1: return cos(x, p);
    case 2: return exp(x, p);
    default: return log(x, p);
  }
}
void math_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto i = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = i < n;
  store(out + i, math_of(load(x + i, mask), m["OP"], m["IEEE"] ? Precision::ieee : Precision::fast), mask);
}
jit::Kernel k_math{"math_probe", &math_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 256}, {"OP", 0}, {"IEEE", 0}}};

std::unique_ptr<ir::Function> ir_of(int op, bool ieee) { return k_math.build_ir(Meta{{"OP", op}, {"IEEE", ieee}}); }

jit::CompileOptions precise_option() {
  jit::CompileOptions o;
  o.precise_math = true;
  return o;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::string old;
  bool had;
  ScopedEnv(const char* n, const char* v) : name(n), had(std::getenv(n) != nullptr) {
    if (had) old = std::getenv(n);
    setenv(n, v, 1);
  }
  ~ScopedEnv() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("Precision::ieee is the op attribute precise = 1; the fast form prints as before") {
  const std::string fast = ir::print(*ir_of(0, false));
  const std::string ieee = ir::print(*ir_of(0, true));
  CHECK(fast.find("precise") == std::string::npos);
  CHECK(count(ieee, "{precise = 1}") == 1);
  // The printer and parser round-trip it, and it stays in the cache key's IR text.
  auto back = ir::parse(ieee);
  CHECK(ir::print(*back) == ieee);
  auto key = [](const ir::Function& f, const jit::CompileOptions& o) {
    return jit::cache::make_key(jit::cache::key_inputs(f, o, "sm_90", 80, "19"));
  };
  CHECK(key(*ir_of(0, false), {}) != key(*ir_of(0, true), {}));
  // The compile option: two options, two keys; the default key is the one without the option.
  CHECK(key(*ir_of(0, false), {}) != key(*ir_of(0, false), precise_option()));
  CHECK(key(*ir_of(0, false), {}) == key(*ir_of(0, false), jit::CompileOptions{}));
}

TEST_CASE("the verifier takes precise = 0 or 1 only, and only on ops with an approximate form") {
  std::string ieee = ir::print(*ir_of(0, true));
  auto rejects = [&](const std::string& from, const std::string& to, const std::string& why) {
    std::string text = ieee;
    text.replace(text.find(from), from.size(), to);
    CAPTURE(text);
    try {
      auto f = ir::parse(text);
      ir::verify(*f);
      FAIL("accepted");
    } catch (const std::exception& e) {
      CHECK_MESSAGE(std::string(e.what()).find(why) != std::string::npos, e.what());
    }
  };
  rejects("{precise = 1}", "{precise = 2}", "precise must be 0 or 1");
  rejects("{precise = 1}", "{fast = 1}", "unexpected attribute 'fast': 'sin' takes only precise");
  rejects("sin ", "floor ", "unexpected attribute 'precise': 'floor' takes no attributes");
}

TEST_CASE("PTX: the default sin/cos use .approx, the precise forms libdevice's, inlined") {
  for (int op : {0, 1}) {
    CAPTURE(op);
    const std::string approx = op == 0 ? "sin.approx" : "cos.approx";
    const std::string fast = jit::emit(*ir_of(op, false), jit::Stage::Ptx, "sm_90", {});
    CHECK(count(fast, approx) > 0);
    for (const std::string& precise : {jit::emit(*ir_of(op, true), jit::Stage::Ptx, "sm_90", {}),
                                       jit::emit(*ir_of(op, false), jit::Stage::Ptx, "sm_90", precise_option())}) {
      CHECK(count(precise, approx) == 0);
      CHECK(count(precise, "__nv_") == 0);         // linked in and inlined, no call left
      CHECK(count(precise, "__nvvm_reflect") == 0);  // resolved by NVVMReflect
      CHECK(count(precise, "call") == 0);
    }
  }
  // exp and log: their fast forms are ex2.approx / lg2.approx sequences; the precise ones are
  // different code (libdevice's), still one kernel without calls.
  for (int op : {2, 3}) {
    CAPTURE(op);
    const std::string fast = jit::emit(*ir_of(op, false), jit::Stage::Ptx, "sm_90", {});
    const std::string precise = jit::emit(*ir_of(op, true), jit::Stage::Ptx, "sm_90", {});
    CHECK(fast != precise);
    CHECK(count(precise, "call") == 0);
  }
  // A kernel without precise ops is the same code with the option as without.
  CHECK(jit::emit(*ir_of(0, false), jit::Stage::LlvmIR, "sm_90", {}).find("__nv_") == std::string::npos);
}

TEST_CASE("without libdevice a precise op is a CompileError naming the paths searched; others compile") {
  ScopedEnv env("TESSEL_LIBDEVICE", "/nonexistent/libdevice.10.bc");
  CHECK_NOTHROW(jit::emit(*ir_of(0, false), jit::Stage::Ptx, "sm_90", {}));  // never reads libdevice
  try {
    jit::emit(*ir_of(0, true), jit::Stage::Ptx, "sm_90", {});
    FAIL("compiled without libdevice");
  } catch (const CompileError& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find("precise math (Precision::ieee, precise_math) needs NVIDIA's libdevice, not found at "
                            "/nonexistent/libdevice.10.bc") != std::string::npos,
                  what);
    CHECK_MESSAGE(what.find("TESSEL_LIBDEVICE") != std::string::npos, what);
  }
}

TEST_CASE("on the interpreter both forms compute in double and round once" ) {
  // The interpreter ignores the attribute: both forms give (float)f((double)x) exactly.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> wide(-100.f, 100.f), pos(1e-3f, 1e3f);
  const int n = 1000;
  std::vector<float> x(n);
  for (int op = 0; op < 4; ++op) {
    for (float& v : x) v = op == 3 ? pos(rng) : op == 2 ? wide(rng) / 2 : wide(rng);
    jit::Array<float> dx{std::span<const float>(x)}, out(n);
    for (int ieee : {0, 1}) {
      CAPTURE(op);
      CAPTURE(ieee);
      if (jit::Device::current().kind() != jit::BackendKind::Interpreter) {
        MESSAGE("a GPU is the current device: the interpreter check is the GPU case's reference instead");
        return;
      }
      out.poison();
      k_math(jit::Grid{static_cast<uint32_t>((n + 255) / 256)}, Meta{{"OP", op}, {"IEEE", ieee}}, dx, out, n);
      const std::vector<float> got = out.download();
      int wrong = 0;
      for (int i = 0; i < n; ++i) {
        const double d = x[i];
        const double ref = op == 0 ? std::sin(d) : op == 1 ? std::cos(d) : op == 2 ? std::exp(d) : std::log(d);
        wrong += got[i] != static_cast<float>(ref);
      }
      CHECK(wrong == 0);
    }
  }
}

// The bounds that docs/dsl.md quotes. Inputs: sin, cos: half uniform in [-100 pi, 100 pi] (where
// PTX documents sin.approx/cos.approx), half in [-1e6, 1e6] (libdevice's Payne-Hanek path past
// 105615; the fast forms are judged on the first half only); exp: uniform in [-87, 88]; log: exp
// of uniform [-80, 80]. Errors against the double result; ulps of the f32 result.
TEST_CASE("GPU: max error of sin, cos, exp, log in both precisions against a double reference" *
          doctest::test_suite("gpu")) {
  jit::Device& dev = jit::Device::current();
  if (dev.kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("precise math error bounds: " + dev.describe());
    return;
  }
  MESSAGE("precise math bounds measured on: " << dev.describe());
  const int n = 1 << 20;
  std::mt19937 rng(5);
  const char* names[] = {"sin", "cos", "exp", "log"};
  for (int op = 0; op < 4; ++op) {
    std::vector<float> x(n);
    const float pi100 = 100 * 3.14159265f;
    for (int i = 0; i < n; ++i) {
      float& v = x[i];
      if (op <= 1) v = std::uniform_real_distribution<float>(-1, 1)(rng) * (i % 2 == 0 ? pi100 : 1e6f);
      else if (op == 2) v = std::uniform_real_distribution<float>(-87.f, 88.f)(rng);
      else v = std::exp(std::uniform_real_distribution<float>(-80.f, 80.f)(rng));
    }
    jit::Array<float> dx{std::span<const float>(x)}, out(n);
    for (int ieee : {0, 1}) {
      out.poison();
      k_math(jit::Grid{static_cast<uint32_t>(n / 256)}, Meta{{"OP", op}, {"IEEE", ieee}}, dx, out, n);
      const std::vector<float> got = out.download();
      double max_abs = 0, max_ulp = 0, max_abs_pi = 0;  // max_abs_pi: sin/cos on [-pi, pi] only
      for (int i = 0; i < n; ++i) {
        if (!ieee && op <= 1 && std::fabs(x[i]) > pi100) continue;
        const double d = x[i];
        const double ref = op == 0 ? std::sin(d) : op == 1 ? std::cos(d) : op == 2 ? std::exp(d) : std::log(d);
        const float r = static_cast<float>(ref);
        // One ulp of the reference's f32 neighbourhood (at least the smallest normal's, so
        // results near 0 are not judged in subnormal ulps).
        const double ulp = std::max(double(std::nextafter(std::fabs(r), INFINITY) - std::fabs(r)),
                                    double(std::numeric_limits<float>::min()) * FLT_EPSILON);
        max_abs = std::max(max_abs, std::fabs(got[i] - ref));
        if (std::fabs(x[i]) <= 3.14159265f) max_abs_pi = std::max(max_abs_pi, std::fabs(got[i] - ref));
        max_ulp = std::max(max_ulp, std::fabs(got[i] - ref) / ulp);
      }
      const std::string line = fmt::format("{} {}: max |error| {:.3g}, max {:.3g} ulp{}", names[op], ieee ? "ieee" : "fast",
                                           max_abs, max_ulp,
                                           op <= 1 ? fmt::format(", on [-pi, pi] {:.3g}", max_abs_pi) : "");
      MESSAGE(line);
      // Measured on an H200 (2026-11-27): sin/cos fast 3.65e-5 on +-100 pi (the argument's own f32
      // rounding grows with |x|), exp fast 63.4 ulp, log fast 7.7e-6 absolute (10209 ulp next to
      // x = 1, where log x is tiny); ieee at most 1.8 ulp. docs/dsl.md section 4.6 quotes these.
      if (ieee) {
        CHECK(max_ulp <= 2.5);  // libdevice: 2 ulp (sinf, cosf, expf), 1 (logf), + the reference's rounding
      } else if (op <= 1) {
        CHECK(max_abs <= 5e-5);     // sin/cos.approx on +-100 pi
        CHECK(max_abs_pi <= 2e-6);  // and on [-pi, pi]
      } else if (op == 2) {
        CHECK(max_ulp <= 112);  // fast_math.hpp exp: 1 + 1.25|x| ulp (|x| <= 88), + the reference's rounding
      } else {
        CHECK(max_abs <= 2e-5);  // lg2.approx: absolute, not relative, near x = 1
      }
    }
  }
}
