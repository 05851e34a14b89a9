// Value slots, memory-region checks and error messages shared by every op family.
#include "machine.hpp"

#include <fmt/format.h>

#include <limits>

namespace tessel::interp {

Machine::Machine(const ir::Function& f, Grid g, std::span<const MemRegion> memory)
    : fn(f), grid(g), values_(f.num_values()), memory_(memory.begin(), memory.end()) {}

const Tile& Machine::in(const ir::Op& op, int operand) const {
  const ir::Value* v = op.operands.at(operand);
  const Tile& t = values_.at(v->id);
  size_t have = holds_floats(v->type.dtype) ? t.f.size() : t.i.size();
  if (have != static_cast<size_t>(v->type.numel()))
    malformed(op, fmt::format("operand {} is used before it is defined", operand));
  return t;
}

Tile& Machine::out(const ir::Value* v) {
  Tile& t = values_.at(v->id);
  size_t n = static_cast<size_t>(v->type.numel());
  if (holds_floats(v->type.dtype)) t.f.resize(n);
  else t.i.resize(n);
  return t;
}

void Machine::check_access(const ir::Op& op, int64_t k, uint64_t addr, int bytes, bool write,
                           bool masked) {
  auto holds = [&](const MemRegion& r) {
    uint64_t base = reinterpret_cast<uintptr_t>(r.base);
    return addr >= base && r.bytes >= static_cast<size_t>(bytes) &&
           addr - base <= r.bytes - static_cast<size_t>(bytes);
  };
  const char* verb = write ? "writes" : "reads";
  if (addr % static_cast<uint64_t>(bytes) != 0)
    fail(op, fmt::format("{} {} {} bytes at {:#x} which is not aligned to {} bytes",
                         element_name(op, k), verb, bytes, addr, bytes));
  if (last_hit_ < memory_.size() && holds(memory_[last_hit_]) &&
      (!write || memory_[last_hit_].writable))
    return;
  bool read_only_hit = false;
  for (size_t r = 0; r < memory_.size(); ++r) {
    if (!holds(memory_[r])) continue;
    if (write && !memory_[r].writable) {
      read_only_hit = true;
      continue;
    }
    last_hit_ = r;
    return;
  }
  if (read_only_hit)
    fail(op, fmt::format("{} writes {} bytes at {:#x} which is inside a read-only buffer",
                         element_name(op, k), bytes, addr));
  // Name the nearest buffer: an off-by-one past the end is the usual bug.
  std::string nearest;
  uint64_t best = std::numeric_limits<uint64_t>::max();
  for (size_t r = 0; r < memory_.size(); ++r) {
    uint64_t base = reinterpret_cast<uintptr_t>(memory_[r].base);
    uint64_t end = base + memory_[r].bytes;
    if (addr < base && base - addr < best) {
      best = base - addr;
      nearest = fmt::format("; the access starts {} bytes before buffer #{} ({} bytes at {:#x})",
                            best, r, memory_[r].bytes, base);
    } else if (addr >= base && addr + bytes - end < best) {
      best = addr + bytes - end;
      nearest = fmt::format("; the access ends {} bytes past the end of buffer #{} ({} bytes at {:#x})",
                            best, r, memory_[r].bytes, base);
    }
  }
  fail(op, fmt::format("{} {} {} bytes at {:#x} which is outside every buffer ({}){}",
                       element_name(op, k), verb, bytes, addr,
                       masked ? "mask did not cover it" : "no mask", nearest));
}

std::string Machine::element_name(const ir::Op& op, int64_t k) const {
  const ir::Shape& shape = op.operands.at(0)->type.shape;
  if (shape.size() <= 1) return fmt::format("element {}", k);
  std::vector<int64_t> idx(shape.size());
  int64_t rest = k;
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = rest % shape[d];
    rest /= shape[d];
  }
  return fmt::format("element {} (index [{}])", k, fmt::join(idx, ","));
}

static std::string where(const ir::Op& op) {
  if (!op.loc.known()) return "an unknown location";
  return fmt::format("{}:{}", op.loc.file, op.loc.line);
}

void Machine::fail(const ir::Op& op, const std::string& what) const {
  throw InterpError(fmt::format("interpreter: op '{}' at {} in program ({},{},{}): {}",
                                op.name(), where(op), pid[0], pid[1], pid[2], what));
}

void Machine::malformed(const ir::Op& op, const std::string& what) const {
  throw VerifyError(fmt::format("interpreter: kernel '{}': op '{}' at {}: malformed IR: {}",
                                fn.name, op.name(), where(op), what));
}

int64_t Machine::int_attr(const ir::Op& op, std::string_view name) const {
  const ir::Attr* a = op.find_attr(name);
  if (!a || !std::holds_alternative<int64_t>(a->value))
    malformed(op, fmt::format("needs an integer attribute '{}'", name));
  return std::get<int64_t>(a->value);
}

void require_same_numel(const Machine& m, const ir::Op& op, int64_t numel) {
  for (size_t k = 0; k < op.operands.size(); ++k)
    if (op.operands[k]->type.numel() != numel)
      m.malformed(op, fmt::format("operand {} has type {} but the op works on {} elements",
                                  k, op.operands[k]->type.str(), numel));
}

}  // namespace tessel::interp
