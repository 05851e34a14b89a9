// cse: merges pure ops that compute the same value, scoped by the region nesting.
#include <bit>
#include <unordered_map>
#include <unordered_set>

#include "tessel/ir/passes.hpp"

namespace tessel::ir {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64's finaliser over h ^ v: cheap, and every input bit reaches every output bit.
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Attribute payloads compared bit for bit: 0.0 and -0.0 are different constants.
uint64_t attr_bits(const Attr& a) {
  if (auto* i = std::get_if<int64_t>(&a.value)) return static_cast<uint64_t>(*i);
  return std::bit_cast<uint64_t>(std::get<double>(a.value));
}

bool same_attrs(const Op& a, const Op& b) {
  if (a.attrs.size() != b.attrs.size()) return false;
  for (size_t i = 0; i < a.attrs.size(); ++i) {
    const Attr& x = a.attrs[i];
    const Attr& y = b.attrs[i];
    if (x.name != y.name || x.value.index() != y.value.index() || attr_bits(x) != attr_bits(y))
      return false;
  }
  return true;
}

uint64_t hash_type(uint64_t h, const Type& t) {
  h = mix(h, static_cast<uint64_t>(t.dtype.scalar) * 2 + (t.dtype.ptr ? 1 : 0));
  h = mix(h, t.shape.size());
  for (int64_t d : t.shape) h = mix(h, static_cast<uint64_t>(d));
  return h;
}

// Depends only on the op's structure and value ids, never on addresses.
uint64_t key_of(const Op& op) {
  uint64_t h = mix(0, static_cast<uint64_t>(op.kind));
  for (const Value* v : op.operands) h = mix(h, v->id);
  for (const Attr& a : op.attrs) {
    for (char c : a.name) h = mix(h, static_cast<unsigned char>(c));
    h = mix(h, a.value.index());
    h = mix(h, attr_bits(a));
  }
  for (const Value* r : op.results) h = hash_type(h, r->type);
  return h;
}

bool equivalent(const Op& a, const Op& b) {
  if (a.kind != b.kind || a.operands != b.operands || a.results.size() != b.results.size())
    return false;
  for (size_t i = 0; i < a.results.size(); ++i)
    if (a.results[i]->type != b.results[i]->type) return false;
  return same_attrs(a, b);
}

bool mergeable(const Op& op) {
  return is_pure(op.kind) && op.regions.empty() && !op.results.empty();
}

class Cse {
 public:
  explicit Cse(Function& f) : fn_(f), repl_(f.num_values(), nullptr) {}

  bool run() {
    visit(fn_.body);
    if (erased_.empty()) return false;
    erase_marked(fn_.body);
    return true;
  }

 private:
  // Hash -> ops with that hash, in program order. Looked up, never iterated as a whole.
  using Scope = std::unordered_map<uint64_t, std::vector<Op*>>;

  Value* resolve(Value* v) const {
    while (v->id < repl_.size() && repl_[v->id]) v = repl_[v->id];
    return v;
  }

  Op* find(uint64_t key, const Op& op) const {
    // Innermost scope first; a loop body sees the ops of enclosing blocks that precede the
    // loop (they are in outer scopes already), and nothing of a finished body survives it.
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      auto it = s->find(key);
      if (it == s->end()) continue;
      for (Op* cand : it->second)
        if (equivalent(*cand, op)) return cand;
    }
    return nullptr;
  }

  void visit(Block& b) {
    scopes_.emplace_back();
    for (auto& up : b.ops) {
      Op& op = *up;
      for (auto& v : op.operands) v = resolve(v);
      for (auto& r : op.regions) visit(*r);
      if (!mergeable(op)) continue;
      uint64_t key = key_of(op);
      if (Op* prev = find(key, op)) {
        for (size_t i = 0; i < op.results.size(); ++i) repl_[op.results[i]->id] = prev->results[i];
        erased_.insert(&op);
      } else {
        scopes_.back()[key].push_back(&op);
      }
    }
    scopes_.pop_back();
  }

  void erase_marked(Block& b) {
    std::erase_if(b.ops, [&](const std::unique_ptr<Op>& op) { return erased_.contains(op.get()); });
    for (auto& op : b.ops) {
      for (auto& v : op->operands) v = resolve(v);  // uses before defs in malformed IR
      for (auto& r : op->regions) erase_marked(*r);
    }
  }

  Function& fn_;
  std::vector<Scope> scopes_;
  std::vector<Value*> repl_;              // value id -> the equivalent value kept
  std::unordered_set<const Op*> erased_;  // membership only; never iterated
};

}  // namespace

bool cse(Function& f) { return Cse(f).run(); }

}  // namespace tessel::ir
