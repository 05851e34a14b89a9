// Tuning keys: bucketing, ranges, key strings and their parsing, the signature.
#include <doctest/doctest.h>

#include <limits>
#include <random>

#include "tessel/jit/tune/key.hpp"
#include "tessel/samples/elementwise_kernels.hpp"

using namespace tessel;
using jit::tune::Bucket;
using jit::tune::KeySpec;

TEST_CASE("power-of-two bucketing rounds up; exact keeps the value") {
  CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, -5) == 1);
  CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, 0) == 1);
  CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, 1) == 1);
  CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, 2) == 2);
  CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, 3) == 4);
  CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, 1000) == 1024);
  CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, 1025) == 2048);
  CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, 1 << 20) == 1 << 20);
  CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, (int64_t{1} << 62) + 1) == std::numeric_limits<int64_t>::max());
  CHECK(KeySpec::bucket_value(Bucket::Exact, 1000) == 1000);
  CHECK(KeySpec::bucket_value(Bucket::Exact, -7) == -7);
}

TEST_CASE("bucket ranges hold exactly the values of the bucket") {
  using R = std::pair<int64_t, int64_t>;
  CHECK(KeySpec::bucket_range(Bucket::PowerOfTwo, 1000) == R{513, 1024});
  CHECK(KeySpec::bucket_range(Bucket::PowerOfTwo, 1024) == R{513, 1024});
  CHECK(KeySpec::bucket_range(Bucket::PowerOfTwo, 3) == R{3, 4});
  CHECK(KeySpec::bucket_range(Bucket::PowerOfTwo, 2) == R{2, 2});
  CHECK(KeySpec::bucket_range(Bucket::PowerOfTwo, 1) == R{std::numeric_limits<int64_t>::min(), 1});
  CHECK(KeySpec::bucket_range(Bucket::Exact, 77) == R{77, 77});
  std::mt19937_64 rng(3);
  for (int t = 0; t < 2000; ++t) {
    const int64_t v = static_cast<int64_t>(rng() >> (rng() % 63));
    const int64_t b = KeySpec::bucket_value(Bucket::PowerOfTwo, v);
    auto [lo, hi] = KeySpec::bucket_range(Bucket::PowerOfTwo, v);
    REQUIRE(lo <= v);
    REQUIRE(v <= hi);
    CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, lo) == b);
    CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, hi) == b);
    if (lo > std::numeric_limits<int64_t>::min()) CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, lo - 1) != b);
    if (hi < std::numeric_limits<int64_t>::max()) CHECK(KeySpec::bucket_value(Bucket::PowerOfTwo, hi + 1) != b);
  }
}

TEST_CASE("key strings bucket values in declared order and carry the signature") {
  KeySpec k{{{"rows", Bucket::Exact}, {"cols", Bucket::PowerOfTwo}}};
  const int64_t v[] = {8191, 3000};
  CHECK(k.key_string(v, "f32,f32") == "rows=8191,cols=4096;sig=f32,f32");
  const int64_t w[] = {8191, 4096};
  CHECK(k.key_string(w, "f32,f32") == k.key_string(v, "f32,f32"));
  CHECK(k.key_string(w, "f16,f16") != k.key_string(v, "f32,f32"));
  const int64_t one[] = {5};
  CHECK_THROWS_AS(k.key_string(one, "f32"), std::invalid_argument);
  CHECK(KeySpec{}.key_string({}, "f32") == ";sig=f32");
}

TEST_CASE("parse_key reads back the bucketed values and the signature") {
  KeySpec k{{{"m", Bucket::PowerOfTwo}, {"n", Bucket::Exact}}};
  const int64_t v[] = {300, -17};
  auto p = k.parse_key(k.key_string(v, "f32,i64"));
  CHECK(p.values == std::vector<int64_t>{512, -17});
  CHECK(p.signature == "f32,i64");
  CHECK_THROWS_AS(k.parse_key("m=512;sig=f32"), std::invalid_argument);
  CHECK_THROWS_AS(k.parse_key("n=1,m=512;sig=f32"), std::invalid_argument);
  CHECK_THROWS_AS(k.parse_key("m=512,n=1,q=2;sig=f32"), std::invalid_argument);
  CHECK_THROWS_AS(k.parse_key("m=5x,n=1;sig=f32"), std::invalid_argument);
  CHECK_THROWS_AS(k.parse_key("m=512,n=1"), std::invalid_argument);
}

TEST_CASE("the signature lists the pointer parameters' element types") {
  jit::Kernel add{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 128}}};
  CHECK(jit::tune::signature_of(*add.build_ir({})) == "f32,f32,f32");
}
