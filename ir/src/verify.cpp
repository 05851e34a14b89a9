// Verifier: structure, SSA dominance, tile shapes, and each op's rule from ops.def.
#include "tessel/ir/verify.hpp"

#include <fmt/format.h>

#include <optional>

#include <string>
#include <unordered_map>

#include "tessel/ir/accessors.hpp"
#include "tessel/ir/builder.hpp"
#include "verify_attrs.hpp"

namespace tessel::ir {
namespace {

constexpr int64_t kMaxTileElements = int64_t{1} << 20;  // Triton's limit per tile

std::string_view rule_name(Rule r) {
  switch (r) {
    case Rule::Constant: return "Constant";
    case Rule::Axis: return "Axis";
    case Rule::Arange: return "Arange";
    case Rule::Splat: return "Splat";
    case Rule::Broadcast: return "Broadcast";
    case Rule::ExpandDims: return "ExpandDims";
    case Rule::Cast: return "Cast";
    case Rule::Arith: return "Arith";
    case Rule::Bitwise: return "Bitwise";
    case Rule::Compare: return "Compare";
    case Rule::UnaryNumeric: return "UnaryNumeric";
    case Rule::UnaryInt: return "UnaryInt";
    case Rule::UnaryFloat: return "UnaryFloat";
    case Rule::Fma: return "Fma";
    case Rule::Select: return "Select";
    case Rule::AddPtr: return "AddPtr";
    case Rule::Load: return "Load";
    case Rule::Store: return "Store";
    case Rule::Rand: return "Rand";
    case Rule::For: return "For";
    case Rule::Yield: return "Yield";
    case Rule::Reduce: return "Reduce";
    case Rule::ArgReduce: return "ArgReduce";
    case Rule::ReduceRegion: return "ReduceRegion";
    case Rule::Scan: return "Scan";
    case Rule::Reshape: return "Reshape";
    case Rule::Trans: return "Trans";
    case Rule::Atomic: return "Atomic";
    case Rule::Dot: return "Dot";
    case Rule::Hint: return "Hint";
    case Rule::Bitcast: return "Bitcast";
    case Rule::Unpack: return "Unpack";
  }
  return "?";
}

std::string_view result_rule_name(ResultRule r) {
  switch (r) {
    case ResultRule::None: return "None";
    case ResultRule::Explicit: return "Explicit";
    case ResultRule::SameAs0: return "SameAs0";
    case ResultRule::SameAs1: return "SameAs1";
    case ResultRule::BoolOf0: return "BoolOf0";
    case ResultRule::I32: return "I32";
    case ResultRule::F32Of1: return "F32Of1";
    case ResultRule::PointeeOf0: return "PointeeOf0";
  }
  return "?";
}

bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// Why `t` is not a legal value type, or "" if it is.
std::string type_problem(const Type& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d <= 0) return fmt::format("tile dims must be positive, got {}", t.str());
    if (d > kMaxTileElements) return fmt::format("tile {} has more than 2^20 elements", t.str());
    n *= d;  // stays below 2^40 * 2^20 before the check below stops it
    if (n > kMaxTileElements) return fmt::format("tile {} has more than 2^20 elements", t.str());
  }
  if (!is_pow2(n)) return fmt::format("tile {} has {} elements, not a power of two", t.str(), n);
  return "";
}

// The printer's names (%param, %0, %1, ... in print order), rebuilt only to report an error.
std::string printed_name(const Function& f, const Value* target) {
  std::unordered_map<const Value*, std::string> names;  // lookup only; never iterated
  int next = 0;
  auto name = [&](const Value* v) {
    if (!names.count(v)) names[v] = fmt::format("%{}", next++);
  };
  for (size_t i = 0; i < f.body.args.size() && i < f.params.size(); ++i)
    names[f.body.args[i]] = "%" + f.params[i].name;
  auto visit = [&](auto& self, const Block& b) -> void {
    for (const auto& op : b.ops) {
      for (const Value* v : op->results) name(v);
      for (const Value* v : op->operands) name(v);
      for (const auto& r : op->regions) {
        for (const Value* a : r->args) name(a);
        self(self, *r);
      }
    }
  };
  visit(visit, f.body);
  auto it = names.find(target);
  return it == names.end() ? "%?" : it->second;
}

class Verifier;

// The context one rule function checks in: the op, and how to report against its rule.
struct Check {
  const Verifier& v;
  const Op& op;
  std::string_view label;  // e.g. "rule Arith"

  [[noreturn]] void fail(const std::string& what) const;
  const Type& in(int i) const { return op.operands[i]->type; }
  const Type& out(int i) const { return op.results[i]->type; }
};

class Verifier {
 public:
  explicit Verifier(const Function& f) : fn_(f), visible_(f.num_values(), nullptr) {}

  void run() {
    if (fn_.params.size() != fn_.body.args.size())
      fail_kernel(fmt::format("{} parameters but {} entry block arguments", fn_.params.size(),
                              fn_.body.args.size()));
    if (fn_.body.parent_op != nullptr) fail_kernel("the entry block has a parent op");
    for (size_t i = 0; i < fn_.body.args.size(); ++i) {
      const Value* a = fn_.body.args[i];
      std::string p = type_problem(a->type);
      if (!p.empty()) fail_kernel(fmt::format("parameter %{}: {}", fn_.params[i].name, p));
    }
    block(fn_.body);
  }

  [[noreturn]] void fail_op(const Op& op, std::string_view label, const std::string& what) const {
    std::string where = fmt::format("#{} in kernel @{}", ordinal_, fn_.name);
    if (!op.results.empty()) where += ", result " + printed_name(fn_, op.results[0]);
    if (op.loc.known()) where += fmt::format(", {}:{}", op.loc.file, op.loc.line);
    throw VerifyError(fmt::format("verify: op '{}' ({}): {}: {}", op.name(), where, label, what));
  }

 private:
  [[noreturn]] void fail_kernel(const std::string& what) const {
    throw VerifyError(fmt::format("verify: kernel @{}: {}", fn_.name, what));
  }

  void define(const Value* v) {
    visible_[v->id] = v;
    defined_.push_back(v->id);
  }

  void value_shape(const Op& op, const Value* v) const {
    std::string p = type_problem(v->type);
    if (!p.empty()) fail_op(op, "tile shape", p);
  }

  // A block's arguments must link back to it; reported against the op owning the block.
  void block_arg_problem(const Block& b, const std::string& what) const {
    if (b.parent_op) fail_op(*b.parent_op, "structure", "body " + what);
    fail_kernel("entry block " + what);
  }

  // The arguments and ops of `b`, then the regions of each op.
  void block(const Block& b) {
    for (size_t i = 0; i < b.args.size(); ++i) {
      const Value* a = b.args[i];
      if (a == nullptr || a->def != nullptr || a->block != &b || a->index != static_cast<int>(i) ||
          a->id >= visible_.size())
        block_arg_problem(b, fmt::format("argument {} does not point back at its block", i));
      if (visible_[a->id]) block_arg_problem(b, fmt::format("argument {} is defined twice", i));
      define(a);
    }
    for (size_t i = 0; i < b.ops.size(); ++i) {
      const Op& op = *b.ops[i];
      const int mine = next_ordinal_++;
      ordinal_ = mine;
      op_in_block(op, b, i + 1 == b.ops.size());
      for (const auto& r : op.regions) {
        size_t mark = defined_.size();
        ordinal_ = mine;  // a region's argument problems are reported against this op
        block(*r);
        while (defined_.size() > mark) {  // a region's values end with it
          visible_[defined_.back()] = nullptr;
          defined_.pop_back();
        }
      }
      for (const Value* res : op.results) define(res);
    }
  }

  void op_in_block(const Op& op, const Block& b, bool last) const {
    if (static_cast<int>(op.kind) >= num_op_kinds())
      throw VerifyError(fmt::format("verify: op #{} in kernel @{} has unknown kind {}", ordinal_, fn_.name,
                                    static_cast<int>(op.kind)));
    const OpInfo& inf = op.info();
    if (op.parent != &b) fail_op(op, "structure", "its parent pointer is not the block holding it");
    // Loops and the generic reduce own exactly one region; nothing else has any.
    size_t want_regions = inf.effect == Effect::Loop || inf.rule == Rule::ReduceRegion ? 1 : 0;
    if (op.regions.size() != want_regions)
      fail_op(op, "structure", fmt::format("expected {} region(s), got {}", want_regions, op.regions.size()));
    for (const auto& r : op.regions)
      if (!r || r->parent_op != &op) fail_op(op, "structure", "its region's parent_op does not point back at it");
    for (size_t i = 0; i < op.results.size(); ++i) {
      const Value* r = op.results[i];
      if (r == nullptr || r->def != &op || r->block != &b || r->index != static_cast<int>(i) ||
          r->id >= visible_.size())
        fail_op(op, "structure", fmt::format("result {} does not point back at its op", i));
      if (visible_[r->id]) fail_op(op, "structure", fmt::format("result {} is defined twice", i));
    }
    // Dominance: every operand is visible here, i.e. defined earlier in this block or an
    // enclosing one (regions are scoped, so a loop body's values are gone after it).
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const Value* v = op.operands[i];
      if (v == nullptr) fail_op(op, "structure", fmt::format("operand {} is null", i));
      if (v->id >= visible_.size() || visible_[v->id] != v)
        fail_op(op, "dominance",
                fmt::format("operand {} ({}) is not defined before this use in an enclosing block", i,
                            printed_name(fn_, v)));
    }
    int n = op.num_operands();
    if (n < inf.min_operands || (inf.max_operands >= 0 && n > inf.max_operands)) {
      std::string want = inf.max_operands < 0                ? fmt::format("at least {}", inf.min_operands)
                         : inf.min_operands == inf.max_operands ? fmt::format("{}", inf.min_operands)
                                                                : fmt::format("{} to {}", inf.min_operands, inf.max_operands);
      fail_op(op, "operand count", fmt::format("expected {} operands, got {}", want, n));
    }
    if (inf.effect == Effect::Terminator && !last)
      fail_op(op, "terminator", "a terminator must be the last op of its block");
    if (last && b.parent_op != nullptr && inf.effect != Effect::Terminator)
      fail_op(op, "terminator", fmt::format("the body of '{}' must end with a terminator", b.parent_op->name()));
    // Attributes against ops.def's declarations first: the rules read them.
    if (std::string p = attr_problem(op); !p.empty()) fail_op(op, "attributes", p);
    check_rule(op);
    check_results(op);
    // Shapes last: a rule's complaint about the same value says more (e.g. arange's length).
    for (const Value* r : op.results) value_shape(op, r);
    for (const auto& r : op.regions)
      for (const Value* a : r->args)
        if (a) value_shape(op, a);
  }

  // Result count and types by ops.def's result rule (Explicit ones are checked by rules).
  void check_results(const Op& op) const {
    ResultRule rr = op.info().result;
    if (rr == ResultRule::Explicit) return;
    std::vector<Type> want = infer_result_types(op.kind, op.operands);
    std::string label = fmt::format("result rule {}", result_rule_name(rr));
    if (op.results.size() != want.size())
      fail_op(op, label, fmt::format("expected {} result(s), got {}", want.size(), op.results.size()));
    for (size_t i = 0; i < want.size(); ++i)
      if (op.results[i]->type != want[i])
        fail_op(op, label, fmt::format("expected result {} of type {}, got {}", i, want[i].str(),
                                       op.results[i]->type.str()));
  }

  void check_rule(const Op& op) const;

  const Function& fn_;
  // By Value::id: the value itself while it is defined and in scope (a value of another
  // function with the same id does not match).
  std::vector<const Value*> visible_;
  std::vector<uint32_t> defined_;  // ids in definition order, for leaving scopes
  int ordinal_ = 0;                // index in print order of the op being checked, for messages
  int next_ordinal_ = 0;
};

void Check::fail(const std::string& what) const { v.fail_op(op, label, what); }

// ---- shared checks ----------------------------------------------------------------------

void one_result(const Check& c) {
  if (c.op.results.size() != 1)
    c.fail(fmt::format("expected 1 result, got {}", c.op.results.size()));
}

void same_type(const Check& c, int a, int b) {
  if (c.in(a) != c.in(b))
    c.fail(fmt::format("operands must have the same type, got {} and {}", c.in(a).str(), c.in(b).str()));
}

void same_shape(const Check& c, const Type& a, const Type& b, std::string_view what) {
  if (a.shape != b.shape)
    c.fail(fmt::format("{} must have the same shape, got {} and {}", what, a.str(), b.str()));
}

void mask_like(const Check& c, int mask, const Type& like) {
  const Type& m = c.in(mask);
  if (!m.dtype.is_bool()) c.fail(fmt::format("mask must be i1, got {}", m.str()));
  same_shape(c, m, like, "mask and pointer");
}

int64_t int_attr(const Check& c, std::string_view name) {
  const Attr* a = c.op.find_attr(name);
  if (!a || !std::holds_alternative<int64_t>(a->value))
    c.fail(fmt::format("expected an integer attribute '{}'", name));
  return std::get<int64_t>(a->value);
}

// ---- one function per Rule --------------------------------------------------------------

void rule_constant(const Check& c) {
  one_result(c);
  const Type& t = c.out(0);
  const Attr* a = c.op.find_attr("value");
  if (!a) c.fail("expected a 'value' attribute");
  if (t.dtype.ptr) c.fail(fmt::format("a constant cannot be a pointer, got {}", t.str()));
  bool is_float_attr = std::holds_alternative<double>(a->value);
  if (t.dtype.is_float() && !is_float_attr)
    c.fail(fmt::format("a {} constant needs a float value, got integer {}", t.str(), std::get<int64_t>(a->value)));
  if (t.dtype.is_int()) {
    if (is_float_attr) c.fail(fmt::format("a {} constant needs an integer value, got a float", t.str()));
    // The value must be representable in the width, read as signed or as unsigned.
    int bits = bit_width(t.dtype.scalar);
    int64_t v = std::get<int64_t>(a->value);
    if (bits < 64) {
      int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << bits) - 1;
      if (v < lo || v > hi) c.fail(fmt::format("value {} does not fit in {}", v, t.dtype.str()));
    }
  }
}

void rule_axis(const Check& c) {
  int64_t axis = int_attr(c, "axis");
  if (axis < 0 || axis > 2) c.fail(fmt::format("axis must be 0, 1 or 2, got {}", axis));
}

void rule_arange(const Check& c) {
  one_result(c);
  int64_t start = int_attr(c, "start"), end = int_attr(c, "end");
  if (start >= end) c.fail(fmt::format("expected start < end, got start = {}, end = {}", start, end));
  uint64_t len = static_cast<uint64_t>(end) - static_cast<uint64_t>(start);  // no signed overflow
  if (len > static_cast<uint64_t>(kMaxTileElements) || !is_pow2(static_cast<int64_t>(len)))
    c.fail(fmt::format("end - start must be a power of two up to 2^20, got {}", len));
  Type want{i32(), {static_cast<int64_t>(len)}};
  if (c.out(0) != want) c.fail(fmt::format("expected result type {}, got {}", want.str(), c.out(0).str()));
}

void rule_splat(const Check& c) {
  one_result(c);
  if (!c.in(0).is_scalar()) c.fail(fmt::format("operand must be a scalar, got {}", c.in(0).str()));
  if (c.out(0).is_scalar() || c.out(0).dtype != c.in(0).dtype)
    c.fail(fmt::format("expected a tile of {}, got {}", c.in(0).dtype.str(), c.out(0).str()));
}

void rule_broadcast(const Check& c) {
  one_result(c);
  const Type &a = c.in(0), &r = c.out(0);
  if (a.dtype != r.dtype) c.fail(fmt::format("result dtype must be {}, got {}", a.dtype.str(), r.str()));
  if (a.rank() != r.rank())
    c.fail(fmt::format("operand and result must have the same rank, got {} and {}", a.str(), r.str()));
  for (int i = 0; i < a.rank(); ++i)
    if (a.shape[i] != r.shape[i] && a.shape[i] != 1)
      c.fail(fmt::format("dim {} of {} is neither {} nor 1", i, a.str(), r.shape[i]));
}

void rule_expand_dims(const Check& c) {
  one_result(c);
  const Type& a = c.in(0);
  int64_t axis = int_attr(c, "axis");
  if (axis < 0 || axis > a.rank())
    c.fail(fmt::format("axis must be in 0..{} for {}, got {}", a.rank(), a.str(), axis));
  Shape s = a.shape;
  s.insert(s.begin() + axis, 1);
  Type want = a.with_shape(s);
  if (c.out(0) != want) c.fail(fmt::format("expected result type {}, got {}", want.str(), c.out(0).str()));
}

void rule_cast(const Check& c) {
  one_result(c);
  const Type &a = c.in(0), &r = c.out(0);
  same_shape(c, a, r, "operand and result");
  // Pointers cast to pointers (reinterpreting the pointee) or to and from i64.
  DType from = a.dtype, to = r.dtype;
  if (from.ptr != to.ptr) {
    DType other = from.ptr ? to : from;
    if (other != i64())
      c.fail(fmt::format("pointers cast only to pointers or i64, got {} to {}", from.str(), to.str()));
  }
}

// f8e4m3 / f8e5m2 are storage types: computing on them is an error naming the way out.
void no_fp8(const Check& c, int operand) {
  if (c.in(operand).dtype.is_fp8())
    c.fail(fmt::format("{} is an 8-bit float storage type: cast it to f16 or f32 to compute, got {}",
                       name_of(c.in(operand).dtype.scalar), c.in(operand).str()));
}

void rule_bitcast(const Check& c) {
  one_result(c);
  const Type &a = c.in(0), &r = c.out(0);
  same_shape(c, a, r, "operand and result");
  if (a.dtype.ptr || r.dtype.ptr || a.dtype.is_bool() || r.dtype.is_bool())
    c.fail(fmt::format("bitcast takes and gives integers or floats (not pointers or i1), got {} to {}", a.str(),
                       r.str()));
  if (bit_width(a.dtype.scalar) != bit_width(r.dtype.scalar))
    c.fail(fmt::format("bitcast keeps the width: {} is {} bits, {} is {}", a.dtype.str(), bit_width(a.dtype.scalar),
                       r.dtype.str(), bit_width(r.dtype.scalar)));
}

void rule_unpack(const Check& c) {
  one_result(c);
  const Type &a = c.in(0), &r = c.out(0);
  if (a.is_scalar()) c.fail(fmt::format("operand must be a tile of words, got the scalar {}", a.str()));
  const Scalar w = a.dtype.scalar;
  if (a.dtype.ptr || !(w == Scalar::u8 || w == Scalar::u16 || w == Scalar::u32))
    c.fail(fmt::format("operand must be u8, u16 or u32 words, got {}", a.str()));
  const int64_t axis = int_attr(c, "axis"), bits = int_attr(c, "bits");
  if (axis < 0 || axis >= a.rank()) c.fail(fmt::format("axis must be in 0..{} for {}, got {}", a.rank() - 1, a.str(), axis));
  if (!(bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16) || bits >= bit_width(w))
    c.fail(fmt::format("bits must be 1, 2, 4, 8 or 16 and below the word's {} bits, got {}", bit_width(w), bits));
  if (r.dtype.ptr || r.dtype.is_bool() || r.dtype.is_fp8())
    c.fail(fmt::format("result must be an integer or float type (not i1, fp8 or a pointer), got {}", r.str()));
  if (c.op.has_attr("zero")) {
    const int64_t zero = int_attr(c, "zero");
    if (zero < 0 || zero >= (int64_t{1} << bits))
      c.fail(fmt::format("zero must be a field value, 0..{}, got {}", (int64_t{1} << bits) - 1, zero));
    if (zero != 0 && r.dtype.is_unsigned())
      c.fail(fmt::format("zero {} needs a signed or float result (fields minus it may be negative), got {}", zero,
                         r.str()));
  }
  Shape s = a.shape;
  s[axis] *= bit_width(w) / bits;
  if (r.shape != s)
    c.fail(fmt::format("expected result shape {} ({} fields per word along dim {}), got {}", shape_str(s),
                       bit_width(w) / bits, axis, r.str()));
}

void rule_arith(const Check& c) {
  same_type(c, 0, 1);
  if (c.in(0).dtype.ptr)
    c.fail(fmt::format("operands must be integers or floats, got {}", c.in(0).str()));
  no_fp8(c, 0);
}

void rule_bitwise(const Check& c) {
  same_type(c, 0, 1);
  if (!c.in(0).dtype.is_int()) c.fail(fmt::format("operands must be integers, got {}", c.in(0).str()));
}

void rule_compare(const Check& c) {
  same_type(c, 0, 1);
  bool equality = c.op.kind == OpKind::CmpEq || c.op.kind == OpKind::CmpNe;
  if (c.in(0).dtype.ptr && !equality)
    c.fail(fmt::format("pointers compare only with cmp_eq and cmp_ne, got {}", c.in(0).str()));
  no_fp8(c, 0);
}

void rule_unary_numeric(const Check& c) {
  if (c.in(0).dtype.ptr) c.fail(fmt::format("operand must be an integer or float, got {}", c.in(0).str()));
  no_fp8(c, 0);
}

void rule_unary_int(const Check& c) {
  if (!c.in(0).dtype.is_int()) c.fail(fmt::format("operand must be an integer, got {}", c.in(0).str()));
}

void rule_unary_float(const Check& c) {
  if (!c.in(0).dtype.is_float()) c.fail(fmt::format("operand must be a float, got {}", c.in(0).str()));
  no_fp8(c, 0);
  // ops.def declares `precise` on the ops with an approximate form; the name is checked already.
  if (const Attr* at = c.op.find_attr(kPreciseAttr)) {
    const int64_t* v = std::get_if<int64_t>(&at->value);
    if (v == nullptr || (*v != 0 && *v != 1)) c.fail("precise must be 0 or 1");
  }
}

void rule_fma(const Check& c) {
  same_type(c, 0, 1);
  same_type(c, 0, 2);
  if (!c.in(0).dtype.is_float()) c.fail(fmt::format("operands must be floats, got {}", c.in(0).str()));
  no_fp8(c, 0);
}

void rule_select(const Check& c) {
  const Type& cond = c.in(0);
  if (!cond.dtype.is_bool()) c.fail(fmt::format("condition must be i1, got {}", cond.str()));
  same_type(c, 1, 2);
  same_shape(c, cond, c.in(1), "condition and values");
}

void rule_addptr(const Check& c) {
  if (!c.in(0).dtype.ptr) c.fail(fmt::format("operand 0 must be a pointer, got {}", c.in(0).str()));
  if (!c.in(1).dtype.is_int()) c.fail(fmt::format("offset must be an integer, got {}", c.in(1).str()));
  same_shape(c, c.in(0), c.in(1), "pointer and offset");
}

void rule_load(const Check& c) {
  const Type& p = c.in(0);
  if (!p.dtype.ptr) c.fail(fmt::format("operand 0 must be a pointer, got {}", p.str()));
  if (c.op.num_operands() > 1) mask_like(c, 1, p);
  if (c.op.num_operands() > 2) {
    Type want = p.with_dtype(p.dtype.pointee());
    if (c.in(2) != want) c.fail(fmt::format("other must be {}, got {}", want.str(), c.in(2).str()));
  }
  if (c.op.has_attr("multicast") && int_attr(c, "multicast") != 1)
    c.fail(fmt::format("multicast must be 1 when present, got {}", int_attr(c, "multicast")));
}

void rule_store(const Check& c) {
  const Type& p = c.in(0);
  if (!p.dtype.ptr) c.fail(fmt::format("operand 0 must be a pointer, got {}", p.str()));
  Type want = p.with_dtype(p.dtype.pointee());
  if (c.in(1) != want) c.fail(fmt::format("value must be {} to store through {}, got {}", want.str(), p.str(), c.in(1).str()));
  if (c.op.num_operands() > 2) mask_like(c, 2, p);
}

void rule_rand(const Check& c) {
  const Type &seed = c.in(0), &off = c.in(1);
  if (!seed.is_scalar() || !seed.dtype.is_int() || seed.dtype.is_bool())
    c.fail(fmt::format("seed must be an integer scalar, got {}", seed.str()));
  if (off.dtype != i32()) c.fail(fmt::format("offset must be i32 (scalar or tile), got {}", off.str()));
}

void rule_for(const Check& c) {
  const Op& op = c.op;
  const Type& lo = c.in(0);
  if (!lo.is_scalar() || !lo.dtype.is_int() || lo.dtype.is_bool())
    c.fail(fmt::format("bounds must be integer scalars, got lo {}", lo.str()));
  if (c.in(1) != lo || c.in(2) != lo)
    c.fail(fmt::format("lo, hi and step must have one type, got {}, {} and {}", lo.str(), c.in(1).str(), c.in(2).str()));
  size_t n = op.operands.size() - 3;
  if (op.results.size() != n) c.fail(fmt::format("expected {} results (one per init), got {}", n, op.results.size()));
  for (size_t i = 0; i < n; ++i)
    if (c.out(i) != c.in(3 + i))
      c.fail(fmt::format("result {} must have its init's type {}, got {}", i, c.in(3 + i).str(), c.out(i).str()));
  const Block& body = op.body();
  if (body.args.size() != n + 1)
    c.fail(fmt::format("body must have {} arguments (iv and one per init), got {}", n + 1, body.args.size()));
  for (size_t i = 0; i <= n; ++i) {
    const Type& want = i == 0 ? lo : c.in(2 + i);
    if (body.args[i] && body.args[i]->type != want)
      c.fail(fmt::format("body argument {} must be {}, got {}", i, want.str(), body.args[i]->type.str()));
  }
  const Op* y = body.terminator();
  if (!y || y->kind != OpKind::Yield) c.fail("body must end with yield");
  if (y->operands.size() != n) c.fail(fmt::format("yield must carry {} values, got {}", n, y->operands.size()));
  for (size_t i = 0; i < n; ++i)
    if (y->operands[i] && y->operands[i]->type != c.in(3 + i))
      c.fail(fmt::format("yielded value {} must be {}, got {}", i, c.in(3 + i).str(), y->operands[i]->type.str()));
}

void rule_yield(const Check& c) {
  const Block* b = c.op.parent;
  if (!b->parent_op || (b->parent_op->kind != OpKind::For && b->parent_op->kind != OpKind::Reduce))
    c.fail("yield is allowed only as the last op of a loop or reduce body");
}

// ---- reductions, scans, shape ops and atomics --------------------------------------------

// The `axis` attribute of a reduction or scan over operand 0; returns it once in range.
int64_t reduce_axis(const Check& c) {
  const Type& a = c.in(0);
  int64_t axis = int_attr(c, "axis");
  if (a.is_scalar()) c.fail(fmt::format("operand must be a tile, got the scalar {}", a.str()));
  if (axis < 0 || axis >= a.rank())
    c.fail(fmt::format("axis must be in 0..{} for {}, got {}", a.rank() - 1, a.str(), axis));
  return axis;
}

// The operand's shape without `axis`: a rank-1 operand reduces to a scalar.
Shape reduced_shape(const Type& a, int64_t axis) {
  Shape s = a.shape;
  s.erase(s.begin() + axis);
  return s;
}

// The checks every reduction shares: one numeric operand, a valid axis, and a result of
// element type `result_dtype` (the operand's when absent) with that axis dropped.
void check_reduction(const Check& c, std::optional<DType> result_dtype) {
  one_result(c);
  const Type& a = c.in(0);
  int64_t axis = reduce_axis(c);
  if (a.dtype.ptr) c.fail(fmt::format("operand must be an integer or float tile, got {}", a.str()));
  no_fp8(c, 0);
  Type want{result_dtype.value_or(a.dtype), reduced_shape(a, axis)};
  if (c.out(0) != want) c.fail(fmt::format("expected result type {}, got {}", want.str(), c.out(0).str()));
}

void rule_reduce(const Check& c) {
  check_reduction(c, std::nullopt);
}

void rule_arg_reduce(const Check& c) {
  check_reduction(c, i32());
}

void rule_reduce_region(const Check& c) {
  check_reduction(c, std::nullopt);
  const Type& a = c.in(0);
  const Block& body = *c.op.regions.at(0);
  Type elem{a.dtype, {}};
  if (body.args.size() != 2)
    c.fail(fmt::format("body must have 2 arguments (accumulator, element), got {}", body.args.size()));
  for (size_t i = 0; i < 2; ++i)
    if (body.args[i] && body.args[i]->type != elem)
      c.fail(fmt::format("body argument {} must be the scalar {}, got {}", i, elem.str(), body.args[i]->type.str()));
  const Op* y = body.terminator();
  if (!y || y->kind != OpKind::Yield) c.fail("body must end with yield");
  if (y->operands.size() != 1) c.fail(fmt::format("yield must carry 1 value, got {}", y->operands.size()));
  if (y->operands[0] && y->operands[0]->type != elem)
    c.fail(fmt::format("yielded value must be the scalar {}, got {}", elem.str(), y->operands[0]->type.str()));
  // The body is a scalar function of its two arguments: it must not touch memory.
  for (const auto& inner : body.ops)
    if (inner->info().effect != Effect::Pure && inner->info().effect != Effect::Terminator)
      c.fail(fmt::format("the combine body may hold only pure ops, got '{}'", inner->name()));
}

void rule_scan(const Check& c) {
  const Type& a = c.in(0);
  reduce_axis(c);
  if (!a.dtype.is_int() && !a.dtype.is_float())
    c.fail(fmt::format("operand must be an integer or float tile, got {}", a.str()));
}

void rule_reshape(const Check& c) {
  one_result(c);
  const Type &a = c.in(0), &r = c.out(0);
  if (a.dtype != r.dtype) c.fail(fmt::format("result dtype must be {}, got {}", a.dtype.str(), r.str()));
  if (a.is_scalar() || r.is_scalar())
    c.fail(fmt::format("operand and result must be tiles, got {} and {}", a.str(), r.str()));
  if (a.numel() != r.numel())
    c.fail(fmt::format("element counts differ: {} has {}, {} has {}", a.str(), a.numel(), r.str(), r.numel()));
  for (int64_t d : r.shape)
    if (!is_pow2(d)) c.fail(fmt::format("result dims must be powers of two, got {}", r.str()));
}

void rule_trans(const Check& c) {
  one_result(c);
  const Type& a = c.in(0);
  if (a.rank() != 2) c.fail(fmt::format("operand must be a 2-D tile, got {}", a.str()));
  Type want{a.dtype, {a.shape[1], a.shape[0]}};
  if (c.out(0) != want) c.fail(fmt::format("expected result type {}, got {}", want.str(), c.out(0).str()));
}

void rule_atomic(const Check& c) {
  const Type& p = c.in(0);
  if (!p.dtype.ptr) c.fail(fmt::format("operand 0 must be a pointer, got {}", p.str()));
  Type want = p.with_dtype(p.dtype.pointee());
  if (c.in(1) != want)
    c.fail(fmt::format("value must be {} to update through {}, got {}", want.str(), p.str(), c.in(1).str()));
  DType e = p.dtype.pointee();
  // What the GPU has native (or cheap CAS-free) atomics for; see ops.def.
  bool ok = e.scalar == Scalar::i32 || e.scalar == Scalar::i64 || e.scalar == Scalar::f32 ||
            (c.op.kind == OpKind::AtomicAdd && e.scalar == Scalar::f64);
  if (!ok) c.fail(fmt::format("'{}' is not supported on {} elements", c.op.name(), e.str()));
  if (c.op.num_operands() > 2) mask_like(c, 2, p);
  if (c.op.has_attr("acq_rel") && int_attr(c, "acq_rel") != 0 && int_attr(c, "acq_rel") != 1)
    c.fail(fmt::format("acq_rel must be 0 or 1, got {}", int_attr(c, "acq_rel")));
}

// ---- dot ---------------------------------------------------------------------------------

// The (a, b, acc) element types the tensor cores (or the FMA fallback) support; see ops.def.
bool dot_dtypes_ok(Scalar a, Scalar b, Scalar acc) {
  // fp8 operands may mix formats (e4m3 x e5m2), as the tensor-core instructions allow.
  if (is_fp8(a) && is_fp8(b)) return acc == Scalar::f32;
  if (a != b) return false;
  switch (a) {
    case Scalar::f16: case Scalar::bf16: case Scalar::f32: return acc == Scalar::f32;
    case Scalar::i8: return acc == Scalar::i32;
    default: return false;
  }
}

void rule_dot(const Check& c) {
  one_result(c);
  const Type &a = c.in(0), &b = c.in(1), &acc = c.in(2);
  for (int i = 0; i < 3; ++i)
    if (c.in(i).rank() != 2 || c.in(i).dtype.ptr)
      c.fail(fmt::format("operands must be 2-D numeric tiles, got {}", c.in(i).str()));
  if (!dot_dtypes_ok(a.dtype.scalar, b.dtype.scalar, acc.dtype.scalar))
    c.fail(fmt::format("unsupported dtypes {} x {} -> {} (want f16/bf16/f32 x same -> f32, fp8 x fp8 -> f32, or i8 x i8 -> i32)",
                       a.dtype.str(), b.dtype.str(), acc.dtype.str()));
  if (a.shape[1] != b.shape[0])
    c.fail(fmt::format("K mismatch: a is {}, b is {}", a.str(), b.str()));
  if (acc.shape[0] != a.shape[0] || acc.shape[1] != b.shape[1])
    c.fail(fmt::format("acc must be [{},{}], got {}", a.shape[0], b.shape[1], acc.str()));
  for (int64_t d : {a.shape[0], b.shape[1], a.shape[1]})
    if (d < 16 || !is_pow2(d))
      c.fail(fmt::format("M, N and K must be powers of two >= 16, got {} x {}", a.str(), b.str()));
  int64_t tf32 = int_attr(c, "allow_tf32");
  if (tf32 != 0 && tf32 != 1) c.fail(fmt::format("allow_tf32 must be 0 or 1, got {}", tf32));
  if (c.out(0) != acc) c.fail(fmt::format("expected result type {}, got {}", acc.str(), c.out(0).str()));
}

// ---- compiler hints ----------------------------------------------------------------------

// Every attr is `multiple_of.<d>` or `max_contiguous.<d>` with d < max(rank, 1); a family present
// has all dims; values are powers of two; a contiguous run fits in its dim (see ops.def).
void rule_hint(const Check& c) {
  one_result(c);
  const Type& a = c.in(0);
  if (!(a.dtype.ptr || (a.dtype.is_int() && !a.dtype.is_bool())))
    c.fail(fmt::format("operand must be an integer (not i1) or pointer scalar or tile, got {}", a.str()));
  const int dims = a.is_scalar() ? 1 : a.rank();
  constexpr std::string_view kFamilies[] = {"multiple_of", "max_contiguous"};
  int count[2] = {0, 0};
  for (const Attr& at : c.op.attrs) {
    std::string_view name = at.name;
    size_t dot = name.find('.');
    int fam = -1;
    for (int k = 0; k < 2; ++k)
      if (dot != std::string_view::npos && name.substr(0, dot) == kFamilies[k]) fam = k;
    std::string_view digits = dot == std::string_view::npos ? std::string_view{} : name.substr(dot + 1);
    int dim = -1;
    if (!digits.empty() && digits.size() <= 2 && digits.find_first_not_of("0123456789") == std::string_view::npos &&
        (digits.size() == 1 || digits[0] != '0'))
      dim = std::stoi(std::string(digits));
    if (fam < 0 || dim < 0 || dim >= dims)
      c.fail(fmt::format("unexpected attribute '{}': expected multiple_of.<d> or max_contiguous.<d> with d in 0..{} "
                         "for {}",
                         name, dims - 1, a.str()));
    if (!std::holds_alternative<int64_t>(at.value)) c.fail(fmt::format("'{}' must be an integer", name));
    int64_t v = std::get<int64_t>(at.value);
    if (!is_pow2(v)) c.fail(fmt::format("'{}' must be a positive power of two, got {}", name, v));
    int64_t size = a.is_scalar() ? 1 : a.shape[dim];
    if (fam == 1 && size % v != 0)
      c.fail(fmt::format("'{}' = {} does not divide dim {} of {} (size {})", name, v, dim, a.str(), size));
    ++count[fam];
  }
  if (count[0] == 0 && count[1] == 0) c.fail("expected a multiple_of or max_contiguous claim, got neither");
  for (int k = 0; k < 2; ++k)
    if (count[k] != 0 && count[k] != dims)
      c.fail(fmt::format("{} needs one entry per dim ({} for {}), got {}", kFamilies[k], dims, a.str(), count[k]));
}

void Verifier::check_rule(const Op& op) const {
  Rule r = op.info().rule;
  std::string label = fmt::format("rule {}", rule_name(r));
  Check c{*this, op, label};
  switch (r) {
    case Rule::Constant: return rule_constant(c);
    case Rule::Axis: return rule_axis(c);
    case Rule::Arange: return rule_arange(c);
    case Rule::Splat: return rule_splat(c);
    case Rule::Broadcast: return rule_broadcast(c);
    case Rule::ExpandDims: return rule_expand_dims(c);
    case Rule::Cast: return rule_cast(c);
    case Rule::Arith: return rule_arith(c);
    case Rule::Bitwise: return rule_bitwise(c);
    case Rule::Compare: return rule_compare(c);
    case Rule::UnaryNumeric: return rule_unary_numeric(c);
    case Rule::UnaryInt: return rule_unary_int(c);
    case Rule::UnaryFloat: return rule_unary_float(c);
    case Rule::Fma: return rule_fma(c);
    case Rule::Select: return rule_select(c);
    case Rule::AddPtr: return rule_addptr(c);
    case Rule::Load: return rule_load(c);
    case Rule::Store: return rule_store(c);
    case Rule::Rand: return rule_rand(c);
    case Rule::For: return rule_for(c);
    case Rule::Yield: return rule_yield(c);
    case Rule::Reduce: return rule_reduce(c);
    case Rule::ArgReduce: return rule_arg_reduce(c);
    case Rule::ReduceRegion: return rule_reduce_region(c);
    case Rule::Scan: return rule_scan(c);
    case Rule::Reshape: return rule_reshape(c);
    case Rule::Trans: return rule_trans(c);
    case Rule::Atomic: return rule_atomic(c);
    case Rule::Dot: return rule_dot(c);
    case Rule::Hint: return rule_hint(c);
    case Rule::Bitcast: return rule_bitcast(c);
    case Rule::Unpack: return rule_unpack(c);
  }
}

}  // namespace

void verify(const Function& f) { Verifier(f).run(); }

}  // namespace tessel::ir
