// Verifier: one rejection per rule (naming the op and the rule), structure, and valid IR.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "all_ops_kernel.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"

using namespace tessel;
using namespace tessel::ir;

namespace {

std::string verify_error(const Function& f) {
  try {
    verify(f);
  } catch (const VerifyError& e) {
    return e.what();
  }
  return "<accepted>";
}

std::string verify_text(const std::string& body, const std::string& params = "") {
  auto f = parse("kernel @k(" + params + ") {\n" + body + "}\n");
  return verify_error(*f);
}

// The error names the op and the broken rule, and says what was expected.
void check_rejects(const std::string& message, std::string_view op, std::string_view rule,
                   std::string_view detail) {
  INFO(message);
  CHECK(message.rfind("verify: op '" + std::string(op) + "' (#", 0) == 0);
  CHECK(message.find("): " + std::string(rule) + ": ") != std::string::npos);
  CHECK(message.find(detail) != std::string::npos);
}

const char* kPtrParams = "%p: ptr<f32>, %q: ptr<f16>, %n: i32, %s: i64";

}  // namespace

TEST_CASE("verify accepts the all-ops kernel and its parsed copy") {
  auto f = testing::build_all_ops_kernel();
  CHECK(verify_error(*f) == "<accepted>");
  auto g = parse(print(*f, PrintOptions{true}));
  CHECK(verify_error(*g) == "<accepted>");
}

TEST_CASE("verify accepts edge cases that the rules allow") {
  const std::string body =
      "  %0 = arange {end = 12, start = 4} : i32[8]\n"          // odd start
      "  %1 = splat %p : ptr<f32>[8]\n"
      "  %2 = addptr %1, %0 : ptr<f32>[8]\n"
      "  %3 = cmp_eq %2, %2 : i1[8]\n"                            // pointers compare for equality
      "  %4 = cast %p : i64\n"                                    // ptr <-> i64
      "  %5 = cast %4 : ptr<f16>\n"
      "  %6 = cast %p : ptr<i8>\n"                                // ptr -> ptr
      "  %7 = load %p : f32\n"                                    // scalar load
      "  %8 = constant {value = -128} : i8\n"                     // bounds of a narrow int
      "  %9 = constant {value = 255} : i8\n"
      "  %10 = constant {value = 1} : i1[8]\n"
      "  %11 = and %10, %3 : i1[8]\n"                             // bitwise on i1
      "  %12 = expand_dims %0 {axis = 1} : i32[8,1]\n"            // axis == rank
      "  %13 = broadcast %12 : i32[8,1024]\n"
      "  %14 = rand %s, %n : f32\n"                               // scalar offset, i64 seed
      "  %15 = constant {value = 0.5} : bf16[1024,1024]\n"        // exactly 2^20 elements
      "  %16 = rem %n, %n : i32\n"
      "  %17 = rem %7, %7 : f32\n"                               // rem on floats
      "  %18 = splat %7 : f32[8]\n"
      "  store %2, %18, %3\n"                                    // masked tile store
      "  store %p, %7\n";                                        // scalar store
  CHECK(verify_text(body, kPtrParams) == "<accepted>");
}

TEST_CASE("verify: rule Constant") {
  check_rejects(verify_text("  %0 = constant {value = 1} : f32\n"), "constant", "rule Constant",
                "a f32 constant needs a float value, got integer 1");
  check_rejects(verify_text("  %0 = constant {value = 1.5} : i32[4]\n"), "constant", "rule Constant",
                "a i32[4] constant needs an integer value, got a float");
  check_rejects(verify_text("  %0 = constant : i32\n"), "constant", "attributes",
                "missing attribute 'value' (a number), which 'constant' requires (ops.def)");
  check_rejects(verify_text("  %0 = constant {value = 0} : ptr<f32>\n"), "constant", "rule Constant",
                "a constant cannot be a pointer");
  check_rejects(verify_text("  %0 = constant {value = 300} : i8\n"), "constant", "rule Constant",
                "value 300 does not fit in i8");
  check_rejects(verify_text("  %0 = constant {value = 2} : i1\n"), "constant", "rule Constant",
                "value 2 does not fit in i1");
}

TEST_CASE("verify: rule Axis") {
  check_rejects(verify_text("  %0 = program_id {axis = 3} : i32\n"), "program_id", "rule Axis",
                "axis must be 0, 1 or 2, got 3");
  check_rejects(verify_text("  %0 = num_programs {axis = -1} : i32\n"), "num_programs", "rule Axis",
                "axis must be 0, 1 or 2, got -1");
  check_rejects(verify_text("  %0 = program_id {axis = 1.0} : i32\n"), "program_id", "attributes",
                "attribute 'axis' must be an integer, got a float");
}

TEST_CASE("verify: rule Arange") {
  check_rejects(verify_text("  %0 = arange {end = 3, start = 3} : i32[1]\n"), "arange", "rule Arange",
                "expected start < end, got start = 3, end = 3");
  check_rejects(verify_text("  %0 = arange {end = 101, start = 5} : i32[96]\n"), "arange", "rule Arange",
                "end - start must be a power of two up to 2^20, got 96");
  check_rejects(verify_text("  %0 = arange {end = 9223372036854775807, start = -9223372036854775807} : i32[2]\n"),
                "arange", "rule Arange", "end - start must be a power of two up to 2^20, got 18446744073709551614");
  check_rejects(verify_text("  %0 = arange {end = 37, start = 5} : i32[64]\n"), "arange", "rule Arange",
                "expected result type i32[32], got i32[64]");
  check_rejects(verify_text("  %0 = arange {end = 64, start = 0} : i64[64]\n"), "arange", "rule Arange",
                "expected result type i32[64], got i64[64]");
}

TEST_CASE("verify: rule Splat") {
  check_rejects(verify_text("  %0 = arange {end = 8, start = 0} : i32[8]\n  %1 = splat %0 : i32[8]\n"),
                "splat", "rule Splat", "operand must be a scalar, got i32[8]");
  check_rejects(verify_text("  %0 = splat %n : i64[8]\n", kPtrParams), "splat", "rule Splat",
                "expected a tile of i32, got i64[8]");
}

TEST_CASE("verify: rule Broadcast") {
  std::string a = "  %0 = arange {end = 4, start = 0} : i32[4]\n";
  check_rejects(verify_text(a + "  %1 = broadcast %0 : i32[8,4]\n"), "broadcast", "rule Broadcast",
                "operand and result must have the same rank, got i32[4] and i32[8,4]");
  check_rejects(verify_text(a + "  %1 = broadcast %0 : i32[8]\n"), "broadcast", "rule Broadcast",
                "dim 0 of i32[4] is neither 8 nor 1");
  check_rejects(verify_text(a + "  %1 = broadcast %0 : f32[4]\n"), "broadcast", "rule Broadcast",
                "result dtype must be i32");
}

TEST_CASE("verify: rule ExpandDims") {
  std::string a = "  %0 = arange {end = 4, start = 0} : i32[4]\n";
  check_rejects(verify_text(a + "  %1 = expand_dims %0 {axis = 2} : i32[4,1]\n"), "expand_dims",
                "rule ExpandDims", "axis must be in 0..1 for i32[4], got 2");
  check_rejects(verify_text(a + "  %1 = expand_dims %0 {axis = 0} : i32[4,1]\n"), "expand_dims",
                "rule ExpandDims", "expected result type i32[1,4], got i32[4,1]");
}

TEST_CASE("verify: rule Cast") {
  check_rejects(verify_text("  %0 = cast %n : ptr<f32>\n", kPtrParams), "cast", "rule Cast",
                "pointers cast only to pointers or i64, got i32 to ptr<f32>");
  check_rejects(verify_text("  %0 = cast %p : f64\n", kPtrParams), "cast", "rule Cast",
                "pointers cast only to pointers or i64, got ptr<f32> to f64");
  check_rejects(verify_text("  %0 = arange {end = 4, start = 0} : i32[4]\n  %1 = cast %0 : f32[2,2]\n"), "cast",
                "rule Cast", "operand and result must have the same shape, got i32[4] and f32[2,2]");
}

TEST_CASE("verify: rule Arith") {
  std::string body =
      "  %0 = load %p : f32\n  %1 = load %q : f16\n  %2 = splat %0 : f32[128]\n  %3 = splat %1 : f16[128]\n"
      "  %4 = add %2, %3 : f32[128]\n";
  check_rejects(verify_text(body, kPtrParams), "add", "rule Arith",
                "operands must have the same type, got f32[128] and f16[128]");
  check_rejects(verify_text("  %0 = sub %p, %p : ptr<f32>\n", kPtrParams), "sub", "rule Arith",
                "operands must be integers or floats, got ptr<f32>");
}

TEST_CASE("verify: the full message names the op's position, kernel, result and source line") {
  auto f = parse(
      "kernel @scale(%p: ptr<f32>, %q: ptr<f16>) {\n"
      "  %0 = load %p : f32 loc(\"k.cpp\":5)\n"
      "  %1 = load %q : f16\n"
      "  %2 = mul %0, %1 : f32 loc(\"k.cpp\":7)\n"
      "}\n");
  CHECK(verify_error(*f) ==
        "verify: op 'mul' (#2 in kernel @scale, result %2, k.cpp:7): rule Arith: operands must have the same "
        "type, got f32 and f16");
}

TEST_CASE("verify: rule Bitwise") {
  check_rejects(verify_text("  %0 = load %p : f32\n  %1 = xor %0, %0 : f32\n", kPtrParams), "xor", "rule Bitwise",
                "operands must be integers, got f32");
  check_rejects(verify_text("  %0 = shl %n, %s : i32\n", kPtrParams), "shl", "rule Bitwise",
                "operands must have the same type, got i32 and i64");
}

TEST_CASE("verify: rule Compare") {
  check_rejects(verify_text("  %0 = cmp_lt %p, %p : i1\n", kPtrParams), "cmp_lt", "rule Compare",
                "pointers compare only with cmp_eq and cmp_ne, got ptr<f32>");
  check_rejects(verify_text("  %0 = cmp_ge %n, %s : i1\n", kPtrParams), "cmp_ge", "rule Compare",
                "operands must have the same type, got i32 and i64");
}

TEST_CASE("verify: rules UnaryNumeric, UnaryInt, UnaryFloat") {
  check_rejects(verify_text("  %0 = neg %p : ptr<f32>\n", kPtrParams), "neg", "rule UnaryNumeric",
                "operand must be an integer or float, got ptr<f32>");
  check_rejects(verify_text("  %0 = load %p : f32\n  %1 = not %0 : f32\n", kPtrParams), "not", "rule UnaryInt",
                "operand must be an integer, got f32");
  check_rejects(verify_text("  %0 = exp %n : i32\n", kPtrParams), "exp", "rule UnaryFloat",
                "operand must be a float, got i32");
  check_rejects(verify_text("  %0 = sqrt %p : ptr<f32>\n", kPtrParams), "sqrt", "rule UnaryFloat",
                "operand must be a float, got ptr<f32>");
}

TEST_CASE("verify: rule Fma") {
  check_rejects(verify_text("  %0 = fma %n, %n, %n : i32\n", kPtrParams), "fma", "rule Fma",
                "operands must be floats, got i32");
  check_rejects(verify_text("  %0 = load %p : f32\n  %1 = load %q : f16\n  %2 = fma %0, %0, %1 : f32\n", kPtrParams),
                "fma", "rule Fma", "operands must have the same type, got f32 and f16");
}

TEST_CASE("verify: rule Select") {
  std::string a = "  %0 = arange {end = 16, start = 0} : i32[16]\n  %1 = cast %0 : f32[16]\n";
  check_rejects(verify_text(a + "  %2 = select %0, %1, %1 : f32[16]\n"), "select", "rule Select",
                "condition must be i1, got i32[16]");
  check_rejects(verify_text(a + "  %2 = cmp_lt %0, %0 : i1[16]\n  %3 = select %2, %1, %0 : i32[16]\n"), "select",
                "rule Select", "operands must have the same type, got f32[16] and i32[16]");
  check_rejects(verify_text(a + "  %2 = constant {value = 1} : i1\n  %3 = select %2, %1, %1 : f32[16]\n"),
                "select", "rule Select", "condition and values must have the same shape, got i1 and f32[16]");
}

TEST_CASE("verify: rule AddPtr") {
  check_rejects(verify_text("  %0 = addptr %n, %n : i32\n", kPtrParams), "addptr", "rule AddPtr",
                "operand 0 must be a pointer, got i32");
  check_rejects(verify_text("  %0 = arange {end = 8, start = 0} : i32[8]\n  %1 = addptr %p, %0 : ptr<f32>\n",
                            kPtrParams),
                "addptr", "rule AddPtr", "pointer and offset must have the same shape, got ptr<f32> and i32[8]");
  check_rejects(verify_text("  %0 = load %p : f32\n  %1 = addptr %p, %0 : ptr<f32>\n", kPtrParams), "addptr",
                "rule AddPtr", "offset must be an integer, got f32");
}

TEST_CASE("verify: rule Load") {
  std::string a =
      "  %0 = arange {end = 32, start = 0} : i32[32]\n  %1 = splat %p : ptr<f32>[32]\n"
      "  %2 = addptr %1, %0 : ptr<f32>[32]\n  %3 = cmp_lt %0, %0 : i1[32]\n";
  check_rejects(verify_text("  %0 = load %n : i32\n", kPtrParams), "load", "rule Load",
                "operand 0 must be a pointer, got i32");
  check_rejects(verify_text(a + "  %4 = load %2, %0 : f32[32]\n", kPtrParams), "load", "rule Load",
                "mask must be i1, got i32[32]");
  check_rejects(verify_text(a + "  %4 = constant {value = 1} : i1\n  %5 = load %2, %4 : f32[32]\n", kPtrParams),
                "load", "rule Load", "mask and pointer must have the same shape, got i1 and ptr<f32>[32]");
  check_rejects(verify_text(a + "  %4 = cast %0 : f16[32]\n  %5 = load %2, %3, %4 : f32[32]\n", kPtrParams),
                "load", "rule Load", "other must be f32[32], got f16[32]");
}

TEST_CASE("verify: rule Store") {
  std::string a =
      "  %0 = arange {end = 32, start = 0} : i32[32]\n  %1 = splat %q : ptr<f16>[32]\n"
      "  %2 = addptr %1, %0 : ptr<f16>[32]\n  %3 = cmp_lt %0, %0 : i1[32]\n  %4 = cast %0 : f32[32]\n";
  check_rejects(verify_text(a + "  store %2, %4, %3\n", kPtrParams), "store", "rule Store",
                "value must be f16[32] to store through ptr<f16>[32], got f32[32]");
  check_rejects(verify_text(a + "  %5 = cast %4 : f16[32]\n  store %2, %5, %0\n", kPtrParams), "store",
                "rule Store", "mask must be i1, got i32[32]");
  check_rejects(verify_text("  store %n, %n\n", kPtrParams), "store", "rule Store",
                "operand 0 must be a pointer, got i32");
}

TEST_CASE("verify: rule Rand") {
  std::string a = "  %0 = arange {end = 64, start = 0} : i32[64]\n";
  check_rejects(verify_text(a + "  %1 = rand %0, %0 : f32[64]\n", kPtrParams), "rand", "rule Rand",
                "seed must be an integer scalar, got i32[64]");
  check_rejects(verify_text("  %0 = randn %n, %s : f32\n", kPtrParams), "randn", "rule Rand",
                "offset must be i32 (scalar or tile), got i64");
}

TEST_CASE("verify: rule For") {
  const char* params = "%n: i32, %m: i64, %x: f32";
  check_rejects(verify_text("  for %n, %m, %n {\n  ^(%i: i32):\n    yield\n  }\n", params), "for", "rule For",
                "lo, hi and step must have one type, got i32, i64 and i32");
  check_rejects(verify_text("  for %x, %x, %x {\n  ^(%i: f32):\n    yield\n  }\n", params), "for", "rule For",
                "bounds must be integer scalars, got lo f32");
  check_rejects(verify_text("  %0 = for %n, %n, %n, %x : f32 {\n  ^(%i: i32, %c: f32):\n    yield %i\n  }\n", params),
                "for", "rule For", "yielded value 0 must be f32, got i32");
  check_rejects(verify_text("  %0 = for %n, %n, %n, %x : f32 {\n  ^(%i: i32, %c: f32):\n    yield\n  }\n", params),
                "for", "rule For", "yield must carry 1 values, got 0");
  check_rejects(verify_text("  %0 = for %n, %n, %n, %x : f32 {\n  ^(%i: i64, %c: f32):\n    yield %c\n  }\n", params),
                "for", "rule For", "body argument 0 must be i32, got i64");
  check_rejects(verify_text("  %0 = for %n, %n, %n, %x : f32 {\n  ^(%i: i32):\n    yield %x\n  }\n", params), "for",
                "rule For", "body must have 2 arguments (iv and one per init), got 1");
  check_rejects(verify_text("  %0 = for %n, %n, %n, %x : i32 {\n  ^(%i: i32, %c: f32):\n    yield %c\n  }\n", params),
                "for", "rule For", "result 0 must have its init's type f32, got i32");
  check_rejects(verify_text("  for %n, %n, %n, %x {\n  ^(%i: i32, %c: f32):\n    yield %c\n  }\n", params), "for",
                "rule For", "expected 1 results (one per init), got 0");
  check_rejects(verify_text("  for %n, %n, %n {\n  ^(%i: i32):\n  }\n", params), "for", "rule For",
                "body must end with yield");
}

TEST_CASE("verify: rule Yield and terminators") {
  check_rejects(verify_text("  yield\n"), "yield", "rule Yield", "only as the last op of a loop or reduce body");
  check_rejects(verify_text("  for %n, %n, %n {\n  ^(%i: i32):\n    yield\n    yield\n  }\n", "%n: i32"),
                "yield", "terminator", "a terminator must be the last op of its block");
  // A body ending in something else is caught by the loop's own rule first.
  check_rejects(verify_text("  for %n, %n, %n {\n  ^(%i: i32):\n    yield\n    %0 = add %i, %i : i32\n  }\n", "%n: i32"),
                "for", "rule For", "body must end with yield");
}

TEST_CASE("verify: operand counts and result rules from ops.def") {
  check_rejects(verify_text("  %0 = add %n, %n, %n : i32\n", "%n: i32"), "add", "operand count",
                "expected 2 operands, got 3");
  check_rejects(verify_text("  %0 = load : f32\n"), "load", "operand count", "expected 1 to 3 operands, got 0");
  check_rejects(verify_text("  for %n, %n {\n  ^(%i: i32):\n    yield\n  }\n", "%n: i32"), "for", "operand count",
                "expected at least 3 operands, got 2");
  check_rejects(verify_text("  %0 = add %n, %n : i64\n", "%n: i32"), "add", "result rule SameAs0",
                "expected result 0 of type i32, got i64");
  check_rejects(verify_text("  %0 = cmp_lt %n, %n : i32\n", "%n: i32"), "cmp_lt", "result rule BoolOf0",
                "expected result 0 of type i1, got i32");
  check_rejects(verify_text("  %0 = rand %s, %n : f64\n", kPtrParams), "rand", "result rule F32Of1",
                "expected result 0 of type f32, got f64");
  check_rejects(verify_text("  %0 = load %q : f32\n", kPtrParams), "load", "result rule PointeeOf0",
                "expected result 0 of type f16, got f32");
  check_rejects(verify_text("  %0 = program_id {axis = 0} : i64\n"), "program_id", "result rule I32",
                "expected result 0 of type i32, got i64");
  check_rejects(verify_text("  %0 = store %p, %x : f32\n", "%p: ptr<f32>, %x: f32"), "store", "result rule None",
                "expected 0 result(s), got 1");
  check_rejects(verify_text("  %0, %1 = splat %x : f32[2], f32[2]\n", "%x: f32"), "splat", "rule Splat",
                "expected 1 result, got 2");
}

TEST_CASE("verify: tile shapes are positive, power-of-two sized and at most 2^20 elements") {
  check_rejects(verify_text("  %0 = constant {value = 1.0} : f32[3]\n"), "constant", "tile shape",
                "tile f32[3] has 3 elements, not a power of two");
  check_rejects(verify_text("  %0 = constant {value = 1.0} : f32[2048,1024]\n"), "constant", "tile shape",
                "tile f32[2048,1024] has more than 2^20 elements");
  check_rejects(verify_text("  %0 = constant {value = 1.0} : f32[4,0]\n"), "constant", "tile shape",
                "tile dims must be positive, got f32[4,0]");
  check_rejects(verify_text("  %0 = constant {value = 1.0} : f32[-4,-2]\n"), "constant", "tile shape",
                "tile dims must be positive");
  check_rejects(verify_text("  %0 = constant {value = 1} : i32[6,8]\n"), "constant", "tile shape",
                "has 48 elements, not a power of two");
  CHECK(verify_text("", "%t: f32[5]") == "verify: kernel @k: parameter %t: tile f32[5] has 5 elements, not a power of two");
  check_rejects(verify_text("  %0 = splat %x : f32[6]\n", "%x: f32"), "splat", "tile shape",
                "tile f32[6] has 6 elements");
}

TEST_CASE("verify: dominance") {
  // An operand defined later in the same block.
  {
    Function f("dom");
    Builder b(f);
    Value* n = f.add_param("n", Type{i32(), {}});
    Value* a = b.value(OpKind::Add, {n, n});
    Value* c = b.value(OpKind::Mul, {a, n});
    (void)c;
    std::swap(f.body.ops[0], f.body.ops[1]);
    check_rejects(verify_error(f), "mul", "dominance", "operand 0 (%1) is not defined before this use");
  }
  // A loop body's value used after the loop.
  {
    Function f("dom");
    Builder b(f);
    Value* n = f.add_param("n", Type{i32(), {}});
    Op& loop = b.for_loop(n, n, n, {});
    b.set_block(&loop.body());
    Value* inside = b.value(OpKind::Add, {loop.body().args[0], n});
    b.create(OpKind::Yield, {});
    b.set_block(&f.body);
    b.value(OpKind::Neg, {inside});
    check_rejects(verify_error(f), "neg", "dominance", "is not defined before this use");
  }
  // A loop's own result used inside its body.
  {
    Function f("dom");
    Builder b(f);
    Value* n = f.add_param("n", Type{i32(), {}});
    Op& loop = b.for_loop(n, n, n, {n});
    b.set_block(&loop.body());
    b.create(OpKind::Yield, {loop.result(0)});
    check_rejects(verify_error(f), "yield", "dominance", "operand 0 (%0) is not defined before this use");
  }
  // A value of another function.
  {
    Function g("other");
    Value* foreign = g.add_param("z", Type{i32(), {}});
    Function f("dom");
    Builder b(f);
    Value* n = f.add_param("n", Type{i32(), {}});
    b.value(OpKind::Add, {n, foreign});
    check_rejects(verify_error(f), "add", "dominance", "operand 1");
  }
}

TEST_CASE("verify: structure (parent pointers, result links, regions)") {
  auto fresh = [](Function& f) {
    Builder b(f);
    Value* n = f.add_param("n", Type{i32(), {}});
    Op& loop = b.for_loop(n, n, n, {n});
    b.set_block(&loop.body());
    Value* s = b.value(OpKind::Add, {loop.body().args[1], n});
    b.create(OpKind::Yield, {s});
    return &loop;
  };
  {
    Function f("s");
    Op* loop = fresh(f);
    CHECK(verify_error(f) == "<accepted>");
    loop->body().ops[0]->parent = &f.body;
    check_rejects(verify_error(f), "add", "structure", "its parent pointer is not the block holding it");
  }
  {
    Function f("s");
    Op* loop = fresh(f);
    loop->body().parent_op = nullptr;
    check_rejects(verify_error(f), "for", "structure", "its region's parent_op does not point back at it");
  }
  {
    Function f("s");
    Op* loop = fresh(f);
    loop->results[0]->index = 3;
    check_rejects(verify_error(f), "for", "structure", "result 0 does not point back at its op");
  }
  {
    Function f("s");
    Op* loop = fresh(f);
    loop->regions.clear();
    check_rejects(verify_error(f), "for", "structure", "expected 1 region(s), got 0");
  }
  {
    Function f("s");
    Op* loop = fresh(f);
    loop->body().ops[0]->operands[1] = nullptr;
    check_rejects(verify_error(f), "add", "structure", "operand 1 is null");
  }
  {
    Function f("s");
    Op* loop = fresh(f);
    loop->body().args[1]->index = 0;
    check_rejects(verify_error(f), "for", "structure", "body argument 1 does not point back at its block");
  }
  {
    Function f("s");
    fresh(f);
    f.params.pop_back();
    CHECK(verify_error(f) == "verify: kernel @s: 0 parameters but 1 entry block arguments");
  }
}

TEST_CASE("verify: an error deep in nested loops names that op's position in print order") {
  auto f = testing::build_all_ops_kernel();
  // Break the first op of the inner loop's body: add an f16 tile to an f32 one.
  Op& outer = *std::find_if(f->body.ops.begin(), f->body.ops.end(),
                            [](const auto& op) { return op->kind == OpKind::For; })->get();
  Op& inner = *outer.body().ops[0];
  REQUIRE(inner.kind == OpKind::For);
  Op& target = *inner.body().ops[0];
  Value* half = nullptr;
  int k = 0, index = -1;
  walk(f->body, [&](const Op& op) {
    if (op.kind == OpKind::Load && op.results[0]->type.dtype.scalar == Scalar::f16) half = op.results[0];
    if (&op == &target) index = k;
    ++k;
  });
  REQUIRE(half != nullptr);
  target.operands[1] = half;
  REQUIRE(index > 90);
  // The printer names the op's result; find that name in the printed text.
  std::string text = print(*f);
  // The broken add is the one whose second operand is the f16 load (%17) and whose type is f32.
  size_t at = std::string::npos;
  for (size_t p = text.find(" = add %"); p != std::string::npos; p = text.find(" = add %", p + 1)) {
    const size_t eol = text.find('\n', p);
    if (text.substr(p, eol - p).find(", %17 : f32[128]") != std::string::npos) at = p;
  }
  REQUIRE(at != std::string::npos);
  std::string name = text.substr(text.rfind(' ', at - 1) + 1, at - text.rfind(' ', at - 1) - 1);
  CHECK(verify_error(*f) == fmt::format("verify: op 'add' (#{} in kernel @all_ops, result {}, kernels/all_ops.cpp:40): "
                                        "rule Arith: operands must have the same type, got f32[128] and f16[128]",
                                        index, name));
}

TEST_CASE("verify: unpack's zero point is a field value, and a nonzero one needs a signed or float result") {
  auto body = [](const std::string& attrs, const std::string& result) {
    return "  %0 = constant {value = 7} : u32[4]\n  %1 = unpack %0 {axis = 0, bits = 4" + attrs + "} : " + result + "\n";
  };
  CHECK(verify_text(body(", zero = 8", "f16[32]")) == "<accepted>");
  CHECK(verify_text(body(", zero = 15", "i8[32]")) == "<accepted>");
  CHECK(verify_text(body(", zero = 0", "u8[32]")) == "<accepted>");
  check_rejects(verify_text(body(", zero = 16", "f16[32]")), "unpack", "rule Unpack",
                "zero must be a field value, 0..15, got 16");
  check_rejects(verify_text(body(", zero = -1", "f16[32]")), "unpack", "rule Unpack", "got -1");
  check_rejects(verify_text(body(", zero = 8", "u16[32]")), "unpack", "rule Unpack",
                "needs a signed or float result");
  check_rejects(verify_text(body(", zero = 1.5", "f16[32]")), "unpack", "attributes", "zero");
}
