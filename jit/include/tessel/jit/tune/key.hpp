// Tuning keys: which argument values (bucketed or exact) and dtypes select a tuned config.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessel::ir {
struct Function;
}

namespace tessel::jit::tune {

// PowerOfTwo: value v -> the next power of two >= v (1 for v <= 1; values above 2^62 share one
// bucket, INT64_MAX). Exact: v itself.
enum class Bucket { Exact, PowerOfTwo };

struct KeyParam {
  std::string name;  // an integer kernel parameter (or a sample's size name)
  Bucket bucket = Bucket::PowerOfTwo;
  friend bool operator==(const KeyParam&, const KeyParam&) = default;
};

struct KeySpec {
  std::vector<KeyParam> params;

  // "n=1048576;sig=f32,f32,f32", "rows=8192,cols=4096;sig=f32,f32": bucketed values, names in
  // declared order, then the signature's dtypes (see signature_of) so dtypes are part of the key.
  // std::invalid_argument when values.size() != params.size().
  std::string key_string(std::span<const int64_t> values, std::string_view signature) const;
  static int64_t bucket_value(Bucket b, int64_t v);
  // The inclusive [lo, hi] range of raw values that share v's bucket (for bundles' TunedRule):
  // PowerOfTwo 1000 -> [513, 1024], 1 -> [INT64_MIN, 1]; Exact v -> [v, v].
  static std::pair<int64_t, int64_t> bucket_range(Bucket b, int64_t v);

  // The bucketed values and the signature of a key_string made with these params; nullopt-like
  // failure as std::invalid_argument when `key` has other names or is malformed.
  struct Parsed {
    std::vector<int64_t> values;
    std::string signature;
  };
  Parsed parse_key(std::string_view key) const;

  bool empty() const { return params.empty(); }
  friend bool operator==(const KeySpec&, const KeySpec&) = default;
};

// The dtypes that are part of a kernel's tuning key: its pointer parameters' element types, in
// parameter order, comma-separated ("f32,f32,f32" for add(x, y, out: ptr<f32>, n: i32)).
std::string signature_of(const ir::Function& f);

}  // namespace tessel::jit::tune
