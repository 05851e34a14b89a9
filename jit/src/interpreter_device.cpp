// The CPU interpreter as a Device: aligned host allocations and interpreted launches.
#include "interpreter_device.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "tessel/interp/interpreter.hpp"
#include "tessel/ir/error.hpp"
#include "tessel/jit/cache.hpp"

namespace tessel::jit {
namespace {

class InterpretedKernel final : public Executable {
 public:
  InterpretedKernel(InterpreterDevice& dev, std::shared_ptr<const ir::Function> f, const CompileOptions& o)
      : dev_(dev), fn_(std::move(f)) {
    info_.kernel_name = fn_->name;
    info_.num_warps = o.num_warps;
    info_.programs_per_cta = o.programs_per_cta;
    info_.warp_specialize = o.warp_specialize;  // recorded only: the interpreter runs programs, not warps
  }

  void launch(Grid grid, std::span<const RawArg> args) override {
    check_grid(info_, grid);  // the GPU's rule, so a launch that runs here runs there
    std::vector<interp::ArgValue> values;
    values.reserve(args.size());
    for (const RawArg& a : args) {
      switch (a.kind) {
        case RawArg::Pointer:
          values.push_back(interp::ArgValue::pointer(reinterpret_cast<const void*>(static_cast<uintptr_t>(a.addr))));
          break;
        case RawArg::Int: values.push_back(interp::ArgValue::integer(a.i)); break;
        case RawArg::Float: values.push_back(interp::ArgValue::floating(a.f)); break;
      }
    }
    std::vector<interp::MemRegion> mem;
    for (auto [addr, bytes] : dev_.regions())
      mem.push_back({reinterpret_cast<const void*>(static_cast<uintptr_t>(addr)), bytes, true});
    interp::run(*fn_, interp::Grid{grid.x, grid.y, grid.z}, values, mem);
  }

  const ExecutableInfo& info() const override { return info_; }

 private:
  InterpreterDevice& dev_;
  std::shared_ptr<const ir::Function> fn_;
  ExecutableInfo info_;
};

}  // namespace

InterpreterDevice::~InterpreterDevice() {
  for (auto& [addr, bytes] : blocks_) std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(addr)));
}

std::string InterpreterDevice::describe() const {
  return why_.empty() ? "CPU interpreter" : fmt::format("CPU interpreter ({})", why_);
}

uint64_t InterpreterDevice::alloc(size_t bytes) {
  // The machine's memory is the environment, not a tessel bug: a UserError (the CLI exits 1).
  auto fail = [bytes] {
    return UserError(fmt::format("cannot allocate {} bytes for an interpreter array: out of host memory (expected a "
                                 "problem size that fits this machine's memory)",
                                 bytes));
  };
  if (bytes > SIZE_MAX - 255) throw fail();  // the rounding below would wrap
  size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded);
  if (!p) throw fail();
  auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  std::lock_guard lock(mu_);
  blocks_[addr] = bytes;
  return addr;
}

void InterpreterDevice::free(uint64_t addr) {
  std::lock_guard lock(mu_);
  auto it = blocks_.find(addr);
  if (it == blocks_.end()) throw std::invalid_argument(fmt::format("free of unknown address 0x{:x}", addr));
  std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(addr)));
  blocks_.erase(it);
}

void InterpreterDevice::check_range(uint64_t addr, size_t bytes, const char* what) const {
  std::lock_guard lock(mu_);
  auto it = blocks_.upper_bound(addr);
  // Written so that addr + bytes cannot wrap: the block ends at first + size, which does not.
  if (it == blocks_.begin() || bytes > std::prev(it)->first + std::prev(it)->second - addr)
    throw std::out_of_range(fmt::format("{}: {} bytes at 0x{:x} are not inside one allocation", what, bytes, addr));
}

void InterpreterDevice::upload(uint64_t dst, const void* src, size_t bytes) {
  if (!bytes) return;
  check_range(dst, bytes, "upload");
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, bytes);
}

void InterpreterDevice::download(void* dst, uint64_t src, size_t bytes) {
  if (!bytes) return;
  check_range(src, bytes, "download");
  std::memcpy(dst, reinterpret_cast<const void*>(static_cast<uintptr_t>(src)), bytes);
}

void InterpreterDevice::fill_bytes(uint64_t dst, uint8_t byte, size_t bytes) {
  if (!bytes) return;
  check_range(dst, bytes, "fill");
  std::memset(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), byte, bytes);
}

void InterpreterDevice::copy(uint64_t dst, uint64_t src, size_t bytes) {
  if (!bytes) return;
  check_range(dst, bytes, "copy (destination)");
  check_range(src, bytes, "copy (source)");
  std::memmove(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)),
               reinterpret_cast<const void*>(static_cast<uintptr_t>(src)), bytes);
}

std::vector<std::pair<uint64_t, size_t>> InterpreterDevice::regions() const {
  std::lock_guard lock(mu_);
  return {blocks_.begin(), blocks_.end()};
}

std::shared_ptr<Executable> InterpreterDevice::compile(std::shared_ptr<const ir::Function> f,
                                                       const CompileOptions& opts) {
  // Nothing to cache (the interpreter runs the IR itself), but TESSEL_DUMP_DIR still gets the IR.
  if (std::optional<std::filesystem::path> dump = cache::Settings::from_env().dump_dir) {
    cache::KeyInputs in = cache::key_inputs(*f, opts, "interpreter", 0, "");
    cache::Entry e;
    e.meta = cache::describe(*f, in, cache::make_key(in));
    e.tir = std::move(in.ir_text);
    cache::dump_entry(*dump, e);
  }
  return std::make_shared<InterpretedKernel>(*this, std::move(f), opts);
}

}  // namespace tessel::jit
