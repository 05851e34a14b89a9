// Verifier rule Dot: legal dtype combinations and shapes, each rejection's message, and the text round trip.
#include <doctest/doctest.h>

#include <string>

#include "tessel/ir/builder.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"

using namespace tessel;
using namespace tessel::ir;

namespace {

const char* kParams =
    "%a: f16[32,64], %b: f16[64,16], %c: f32[32,16], %a8: i8[32,64], %b8: i8[64,16], %c8: i32[32,16], "
    "%af: f32[32,64], %bf: f32[64,16], %ab: bf16[32,64], %bb: bf16[64,16], %s8: f16[8,64], %b8x: f16[64,8], "
    "%c88: f32[8,8], %a24: f16[32,32], %b32: f16[32,16], %bk: f16[32,16], %ch: f16[32,16], "
    "%ae4: f8e4m3[32,64], %be4: f8e4m3[64,16], %be5: f8e5m2[64,16]";

std::string verify_text(const std::string& body) {
  auto f = parse(std::string("kernel @k(") + kParams + ") {\n" + body + "}\n");
  try {
    verify(*f);
  } catch (const VerifyError& e) {
    return e.what();
  }
  return "<accepted>";
}

void check_rejects(const std::string& body, std::string_view detail) {
  std::string message = verify_text(body);
  INFO(message);
  CHECK(message.rfind("verify: op 'dot' (#", 0) == 0);
  CHECK(message.find("): rule Dot: ") != std::string::npos);
  CHECK(message.find(detail) != std::string::npos);
}

}  // namespace

TEST_CASE("verify accepts dot on the five dtype combinations and round-trips it") {
  const std::string body =
      "  %0 = dot %a, %b, %c {allow_tf32 = 1} : f32[32,16]\n"
      "  %1 = dot %ab, %bb, %0 {allow_tf32 = 0} : f32[32,16]\n"
      "  %2 = dot %af, %bf, %1 {allow_tf32 = 1} : f32[32,16]\n"
      "  %3 = dot %af, %bf, %2 {allow_tf32 = 0} : f32[32,16]\n"
      "  %4 = dot %a8, %b8, %c8 {allow_tf32 = 0} : i32[32,16]\n"
      "  %5 = dot %ae4, %be4, %3 {allow_tf32 = 0} : f32[32,16]\n"
      "  %6 = dot %ae4, %be5, %5 {allow_tf32 = 0} : f32[32,16]\n";  // fp8 formats may mix
  CHECK(verify_text(body) == "<accepted>");
  auto f = parse(std::string("kernel @k(") + kParams + ") {\n" + body + "}\n");
  std::string text = print(*f);
  CHECK(text.find("%a, %b, %c {allow_tf32 = 1} : f32[32,16]") != std::string::npos);
  CHECK(print(*parse(text)) == text);
}

TEST_CASE("verify: rule Dot rejects bad dtypes, shapes and attributes") {
  check_rejects("  %0 = dot %a, %bb, %c {allow_tf32 = 1} : f32[32,16]\n", "unsupported dtypes f16 x bf16 -> f32");
  check_rejects("  %0 = dot %a, %b, %ch {allow_tf32 = 1} : f16[32,16]\n", "unsupported dtypes f16 x f16 -> f16");
  check_rejects("  %0 = dot %a8, %b8, %c {allow_tf32 = 1} : f32[32,16]\n", "unsupported dtypes i8 x i8 -> f32");
  check_rejects("  %0 = dot %ae4, %b, %c {allow_tf32 = 0} : f32[32,16]\n", "unsupported dtypes f8e4m3 x f16 -> f32");
  check_rejects("  %0 = dot %ae4, %be4, %ch {allow_tf32 = 0} : f16[32,16]\n",
                "unsupported dtypes f8e4m3 x f8e4m3 -> f16 (want f16/bf16/f32 x same -> f32, fp8 x fp8 -> f32");
  check_rejects("  %0 = dot %a, %bk, %c {allow_tf32 = 1} : f32[32,16]\n", "K mismatch: a is f16[32,64], b is f16[32,16]");
  check_rejects("  %0 = dot %a, %b, %c88 {allow_tf32 = 1} : f32[8,8]\n", "acc must be [32,16], got f32[8,8]");
  check_rejects("  %0 = dot %s8, %b8x, %c88 {allow_tf32 = 1} : f32[8,8]\n", "powers of two >= 16, got f16[8,64] x f16[64,8]");
  check_rejects("  %0 = dot %a, %b, %c {allow_tf32 = 2} : f32[32,16]\n", "allow_tf32 must be 0 or 1, got 2");
  // A missing flag is caught by the attribute declarations (ops.def) before the rule runs.
  CHECK(verify_text("  %0 = dot %a, %b, %c : f32[32,16]\n").find(
            "): attributes: missing attribute 'allow_tf32' (an integer), which 'dot' requires") != std::string::npos);
  check_rejects("  %0 = dot %a, %b, %c {allow_tf32 = 1} : f32[16,32]\n", "expected result type f32[32,16], got f32[16,32]");
  check_rejects("  %0 = dot %c, %c, %c {allow_tf32 = 1} : f32[32,16]\n", "K mismatch");
}

TEST_CASE("Builder::dot gives the accumulator's type and records allow_tf32") {
  Function f("k");
  Builder b(f);
  Value* a = f.add_param("a", Type{DType{Scalar::bf16}, {16, 32}});
  Value* bb = f.add_param("b", Type{DType{Scalar::bf16}, {32, 64}});
  Value* c = f.add_param("c", Type{f32(), {16, 64}});
  Value* r = b.dot(a, bb, c, false);
  CHECK(r->type == Type{f32(), {16, 64}});
  CHECK(r->def->int_attr("allow_tf32") == 0);
  CHECK(b.dot(a, bb, r)->def->int_attr("allow_tf32") == 1);
  CHECK_NOTHROW(verify(f));
}
