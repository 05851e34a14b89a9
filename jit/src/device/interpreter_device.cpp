// The CPU interpreter as a Device: aligned host allocations and interpreted launches.
#include "interpreter_device.hpp"

#include <fmt/format.h>

#include <algorithm>
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

  void launch(Grid grid, std::span<const RawArg> args, StreamRef) override {
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
    try {
      interp::run(*fn_, interp::Grid{grid.x, grid.y, grid.z}, values, mem);
    } catch (const interp::InterpError& e) {
      // An access outside every buffer is often memory the caller owns and did not register
      // (or whose ExternalMemory has ended): say where the interpreter's buffers come from.
      const std::string msg = e.what();
      if (msg.find("outside every buffer") == std::string::npos) throw;
      throw interp::InterpError(msg + " (the interpreter's buffers are its allocations and the host memory "
                                      "registered with it: ExternalMemory, Device::register_external)");
    }
  }

  const ExecutableInfo& info() const override { return info_; }

 private:
  InterpreterDevice& dev_;
  std::shared_ptr<const ir::Function> fn_;
  ExecutableInfo info_;
};

// The entry of `m` (non-overlapping [address, address + size) ranges) whose range holds all of
// [addr, addr + bytes), or null.
const std::pair<const uint64_t, size_t>* containing(const std::map<uint64_t, size_t>& m, uint64_t addr,
                                                    size_t bytes) {
  auto it = m.upper_bound(addr);
  if (it == m.begin()) return nullptr;
  --it;
  // Written so that addr + bytes cannot wrap. The offset is compared with the size first: a range
  // that ends before addr must not pass through first + size - addr wrapping around.
  const uint64_t offset = addr - it->first;
  return offset < it->second && bytes <= it->second - offset ? &*it : nullptr;
}

// The entry of `m` overlapping [p, end), or null. Only the last range starting before `end` can:
// the ranges before it end before it starts. A zero-sized allocation counts as one byte (it
// holds an address of its own).
const std::pair<const uint64_t, size_t>* overlapping(const std::map<uint64_t, size_t>& m, uint64_t p, uint64_t end) {
  auto it = m.lower_bound(end);
  if (it == m.begin()) return nullptr;
  --it;
  return it->first + std::max<size_t>(it->second, 1) > p ? &*it : nullptr;
}

}  // namespace

InterpreterDevice::~InterpreterDevice() {
  // Only the device's own allocations: registered regions belong to the caller.
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
  if (it == blocks_.end()) {
    if (external_.count(addr))
      throw std::invalid_argument(fmt::format("free of 0x{:x}: the address is registered external memory, which its "
                                              "owner frees (unregister it: unregister_external, or end the "
                                              "ExternalMemory)",
                                              addr));
    throw std::invalid_argument(fmt::format("free of unknown address 0x{:x}", addr));
  }
  std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(addr)));
  blocks_.erase(it);
}

void InterpreterDevice::check_range(uint64_t addr, size_t bytes, const char* what) const {
  std::lock_guard lock(mu_);
  if (!containing(blocks_, addr, bytes) && !containing(external_, addr, bytes))
    throw std::out_of_range(fmt::format("{}: {} bytes at 0x{:x} are not inside one allocation or registered region",
                                        what, bytes, addr));
}

void InterpreterDevice::register_external(const void* p, size_t bytes) {
  const auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  if (!p) throw std::invalid_argument(fmt::format("register_external: a null pointer ({} bytes)", bytes));
  if (!bytes) throw std::invalid_argument(fmt::format("register_external: an empty region at 0x{:x} (0 bytes)", addr));
  if (bytes > UINT64_MAX - addr)
    throw std::invalid_argument(
        fmt::format("register_external: {} bytes at 0x{:x} wrap around the address space", bytes, addr));
  const uint64_t end = addr + bytes;
  std::lock_guard lock(mu_);
  // Regions must not overlap: an address then has one owner, and unregistering one region
  // cannot take away memory another still covers.
  if (auto* b = overlapping(blocks_, addr, end))
    throw std::invalid_argument(fmt::format("register_external: {} bytes at 0x{:x} overlap the interpreter's "
                                            "allocation of {} bytes at 0x{:x}",
                                            bytes, addr, b->second, b->first));
  if (auto* r = overlapping(external_, addr, end))
    throw std::invalid_argument(fmt::format("register_external: {} bytes at 0x{:x} overlap the region of {} bytes "
                                            "at 0x{:x} registered before",
                                            bytes, addr, r->second, r->first));
  external_[addr] = bytes;
}

void InterpreterDevice::unregister_external(const void* p) {
  const auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  std::lock_guard lock(mu_);
  auto it = external_.find(addr);
  if (it == external_.end())
    throw std::invalid_argument(fmt::format("unregister_external: no region is registered at 0x{:x} (give the "
                                            "address register_external was given)",
                                            addr));
  external_.erase(it);
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
  std::vector<std::pair<uint64_t, size_t>> r(blocks_.begin(), blocks_.end());
  r.insert(r.end(), external_.begin(), external_.end());
  return r;
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
