// Element, pointer and tile types: names, widths, kinds and printing.
#include <doctest/doctest.h>

#include "tessel/ir/types.hpp"

using namespace tessel::ir;

TEST_CASE("types: every scalar's name, width and kind") {
  struct Row {
    Scalar s;
    const char* name;
    int bits;
    bool is_float;
    int bytes;
  };
  const Row rows[] = {
      {Scalar::i1, "i1", 1, false, 1},     {Scalar::i8, "i8", 8, false, 1},
      {Scalar::i16, "i16", 16, false, 2},  {Scalar::i32, "i32", 32, false, 4},
      {Scalar::i64, "i64", 64, false, 8},  {Scalar::f16, "f16", 16, true, 2},
      {Scalar::bf16, "bf16", 16, true, 2}, {Scalar::f32, "f32", 32, true, 4},
      {Scalar::f64, "f64", 64, true, 8},
  };
  for (const Row& r : rows) {
    INFO(r.name);
    CHECK(name_of(r.s) == r.name);
    CHECK(bit_width(r.s) == r.bits);
    CHECK(is_float(r.s) == r.is_float);
    CHECK(is_int(r.s) == !r.is_float);
    REQUIRE(scalar_from_name(r.name).has_value());
    CHECK(*scalar_from_name(r.name) == r.s);
    DType d{r.s};
    CHECK(d.str() == r.name);
    CHECK(d.bytes() == r.bytes);
    CHECK(d.is_float() == r.is_float);
    CHECK(d.is_int() == !r.is_float);
    CHECK(d.is_bool() == (r.s == Scalar::i1));
    DType p = d.pointer_to();
    CHECK(p.str() == std::string("ptr<") + r.name + ">");
    CHECK(p.bytes() == 8);  // a global pointer, whatever it points to
    CHECK_FALSE(p.is_float());
    CHECK_FALSE(p.is_int());
    CHECK_FALSE(p.is_bool());
    CHECK(p.pointee() == d);
    CHECK(p != d);
  }
  CHECK_FALSE(scalar_from_name("f8").has_value());
  CHECK_FALSE(scalar_from_name("I32").has_value());
  CHECK_FALSE(scalar_from_name("").has_value());
}

TEST_CASE("types: tile types print, count and compare") {
  Type s{f32(), {}};
  CHECK(s.is_scalar());
  CHECK(s.rank() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.str() == "f32");

  Type t{DType{Scalar::f16, true}, {64, 128}};
  CHECK_FALSE(t.is_scalar());
  CHECK(t.rank() == 2);
  CHECK(t.numel() == 8192);
  CHECK(t.str() == "ptr<f16>[64,128]");

  Type odd{i32(), {3, 5, 7}};
  CHECK(odd.numel() == 105);
  CHECK(odd.str() == "i32[3,5,7]");
  CHECK(odd.with_dtype(i1()).str() == "i1[3,5,7]");
  CHECK(odd.with_shape({9}).str() == "i32[9]");
  CHECK(odd.with_shape({9}) != odd);
  CHECK(odd.with_dtype(i64()) != odd);
  CHECK(odd.with_dtype(i32()) == odd);

  CHECK(shape_str({}) == "[]");
  CHECK(shape_str({17}) == "[17]");
  CHECK(shape_str({1, 2, 3}) == "[1,2,3]");
  CHECK(Type{DType{Scalar::bf16}, {1}}.str() == "bf16[1]");
  CHECK(Type{i64().pointer_to(), {}}.str() == "ptr<i64>");
}
