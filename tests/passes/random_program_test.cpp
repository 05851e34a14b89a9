// Property test: random integer programs mean the same before and after the pipeline.
#include <map>

#include "pass_test_util.hpp"
#include "tessel/ir/verify.hpp"

using namespace passtest;

namespace {

// The test's own reference semantics, written independently of canonicalize: every value
// is uniform (scalars, or tiles built from splats and tile constants), so one int64 per
// value; integers sign-extended to their width, i1 as 0/1.
int64_t norm(int64_t v, Scalar s) {
  switch (s) {
    case Scalar::i1: return v & 1;
    case Scalar::i8: return static_cast<int8_t>(static_cast<uint8_t>(v));
    case Scalar::i32: return static_cast<int32_t>(static_cast<uint32_t>(v));
    default: return v;
  }
}

int64_t eval_op(const Op& op, const std::vector<int64_t>& x) {
  Scalar s = op.results[0]->type.dtype.scalar;
  int bits = bit_width(op.operands.empty() ? s : op.operands[0]->type.dtype.scalar);
  auto u = [&](int i) { return static_cast<uint64_t>(x[i]); };
  switch (op.kind) {
    case OpKind::Constant: return norm(op.int_attr("value"), s);
    case OpKind::Splat:
    case OpKind::Broadcast:
    case OpKind::ExpandDims: return x[0];
    case OpKind::Cast: return op.operands[0]->type.dtype.is_bool() ? x[0] : norm(x[0], s);
    case OpKind::Add: return norm(static_cast<int64_t>(u(0) + u(1)), s);
    case OpKind::Sub: return norm(static_cast<int64_t>(u(0) - u(1)), s);
    case OpKind::Mul: return norm(static_cast<int64_t>(u(0) * u(1)), s);
    case OpKind::Div: return x[1] == 0 ? 0 : norm(x[1] == -1 ? static_cast<int64_t>(0 - u(0)) : x[0] / x[1], s);
    case OpKind::Rem: return x[1] == 0 || x[1] == -1 ? 0 : x[0] % x[1];
    case OpKind::Min: return std::min(x[0], x[1]);
    case OpKind::Max: return std::max(x[0], x[1]);
    case OpKind::And: return x[0] & x[1];
    case OpKind::Or: return x[0] | x[1];
    case OpKind::Xor: return norm(x[0] ^ x[1], s);
    case OpKind::Shl: return x[1] < 0 || x[1] >= bits ? 0 : norm(static_cast<int64_t>(u(0) << x[1]), s);
    case OpKind::Shr: return x[1] < 0 || x[1] >= bits ? 0 : x[0] >> x[1];
    case OpKind::Neg: return norm(static_cast<int64_t>(0 - u(0)), s);
    case OpKind::Not: return norm(static_cast<int64_t>(~u(0)), s);
    case OpKind::CmpEq: return x[0] == x[1];
    case OpKind::CmpNe: return x[0] != x[1];
    case OpKind::CmpLt: return x[0] < x[1];
    case OpKind::CmpGe: return x[0] >= x[1];
    case OpKind::Select: return x[0] ? x[1] : x[2];
    default: FAIL("unexpected op ", std::string(op.name())); return 0;
  }
}

// Evaluates every store's value, in store order, with the parameters given by id.
std::vector<int64_t> run(const Function& f, const std::map<std::string, int64_t>& args) {
  std::vector<int64_t> val(f.num_values(), 0);
  for (size_t i = 0; i < f.params.size(); ++i) {
    auto it = args.find(f.params[i].name);
    if (it != args.end()) val[f.body.args[i]->id] = it->second;
  }
  std::vector<int64_t> stored;
  for (const auto& op : f.body.ops) {
    if (op->kind == OpKind::Store) {
      stored.push_back(val[op->operands[1]->id]);
      continue;
    }
    std::vector<int64_t> x;
    for (const Value* v : op->operands) x.push_back(val[v->id]);
    val[op->results[0]->id] = eval_op(*op, x);
  }
  return stored;
}

struct Gen {
  Kernel k;
  std::map<std::pair<int, bool>, std::vector<Value*>> pool;  // (scalar, is tile) -> values
  const Shape tile{2, 8};

  Value* pick(Scalar s, bool t) {
    auto& v = pool[{static_cast<int>(s), t}];
    if (v.empty() || rng()() % 5 == 0) {  // sometimes a fresh constant, often an identity one
      static const int64_t interesting[] = {0, 1, -1, 2, 3, 7, 100, -128, 127};
      int64_t c = rng()() % 2 ? interesting[rng()() % 9] : random_int(bit_width(s) == 1 ? 2 : 16);
      v.push_back(k.c_int(norm(c, s), s, t ? tile : Shape{}));
    }
    return v[rng()() % v.size()];
  }
  void add(Value* v) { pool[{static_cast<int>(v->type.dtype.scalar), !v->type.is_scalar()}].push_back(v); }

  void step() {
    static const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem,
                                    OpKind::Min, OpKind::Max, OpKind::And, OpKind::Or, OpKind::Xor,
                                    OpKind::Shl, OpKind::Shr};
    static const OpKind cmps[] = {OpKind::CmpEq, OpKind::CmpNe, OpKind::CmpLt, OpKind::CmpGe};
    Scalar s = rng()() % 2 ? Scalar::i32 : Scalar::i8;
    bool t = rng()() % 2;
    switch (rng()() % 8) {
      case 0: case 1: case 2: {
        OpKind kd = binary[rng()() % 12];
        Value* a = pick(s, t);
        add(k.op(kd, {a, rng()() % 4 == 0 ? a : pick(s, t)}));
        break;
      }
      case 3: add(k.op(rng()() % 2 ? OpKind::Neg : OpKind::Not, {pick(s, t)})); break;
      case 4: add(k.op(cmps[rng()() % 4], {pick(s, t), pick(s, t)})); break;
      case 5: {
        Value* a = pick(s, t);
        add(k.b.value(OpKind::Select, {pick(Scalar::i1, t), a, rng()() % 4 == 0 ? a : pick(s, t)}));
        break;
      }
      case 6: {
        Scalar from = rng()() % 3 == 0 ? Scalar::i1 : s;
        add(k.b.cast(pick(from, t), dt(s == Scalar::i32 ? Scalar::i8 : Scalar::i32)));
        break;
      }
      case 7: add(t ? k.b.splat(pick(s, false), tile) : pick(s, false)); break;
    }
  }
};

}  // namespace

TEST_CASE("random integer programs keep their meaning through the pipeline") {
  int folded_away = 0;
  for (int trial = 0; trial < 150; ++trial) {
    Gen g;
    std::map<std::string, int64_t> args;
    for (Scalar s : {Scalar::i32, Scalar::i8, Scalar::i1}) {
      std::string name = std::string("p_") + std::string(name_of(s));
      g.add(g.k.param(name, scalar_t(s)));
      args[name] = norm(random_int(bit_width(s) == 1 ? 2 : bit_width(s)), s);
    }
    for (int i = 0; i < 40; ++i) g.step();
    for (auto& [key, vals] : g.pool)  // store the last value of every kind, and a random one
      for (Value* v : {vals.back(), vals[rng()() % vals.size()]}) {
        Value* p = g.k.f.add_param("o" + std::to_string(g.k.outs++), Type{v->type.dtype.pointer_to(), v->type.shape});
        g.k.b.create(OpKind::Store, {p, v});
      }
    verify(g.k.f);
    std::vector<int64_t> before = run(g.k.f, args);
    size_t ops_before = g.k.f.body.ops.size();
    run_pipeline(g.k.f, default_passes(), PipelineOptions{});  // verifies after each pass
    std::vector<int64_t> after = run(g.k.f, args);
    CHECK(before == after);
    CHECK(g.k.f.body.ops.size() <= ops_before + 8);  // splat hoisting may add a few scalars
    folded_away += static_cast<int>(ops_before) - static_cast<int>(g.k.f.body.ops.size());
    if (before != after) {
      MESSAGE(print(g.k.f));
      break;
    }
  }
  CHECK(folded_away > 1000);  // the passes really did something
}
