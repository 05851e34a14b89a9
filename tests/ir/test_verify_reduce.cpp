// Verifier rules of reductions, the generic reduce, cumsum, reshape, trans and atomics; their text round trip.
#include <doctest/doctest.h>

#include <string>

#include "tessel/ir/parser.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"

using namespace tessel;
using namespace tessel::ir;

namespace {

const char* kParams = "%x: f32[4,8], %v: f32[8], %i: i32[4,8], %p: ptr<f32>, %h: ptr<f16>, %n: i32";

std::string verify_text(const std::string& body) {
  auto f = parse(std::string("kernel @k(") + kParams + ") {\n" + body + "}\n");
  try {
    verify(*f);
  } catch (const VerifyError& e) {
    return e.what();
  }
  return "<accepted>";
}

void check_rejects(const std::string& body, std::string_view op, std::string_view rule, std::string_view detail) {
  std::string message = verify_text(body);
  INFO(message);
  CHECK(message.rfind("verify: op '" + std::string(op) + "' (#", 0) == 0);
  CHECK(message.find("): " + std::string(rule) + ": ") != std::string::npos);
  CHECK(message.find(detail) != std::string::npos);
}

}  // namespace

TEST_CASE("verify accepts reductions, scans, shape ops and atomics of the right types") {
  const std::string body =
      "  %0 = reduce_sum %x {axis = 1} : f32[4]\n"
      "  %1 = reduce_max %x {axis = 0} : f32[8]\n"
      "  %2 = reduce_min %v {axis = 0} : f32\n"
      "  %3 = argmax %i {axis = 0} : i32[8]\n"
      "  %4 = argmin %v {axis = 0} : i32\n"
      "  %5 = cumsum %i {axis = 1} : i32[4,8]\n"
      "  %6 = reshape %x : f32[2,16]\n"
      "  %7 = trans %x : f32[8,4]\n"
      "  %8 = reduce %x {axis = 1} : f32[4] {\n"
      "  ^(%a: f32, %b: f32):\n"
      "    %9 = add %a, %b : f32\n"
      "    yield %9\n"
      "  }\n"
      "  %10 = splat %p : ptr<f32>[4]\n"
      "  %11 = atomic_add %10, %8 : f32[4]\n"
      "  %12 = cmp_lt %11, %0 : i1[4]\n"
      "  %13 = atomic_max %10, %0, %12 : f32[4]\n"
      "  %14 = atomic_add %p, %2 : f32\n"
      "  %15 = atomic_add %p, %2 {acq_rel = 1} : f32\n";
  CHECK(verify_text(body) == "<accepted>");
  // and the text round-trips
  auto f = parse(std::string("kernel @k(") + kParams + ") {\n" + body + "}\n");
  std::string text = print(*f);
  CHECK(print(*parse(text)) == text);
}

TEST_CASE("verify: rule Reduce and ArgReduce") {
  check_rejects("  %0 = reduce_sum %x {axis = 2} : f32[4]\n", "reduce_sum", "rule Reduce", "axis must be in 0..1 for f32[4,8], got 2");
  check_rejects("  %0 = reduce_sum %x : f32[4]\n", "reduce_sum", "attributes",
                "missing attribute 'axis' (an integer), which 'reduce_sum' requires (ops.def)");
  check_rejects("  %0 = reduce_max %x {axis = 1} : f32[8]\n", "reduce_max", "rule Reduce", "expected result type f32[4], got f32[8]");
  check_rejects("  %0 = reduce_min %x {axis = 1} : f64[4]\n", "reduce_min", "rule Reduce", "expected result type f32[4], got f64[4]");
  check_rejects("  %0 = reduce_sum %n {axis = 0} : i32\n", "reduce_sum", "rule Reduce", "operand must be a tile, got the scalar i32");
  check_rejects("  %0 = splat %p : ptr<f32>[8]\n  %1 = reduce_max %0 {axis = 0} : ptr<f32>\n", "reduce_max", "rule Reduce",
                "operand must be an integer or float tile");
  check_rejects("  %0 = argmax %x {axis = 1} : f32[4]\n", "argmax", "rule ArgReduce", "expected result type i32[4], got f32[4]");
  check_rejects("  %0 = argmin %v {axis = 1} : i32\n", "argmin", "rule ArgReduce", "axis must be in 0..0");
}

TEST_CASE("verify: rule ReduceRegion") {
  auto reduce_with = [](const std::string& args, const std::string& inner, const std::string& result = "f32[4]") {
    return "  %0 = reduce %x {axis = 1} : " + result + " {\n  ^(" + args + "):\n" + inner + "  }\n";
  };
  check_rejects(reduce_with("%a: f32", "    yield %a\n"), "reduce", "rule ReduceRegion",
                "body must have 2 arguments (accumulator, element), got 1");
  check_rejects(reduce_with("%a: f32, %b: f64", "    yield %a\n"), "reduce", "rule ReduceRegion",
                "body argument 1 must be the scalar f32, got f64");
  check_rejects(reduce_with("%a: f32[4], %b: f32", "    yield %b\n"), "reduce", "rule ReduceRegion",
                "body argument 0 must be the scalar f32, got f32[4]");
  check_rejects(reduce_with("%a: f32, %b: f32", "    yield %a, %b\n"), "reduce", "rule ReduceRegion",
                "yield must carry 1 value, got 2");
  check_rejects(reduce_with("%a: f32, %b: f32", "    %1 = cast %a : f64\n    yield %1\n"), "reduce", "rule ReduceRegion",
                "yielded value must be the scalar f32, got f64");
  check_rejects(reduce_with("%a: f32, %b: f32", "    %1 = add %a, %b : f32\n    yield %1\n", "f32[8]"), "reduce",
                "rule ReduceRegion", "expected result type f32[4], got f32[8]");
  check_rejects(reduce_with("%a: f32, %b: f32", "    %1 = load %p : f32\n    yield %1\n"), "reduce", "rule ReduceRegion",
                "the combine body may hold only pure ops, got 'load'");
  // a reduce must own its region, and nothing else may have one
  check_rejects("  %0 = reduce %x {axis = 1} : f32[4]\n", "reduce", "structure", "expected 1 region(s), got 0");
  // the body's values end with it (the parser already scopes them)
  CHECK_THROWS_WITH_AS(parse(std::string("kernel @k(") + kParams + ") {\n" +
                             reduce_with("%a: f32, %b: f32", "    %1 = add %a, %b : f32\n    yield %1\n") +
                             "  %2 = add %1, %1 : f32\n}\n"),
                       doctest::Contains("use of undefined value %1"), ParseError);
}

TEST_CASE("verify: rules Scan, Reshape and Trans") {
  check_rejects("  %0 = cumsum %x {axis = 3} : f32[4,8]\n", "cumsum", "rule Scan", "axis must be in 0..1");
  check_rejects("  %0 = cumsum %x {axis = 0} : f32[8,4]\n", "cumsum", "result rule SameAs0", "expected result 0 of type f32[4,8], got f32[8,4]");
  check_rejects("  %0 = reshape %x : f32[4,4]\n", "reshape", "rule Reshape", "element counts differ: f32[4,8] has 32, f32[4,4] has 16");
  check_rejects("  %0 = reshape %x : i32[32]\n", "reshape", "rule Reshape", "result dtype must be f32");
  check_rejects("  %0 = reshape %n : i32[1]\n", "reshape", "rule Reshape", "operand and result must be tiles");
  check_rejects("  %0 = trans %v : f32[8]\n", "trans", "rule Trans", "operand must be a 2-D tile, got f32[8]");
  check_rejects("  %0 = trans %x : f32[4,8]\n", "trans", "rule Trans", "expected result type f32[8,4], got f32[4,8]");
}

TEST_CASE("verify: rule Atomic") {
  check_rejects("  %0 = atomic_add %n, %n : i32\n", "atomic_add", "rule Atomic", "operand 0 must be a pointer, got i32");
  check_rejects("  %0 = constant {value = 1.0} : f32\n  %1 = atomic_add %p, %0 {acq_rel = 2} : f32\n", "atomic_add", "rule Atomic", "acq_rel must be 0 or 1, got 2");
  check_rejects("  %0 = atomic_add %p, %n : f32\n", "atomic_add", "rule Atomic", "value must be f32 to update through ptr<f32>, got i32");
  check_rejects("  %0 = constant {value = 1.0} : f16\n  %1 = atomic_add %h, %0 : f16\n", "atomic_add", "rule Atomic",
                "'atomic_add' is not supported on f16 elements");
  check_rejects("  %0 = splat %p : ptr<f32>[8]\n  %1 = cmp_lt %n, %n : i1\n  %2 = atomic_max %0, %v, %1 : f32[8]\n",
                "atomic_max", "rule Atomic", "mask and pointer must have the same shape");
  check_rejects("  %0 = splat %p : ptr<f32>[8]\n  %1 = atomic_max %0, %v : f32\n", "atomic_max", "result rule PointeeOf0",
                "expected result 0 of type f32[8], got f32");
}

TEST_CASE("verify: yield belongs to a loop or a reduce body") {
  check_rejects("  yield\n", "yield", "rule Yield", "only as the last op of a loop or reduce body");
}
