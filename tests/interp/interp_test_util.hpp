// Helpers for interpreter tests: kernel-building shorthands and host buffers as memory regions.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tessel/interp/interpreter.hpp"
#include "tessel/ir/builder.hpp"

namespace interp_test {

using namespace tessel;
using namespace tessel::ir;
using namespace tessel::interp;

inline Type scalar_t(Scalar s) { return Type{DType{s, false}, {}}; }
inline Type ptr_t(Scalar s) { return Type{DType{s, true}, {}}; }

template <class T>
MemRegion region(std::vector<T>& v) {
  return MemRegion{v.data(), v.size() * sizeof(T), true};
}
template <class T>
MemRegion read_only(const std::vector<T>& v) {
  return MemRegion{v.data(), v.size() * sizeof(T), false};
}

inline Value* bin(Builder& b, OpKind k, Value* x, Value* y) { return b.value(k, {x, y}); }

// offs = program_id(0) * block + arange(0, block), an i32[block] tile.
inline Value* block_offsets(Builder& b, int64_t block) {
  Value* base = bin(b, OpKind::Mul, b.program_id(0), b.const_int(block, scalar_t(Scalar::i32)));
  return bin(b, OpKind::Add, b.splat(base, {block}), b.arange(0, block));
}

// A 1-D elementwise kernel: params in0..in{k-1} (ptr<ins[i]>), out (ptr<out>), n (i32);
// each program loads its block of every input under offs < n, applies `body` and stores.
using MapBody = std::function<Value*(Builder&, const std::vector<Value*>&)>;
inline void build_map_kernel(Function& f, const std::vector<Scalar>& ins, Scalar out,
                             const MapBody& body, int64_t block) {
  std::vector<Value*> in_ptrs;
  for (size_t i = 0; i < ins.size(); ++i)
    in_ptrs.push_back(f.add_param("in" + std::to_string(i), ptr_t(ins[i])));
  Value* out_ptr = f.add_param("out", ptr_t(out));
  Value* n = f.add_param("n", scalar_t(Scalar::i32));
  Builder b(f);
  Value* offs = block_offsets(b, block);
  Value* mask = bin(b, OpKind::CmpLt, offs, b.splat(n, {block}));
  std::vector<Value*> loaded;
  for (Value* p : in_ptrs)
    loaded.push_back(b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(p, {block}), offs), mask}));
  Value* r = body(b, loaded);
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out_ptr, {block}), offs), r, mask});
}

// Runs `f` on the interpreter. In test_interp_gpu (TESSEL_INTERP_TESTS_ON_GPU) it then runs
// the same kernel on the GPU over the same inputs and fails the test case where the GPU's
// results differ from the interpreter's (tests/interp_gpu/interp_on_gpu.cpp). Either way the
// buffers hold the interpreter's results afterwards, which the test checks against its own
// host reference.
void run_checked_on_gpu(const Function& f, Grid grid, std::span<const ArgValue> args,
                        std::span<const MemRegion> memory);
inline void run_kernel(const Function& f, Grid grid, std::span<const ArgValue> args,
                       std::span<const MemRegion> memory) {
#ifdef TESSEL_INTERP_TESTS_ON_GPU
  run_checked_on_gpu(f, grid, args, memory);
#else
  tessel::interp::run(f, grid, args, memory);
#endif
}

// Within its scope run_kernel() does not compare with the GPU, for behaviour the interpreter
// defines and the GPU leaves open (the order of racing stores, integer division by zero):
// `InterpreterOnly why("the last program's store wins only here");`.
class InterpreterOnly {
 public:
  explicit InterpreterOnly(const char* why);
  ~InterpreterOnly();
  InterpreterOnly(const InterpreterOnly&) = delete;
  InterpreterOnly& operator=(const InterpreterOnly&) = delete;

 private:
  const char* prev_;
};

// Within its scope the GPU comparison skips the elements `skip(region, index)` selects: results
// the contract leaves unspecified, such as an integer division by zero or the old values that
// racing atomics return (`region` indexes the memory span passed to run_kernel).
class GpuUnspecified {
 public:
  using Skip = std::function<bool(size_t region, size_t index)>;
  GpuUnspecified(const char* why, Skip skip);
  ~GpuUnspecified();
  GpuUnspecified(const GpuUnspecified&) = delete;
  GpuUnspecified& operator=(const GpuUnspecified&) = delete;

 private:
  const GpuUnspecified* prev_;
  const char* why_;
  Skip skip_;
  friend struct GpuUnspecifiedAccess;
};
#ifndef TESSEL_INTERP_TESTS_ON_GPU
inline InterpreterOnly::InterpreterOnly(const char* why) : prev_(why) {}
inline InterpreterOnly::~InterpreterOnly() = default;
inline GpuUnspecified::GpuUnspecified(const char* why, Skip skip) : prev_(nullptr), why_(why), skip_(std::move(skip)) {}
inline GpuUnspecified::~GpuUnspecified() = default;
#endif

// A poison value for outputs, so an element the kernel forgot to write shows up.
template <class T>
T poison() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
  else return static_cast<T>(0x5A5A5A5A5A5A5A5Aull);
}

// Runs a map kernel over n elements of inputs of one C type; returns the output.
template <class Tout, class Tin>
std::vector<Tout> run_map(const Function& f, const std::vector<std::vector<Tin>>& ins, int64_t block) {
  const size_t n = ins.at(0).size();
  std::vector<Tout> out(n, poison<Tout>());
  std::vector<ArgValue> args;
  std::vector<MemRegion> mem;
  for (const auto& v : ins) {
    args.push_back(ArgValue::pointer(v.data()));
    mem.push_back(read_only(v));
  }
  args.push_back(ArgValue::pointer(out.data()));
  mem.push_back(region(out));
  args.push_back(ArgValue::integer(static_cast<int64_t>(n)));
  run_kernel(f, Grid{(static_cast<int64_t>(n) + block - 1) / block}, args, mem);
  return out;
}

// Distance in units in the last place between two finite floats of one sign convention.
inline int64_t ulp_distance(float a, float b) {
  if (a == b) return 0;
  auto key = [](float x) {
    int32_t i;
    std::memcpy(&i, &x, 4);
    return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
  };
  return std::llabs(key(a) - key(b));
}

// The message of the InterpError `fn` throws, or "<no InterpError>".
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InterpError& e) {
    return e.what();
  }
  return "<no InterpError>";
}

}  // namespace interp_test
