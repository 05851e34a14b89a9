// The program generator's state, shared by its two halves: program_gen.cpp (the op DAG, loops,
// guards) and program_mem.cpp (buffers, data, loads, stores, atomics, the launch).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "error_model.hpp"
#include "program_gen.hpp"
#include "tessel/ir/builder.hpp"

namespace fuzz {

using tessel::ir::Builder;
using tessel::ir::DType;
using tessel::ir::Function;
using tessel::ir::Op;
using tessel::ir::OpKind;
using tessel::ir::Scalar;
using tessel::ir::Shape;
using tessel::ir::Type;
using tessel::ir::Value;

// splitmix64: a small generator whose stream is the same on every platform and library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x6A09E667F3BCC909ull) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t n) { return n <= 1 ? 0 : static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  int64_t range(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }  // inclusive
  bool coin(double p = 0.5) { return uniform() < p; }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(below(static_cast<int64_t>(v.size())))]; }

 private:
  uint64_t s_;
};

class Gen {
 public:
  explicit Gen(uint64_t seed);
  Program run();

  // ---- program_gen.cpp: values, the DAG, loops ----
  Value* emit(OpKind k, std::vector<Value*> operands, std::vector<Type> types = {},
              std::vector<tessel::ir::Attr> attrs = {});
  const Info& info(const Value* v) const;
  void add(Value* v);  // into the pool of data values in scope
  Value* c_int(int64_t v, Scalar s, const Shape& sh = {});
  Value* c_float(double v, Scalar s, const Shape& sh = {});
  Value* shape_to(Value* v, const Shape& target);   // null when no broadcast/trans/reshape fits
  Value* dtype_to(Value* v, DType d);               // null when the model forbids the cast
  Value* guard(Value* v, double bound);             // finite and |v| <= bound (floats)
  Value* operand(DType d, const Shape& sh, bool need_exact);
  Value* pick(bool (*pred)(Gen&, Value*));
  bool llvm_minmax_hazard(OpKind k, Value* a, Value* b) const;  // program_gen.cpp says why
  void step();
  void gen_binary();
  void gen_unary();
  void gen_fma();
  void gen_compare();
  void gen_select();
  void gen_cast();
  void gen_reduce();
  void gen_scan();
  void gen_shape();
  void gen_loop();
  std::vector<Info> analyze_loop(const Op& loop);
  void analyze_block(const tessel::ir::Block& b);

  // ---- program_mem.cpp: buffers and memory access ----
  void setup_kernel();                               // params, index tiles, first loads
  size_t new_buffer(const std::string& name, Scalar elem, size_t count, bool written);
  Value* buffer_param(size_t buffer);
  Value* int_param(const std::string& name, Scalar s, int64_t v);
  Value* float_param(const std::string& name, Scalar s, double v);
  void fill_input(size_t buffer, bool allow_nan);
  void gen_load(Value* iv = nullptr, int64_t slices = 0);
  Value* index_tile(const Shape& sh);                // reshape(arange(numel), sh)
  void gen_outputs();
  void store_value(Value* v);
  void atomic_value(Value* v);
  Scalar random_scalar();
  Scalar palette_scalar();
  // The GPU launcher packs at most kMaxParams arguments (jit/src/device/cuda_device.cpp; a kernel
  // with more fails at launch): true when fewer than `room` more would fit.
  static constexpr size_t kMaxParams = 32;
  bool params_full(size_t room) const { return f->params.size() + room > kMaxParams; }

  Rng r;
  Program p;
  Function* f = nullptr;
  std::unique_ptr<Builder> b;
  Context ctx;
  std::unordered_map<const Value*, Info> info_;  // lookups only (never iterated)
  std::unordered_map<const Op*, Info> mem_;      // what each load / atomic reads
  std::unordered_map<const Op*, int64_t> trips_; // each loop's largest trip count
  std::unordered_map<const Value*, int> uses_;
  std::vector<Info> buf_info_;                    // what each buffer holds before the launch
  std::optional<Info> pending_mem_;               // what the next load / atomic emitted reads
  std::vector<Value*> pool_;                      // data values in scope, in creation order
  std::vector<Scalar> palette_;                   // the dtypes this program favours

  // The kernel's index space and tiles.
  bool two_d = false;
  int64_t n = 0, R = 0, C = 0, B = 0, BM = 0, BN = 0;
  Shape tile;              // [B] or [BM, BN]
  Value* pid_lin = nullptr;  // the program's linear index (i32 scalar)
  Value* offs = nullptr;     // 1-D: i32[B]; 2-D: rows * C + cols, i32[BM,BN]
  Value* mask = nullptr;     // i1 tile: the element is inside the index space
  Value* rows = nullptr;     // 2-D: i32[BM], i32[BN] and their broadcasts to the tile
  Value* cols = nullptr;
  Value* rows_t = nullptr;
  Value* cols_t = nullptr;
  Value* n_val = nullptr;    // 1-D: n; 2-D: R and C (i32 scalars)
  Value* r_val = nullptr;
  Value* c_val = nullptr;
  int64_t grid_total = 1;
  int loop_depth = 0;
  int n_inputs = 0, n_outputs = 0, n_ops = 0;
};

// Every value must be a power of two >= 1 for a tile dim; these are the shapes' numel helpers.
int64_t numel(const Shape& s);

}  // namespace fuzz
